"""page_hit / page_recall: evidence pages (zero-based, as FinanceBench writes them) against the PDF pages of
the lines actually sent."""

from types import SimpleNamespace as S

from ppkit.bench.measures.metrics import gold_pages, page_scores, score_question, source_shares
from ppkit.bench.runs.results import KScores


def test_gold_pages_are_one_based_and_only_for_documents_with_a_page_map():
    evidence = [{"doc": "A", "page": 17}, {"doc": "A", "page": 0}, {"doc": "B", "page": 3}, {"doc": "A"},
                {"doc": "", "page": 5}]
    assert gold_pages(evidence, lambda d: d == "A") == {("A", 18), ("A", 1)}
    # the Comprehensive and multimodal sets carry their evidence as text: no pages, no error
    assert gold_pages("Net revenue was $23.6 billion", lambda d: True) == set()
    assert gold_pages(["Net revenue was $23.6 billion"], lambda d: True) == set()


def test_page_scores_count_only_pages_sent_of_the_right_document():
    sent = [S(doc="A", pages=(17, 18)), S(doc="B", pages=(40,)), S(doc="C", pages=())]
    assert page_scores(sent, {("A", 18), ("A", 40)}) == {"page_hit": 1.0, "page_recall": 0.5}
    assert page_scores(sent, {("A", 40)}) == {"page_hit": 0.0, "page_recall": 0.0}  # page 40 was B's
    assert page_scores(sent, set()) == {}


def test_page_fields_stay_out_of_the_json_without_pages():
    base = dict(hit=1.0, recall=1.0, context_chars_mean=10.0, hit_overlap=1.0, recall_overlap=1.0, wrong_doc=0.0, n=1)
    assert "page_hit" not in KScores(**base).to_dict()
    d = KScores(**base, page_hit=0.5, page_recall=0.25, n_pages=4).to_dict()
    assert (d["page_hit"], d["page_recall"], d["n_pages"]) == (0.5, 0.25, 4)


def test_wrong_company_and_wrong_period_shares():
    company = {"X_2021_10K", "X_2022_10K", "X_2023Q2_10Q"}
    sent = [S(doc="X_2022_10K"), S(doc="X_2021_10K"), S(doc="Y_2022_10K"), S(doc="X_2023Q2_10Q")]
    assert source_shares(sent, ["X_2022_10K"], company) == {"wrong_company": 0.25, "wrong_period": 0.5,
                                                            "other_form": 0.0}
    # a comparison question about two filings: neither is the wrong period
    assert source_shares(sent, ["X_2022_10K", "X_2021_10K"], company)["wrong_period"] == 0.25
    assert source_shares([], ["X_2022_10K"], company) == {"wrong_company": 0.0, "wrong_period": 0.0, "other_form": 0.0}
    # the full-year release of the 10-K's fiscal year reports the same period: another filing, not another period
    company |= {"X_2022Q4_EARNINGS"}
    sent = [S(doc="X_2022_10K"), S(doc="X_2022Q4_EARNINGS"), S(doc="X_2021_10K"), S(doc="X_2022Q4_EARNINGS")]
    assert source_shares(sent, ["X_2022_10K"], company, {"X_2022_10K", "X_2022Q4_EARNINGS"}) == {
        "wrong_company": 0.0, "wrong_period": 0.25, "other_form": 0.5}


def test_same_period_pairs_the_annual_report_with_its_full_year_release():
    from ppkit.retrieval.analyze import same_period

    k22 = {"form_type": "10-K", "fiscal_year": 2022}
    assert same_period(k22, {"form_type": "earnings release", "fiscal_year": 2022, "quarter": 4})
    assert not same_period(k22, {"form_type": "earnings release", "fiscal_year": 2022, "quarter": 3})
    assert not same_period(k22, {"form_type": "10-K", "fiscal_year": 2021})
    assert same_period({"form_type": "10-Q", "fiscal_year": 2023, "quarter": 2},
                       {"form_type": "earnings release", "fiscal_year": 2023, "quarter": 2})
    # 8-Ks report events, and a filing of unknown year matches nothing
    assert not same_period({"form_type": "8-K", "fiscal_year": 2022}, {"form_type": "8-K", "fiscal_year": 2022})
    assert not same_period({"form_type": "8-K", "fiscal_year": 2022, "quarter": 4}, k22)
    assert not same_period({"form_type": "10-K"}, {"form_type": "10-K"})


def test_score_question_reports_source_shares_only_with_the_company():
    from ppkit.bench.measures.metrics import Sent

    items = [Sent("X_2022_10K", ((1, 5),), 100), Sent("Y_2022_10K", ((1, 5),), 100)]
    gold = [("X_2022_10K#0001", "X_2022_10K", 2, 4)]
    with_company = score_question(items, gold, [2], doc=["X_2022_10K"], company={"X_2022_10K", "X_2021_10K"})
    assert (with_company["2"]["wrong_company"], with_company["2"]["wrong_period"]) == (0.5, 0.0)
    assert "wrong_company" not in score_question(items, gold, [2], doc=["X_2022_10K"])["2"]
    base = dict(hit=1.0, recall=1.0, context_chars_mean=10.0, hit_overlap=1.0, recall_overlap=1.0, wrong_doc=0.0, n=1)
    assert "wrong_company" not in KScores(**base).to_dict()
    assert KScores(**base, wrong_company=0.1, wrong_period=0.2).to_dict()["wrong_period"] == 0.2
