"""ppkit.retrieval.boilerplate.demote: boilerplate sections ranked below content in retrieval unless asked for,
the freed slot going to the top section's child or neighbour."""

import json
from dataclasses import replace
from pathlib import Path

from ppkit.retrieval.boilerplate import boilerplate_kind, demote, filing_docs
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


COVER = ["Acme Corp", "(Exact name of registrant as specified in its charter)", "Commission File Number 001-1234",
         "Indicate by check mark whether the registrant is an emerging growth company. ☐",
         "Check the appropriate box below if the Form 8-K filing is intended to satisfy the filing obligation ☐"]
ITEM = ["Item 8.01 Other Events.",
        "On June 30, 2022, Acme Finance, Inc., a wholly-owned subsidiary of Acme Corp, entered into a supplemental "
        "indenture with the trustee under which Acme Widgets, Inc. replaced Acme Finance, Inc. as the issuer of the "
        "3.625% notes due 2026 and the 4.500% notes due 2028 and assumed its covenants under the indentures. The notes "
        "were issued in June 2019 in an exchange offer to eligible holders of the existing notes.",
        "Item 9.01 Financial Statements and Exhibits.",
        "4.1 Indenture, dated April 28, 2016 (incorporated by reference to Exhibit 4.7 to the Form S-4).",
        "4.2 Supplemental Indenture (incorporated by reference to Exhibit 10.2 to the Form 8-K filed June 17, 2019)."]


def test_an_8k_cover_section_holding_an_item_with_its_prose_is_content():
    # a flat PDF tree leaves the 8-K's Item inside its cover section: the check marks alone made it "cover"
    assert boilerplate_kind("Acme_8K > ACME CORP", "\n".join(COVER)) == "cover"
    assert boilerplate_kind("Acme_8K > ACME CORP", "\n".join(COVER + ITEM)) is None
    # Items one after another (a table of contents) or an exhibits Item hold no prose of their own
    toc = ["Item 1. Business 3", "Item 1A. Risk Factors 12", "Item 7. Management's Discussion and Analysis 30"]
    assert boilerplate_kind("Acme_8K > ACME CORP", "\n".join(COVER + toc)) == "cover"
    assert boilerplate_kind("Acme_8K > Exhibits", "\n".join(ITEM[3:] * 3)) == "exhibits"


def test_images_are_no_check_boxes():
    figures = "\n".join(f"![](images/fig{i}.png)" for i in range(1, 4))
    assert boilerplate_kind("Paper > 4.2 Performance Comparison", figures) is None
    assert boilerplate_kind("Acme > Cover", "[ ] Large accelerated filer\n[x] Accelerated filer\n[ ] Smaller") == "cover"


def test_only_the_sections_of_filings_are_demoted():
    # a paper's numbered list has the shape of an exhibit index; the catalog says it is no filing
    paper = replace(_cand("0005", "Paper > 1. Introduction", EXHIBITS, 8.0), doc="Paper")
    ranked = [_ranked()[0], paper, *_ranked()[2:]]
    kept, notes = demote("What drove revenue growth?", ranked, 3, filings=frozenset({"Acme"}))
    assert [c.section_id for c in kept][:2] == ["Acme#0040", "Paper#0005"] and notes == []
    moved, notes = demote("What drove revenue growth?", ranked, 3)  # no catalog: every document judged
    assert "Paper#0005" not in [c.section_id for c in moved][:3] and len(notes) == 1
    assert filing_docs({"Acme": {"form_type": "10-K"}, "Rel": {"form_type": "earnings release"},
                        "Paper": {"form_type": None}, "Deal": {}}) == {"Acme", "Rel"}


def test_retrieval_demotes_a_filings_boilerplate_but_not_a_papers(tmp_path):
    """The same text twice: as a paper (no form type) its tick-box section stays first; as a 10-K (a sidecar
    gives the form type) the tick boxes read as cover text and the section goes below the content."""
    import shutil

    import ppkit

    text = Path(__file__).parent / "fixtures" / "boilerplate_paper.md"
    shutil.copy(text, tmp_path / "paper.md")
    shutil.copy(text, tmp_path / "filing.md")
    (tmp_path / "filing.meta.json").write_text(json.dumps({"form_type": "10-K"}))
    index = ppkit.build_index([tmp_path / "paper.md", tmp_path / "filing.md"], tmp_path / "index",
                              embedder=ppkit.HashEmbedder(), config=ppkit.Config(online=False), progress=False)
    question = "Which widgets did respondents tick most often on the survey forms?"
    first = {doc: index.retrieve(question, k=2, docs=[doc]).sections[0].breadcrumb.split(" > ")[-1]
             for doc in ("paper", "filing")}
    assert first == {"paper": "1. Survey Forms", "filing": "2. Related Work"}
