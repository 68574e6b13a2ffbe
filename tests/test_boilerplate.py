"""ppkit.retrieval.boilerplate.demote: boilerplate sections ranked below content in retrieval unless asked for,
the freed slot going to the top section's child or neighbour."""

from ppkit.retrieval.boilerplate import boilerplate_kind, demote
from ppkit.retrieval.types import Candidate

EXHIBITS = "\n".join(["| Exhibit | Description |", "| 10.1 | Credit Agreement |", "| 10.2 | Indenture |",
                      "| 31.1 | Certification |", "| 32.1 | Certification |"])


def _cand(node_id: str, breadcrumb: str, text: str, score: float) -> Candidate:
    return Candidate("Acme", node_id, breadcrumb, score, 1, 1, (score,), 1, 10, text[:150], text, score)


def _ranked():
    return [_cand("0040", "Acme > Item 7 > Results of Operations", "Revenue rose 12% to $1,250 million.", 9.0),
            _cand("0090", "Acme > Part IV > Exhibit Index", EXHIBITS, 8.0),
            _cand("0020", "Acme > Item 1 > Business", "Acme makes widgets.", 7.0),
            _cand("0033", "Acme > Item 5 > Market", "Our shares trade on the NYSE.", 6.0),
            _cand("0041", "Acme > Item 7 > Results of Operations > Segment Revenue",
                  "Widgets revenue was $900 million.", 5.0)]


def test_boilerplate_moves_below_content_and_its_slot_goes_to_the_top_sections_child():
    ranked, notes = demote("What drove revenue growth?", _ranked(), 3)
    assert [c.node_id for c in ranked] == ["0040", "0020", "0041", "0033", "0090"]
    assert [c.stage2_rank for c in ranked] == [1, 2, 3, 4, 5]
    assert notes == ["boilerplate (exhibits) moved below the content: Acme#0090"]


def test_a_question_asking_for_the_boilerplate_keeps_its_rank():
    ranked, notes = demote("Which credit agreement exhibits were filed?", _ranked(), 3)
    assert [c.node_id for c in ranked] == ["0040", "0090", "0020", "0033", "0041"] and notes == []


def test_a_consolidated_statements_heading_and_subsidiaries_is_not_a_subsidiary_list():
    assert boilerplate_kind("PepsiCo > Consolidated Statement of Equity > PepsiCo, Inc. and Subsidiaries",
                            "| Common stock | 23 | 23 |") is None
    assert boilerplate_kind("PepsiCo > PEPSICO, INC. SUBSIDIARIES (as of December 31, 2022)",
                            "Frito-Lay, Inc. (Delaware)") == "subsidiaries"
