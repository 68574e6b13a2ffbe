"""Issue 30, the cases round two left: a PDF claiming 100,000,000 pages, an empty index, ``--k`` past the
candidates on the command line, a file name with a newline, a benchmark output path that cannot be written,
a signing key folder that cannot be written, and a setting made in code. Each ends in one clear line (or
right), before any long work, with nothing lost."""

from __future__ import annotations

import os

import pytest

import ppkit
from ppkit.cli import main
from ppkit.core.errors import ConfigError, InvalidInput
from ppkit.documents.extract import pdf_page_count
from ppkit.documents.pdfcache import MAX_PDF_PAGES

from .conftest import ROOT, pdf_bytes
from .test_round_two import _build, _one_line


def _pdf_claiming(path, pages: int, *, kids: int = 1):
    """A hand-written PDF of one page object whose page tree lists it ``kids`` times and claims ``pages``
    pages (its /Count)."""
    path.write_bytes(pdf_bytes([b"<< /Type /Catalog /Pages 2 0 R >>",
                                b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b"3 0 R " * kids, pages),
                                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"]))
    return path


# -- a PDF claiming 100,000,000 pages -----------------------------------------------------------------
@pytest.mark.parametrize("pages, kids", [(100_000_000, 1), (MAX_PDF_PAGES + 1, MAX_PDF_PAGES + 1)],
                         ids=["count-claims-1e8", "tree-lists-limit+1"])
def test_a_pdf_claiming_a_hundred_million_pages_is_one_line(tmp_path, capsys, monkeypatch, pages, kids):
    """Case: was: a RuntimeError traceback from the page count (index and extract). A page tree listing more
    than the limit ends in one line before any extraction; a /Count that lies about a one-page tree is read as
    the one page the tree lists (pypdfium2 counts what the tree lists; pymupdf refused it in one line)."""
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))
    pdf = _pdf_claiming(tmp_path / "huge.pdf", pages, kids=kids)
    if pdf_page_count(pdf) == kids == 1:  # the text-layer backend counts the pages the tree lists, not /Count
        assert main(["extract", str(pdf), "--out", str(tmp_path / "out"), "--quiet"]) == 0
        assert "1 of 1 pages" in capsys.readouterr().out
        return
    rc = main(["index", str(pdf), "--index", str(tmp_path / "ix"), "--embedder", "hash", "--quiet"])
    _one_line(capsys, rc, str(pdf), "export it again")
    rc = main(["extract", str(pdf), "--out", str(tmp_path / "out"), "--quiet"])
    _one_line(capsys, rc, str(pdf), "export it again")
    assert not (tmp_path / "ix").exists() and not (tmp_path / "out").exists()
    assert not list((tmp_path / "cache").rglob("*.md"))


# -- an empty index --------------------------------------------------------------------------------
def test_an_empty_index_says_it_holds_no_documents(tmp_path, docs, capsys):
    """Case: was: an empty "Not found" with "verification: OK"."""
    folder = tmp_path / "ix"
    _build([docs["acme"]], folder)
    ppkit.remove_documents(folder, ["acme"])
    rc = main(["ask", "What was the revenue?", "--index", str(folder)])
    _one_line(capsys, rc, f"the index at {folder} holds no documents", f"ppkit index DOCS... --index {folder}")
    assert capsys.readouterr().out == ""


# -- --k past the candidates --------------------------------------------------------------------------
def test_k_past_the_candidates_is_one_line_on_the_command_line(tmp_path, docs, capsys):
    """Case: was: `--k 100000` silently 50 with "verification: PROBLEMS" and no reason."""
    folder = tmp_path / "ix"
    _build([docs["acme"]], folder)
    rc = main(["ask", "What was the revenue?", "--index", str(folder), "--k", "100000"])
    _one_line(capsys, rc, "k=100000 is more than the 50 candidate sections", "k=50 or fewer")


# -- a file name with a newline -------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["ac\nme", "ac\tme", "ac\u2028me"], ids=["newline", "tab", "line-separator"])
def test_a_file_name_with_a_control_character_is_refused(tmp_path, docs, capsys, name):
    """Case: was: a document named with a newline was indexed, and its own citations were warned about."""
    odd = docs["acme"].with_name(f"{name}.md")
    odd.write_text(docs["acme"].read_text(encoding="utf-8"), encoding="utf-8")
    folder = tmp_path / "ix"
    rc = main(["index", str(docs["globex"]), str(odd), "--index", str(folder), "--embedder", "hash", "--quiet"])
    _one_line(capsys, rc, f"the document name {name!r} holds control characters", "rename the file")
    assert not folder.exists()
    with pytest.raises(InvalidInput, match="holds control characters"):
        _build([docs["acme"]], folder, names=[name])


# -- a benchmark output that cannot be written ----------------------------------------------------------
def test_a_bench_output_that_cannot_be_written_is_one_line_before_the_run(tmp_path, capsys):
    """Case: was: `ppkit bench retrieval --json DIR` failed only after the whole run."""
    questions = ROOT / "tests" / "fixtures" / "bench_financebench.jsonl"
    afile = tmp_path / "afile"
    afile.write_text("keep")
    index = tmp_path / "ix"  # never built: each refusal comes before the run opens (or builds) an index
    rc = main(["bench", "retrieval", "--questions", str(questions), "--index", str(index), "--json", str(tmp_path)])
    _one_line(capsys, rc, f"--json {tmp_path} is a folder", f"--json {tmp_path / 'result.json'}")
    rc = main(["bench", "verify", "--json", str(afile / "out.json")])
    _one_line(capsys, rc, f"{afile} is a file, not a folder")
    rc = main(["bench", "answers", "--questions", str(questions), "--index", str(index), "--out", str(afile)])
    _one_line(capsys, rc, f"--out {afile} is a file: give a folder")
    assert afile.read_text() == "keep" and sorted(set(os.listdir(tmp_path)) - {"config"}) == ["afile"]


# -- a signing key folder that cannot be written ----------------------------------------------------------
def test_a_key_folder_that_cannot_be_written_is_named(tmp_path, docs, capsys, monkeypatch):
    """Case: was: "could not write the index at IX (NotADirectoryError ...)", blaming the index folder."""
    afile = tmp_path / "afile"
    afile.write_text("x")  # a folder under a file cannot be made, even by root
    monkeypatch.setenv("PPKIT_CONFIG_DIR", str(afile / "config"))
    monkeypatch.setenv("PPKIT_CACHE_DIR", str(afile / "cache"))  # the key's second place
    folder = tmp_path / "ix"
    rc = main(["index", str(docs["acme"]), "--index", str(folder), "--embedder", "hash", "--quiet"])
    err = _one_line(capsys, rc, f"the key that signs index folders cannot be written in {afile / 'config'}",
                    str(afile / "cache"), "$PPKIT_CONFIG_DIR", "the index was not changed")
    assert f"index at {folder}" not in err and not folder.exists()


# -- a setting made in code -------------------------------------------------------------------------------
def test_a_setting_made_in_code_names_the_field(monkeypatch):
    """Case: was: `Config(k=0)` in code named `$PPKIT_K`, a variable nobody set."""
    monkeypatch.delenv("PPKIT_K", raising=False)
    for make in (lambda: ppkit.Config(k=0), lambda: ppkit.Config.from_env(k=0), lambda: ppkit.Config().set(k=0)):
        with pytest.raises(ConfigError) as e:
            make()
        assert str(e.value) == "k=0: give a number of sections, at least 1"
    monkeypatch.setenv("PPKIT_K", " 0")
    with pytest.raises(ConfigError) as e:
        ppkit.Config.from_env()
    assert str(e.value) == "$PPKIT_K=' 0': give a number of sections, at least 1"
