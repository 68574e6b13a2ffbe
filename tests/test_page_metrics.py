"""page_hit / page_recall: evidence pages (zero-based, as FinanceBench writes them) against the PDF pages of
the lines actually sent."""

from types import SimpleNamespace as S

from ppkit.bench.metrics import gold_pages, page_scores
from ppkit.bench.results import KScores


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
