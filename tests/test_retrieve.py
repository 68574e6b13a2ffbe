"""ppkit.retrieval.retrieve / rerank / synth: the funnel, filters, pointers, budgets, answers."""

import pytest

import ppkit
from ppkit.indexing.lexical import K1, bm25_scores
from ppkit.retrieval.rerank import Stage1Reranker, StructuralReranker
from ppkit.retrieval.types import section_id


def test_funnel_dedups_chunks_to_sections(hash_index):
    r = hash_index.retrieve("operating cash flow and capital expenditures", k=3, reranker=Stage1Reranker(),
                            auto_filter=False)
    ids = [c.section_id for c in r.candidates]
    assert len(ids) == len(set(ids))  # one candidate per section
    assert r.trace.chunks_recalled == len(hash_index.chunks)  # fewer than 200 chunks: all recalled
    assert r.trace.sections_recalled == len(ids)
    assert [s.rank for s in r.sections] == [1, 2, 3]
    assert [s.section_id for s in r.sections] == ids[:3]


def test_sections_are_pointers_into_the_source(hash_index):
    r = hash_index.retrieve("free cash flow of Acme", k=2, auto_filter=False)
    for s in r.sections:
        lines = hash_index.lines(s.doc)
        assert s.text == "\n".join(lines[s.line_start - 1 : s.line_end])
        assert lines[s.line_start - 1].startswith("#")
        assert s.sent_ranges == ((s.line_start, s.line_end),) and not s.trimmed


def test_document_filter_from_question_and_from_caller(hash_index):
    r = hash_index.retrieve("What was Globex's operating cash flow?", k=3)
    assert {c.doc for c in r.candidates} == {"globex"}
    assert r.trace.filter_source == "question" and r.trace.search_text == "What was Globex's operating cash flow?"
    r = hash_index.retrieve("operating cash flow", k=3, docs=["ACME"])
    assert {c.doc for c in r.candidates} == {"acme"}
    with pytest.raises(KeyError, match="no document 'initech'"):
        hash_index.retrieve("x", docs=["initech"])


def test_budget_trims_visibly(hash_index):
    r = hash_index.retrieve("total current assets inventories", k=1, budget=60, docs=["acme"])
    (s,) = r.sections
    assert s.trimmed and s.chars_total > 60 and len(s.text) < s.chars_total
    assert s.contains_line(s.line_start)  # the heading is always sent
    assert r.trace.trimmed == [{"section_id": s.section_id, "chars_total": s.chars_total, "chars_sent": len(s.text)}]


def test_bad_arguments(hash_index):
    with pytest.raises(ValueError, match="k must be"):
        hash_index.retrieve("x", k=0)
    with pytest.raises(ValueError, match="empty"):
        hash_index.retrieve("  ")


def test_bm25_textbook():
    # two documents of two terms, query term in one: idf = ln(1 + (2-1+0.5)/(1+0.5)) = ln 2,
    # |d| = avgdl, so the term weight is tf / (tf + k1) = 1 / (1 + 1.5)
    import math

    s = bm25_scores("cash", ["cash flow", "net revenue"])
    assert s[1] == 0.0
    assert s[0] == pytest.approx(math.log(2) / (1 + K1), rel=1e-5)


def test_structural_reranker_prefers_matching_path(hash_index):
    r = hash_index.retrieve("Consolidated Balance Sheets current liabilities", k=1, docs=["acme"],
                            reranker=StructuralReranker(hash_index.embedder))
    assert r.sections[0].breadcrumb.endswith("Consolidated Balance Sheets")
    assert set(r.candidates[0].features) == {"dense", "hits", "path_sem", "path_lex", "text_lex", "numeric",
                                             "statement", "anchor"}


def test_extractive_answer_quotes_and_cites(hash_index):
    a = hash_index.ask("What was Acme's free cash flow?", k=2)
    assert a.mode == "offline" and a.to_dict()["answer"]["mode"] == "offline"
    assert a.text.startswith(a.block.text) and "offline" not in a.text  # the mode is a field, not a banner
    assert "$430 million" in a.text
    assert "Sources:" in a.text and f"(ID: {a.sections[0].node_id})" in a.text
    d = a.to_dict()
    assert {"doc", "node_id", "breadcrumb", "line_start", "line_end", "text"} <= set(d["sections"][0])
    assert d["trace"]["synthesizer"] == "extractive"


def test_section_id():
    assert section_id("AMD", "0066") == "AMD#0066"


@pytest.mark.corpus
@pytest.mark.model
def test_quick_ratio_on_the_reference_10ks(tenk_index):
    a = tenk_index.ask("What is AMD's quick ratio for FY2022?")
    assert len(a.sections) == 5
    assert {s.doc for s in a.sections} == {"AMD"}
    # (the document's own root section, its cover, is a section too since short parent bodies are chunked)
    assert all(s.text and (s.breadcrumb + " > ").startswith("AMD > ") and s.line_start <= s.line_end
               for s in a.sections)
    assert "AMD#0089" in {s.section_id for s in a.sections}  # the balance sheet holds the current items
    assert a.text.startswith(a.block.text)
    assert a.block.kind == "computed" and a.block.text.startswith("1.57: quick ratio, AMD FY2022 = ")
    assert 'total current liabilities, 2022: 6,369, row "Total current liabilities"' in a.text  # the row, cited
    assert {(c.doc, c.node) for c in a.block.citations} == {("AMD", "0089")}


def test_snippet_from_a_prefix_equals_the_whole_text_collapsed():
    from ppkit.retrieval.recall import _snippet

    long_gap = "word " + " \n\t" * 400 + "after the gap " + "x" * 30
    for text in ("", "   ", "  Net   sales\n rose 5%", "a" * 1000, long_gap, "é  ü\u2003ß " * 200, "ab " * 10):
        for n in (0, 1, 12, 150):
            assert _snippet(text, n) == " ".join(text.split())[:n], (text[:20], n)


def test_structural_reranker_keeps_term_counts_without_changing_scores(hash_index):
    question = "What were the cash flows from operating activities?"
    cands = hash_index.retrieve(question, k=3).candidates
    warm = StructuralReranker(hash_index.embedder, section_tokens=hash_index.section_tokens)
    warm.rerank("capital expenditures", cands)  # keeps the counts of these sections
    assert len(warm._term_counts) == len(cands)
    fresh = StructuralReranker(hash_index.embedder, section_tokens=hash_index.section_tokens)
    a, b = warm.features(question, cands), fresh.features(question, cands)
    assert a.keys() == b.keys() and all(a[k].tobytes() == b[k].tobytes() for k in a)
    assert a["text_lex"].tolist() == bm25_scores(question, [c.text for c in cands]).astype(float).tolist()


def test_each_filing_of_a_small_scope_gets_the_stage_1_it_would_get_alone(hash_index):
    q = "operating cash flow and capital expenditures"
    both = hash_index.retrieve(q, k=2, docs=["acme", "globex"], candidates=2, statement_recall=False)
    shared = hash_index.retrieve(q, k=2, docs=["acme", "globex"], candidates=2, statement_recall=False,
                                 separate_filings=0)
    assert len(shared.candidates) == 2 and not any("per filing" in n for n in shared.trace.notes)
    assert len(both.candidates) == 4 and both.trace.candidates == 4
    assert "stage 1 per filing: 2 filings, 2 candidates each, merged" in both.trace.notes
    for doc in ("acme", "globex"):  # a filing's candidates are those of a search of it alone, in stage-1 order
        alone = hash_index.retrieve(q, k=2, docs=[doc], candidates=2, statement_recall=False)
        by_stage1 = sorted((c for c in both.candidates if c.doc == doc), key=lambda c: c.stage1_rank)
        assert [c.section_id for c in by_stage1] == [c.section_id for c in sorted(alone.candidates,
                                                                                  key=lambda c: c.stage1_rank)]
    assert [c.doc for c in sorted(both.candidates, key=lambda c: c.stage1_rank)][:2] in (["acme", "globex"],
                                                                                            ["globex", "acme"])
    assert sorted(c.stage1_rank for c in both.candidates) == [1, 2, 3, 4]
    # a scope larger than separate_filings shares one stage 1
    capped = hash_index.retrieve(q, k=2, docs=["acme", "globex"], candidates=2, statement_recall=False,
                                 separate_filings=1)
    assert [c.section_id for c in capped.candidates] == [c.section_id for c in shared.candidates]


def test_separate_filings_setting(monkeypatch):
    from ppkit.core.config import Config
    from ppkit.core.errors import ConfigError

    assert Config().separate_filings == 4
    monkeypatch.setenv("PPKIT_SEPARATE_FILINGS", "0")
    assert Config.from_env().separate_filings == 0
    monkeypatch.setenv("PPKIT_SEPARATE_FILINGS", "all")
    with pytest.raises(ConfigError, match="PPKIT_SEPARATE_FILINGS='all' is not an integer"):
        Config.from_env()
    with pytest.raises(ConfigError, match="separate_filings=-1"):
        Config(separate_filings=-1)


def test_two_names_of_one_document_are_searched_once(hash_index):
    q = "operating cash flow and capital expenditures"
    twice = hash_index.retrieve(q, k=5, docs=["acme", "ACME"], statement_recall=False)
    once = hash_index.retrieve(q, k=5, docs=["acme"], statement_recall=False)
    ids = [c.section_id for c in twice.candidates]
    assert len(ids) == len(set(ids)) and ids == [c.section_id for c in once.candidates]
    assert twice.trace.scope == {"acme": None}
    assert not any("per filing" in n for n in twice.trace.notes)


def test_candidate_to_dict_is_asdict_without_the_text():
    # Candidate.to_dict is written out for speed: it must give what dataclasses.asdict gives (less the text),
    # copies included, for the values the stages put in features and recall
    from dataclasses import asdict

    import numpy as np

    from ppkit.retrieval.types import Candidate

    c = Candidate("DOC", "0007", "DOC > Part II > Item 7", 0.81, 3, 2, (0.81, 0.64), 120, 180, "snippet",
                  "## Item 7\nthe whole text", 1.25, 1, features={"bm25": 2.5, "terms": ["a", "b"], "np": np.float32(0.5),
                                                                 "pair": (1, None), "nested": {"x": [1.0, {"y": True}]}},
                  recall={"mode": "hybrid", "ranks": {"dense": 3, "bm25": None}})
    want = asdict(c)
    want.pop("text")
    want["section_id"] = "DOC#0007"
    got = c.to_dict()
    assert got == want and list(got) == list(want)
    assert got["features"]["nested"] is not c.features["nested"] and got["recall"]["ranks"] is not c.recall["ranks"]
