"""Issue 30, nothing lost round two: folders that are the user's (a symlinked index, a folder with the
user's paths.json, a manifest that merely looks like ppkit's, ``ppkit extract`` outputs), text that never
reached an answer (a line longer than the budget, a short parent body, a page folded into a heading,
headings in comments, setext headings), a quadratic question, look-alike fences, settings and API
arguments that were accepted. Each case ends correct or in one clear line, with nothing lost."""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest

import ppkit
from ppkit.cli import main
from ppkit.core.errors import ConfigError, InvalidInput
from ppkit.core.io import atomic_write
from ppkit.documents.chunking import chunk_tree, split_line
from ppkit.documents.tree import MAX_TITLE_CHARS, parse_markdown, read_lines
from ppkit.documents.treecheck import check_tree
from ppkit.pipeline import load_index
from ppkit.retrieval import analyze
from ppkit.retrieval.retrieve import MAX_QUESTION_CHARS

from .conftest import indexed_docs, run_cli


def _build(paths, folder, **kw):
    return ppkit.build_index(paths, folder, embedder=ppkit.HashEmbedder(), config=ppkit.Config(online=False),
                             progress=False, **kw)


def _one_line(capsys, rc, *parts):
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    for part in parts:
        assert part in err, err
    return err


# -- 1. folders that are the user's ---------------------------------------------------------------
def test_a_symlinked_index_is_updated_at_its_target(tmp_path, docs):
    """Case 1: was: the link replaced by a folder, the target's manifest and half its files deleted."""
    real, link = tmp_path / "real", tmp_path / "link"
    _build([docs["acme"]], real)
    link.symlink_to(real)
    _build([docs["globex"]], link)
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert indexed_docs(real) == ["acme", "globex"]
    assert load_index(link).lines("globex")[0] == "# GLOBEX CORPORATION"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == ["config", "docs", "link",
                                                                                         "real"]


def test_a_folder_with_the_users_paths_json_is_not_taken(tmp_path, docs, capsys):
    """Case 3: was: paths.json and sections.json with no manifest replaced as if ppkit's."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "paths.json").write_text('["my", "paths"]')
    (mine / "sections.json").write_text('{"mine": true}')
    for extra in ([], ["--fresh"]):
        rc = main(["index", str(docs["acme"]), "--index", str(mine), "--embedder", "hash", "--quiet", *extra])
        _one_line(capsys, rc, f"{mine} is not a ppkit index", "paths.json", "nothing was changed")
    assert (mine / "paths.json").read_text() == '["my", "paths"]' and sorted(os.listdir(mine)) == ["paths.json",
                                                                                                 "sections.json"]


def test_a_manifest_that_only_looks_like_ppkits_keeps_other_files(tmp_path, docs, capsys):
    """Case 3: was: a manifest with "format_version" let --fresh delete the user's trees/notes.json."""
    folder = tmp_path / "look"
    (folder / "trees").mkdir(parents=True)
    (folder / "manifest.json").write_text('{"format_version": 4}')
    (folder / "trees" / "notes.json").write_text('{"notes": 1}')
    rc = main(["index", str(docs["acme"]), "--index", str(folder), "--embedder", "hash", "--quiet", "--fresh"])
    _one_line(capsys, rc, "is not a ppkit index", "trees/notes.json")
    assert (folder / "trees" / "notes.json").read_text() == '{"notes": 1}'


def test_an_index_folder_at_the_filesystem_root_is_one_line():
    """Case PPKIT_INDEX=/: was: the whole filesystem walked, then a PermissionError traceback."""
    r = run_cli("index", "tests/fixtures/acme.md", "--embedder", "hash", "--quiet", env={"PPKIT_INDEX": "/"})
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "/ is not a ppkit index" in r.stderr, r.stderr


def test_an_index_under_a_file_is_one_line(tmp_path, docs, capsys):
    """Case: the lock's folder cannot be made (was: a NotADirectoryError traceback)."""
    f = tmp_path / "afile"
    f.write_text("x")
    rc = main(["index", str(docs["acme"]), "--index", str(f / "ix"), "--embedder", "hash", "--quiet"])
    _one_line(capsys, rc, "cannot write beside", "--index")


# -- 2. ppkit extract never overwrites the user's file ---------------------------------------------
def _fake_pdf(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"%PDF-1.4\n% not extracted: every refusal comes before extraction\n")
    return path


def test_extract_never_overwrites_a_file_it_did_not_write(tmp_path, capsys):
    """Case 2: was: the user's DIR/x.md overwritten (and made 0600)."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "x.md").write_text("my own notes\n")
    rc = main(["extract", str(_fake_pdf(tmp_path / "x.pdf")), "--out", str(out), "--quiet"])
    _one_line(capsys, rc, f"{out / 'x.md'} is already there and was not written by ppkit extract", "--overwrite")
    assert (out / "x.md").read_text() == "my own notes\n" and sorted(os.listdir(out)) == ["x.md"]


def test_extract_refuses_same_named_pdfs_and_an_out_file(tmp_path, capsys):
    """Case 2: was: two x.pdf overwrote each other; --out a file: a FileExistsError traceback."""
    a, b = _fake_pdf(tmp_path / "a" / "x.pdf"), _fake_pdf(tmp_path / "b" / "X.pdf")
    rc = main(["extract", str(a), str(b), "--out", str(tmp_path / "out"), "--quiet"])
    _one_line(capsys, rc, "would both be extracted to", "nothing was extracted")
    assert not (tmp_path / "out").exists()
    f = tmp_path / "file.txt"
    f.write_text("keep")
    rc = main(["extract", str(a), "--out", str(f), "--quiet"])
    _one_line(capsys, rc, f"--out {f} is a file")
    assert f.read_text() == "keep"


def test_atomic_write_gives_the_usual_permissions(tmp_path):
    """Case 2: was: every written file 0600 (mkstemp's mode)."""
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "new.md", "x")
        (tmp_path / "kept.md").write_text("y")
        os.chmod(tmp_path / "kept.md", 0o640)
        atomic_write(tmp_path / "kept.md", "z")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.md").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "kept.md").stat().st_mode) == 0o640


# -- 3. every character reachable -------------------------------------------------------------------
def test_a_line_longer_than_the_budget_is_sent_in_part(tmp_path):
    """Case 4: was: the heading alone sent ("sent 44 of 7242 chars"), then "Not found"."""
    line = " ".join(f"Plant {i} made {i * 7} widgets in {2000 + i % 20}." for i in range(300))
    p = tmp_path / "page.md"
    p.write_text(f"# Report\n\n## Operations\n\n{line}\n\n# Other\n\nNothing here.\n", encoding="utf-8")
    index = _build([p], tmp_path / "ix")
    s = next(s for s in index.retrieve("How many widgets did plant 211 make?", k=2, budget=1500).sections
             if s.node_id == "0002")
    assert s.trimmed and len(s.text) <= 1500 and s.chars_total > 7000
    assert "Plant 211 made 1477 widgets in 2011." in s.text


def test_split_line_keeps_every_character():
    text = "日本語の文です。" * 40 + " " + "x" * 90
    pieces = split_line(text, 30)
    assert all(len(p) <= 30 for p in pieces) and "".join(pieces).replace(" ", "") == text.replace(" ", "")
    assert pieces[0] == "日本語の文です。日本語の文です。日本語の文です。"  # cut at sentence ends


@pytest.mark.parametrize("body", ["Chief executive: Jane Doe.", "社長は山田太郎です。"])
def test_a_short_parent_body_is_chunked(tmp_path, body):
    """Case 5: was: a parent with children and <= 40 characters of its own never chunked."""
    text = f"# Company\n\n## Leadership\n\n{body}\n\n### Board\n\nThe board has nine members who meet monthly " \
           "to review strategy.\n"
    tree = parse_markdown(text, "co")
    chunks = chunk_tree(tree, text.split("\n"))
    assert [c.node_id for c in chunks if body in c.body] == ["0002"]
    p = tmp_path / "co.md"
    p.write_text(text, encoding="utf-8")
    r = _build([p], tmp_path / "ix").retrieve(body, k=3)
    assert any(body in s.text for s in r.sections)


def test_a_page_folded_into_one_heading_is_text(tmp_path):
    """Case 6: was: page 1 (no line breaks kept) one heading; its sentences never quoted."""
    page = "Acme Annual Report 2022 " + " ".join(["Revenue was $5 million in 2022."] + [
        f"Segment {i} grew by {i} percent over the prior year." for i in range(20)])
    assert len(page) > MAX_TITLE_CHARS
    text = f"# {page}\n\n# Risk Factors\n\nSome risks.\n"
    tree = parse_markdown(text, "acme")
    assert [n.title for n in tree.headings()] == ["Risk Factors"]
    lines = text.split("\n")
    assert any("Revenue was $5 million in 2022." in c.body for c in chunk_tree(tree, lines))
    found = [(f.kind, f.line) for f in check_tree(tree, lines=lines) if f.kind == "long_title"]
    assert found == [("long_title", 1)]


def test_headings_in_html_comments_and_setext_headings(tmp_path, capsys):
    """Cases 7-8: was: a heading inside <!-- --> became a section; a setext heading silently text (it is
    now a heading, and the check still names it: a ``---`` meant as a rule may have made it one)."""
    p = tmp_path / "c.md"
    p.write_text("# Intro\ntext\n<!--\n# Old draft\n-->\nResults\n=======\nGood.\n# End\n", encoding="utf-8")
    tree = ppkit.build_tree(p)
    assert [(n.title, n.level, n.line_start) for n in tree.headings()] == [("Intro", 1, 1), ("Results", 1, 6),
                                                                           ("End", 1, 9)]
    kinds = [(f.kind, f.line) for f in check_tree(tree, p)]
    assert ("comment_heading", 4) in kinds and ("setext_heading", 6) in kinds
    assert main(["tree", str(p), "--check"]) == 0
    out = capsys.readouterr().out
    assert "setext_heading" in out and "level-1 heading" in out
    assert read_lines(p)[3] == "# Old draft"  # the file is not changed


# -- 5. a question is read in linear time, and has a limit -----------------------------------------
def _python_lines(fn, *args) -> int:
    """Python lines executed inside analyze.py while ``fn(*args)`` runs (a count, not a time)."""
    n = 0

    def tracer(frame, event, arg):
        nonlocal n
        if frame.f_code.co_filename == analyze.__file__:
            if event == "line":
                n += 1
            return tracer
        return None

    sys.settrace(tracer)
    try:
        fn(*args)
    finally:
        sys.settrace(None)
    return n


def test_question_analysis_is_linear_in_the_question():
    """Case: was quadratic (210 KB of question 31 s): every mention checked against every mention taken."""
    catalog = {"VZ": {"company": "Verizon Communications", "ticker": "VZ"},
               "KO": {"company": "Coca-Cola", "ticker": "KO"}}
    groups = analyze.company_groups(catalog)
    q = "What did Verizon and Coca-Cola report in 2022? "
    small, large = (_python_lines(analyze._mentions, catalog, groups, q * n) for n in (40, 160))
    assert large < 5 * small, (small, large)  # 4 times the text: about 4 times the work, not 16


def test_a_question_over_the_limit_is_refused(hash_index):
    with pytest.raises(InvalidInput, match=f"more than the {MAX_QUESTION_CHARS:,} read"):
        hash_index.retrieve("x" * (MAX_QUESTION_CHARS + 1))


# -- 7. settings and the Python API -----------------------------------------------------------------
@pytest.mark.parametrize("var, value", [("PPKIT_SECTION_BUDGET", "0"), ("PPKIT_SECTION_BUDGET", "-1"),
                                        ("PPKIT_ASK_DEADLINE", "nan"), ("PPKIT_LLM_TIMEOUT", "inf")])
def test_settings_out_of_range_are_refused(monkeypatch, var, value):
    """Case: was: a budget of 0 emptied every section; a deadline of nan turned it off."""
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError, match=rf"\${var}"):
        ppkit.Config.from_env()


def test_the_python_api_refuses_a_string_for_a_list(tmp_path, docs, hash_index):
    """Cases: build_index("a.md") and retrieve(q, docs="x") iterated characters; retrieve(42) an
    AttributeError; --k 100000 silently 50 with "verification: PROBLEMS"."""
    with pytest.raises(InvalidInput, match="paths must be a list"):
        _build(str(docs["acme"]), tmp_path / "ix")
    assert not (tmp_path / "ix").exists()
    with pytest.raises(InvalidInput, match="docs must be a list of document names"):
        hash_index.retrieve("revenue", docs="acme")
    with pytest.raises(InvalidInput, match="the question must be a string, not int"):
        hash_index.retrieve(42)
    with pytest.raises(InvalidInput, match="k=100000 is more than the 50 candidate sections"):
        hash_index.ask("revenue", k=100000)
