"""ppkit.bench.data.loaders and ppkit.bench.data.reference: formats, counts, reference logs and scorecards."""

import json

import pytest

from bench_support import FIX, bench_dir
from ppkit.bench.data.loaders import (QuestionSetError, detect_format, load_comprehensive, load_financebench,
                                 load_multimodal_queries, load_questions, resolve_doc_name)
from ppkit.bench.data.reference import (citations, clean_breadcrumb, load_run_logs, parse_run_log, parse_scorecard,
                                   scorecard_summary)


def _xlsx(path, rows):
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    for r in rows:
        ws.append(r)
    wb.save(path)
    return path


def test_comprehensive_xlsx_fixture(tmp_path):
    p = _xlsx(tmp_path / "q.xlsx", [
        ["Qno", "Company", "Category", "Question", "Answer", "Evidence"],
        ["1", "Acme_2022_10K", "Numerical", "For Acme, what was the gross margin?", "44.9%", "Income statement"],
        [2, "Acme_2022_10K", "Risk", "For Acme, is there legal risk?", "Yes", "Legal"],
        [None, None, None, None, None, None],
        ["1", "Globex_2022", "Liquidity", "For Globex, current ratio?", "2.0x", "Balance sheet"],
    ])
    assert detect_format(p) == "comprehensive"
    qs = load_comprehensive(p)
    assert [q["qid"] for q in qs] == ["Acme-1", "Acme-2", "Globex-1"]
    assert qs[1] == {"qid": "Acme-2", "qno": 2, "text": "For Acme, is there legal risk?", "doc": "Acme",
                     "docs": ["Acme"], "company": "Acme_2022_10K", "category": "Risk", "answer": "Yes",
                     "evidence": "Legal"}


def test_comprehensive_bad_header_and_duplicates(tmp_path):
    p = _xlsx(tmp_path / "bad.xlsx", [["Number", "Firm", "Text"], ["1", "A", "q"]])
    with pytest.raises(QuestionSetError, match="missing column"):
        load_comprehensive(p)
    p = _xlsx(tmp_path / "dup.xlsx", [["Qno", "Company", "Question"], ["1", "A_2022", "q"], ["1", "A_2022", "r"]])
    with pytest.raises(QuestionSetError, match="appears twice"):
        load_comprehensive(p)


def test_financebench_fixture_both_evidence_doc_fields():
    qs = load_financebench(FIX / "bench_financebench.jsonl")
    assert [q["qid"] for q in qs] == ["fb-acme-prose", "fb-acme-table", "fb-globex-missing", "fb-initech"]
    assert qs[0]["evidence"][0]["doc"] == "ACME_2022_10K" and qs[0]["evidence"][0]["page"] == 41
    assert qs[1]["evidence"][0]["doc"] == "ACME_2022_10K"  # given as evidence_doc_name
    assert detect_format(FIX / "bench_financebench.jsonl") == "financebench"


def test_multimodal_fixture_single_and_cross_paper():
    qs = load_multimodal_queries(FIX / "bench_multimodal.json")
    assert [(q["qid"], q["doc"], q["docs"]) for q in qs] == [("mm-1", "Acme", ["Acme"]),
                                                             ("mm-2", "Acme", ["Acme", "Globex"])]


def test_detect_format_rejects_other_files(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps({"questions": []}))
    with pytest.raises(QuestionSetError, match="not a supported question set"):
        detect_format(p)
    with pytest.raises(FileNotFoundError):
        detect_format(tmp_path / "missing.xlsx")


def test_resolve_doc_name():
    docs = ["AMD", "AMEX", "Boeing", "PepsiCo"]
    assert resolve_doc_name("Pepsico_2022", docs) == "PepsiCo"
    assert resolve_doc_name("PEPSICO_2022_10K", docs) == "PepsiCo"
    assert resolve_doc_name("AMERICANEXPRESS_2022_10K", docs) == "AMEX"
    assert resolve_doc_name("American Express", docs) == "AMEX"
    assert resolve_doc_name("AMD_2022_10K", docs) == "AMD"
    assert resolve_doc_name("INITECH_2022_10K", docs) is None
    assert resolve_doc_name("Init", ["Initech"], metadata={"Initech": {"ticker": "INIT"}}) == "Initech"


def test_resolve_doc_name_never_picks_another_filing_of_the_company():
    # a shelf of several filings per company: the year, quarter and form a name writes must fit
    meta = {"ADOBE_2022_10K": {"company": "Adobe Inc.", "aliases": ["Adobe"], "fiscal_year": 2022, "form_type": "10-K"},
            "AMD_2015_10K": {"company": "Advanced Micro Devices, Inc.", "fiscal_year": 2015, "form_type": "10-K"},
            "AMD": {"company": "Advanced Micro Devices, Inc.", "fiscal_year": 2022, "form_type": "10-K"},
            "AMCOR_2023Q2_10Q": {"company": "Amcor plc", "fiscal_year": 2023, "quarter": 2, "form_type": "10-Q"}}
    docs = list(meta)
    assert resolve_doc_name("ADOBE_2015_10K", docs, metadata=meta) is None  # 2015 is not indexed
    assert resolve_doc_name("ADOBE_2022_10K", docs, metadata=meta) == "ADOBE_2022_10K"
    assert resolve_doc_name("AMD_2022_10K", docs, metadata=meta) == "AMD"
    assert resolve_doc_name("AMD_2015_10K", docs, metadata=meta) == "AMD_2015_10K"
    assert resolve_doc_name("AMD", docs, metadata=meta) == "AMD"  # its own name wins over the 2015 filing
    assert resolve_doc_name("Advanced Micro Devices, Inc.", docs, metadata=meta) is None  # two filings: ambiguous
    assert resolve_doc_name("Amcor plc", docs, metadata=meta) == "AMCOR_2023Q2_10Q"  # its only filing
    assert resolve_doc_name("AMCOR_2023_10K", docs, metadata=meta) is None  # a 10-K is not the Q2 10-Q
    assert resolve_doc_name("AMCOR_2023Q2_10Q", docs, metadata=meta) == "AMCOR_2023Q2_10Q"


def test_citations_textbook():
    text = ("Based on the Statements (ID: 0085) and (Source: ID 0062). Table 2 (ID: 0062/0063), "
            "rows (ID: 0080, 0081) and (Source: ID 0050, ID 0179). COVID-19 0042 is no citation.\n\n"
            "**Sources:**\n*   *AMD > Results (ID: 0062)*\n*   *Consolidated Balance Sheets*\n\nMore text.")
    got = citations(text)
    assert got["ids"] == ["0085", "0062", "0063", "0080", "0081", "0050", "0179"]
    assert got["names"] == ["Consolidated Balance Sheets"]
    assert citations("Goodwill: $24,177 million (Source: Consolidated Balance Sheets)")["names"] == [
        "Consolidated Balance Sheets"]


def test_clean_breadcrumb():
    assert clean_breadcrumb("pepsico > <u>**Business Risks**</u> > ***Risks in Ukraine***") == [
        "pepsico", "Business Risks", "Risks in Ukraine"]


def test_run_log_fixture():
    log = parse_run_log(FIX / "bench_reference" / "comprehensive_k5" / "Acme_2022_comparison.log")
    assert (log["company"], log["k"], len(log["entries"])) == ("Acme_2022", 3, 3)  # the [nan] row is dropped
    e = log["entries"][0]
    assert e["nodes"] == [("0005", "acme > **Consolidated Statements of Operations**"),
                          ("0003", "acme > Acme Corp Annual Report > Results of Operations"),
                          ("0007", "acme > Risk Factors")]
    assert e["cited"] == {"ids": ["0005", "0003"], "names": []}
    assert e["ground_truth"] == "~44.9%"
    assert log["entries"][1]["cited"] == {"ids": [], "names": ["Legal Proceedings"]}


def test_scorecard_fixture_counts_and_failures():
    sc = parse_scorecard(FIX / "bench_reference" / "scorecard_k3.md")
    assert sc["score"] == (1, 3)
    assert sc["counts"] == {"green": 1, "yellow": 1, "red": 1}
    assert scorecard_summary({"x": sc})[0]["failures"] == ["Acme dg01", "Globex novel"]


def test_scorecard_inconsistent_summary_is_an_error(tmp_path):
    p = tmp_path / "s.md"
    p.write_text("| Company | Qno | Score |\n| --- | --- | --- |\n| A | 1 | 🟢 |\n| A | 2 | 🔴 |\n\n**Final Score:** 2 / 2\n",
                 encoding="utf-8")
    with pytest.raises(ValueError, match="table has 1 green of 2"):
        parse_scorecard(p)


# -- the real reference files ------------------------------------------------------------------


@pytest.mark.corpus
def test_real_question_sets_counts():
    b = bench_dir()
    fmt, qs = load_questions(b / "comprehensive_questions.xlsx")
    assert fmt == "comprehensive" and len(qs) == 40
    assert {q["doc"] for q in qs} == {"AMD", "AMEX", "Pepsico", "Boeing"}
    assert sum(1 for q in qs if q["doc"] == "AMEX") == 10
    fmt, fb = load_questions(b / "financebench_dev.jsonl")
    assert fmt == "financebench" and len(fb) == 5 and sum(len(q["evidence"]) for q in fb) == 7
    fmt, mm = load_questions(b / "multimodal_queries.json")
    assert fmt == "multimodal" and len(mm) == 20 and mm[19]["docs"] == ["NemoBot", "Galore"]


@pytest.mark.corpus
def test_real_scorecards():
    b = bench_dir()
    k5 = parse_scorecard(b / "comprehensive_k5" / "consolidated_scorecard.md")
    k3 = parse_scorecard(b / "comprehensive_k3" / "consolidated_scorecard.md")
    f5 = parse_scorecard(b / "financebench_scorecards" / "scorecard_k5.md")
    f3 = parse_scorecard(b / "financebench_scorecards" / "scorecard_k3.md")
    assert [k5["score"], k3["score"], f5["score"], f3["score"]] == [(40, 40), (37, 40), (26, 26), (25, 26)]
    rows = scorecard_summary({"k3": k3, "f3": f3})
    assert rows[0]["failures"] == ["AMEX Q7", "AMEX Q10", "PepsiCo Q9"]
    assert rows[1]["failures"] == ["AMD dg01"]


@pytest.mark.corpus
def test_real_run_logs():
    b = bench_dir()
    k5 = load_run_logs(b / "comprehensive_k5")
    k3 = load_run_logs(b / "comprehensive_k3")
    assert sorted(k5) == ["AMD_2022", "AMEX_2022", "Boeing_2022", "Pepsico_2022"]
    assert all(log["k"] == 5 and len(log["entries"]) == 10 for log in k5.values())
    assert all(log["k"] == 3 and len(log["entries"]) == 10 for log in k3.values())
    amd1 = k5["AMD_2022"]["entries"][0]
    assert [n for n, _ in amd1["nodes"]] == ["0066", "0114", "0062", "0060", "0059"]
    assert amd1["cited"]["ids"] == ["0114", "0062"]
    # every answer cites only nodes it was given, and all but one cite by id
    entries = [e for log in k5.values() for e in log["entries"]]
    assert all(set(e["cited"]["ids"]) <= {n for n, _ in e["nodes"]} for e in entries)
    assert sum(1 for e in entries if not e["cited"]["ids"]) == 1
    pep10 = k3["Pepsico_2022"]["entries"][9]
    assert pep10["error"] is None and [n for n, _ in pep10["nodes"]] == ["0080", "0081", "0068"]
