"""The finance catalogue (ppkit.finance): data with sources, phrase matching of row labels and questions.

Questions and labels here are written for these tests (a made-up company, Norwell)."""

import json

import pytest

from ppkit.finance.catalogue import (FAMILIES, CatalogueError, catalogue, formula_concepts, load, parse_formula)
from ppkit.finance.labels import label_match, words
from ppkit.finance.read import amount_measure, expand, growth_measure, mentions, read_measure


def test_the_catalogue_loads_with_a_source_for_every_entry():
    cat = catalogue()
    standard = [m for m in cat.measures.values() if m.family != "amount"]
    assert len(standard) >= 40
    assert {m.family for m in standard} >= set(FAMILIES) - {"amount"}
    for entry in [*cat.concepts.values(), *cat.measures.values(), *cat.glossary]:
        assert entry.source.title
    for t in cat.glossary:
        assert t.source.url.startswith("https://")
    for m in cat.measures.values():  # every formula reads known concepts only
        assert set(formula_concepts(m.formula)) <= set(cat.concepts)


def test_formulas_parse_into_nodes():
    concepts = {"cash", "receivables", "current_liabilities", "revenue"}
    assert parse_formula("cash / current_liabilities", concepts) == ("/", ("item", "cash"), ("item", "current_liabilities"))
    assert parse_formula("2 * avg(receivables) - prev(revenue)", concepts) == (
        "-", ("*", ("num", 2.0), ("avg", "receivables")), ("prev", "revenue"))
    # a name that is no concept is another measure's formula
    assert parse_formula("liquid / current_liabilities", concepts, {"liquid": "cash + receivables"}) == (
        "/", ("+", ("item", "cash"), ("item", "receivables")), ("item", "current_liabilities"))
    for bad in ("cash +", "avg(cash", "unknown / cash", "sqrt(cash)", "cash $ revenue"):
        with pytest.raises(CatalogueError):
            parse_formula(bad, concepts)


def test_bad_data_is_refused_with_the_entry_named():
    src = {"title": "a textbook"}
    concept = {"id": "cash", "statement": "balance", "labels": ["cash"], "source": src}
    measure = {"id": "m", "formula": "cash", "unit": "usd", "family": "amount", "source": src}
    assert load([concept], [measure], []).measures["m"].formula == ("item", "cash")
    with pytest.raises(CatalogueError, match="source"):
        load([{**concept, "source": {}}], [], [])
    with pytest.raises(CatalogueError, match="unit"):
        load([concept], [{**measure, "unit": "furlongs"}], [])
    with pytest.raises(CatalogueError, match="no measure"):
        load([concept], [measure], [{"term": "x", "measure": "nope", "source": src}])
    with pytest.raises(CatalogueError, match="statement"):
        load([{**concept, "statement": "footnotes"}], [], [])


@pytest.mark.parametrize("label, text, expected", [
    ("Total current assets", "total current assets", "exact"),
    ("Other current assets", "current assets", None),  # another row, not the total
    ("Total liabilities and shareholders' equity", "total liabilities", None),
    ("Accounts receivable, net of allowances of $12", "accounts receivable", "prefix"),
    ("Receivables from joint ventures", "receivables", None),
    ("Net income attributable to Norwell Inc.", "net income", "prefix"),
    ("Net income per share", "net income", None),
    ("Total Norwell Tools shareholders' equity", "total * shareholders' equity", "exact"),
    ("Net cash provided by (used in) operating activities", "net cash * operating activities", "exact"),
    ("Depreciation", "depreciation and amortization…", None),
    ("Depreciation and amortization of intangibles", "depreciation and amortization…", "prefix"),
    ("Less: current maturities of long-term debt", "current maturities of long-term debt…", "exact"),
    ("(Loss) income from operations", "income from operations", "exact"),
    ("Long term debt", "long-term debt", "exact"),
    ("**Inventories**", "inventory", "exact"),
])
def test_label_matching(label, text, expected):
    assert label_match(label, text) == expected


def test_words_read_stems_boundaries_and_asides():
    assert words("Cost of products sold (Note 3):") == ("cost", "product", "sold")
    assert words("Property, plant and equipment — net") == ("properti", "|", "plant", "equip", "|", "net")


@pytest.mark.parametrize("question, measure", [
    ("What was Norwell's acid-test ratio at year end 2023?", "quick_ratio"),
    ("How many days of sales were tied up in receivables (DSO) in FY23?", "days_sales_outstanding"),
    ("Norwell's times interest earned for 2023?", "interest_coverage"),
    ("What did Norwell spend on buybacks last year?", "share_repurchases"),
    ("How did the bottom line develop?", "net_income"),
    ("What was the FCF margin?", "free_cash_flow_margin"),
    ("What is Norwell's gearing?", "debt_to_equity"),
])
def test_read_measure_by_name_synonym_and_everyday_term(question, measure):
    assert read_measure(question).id == measure


def test_read_measure_operations():
    share = read_measure("What was capex as a percentage of cash from operations in 2023?")
    assert share.unit == "percent" and share.formula == ("pct", ("/", ("item", "capex"), ("item", "cfo")))
    assert read_measure("How fast did the top line grow y/y?").id == "revenue_growth"
    assert read_measure("What was the 2021-2023 CAGR of net sales?").formula == ("cagr", "revenue")
    assert read_measure("By how much did inventories increase in 2023?").formula == (
        "-", ("item", "inventory"), ("prev", "inventory"))
    assert read_measure("By what percent did inventories increase in 2023?").unit == "percent"
    assert read_measure("Who audits Norwell?") is None


def test_growth_and_amount_measures_compose():
    assert amount_measure("revenue").id == "revenue"
    g = growth_measure(amount_measure("gross_profit"))
    assert g.unit == "percent" and g.family == "growth"
    assert [(m.kind, m.id) for m in mentions("top line and opex")] == [("measure", "revenue"),
                                                                       ("concept", "operating_expenses")]


def test_expand_names_the_input_rows():
    assert "total current liabilities" in expand("Norwell's quick ratio?")
    assert expand("Who audits Norwell?") == ""


def test_the_data_files_are_plain_json():
    from ppkit.finance import catalogue as module

    for name in ("concepts.json", "measures.json", "glossary.json"):
        data = json.loads((module.DATA / name).read_text(encoding="utf-8"))
        assert list(data) == [name.split(".")[0]]
