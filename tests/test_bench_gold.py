"""ppkit.bench.data.gold and ppkit.bench.data.evidence: gold sections from reference logs, evidence and breadcrumbs."""

import pytest

from bench_support import FIX, bench_dir, fixture_docs, tenk_docs
from ppkit.bench.data.evidence import evidence_kind, map_evidence, map_evidence_on_page, normalise
from ppkit.bench.data.gold import comprehensive_gold, financebench_gold, map_breadcrumb, multimodal_gold
from ppkit.bench.data.loaders import load_comprehensive, load_financebench, load_multimodal_queries


def test_normalise_and_kind():
    assert normalise("| **Net Revenue** | $ 86,392 |") == "net revenue $ 86,392"
    assert normalise("Management’s — <u>Discussion</u>") == "management's - discussion"
    assert evidence_kind("Net revenue\n$\n86,392 \n$\n79,474\nCost of sales\n40,576\n37,075") == "table"
    assert evidence_kind("Multiple legal actions have been filed\nagainst us as a result of the accident.") == "prose"


def test_evidence_prose_found_across_pdf_line_breaks():
    docs = fixture_docs()
    ev = ("Net\nrevenue for 2022 was $23.6 billion, an increase of 44% compared to 2021 net revenue of $16.4 billion. "
          "The increase in net\nrevenue was driven by higher sales of anvils to desert customers")
    m = map_evidence(ev, docs.trees["Acme"], docs.lines("Acme"))
    assert (m.node_ids, m.kind, m.mapped) == (("0003",), "prose", True)
    assert m.found == 1.0 and m.covered == 1.0
    assert sorted(m.lines["0003"]) == [10]


def test_evidence_table_found_in_another_column_order():
    docs = fixture_docs()
    # PDF cell-per-line text, columns in the reverse order of the Markdown table, with page furniture
    ev = ("Table of Contents\nCONSOLIDATED STATEMENTS OF OPERATIONS\n(in millions)\n2020\n2021\n2022\nNet revenue\n$\n"
          "9,763 \n$\n16,434 \n$\n23,601 \nCost of sales\n5,416 \n8,505 \n12,998 \nGross profit\n4,347 \n7,929 \n10,603\n58")
    m = map_evidence(ev, docs.trees["Acme"], docs.lines("Acme"))
    assert (m.node_ids, m.kind, m.mapped) == (("0005",), "table", True)
    assert sorted(m.lines["0005"]) == [20, 21, 22]
    assert m.features == 9 and m.found == 1.0  # nine distinctive numbers; the year columns and "58" are not


def test_evidence_not_in_the_document_is_reported():
    docs = fixture_docs()
    m = map_evidence("The Board has not declared a quarterly dividend in the past three fiscal years.",
                     docs.trees["Globex"], docs.lines("Globex"))
    assert m.mapped is False and m.node_ids == ()
    assert m.reason == "no feature found in the document"
    m = map_evidence("", docs.trees["Globex"], docs.lines("Globex"))
    assert (m.mapped, m.reason) == (False, "empty evidence text")


def test_evidence_placed_on_its_page():
    docs = fixture_docs()
    tree, lines = docs.trees["Acme"], docs.lines("Acme")
    owner = {n.node_id: (n.line_start, n.text_end) for n in tree.headings()}
    a, b = owner["0005"]
    # evidence whose text the extraction garbled: nothing is found in the document
    garbled = "Tbl of Cntnts\nCNSLDTD STMNTS\n(n mllns)"
    assert map_evidence(garbled, tree, lines).mapped is False
    m = map_evidence_on_page(garbled, tree, lines, a, b)
    assert (m.node_ids, m.kind, m.mapped, m.covered) == (("0005",), "page", True, 0.0)
    assert m.reason.startswith("placed by its page only")
    # evidence that is on the page is matched there, as by map_evidence
    ev = ("Net revenue\n$\n9,763 \n$\n16,434 \n$\n23,601 \nCost of sales\n5,416 \n8,505 \n12,998 \n"
          "Gross profit\n4,347 \n7,929 \n10,603")
    m = map_evidence_on_page(ev, tree, lines, a, b)
    assert (m.node_ids, m.kind, m.mapped) == (("0005",), "table", True)
    blank = [i for i, ln in enumerate(lines, start=1) if not ln.strip()][0]
    m = map_evidence_on_page(garbled, tree, lines, blank, blank)
    assert m.mapped is False and "empty" in m.reason


def test_financebench_gold_fixture_coverage_and_unmapped():
    docs = fixture_docs()
    qs = load_financebench(FIX / "bench_financebench.jsonl")
    g = financebench_gold(qs, docs)
    assert g.qrels == {"fb-acme-prose": {"Acme#0003": 1}, "fb-acme-table": {"Acme#0005": 1}}
    assert g.docs["fb-initech"] == [] and g.docs["fb-acme-table"] == ["Acme"]
    assert set(g.unmapped) == {"fb-globex-missing", "fb-initech"}
    assert "not placed" in g.unmapped["fb-globex-missing"]
    assert "'INITECH_2022_10K' is not indexed" in g.unmapped["fb-initech"]
    assert g.report()["coverage"] == 0.5


def test_comprehensive_gold_fixture_ids_names_and_unmapped(tmp_path):
    import openpyxl

    wb = openpyxl.Workbook()
    for r in [["Qno", "Company", "Question"], [1, "Acme_2022", "gross margin?"], [2, "Acme_2022", "legal risk?"],
              [3, "Acme_2022", "tea?"], [4, "Acme_2022", "not in the log"]]:
        wb.active.append(r)
    wb.save(tmp_path / "q.xlsx")
    qs = load_comprehensive(tmp_path / "q.xlsx")
    g = comprehensive_gold(qs, FIX / "bench_reference" / "comprehensive_k5", fixture_docs())
    assert g.qrels == {"Acme-1": {"Acme#0005": 1, "Acme#0003": 1}, "Acme-2": {"Acme#0006": 1}}
    assert g.provenance["Acme-2"] == {"Acme#0006": "cited by name 'Legal Proceedings'"}
    assert g.unmapped == {"Acme-3": "the reference answer cites no node id or resolvable source name",
                          "Acme-4": f"no reference k=5 log entry for Acme Q4 in {FIX / 'bench_reference' / 'comprehensive_k5'}"}
    # the fixture's Overview crumb names node 0002 correctly, its titles agree with the tree
    assert g.report()["notes"] == {}


def test_map_breadcrumb_exact_tail_and_case():
    trees = fixture_docs().trees
    assert map_breadcrumb("Acme > Acme Corp Annual Report > Results of Operations > **Anvils**", trees) == [
        ("Acme", "0004")]
    assert map_breadcrumb("acme > Anvils", trees) == [("Acme", "0004")]  # levels skipped
    assert map_breadcrumb("Initech > Anvils", trees) == []


# -- the real reference data ----------------------------------------------------------------------


@pytest.mark.corpus
def test_real_comprehensive_gold_every_question():
    b = bench_dir()
    docs = tenk_docs()
    qs = load_comprehensive(b / "comprehensive_questions.xlsx")
    g = comprehensive_gold(qs, b / "comprehensive_k5", docs)
    rep = g.report()
    assert (rep["questions"], rep["with_gold"], rep["gold_sections"]) == (40, 40, 65)
    assert rep["unmapped"] == {} and rep["notes"] == {}  # every logged title agrees with ppkit's tree
    assert g.qrels["AMD-1"] == {"AMD#0114": 1, "AMD#0062": 1}
    assert g.qrels["AMD-4"] == {"AMD#0089": 1}  # cited by name only: "Consolidated Balance Sheets"
    assert docs.trees["AMD"]["0089"].title == "Consolidated Balance Sheets"
    assert g.qrels["AMEX-7"] == {"AMEX#0066": 1, "AMEX#0084": 1}
    assert g.qrels["Pepsico-9"] == {"PepsiCo#0095": 1}
    assert docs.trees["PepsiCo"]["0068"].title == "Free Cash Flow"  # logged as "pepsico > Europe > **Free Cash Flow**"


@pytest.mark.corpus
def test_real_financebench_gold():
    b = bench_dir()
    docs = tenk_docs()
    qs = load_financebench(b / "financebench_dev.jsonl")
    g = financebench_gold(qs, docs)
    assert g.unmapped == {}
    assert g.qrels == {
        "financebench_id_01198": {"AMD#0060": 1},
        "financebench_id_00723": {"AMEX#0175": 1},
        "financebench_id_01091": {"Boeing#0178": 1},
        "financebench_id_01009": {"PepsiCo#0008": 1, "PepsiCo#0009": 1},
        "financebench_id_03620": {"PepsiCo#0078": 1, "PepsiCo#0080": 1},
    }
    assert docs.trees["AMEX"]["0175"].title == "CONSOLIDATED STATEMENTS OF INCOME"
    assert docs.trees["PepsiCo"]["0080"].title == "Consolidated Statement of Cash Flows"
    kinds = [m["kind"] for q in qs for m in g.details[q["qid"]]["evidence"]]
    assert kinds == ["prose", "table", "prose", "prose", "prose", "table", "table"]


@pytest.mark.corpus
def test_real_multimodal_gold_sections_and_images():
    from ppkit.bench.data.loaders import MarkdownDocs
    from ppkit.core.data import paper_paths

    b = bench_dir()
    qs = load_multimodal_queries(b / "multimodal_queries.json")
    g = multimodal_gold(qs, b / "multimodal_reference_log.json", MarkdownDocs(paper_paths()))
    rep = g.report()
    assert (rep["with_gold"], rep["unmapped"]) == (20, {})
    assert g.images["mm-1"] == {"Galore/tables/fileoutpart157.png": 1}
    assert g.details["mm-1"]["image_nodes"] == {"Galore/tables/fileoutpart157.png": "Galore#0036"}
    assert "mm-9" not in g.images  # the reference showed no image for query 9
    assert g.docs["mm-20"] == ["NemoBot", "Galore"]
    assert {s.split("#")[0] for s in g.qrels["mm-15"]} == {"VectorFusion", "VectorPainter"}
