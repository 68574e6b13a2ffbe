"""ppkit.bench.runs.transfer: gold sections of the reference Markdown carried onto another extraction."""

import json

import pytest
from bench_support import FIX, bench_dir

from ppkit.bench.data.gold import GoldSet
from ppkit.bench.data.loaders import MarkdownDocs
from ppkit.bench.runs.transfer import reference_docs_for, transfer_gold, transfer_sections
from ppkit.cli import main
from ppkit.documents.repair import repair_markdown
from ppkit.documents.tree import parse_markdown

REF = FIX / "transfer_reference.md"  # LlamaParse-like: levels 1-3, TABLE 2 a heading
OFF = FIX / "transfer_offline.md"  # offline-like: every heading ####, bold, TABLE 2 bold text, no Signatures


class _TextDocs:
    """Trees and lines of in-memory Markdown (``{doc: text}``)."""

    def __init__(self, texts: dict[str, str]):
        self.trees = {d: parse_markdown(t, d) for d, t in texts.items()}
        self._lines = {d: t.split("\n")[:-1] if t.endswith("\n") else t.split("\n") for d, t in texts.items()}

    def lines(self, doc):
        return self._lines[doc]


def _all_sections(docs, doc):
    return [f"{doc}#{n.node_id}" for n in docs.trees[doc].headings()]


def test_every_reference_heading_onto_the_offline_extraction():
    ref = MarkdownDocs([REF], names=["Acme"])
    off = MarkdownDocs([OFF], names=["Acme"])
    rep = transfer_sections(_all_sections(ref, "Acme"), ref, off)
    got = {s: (t.target, t.how) for s, t in rep.transfers.items()}
    assert got == {
        "Acme#0001": ("Acme#0001", "title"),  # no text of its own: the title alone
        "Acme#0002": ("Acme#0002", "title"),
        "Acme#0003": ("Acme#0003", "title+text"),
        "Acme#0004": ("Acme#0004", "title+text"),  # the first "Revenues" onto the first
        "Acme#0005": ("Acme#0005", "title+text"),
        "Acme#0006": ("Acme#0006", "title"),
        "Acme#0007": ("Acme#0007", "title+text"),  # its text went to the two risk headings after it
        "Acme#0008": ("Acme#0010", "title"),  # Management's / Management’s
        "Acme#0009": ("Acme#0011", "title+text"),  # the second "Revenues" onto the second
        "Acme#0010": ("Acme#0011", "text"),  # TABLE 2 is bold text under Revenues there
        "Acme#0011": ("Acme#0012", "similar title+text"),  # "The Acme Company and Subsidiaries Consolidated ..."
        "Acme#0012": ("Acme#0013", "text"),  # Legal Proceedings became "Litigation"
        "Acme#0013": ("Acme#0014", "title"),  # "None." is too short to place
        "Acme#0014": (None, ""),  # Signatures: not in the extraction at all
    }
    assert rep.transfers["Acme#0007"].note == "text spread over the headings after it: 0008, 0009"
    assert rep.transfers["Acme#0007"].text_nodes == ("0008", "0009")
    assert rep.transfers["Acme#0011"].target_title == \
        "The Acme Company and Subsidiaries Consolidated Statements of Operations"
    assert rep.unmapped == {
        "Acme#0014": "no heading with this title; text not placed (no feature found in the document)"}
    assert rep.by_how() == {"title+text": 5, "title": 5, "similar title+text": 1, "similar title": 0, "text": 2,
                            "unmapped": 1}
    assert rep.coverage == 13 / 14
    assert rep.summary() == ("gold transferred from the reference Markdown: 13 of 14 sections (93%): 5 title+text, "
                             "5 title, 1 similar title+text, 2 text, 1 unmapped")
    assert rep.to_dict()["transfers"]["Acme#0010"]["text_nodes"] == ["0011"]


def test_onto_itself_is_the_identity():
    ref = MarkdownDocs([REF], names=["Acme"])
    rep = transfer_sections(["Acme#0000", *_all_sections(ref, "Acme")], ref, ref)
    assert all(t.target == t.source for t in rep.transfers.values())
    assert rep.coverage == 1.0


def test_repaired_copy_gets_the_same_targets(tmp_path):
    text = OFF.read_text(encoding="utf-8")
    fixed = repair_markdown(text)
    assert len(fixed.changes) == 14  # every level changed, no heading line moved
    p = tmp_path / "Acme.md"
    p.write_text(fixed.text, encoding="utf-8")
    ref = MarkdownDocs([REF], names=["Acme"])
    raw = transfer_sections(_all_sections(ref, "Acme"), ref, MarkdownDocs([OFF], names=["Acme"]))
    rep = transfer_sections(_all_sections(ref, "Acme"), ref, MarkdownDocs([p]))
    assert {s: t.target for s, t in rep.transfers.items()} == {s: t.target for s, t in raw.transfers.items()}


def test_similar_title_without_text_and_text_placed_elsewhere():
    a = "Anvil shipments to the southwest rose by 4,512 units to a record 23,601 units in the year.\n"
    b = "Rocket skate recalls cost us 7,654 thousand dollars across 1,357 stores in the fourth quarter.\n"
    ref = _TextDocs({"D": f"# Item 8\n## Consolidated Balance Sheets\nNone.\n# Alpha\n{a}# Beta\n{b}"})
    tgt = _TextDocs({"D": f"# Item 8\n# The Acme Company Consolidated Balance Sheets\nNone.\n# Alpha\n{b}# Beta\n{a}"})
    rep = transfer_sections(["D#0002", "D#0003"], ref, tgt)
    t = rep.transfers["D#0002"]
    assert (t.target, t.how) == ("D#0002", "similar title")
    t = rep.transfers["D#0003"]  # Alpha's text is under Beta there: the title wins, the note says so
    assert (t.target, t.how, t.note) == ("D#0003", "title", "text placed elsewhere: 0004")


def test_a_repeated_title_follows_its_text():
    r1 = "Anvil revenues rose to 4,512 million from 3,987 million on desert demand.\n"
    r2 = "Rocket revenues were 2,468 million compared to 1,357 million a year ago.\n"
    ref = _TextDocs({"D": f"# Revenues\n{r1}# Revenues\n{r2}"})
    tgt = _TextDocs({"D": f"# Revenues\n{r2}# Revenues\n{r1}"})
    t = transfer_sections(["D#0001"], ref, tgt).transfers["D#0001"]
    assert (t.target, t.how, t.note) == ("D#0002", "title+text", "title aligned to 0001, the text is under 0002")


def test_transfer_gold_renames_documents_and_reports_what_was_lost():
    ref = MarkdownDocs([REF], names=["Acme"])
    off = MarkdownDocs([OFF], names=["AcmeOffline"])
    gold = GoldSet(
        qrels={"q1": {"Acme#0010": 1, "Acme#0014": 1}, "q2": {"Acme#0014": 1},
               "q3": {"Acme#0004": 1, "Acme#0009": 1}, "q5": {"Acme#0009": 1, "Acme#0010": 1}},
        docs={"q1": ["Acme"], "q2": ["Acme"], "q3": ["Acme"], "q4": ["Acme"], "q5": ["Acme"]},
        unmapped={"q4": "no reference log entry"})
    moved, rep = transfer_gold(gold, ref, off, doc_map={"Acme": "AcmeOffline"})
    assert moved.qrels == {"q1": {"AcmeOffline#0011": 1}, "q3": {"AcmeOffline#0004": 1, "AcmeOffline#0011": 1},
                           "q5": {"AcmeOffline#0011": 1}}
    assert moved.docs["q1"] == ["AcmeOffline"] and moved.docs["q4"] == ["AcmeOffline"]
    lost = "gold Acme#0014 'Signatures' not found in the other extraction: no heading with this title; " \
           "text not placed (no feature found in the document)"
    assert moved.unmapped == {"q4": "no reference log entry", "q2": lost}
    assert moved.notes["q1"] == [lost]
    assert moved.notes["q5"] == ["gold Acme#0010 maps onto AcmeOffline#0011 like another gold section of this question"]
    assert moved.provenance["q3"] == {"AcmeOffline#0004": "Acme#0004 (title+text)",
                                      "AcmeOffline#0011": "Acme#0009 (title+text)"}
    assert moved.details["q1"]["reference_gold"] == ["Acme#0010", "Acme#0014"]
    assert rep.doc_map == {"Acme": "AcmeOffline"} and len(rep.transfers) == 4


def test_no_target_document_is_reported_not_dropped():
    ref = MarkdownDocs([REF], names=["Acme"])
    off = MarkdownDocs([OFF], names=["Globex"])
    rep = transfer_sections(["Acme#0004"], ref, off)
    assert rep.unmapped == {"Acme#0004": "no target document for 'Acme' among ['Globex']"}
    with pytest.raises(KeyError, match="'Initech' is not among the reference documents"):
        transfer_sections(["Initech#0001"], ref, off)


def test_reference_docs_for_pairs_by_name(tmp_path):
    off = MarkdownDocs([OFF], names=["AMERICANEXPRESS_2022_10K"])
    p = tmp_path / "AMEX.md"
    p.write_text(REF.read_text(encoding="utf-8"), encoding="utf-8")
    ref, pairs = reference_docs_for(off, [p, FIX / "bench_globex.md"])
    assert pairs == {"AMEX": "AMERICANEXPRESS_2022_10K"} and ref.docs == ["AMEX"]
    with pytest.raises(ValueError, match="none of the indexed documents"):
        reference_docs_for(MarkdownDocs([OFF], names=["Initech"]), [p])


def _reextract(src, dest):
    """A crude 're-extraction' of a fixture filing: every heading at ####, bold, one title renamed."""
    out = []
    for line in src.read_text(encoding="utf-8").split("\n"):
        if line.startswith("#"):
            title = line.lstrip("#").strip().replace("Legal Proceedings", "Litigation")
            line = f"#### **{title}**"
        out.append(line)
    dest.write_text("\n".join(out), encoding="utf-8")
    return dest


@pytest.fixture
def offline_index(tmp_path, monkeypatch):
    """The two fixture filings 're-extracted', hash-embedded, named like the reference (plumbing only)."""
    from ppkit import Config, HashEmbedder, build_index

    monkeypatch.setenv("PPKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PPKIT_OFFLINE", "1")
    monkeypatch.setenv("PPKIT_QUIET", "1")
    refs = []
    for name, src in (("Acme", FIX / "bench_acme.md"), ("Globex", FIX / "bench_globex.md")):
        refs.append(tmp_path / "ref" / f"{name}.md")
        refs[-1].parent.mkdir(exist_ok=True)
        refs[-1].write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "off").mkdir()
    offs = [_reextract(r, tmp_path / "off" / r.name) for r in refs]
    build_index(offs, tmp_path / "index", embedder=HashEmbedder(64), config=Config(embedder="hash", online=False),
                names=["Acme", "Globex"], progress=False, fresh=True)
    return tmp_path, refs


def test_cli_gold_from_reference(offline_index, capsys):
    tmp, refs = offline_index
    out = tmp / "fb.json"
    argv = ["bench", "retrieval", "--questions", str(FIX / "bench_financebench.jsonl"), "--index", str(tmp / "index"),
            "--gold-from-reference", "--reference-md", str(refs[0]), "--reference-md", str(refs[1]),
            "--no-baselines", "--no-figure", "--quiet", "--json", str(out)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "gold transferred from the reference Markdown: 2 of 2 sections (100%): 2 title+text" in err
    res = json.loads(out.read_text())
    assert res["n"] == 2 and res["transfer"]["coverage"] == 1.0
    assert {q["qid"]: q["gold"] for q in res["per_question"]} == {"fb-acme-prose": ["Acme#0003"],
                                                                   "fb-acme-table": ["Acme#0005"]}
    assert set(res["skipped"]) == {"fb-globex-missing", "fb-initech"}
    # the flag names what --reference-md is for
    assert main(["bench", "retrieval", "--questions", str(FIX / "bench_financebench.jsonl"), "--index",
                 str(tmp / "index"), "--reference-md", str(refs[0]), "--no-baselines", "--quiet"]) == 2
    assert "--reference-md names the reference for --gold-from-reference" in capsys.readouterr().err


def test_run_transfer_benchmark_function(offline_index):
    from ppkit import load_index
    from ppkit.bench.runs.transfer import run_transfer_benchmark

    tmp, refs = offline_index
    res = run_transfer_benchmark(load_index(tmp / "index"), FIX / "bench_financebench.jsonl", reference_paths=refs,
                                 modes=("gold",))
    assert res.n == 2 and res.format == "financebench"
    assert res.transfer["by_how"]["title+text"] == 2
    assert set(res.results) == {"3", "5"}


@pytest.mark.corpus
def test_comprehensive_gold_onto_the_offline_boeing_headings():
    """The reference Boeing 10-K against a copy whose statement headings carry the company prefix, as the
    offline extractor writes them: the Comprehensive gold still lands on the same heading lines."""
    from ppkit.bench.data.gold import comprehensive_gold
    from ppkit.bench.data.loaders import load_comprehensive
    from ppkit.core.data import tenk_paths

    bench = bench_dir()
    path = next(p for p in tenk_paths() if p.stem == "Boeing")
    text = path.read_text(encoding="utf-8")
    ref = _TextDocs({"Boeing": text})
    prefixed = text.replace("# Consolidated Statements of", "# The Boeing Company and Subsidiaries Consolidated "
                                                             "Statements of")
    assert prefixed != text
    tgt = _TextDocs({"Boeing": prefixed})
    qs = [q for q in load_comprehensive(bench / "comprehensive_questions.xlsx") if q["doc"] == "Boeing"]
    gold = comprehensive_gold(qs, bench / "comprehensive_k5", ref)
    moved, rep = transfer_gold(gold, ref, tgt)
    assert moved.qrels == gold.qrels  # same lines, same ids
    assert rep.by_how()["similar title+text"] == 3  # the three prefixed statements among the gold
    assert rep.coverage == 1.0
