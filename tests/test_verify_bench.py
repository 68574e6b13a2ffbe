"""The verifier benchmark's planted errors (ppkit.bench.runs.verify) and the checks that catch them, on a
hand-written answer and two hand-written sections."""

from ppkit.answer.verify import verify_answer
from ppkit.bench.runs.verify import plant_errors, run_verify_bench, verify_markdown
from ppkit.retrieval.types import Section

OPS = Section(
    doc="AMD", node_id="0085", breadcrumb="AMD > Consolidated Statements of Operations", line_start=100,
    line_end=104, rank=1, score=1.0, sent_ranges=((100, 104),), chars_total=0,
    text="\n".join([
        "## Consolidated Statements of Operations",
        "| (In millions) | 2022 | 2021 |",
        "| Net revenue | $ 23,601 | $ 16,434 |",
        "| Operating income | 1,264 | 3,648 |",
        "| Net income (loss) | (607) | 3,162 |",
    ]))
SEG = Section(doc="AMD", node_id="0062", breadcrumb="AMD > Results of Operations", line_start=200, line_end=201,
              rank=2, score=0.9, sent_ranges=((200, 201),), chars_total=0,
              text="## Results of Operations\nEmbedded revenue was $4,552 million in 2022.")

LIQ = Section(doc="AMD", node_id="0090", breadcrumb="AMD > Liquidity", line_start=300, line_end=301,
              rank=3, score=0.8, sent_ranges=((300, 301),), chars_total=0,
              text="## Liquidity\nCash and short-term investments were $5,855 million.")

ANSWER = ("In 2022, operating income was $1,264 million on net revenue of $23,601 million (ID: 0085), "
          "an operating margin of 5.36%.\n\nEmbedded revenue was $4,552 million (ID: 0062).")


def test_clean_answer_passes_and_each_plant_is_one_error_that_is_caught():
    clean = verify_answer(ANSWER, [OPS, SEG, LIQ])
    assert clean["ok"] is True
    plants = plant_errors(ANSWER, clean, [OPS, SEG, LIQ])
    assert plants == {
        "changed_figure": ANSWER.replace("$1,264 million", "$1,428 million"),
        "wrong_ratio": ANSWER.replace("5.36%", "6.06%"),
        "swapped_year": ANSWER.replace("In 2022,", "In 2021,"),
        "wrong_citation": ANSWER.replace("ID: 0085", "ID: 0090"),
    }
    for kind, text in plants.items():
        assert verify_answer(text, [OPS, SEG, LIQ])["ok"] is False, kind


def test_wrong_period_names_the_column_year():
    rep = verify_answer("Operating income was $3,648 million in 2022 (ID: 0085).", [OPS, SEG, LIQ])
    (c,) = rep["claims"]
    assert (c["status"], c["column_years"]) == ("wrong_period", ["2021"]) and rep["ok"] is False
    # both years said: the figure's own column is among them
    assert verify_answer("Operating income fell from $3,648 million in 2021 to $1,264 million in 2022 (ID: 0085).",
                         [OPS, SEG, LIQ])["ok"] is True
    # a figure in prose that names the year said agrees
    assert verify_answer("Embedded revenue was $4,552 million in 2022 (ID: 0062).", [OPS, SEG, LIQ])["ok"] is True


def test_id_lists_references_dates_and_title_case_terms_are_not_claims():
    rep = verify_answer('As of December 31, 2022, net revenue was $23,601 million (ID: 0062, 0085); see Tables 9, 11 '
                        'and 15 and Note 4. AMD does not report "Cost of Goods Sold" as such. '
                        'Margin = (1,264 / 23,601) × 100.', [OPS, SEG, LIQ])
    assert [c["cited"] for c in rep["citations"]] == ["ID 0062", "ID 0085"]
    assert [c["text"] for c in rep["claims"]] == ["$23,601 million", "1,264", "23,601)"]
    assert rep["ok"] is True


def test_a_figure_found_only_in_sections_the_answer_does_not_cite_fails_wherever_it_stands():
    cited_elsewhere = "Net revenue was $23,601 million (ID: 0062)."
    rep = verify_answer(cited_elsewhere, [OPS, SEG, LIQ])
    assert rep["claims"][0]["status"] == "uncited" and rep["ok"] is False
    # its own paragraph cites nothing, but the answer's citations (0062) do not hold it either
    rep = verify_answer("Net revenue was $23,601 million.\n\nEmbedded revenue was $4,552 million (ID: 0062).", [OPS, SEG, LIQ])
    assert rep["claims"][0]["status"] == "uncited" and rep["ok"] is False
    # an answer citing nothing is checked against every retrieved section
    assert verify_answer("Net revenue was $23,601 million.", [OPS, SEG, LIQ])["ok"] is True


def test_a_wrong_citation_never_points_at_another_section_holding_the_figure():
    """An uncited section that also holds the figure is no wrong citation for it: the plant skips it."""
    also = Section(doc="AMD", node_id="0070", breadcrumb="AMD > Operating Income", line_start=250, line_end=251,
                   rank=2, score=0.95, sent_ranges=((250, 251),), chars_total=0,
                   text="## Operating Income\nOperating income was $1,264 million in 2022.")
    answer = "In 2022, operating income was $1,264 million on net revenue of $23,601 million (ID: 0085)."
    sections = [OPS, also, LIQ]
    plants = plant_errors(answer, verify_answer(answer, sections), sections)
    assert plants["wrong_citation"] == answer.replace("ID: 0085", "ID: 0090")


def test_the_bench_reports_rates_by_company():
    cases = [{"run": "k5", "doc": "AMD", "qno": 1, "answer": ANSWER, "light": "green", "sections": [OPS, SEG, LIQ]},
             {"run": "k5", "doc": "Acme", "qno": 2, "answer": "Net revenue was $23,999 million (ID: 0085).",
              "light": "green", "sections": [OPS, SEG, LIQ]}]
    result = run_verify_bench(None, cases=cases)
    assert result["by_company"]["AMD"] == {"clean": 1, "false_alarm_rate": 0.0, "planted": 4, "catch_rate": 1.0}
    assert result["by_company"]["Acme"] == {"clean": 1, "false_alarm_rate": 1.0, "planted": 0, "catch_rate": None}
    assert "| AMD | 4 | 100% | 1 | 0% |" in verify_markdown(result)
