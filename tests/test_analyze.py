"""Query analysis: companies, years and Items as filters (ppkit.analyze)."""

import pytest

from _hybrid_fixtures import fixture_index  # noqa: F401
from ppkit.retrieval.analyze import analyze, analyze_catalog, analyze_query, analyze_query_online, parse_periods, question_names


def test_names_aliases_and_search_text(fixture_index):
    f = analyze_query(fixture_index, "For Alpha, what is the current ratio?")
    assert f.docs == ["Alpha"] and f.companies == ["Alpha"] and f.search_text == "what is the current ratio?"
    f = analyze_query(fixture_index, "How did BetaCo's free cash flow develop?")  # sidecar alias
    assert f.docs == ["Beta"] and f.matched == {"Beta": "BetaCo"}
    assert f.search_text == "How did free cash flow develop?"
    f = analyze_query(fixture_index, "What did Alpha Widgets Corporation report as revenue?")
    assert f.docs == ["Alpha"] and f.search_text == "What did report as revenue?"


def test_ticker_is_case_sensitive(fixture_index):
    assert analyze_query(fixture_index, "What is AWC's operating income?").docs == ["Alpha"]
    assert analyze_query(fixture_index, "what is awc operating income?").docs is None


def test_comparison_in_order_of_mention(fixture_index):
    f = analyze_query(fixture_index, "Compare the current ratios of Beta and Alpha.")
    assert f.companies == ["Beta", "Alpha"] and f.comparison
    assert f.search_text == "Compare the current ratios."
    f = analyze_query(fixture_index, "Alpha vs Beta: which has the higher operating margin?")
    assert f.companies == ["Alpha", "Beta"] and f.search_text == "which has the higher operating margin?"


def test_years(fixture_index):
    f = analyze_query(fixture_index, "What was Alpha's revenue in FY2022 versus fiscal 2021?")
    assert f.years == [2021, 2022] and f.docs == ["Alpha"] and f.notes == []
    assert "FY2022" in f.search_text  # years stay in the search text
    f = analyze_query(fixture_index, "Revenue in FY21?")
    assert f.years == [2021] and f.docs is None
    assert f.notes == ["no document has fiscal year 2021: not filtered by year (a 10-K also reports earlier years)"]


def test_items_and_scope(fixture_index):
    f = analyze_query(fixture_index, "What does Item 1A say about suppliers for Alpha?")
    assert f.items == ["1A"] and f.scope(fixture_index) == {"Alpha": ["1A"]}
    f = analyze_query(fixture_index, "Which risk factors and what MD&A discussion?")
    assert f.items == ["1A", "7"] and f.docs is None
    assert f.scope(fixture_index) == {"Alpha": ["1A", "7"], "Beta": ["1A", "7"]}
    # Beta has no Item 8 section: its Item filter is dropped, Alpha's kept
    f = analyze_query(fixture_index, "Item 8 balance sheet of Alpha and Beta")
    assert f.scope(fixture_index) == {"Alpha": ["8"], "Beta": None}
    assert analyze_query(fixture_index, "What is the revenue?").scope(fixture_index) is None


def test_item_filter_applied_before_search(fixture_index):
    r = fixture_index.retrieve("What does Item 1A say about Alpha's suppliers?", 5)
    assert {s.section_id for s in r.sections} == {"Alpha#0006"}
    assert r.trace.scope == {"Alpha": ["1A"]}


class _Stub:
    """A stand-in for ppkit.llm.client.GeminiClient that returns a scripted JSON reply."""

    def __init__(self, data):
        self.data, self.prompts = data, []

    def generate(self, prompt, *, system=None, schema=None):
        self.prompts.append((prompt, system, schema))
        return type("R", (), {"data": self.data, "text": ""})()


def test_online_analyzer_checks_the_reply(fixture_index):
    stub = _Stub({"companies": ["alpha", "Gamma"], "years": [2022], "items": ["item 7"], "search_text": "revenue"})
    f = analyze_query_online(fixture_index, "How did the widget maker's revenue do?", client=stub)
    assert (f.analyzer, f.docs, f.years, f.items, f.search_text) == ("gemini", ["Alpha"], [2022], ["7"], "revenue")
    assert f.notes == ["Gemini named 'Gamma', which is not an indexed document: ignored"]
    prompt, system, schema = stub.prompts[0]
    assert "- Alpha: company='Alpha Widgets Corporation', ticker='AWC'" in prompt
    assert schema["required"] == ["companies", "years", "items", "search_text"]


def test_analyze_falls_back_offline_and_says_so(fixture_index):
    class Failing:
        def generate(self, *a, **k):
            raise __import__("ppkit.llm.client", fromlist=["LLMError"]).LLMError("no key")

    f = analyze(fixture_index, "For Alpha, what is revenue?", online=True, client=Failing())
    assert f.analyzer == "offline-rules" and f.docs == ["Alpha"]
    assert f.notes == ["online analyzer failed (no key); used the offline rules"]
    with pytest.raises(ZeroDivisionError):  # other errors are not swallowed
        class Broken:
            def generate(self, *a, **k):
                raise ZeroDivisionError

        analyze(fixture_index, "x", online=True, client=Broken())


def test_online_analyzer_through_google_genai(fixture_index, monkeypatch, tmp_path):
    """The real google-genai client against the tests' local Gemini server.

    Skipped until ppkit/llm.py and tests/gemini_server.py (another branch) are merged.
    """
    pytest.importorskip("ppkit.llm.client")
    gs = pytest.importorskip("gemini_server")
    from ppkit.core.config import Config
    from ppkit.llm.client import GeminiClient

    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with gs.GeminiServer() as server:
        server.script("generateContent", gs.json_reply({"companies": ["Beta"], "years": [], "items": ["1A"],
                                                        "search_text": "commodity risk"}))
        client = GeminiClient(api_key="test-key", base_url=server.url, config=Config(), use_cache=False, attempts=1,
                              cache_dir=tmp_path)
        f = analyze_query_online(fixture_index, "What commodity risks does the snack maker face?", client=client)
        body = server.of("generateContent")[0]["body"]
    assert (f.docs, f.items, f.search_text) == (["Beta"], ["1A"], "commodity risk")
    assert body["generationConfig"]["responseMimeType"] == "application/json"


def test_names_in_the_middle_of_the_question(fixture_index):
    f = analyze_query(fixture_index, "Compare the current ratios of Alpha and Beta at the end of FY2022.")
    assert f.search_text == "Compare the current ratios at the end of FY2022."


# A shelf of several filings per company, as metadata (what the analyzer reads from an index).
def _m(company, fy, form, quarter=None, ticker=None, end=None):
    return {"company": company, "aliases": [], "ticker": ticker, "fiscal_year": fy, "quarter": quarter,
            "form_type": form, "period_end": end}


SHELF = {
    "d1": _m("Northwind Traders Holdings, Inc.", 2021, "10-K", ticker="NWT"),
    "d2": _m("Northwind Traders Holdings, Inc.", 2022, "10-K"),
    "d3": _m("Northwind Traders Holdings, Inc.", 2023, "10-Q", quarter=2),
    "d4": _m("Northwind Traders Holdings, Inc.", 2023, "10-K"),
    "d5": _m("Northwind Traders Holdings, Inc.", 2022, "8-K", end="2022-07-01"),
    "e1": _m("American Widgets Company", 2022, "10-K"),
    "f1": _m("American Gears Corporation", 2022, "10-K"),
    "g1": _m("Lee & Lee", 2023, "earnings release", quarter=2),
    "g2": _m("Lee & Lee", 2022, "10-K"),
    "h1": _m("General Sprockets, Inc.", 2020, "10-K"),
}


def test_parse_periods_and_spans():
    assert parse_periods("capex between FY2021 and FY2023?")[:2] == ([2021, 2022, 2023], [])
    assert parse_periods("the FY2017 - FY2019 3 year average")[0] == [2017, 2018, 2019]
    assert parse_periods("from 2019 to 2020")[0] == [2019, 2020]
    assert parse_periods("in Q2 of FY2024 and FY2023")[:2] == ([2023, 2024], [[2024, 2]])
    assert parse_periods("As of FY2023Q1, and Q2'2023, and 3Q22")[1] == [[2022, 3], [2023, 1], [2023, 2]]
    assert parse_periods("second quarter of fiscal 2022")[1] == [[2022, 2]]
    _, _, dates = parse_periods("the 8-K dated 1st July 2022 and the news of May 26, 2023")
    assert [d.isoformat() for d in dates] == ["2023-05-26", "2022-07-01"]


def test_company_by_the_first_words_of_its_name():
    f = analyze_catalog(SHELF, "What was Northwind's FY2022 capital expenditure?")
    assert f.docs == ["d2"] and f.companies == ["d2"] and f.years == [2022]
    assert f.company_docs == {"Northwind": ["d2"]}
    assert f.search_text == "What was FY2022 capital expenditure?"
    assert analyze_catalog(SHELF, "What was NWT's FY2023 revenue?").docs == ["d4"]  # a ticker of another filing


def test_a_span_takes_the_later_annual_report():
    # the FY2022 10-K also reports FY2021
    assert analyze_catalog(SHELF, "How did Northwind's margin change between FY2021 and FY2022?").docs == ["d2"]
    # no FY2020 filing: the nearest later 10-K holds FY2020 as a comparative
    assert analyze_catalog(SHELF, "Northwind Traders revenue in FY2020?").docs == ["d1"]


def test_quarter_prefers_its_filing_then_the_annual_report():
    assert analyze_catalog(SHELF, "Northwind Traders cash at the end of Q2 of FY2023?").docs == ["d3"]
    # no filing of that quarter: the 10-K of its fiscal year
    assert analyze_catalog(SHELF, "Did Northwind Traders pay dividends in Q2 of FY2022?").docs == ["d2"]
    assert analyze_catalog(SHELF, "Did L&L's margin grow in Q2 of FY2023 compared to Q2 of FY2022?").docs == ["g1"]


def test_form_and_date_named():
    assert analyze_catalog(SHELF, "What was the agenda of Northwind Traders' 8-K dated 1st July 2022?").docs == ["d5"]
    # an annual figure: the 10-K, not the quarterly report of the same fiscal year
    assert analyze_catalog(SHELF, "Northwind Traders FY2023 revenue?").docs == ["d4"]


def test_no_period_searches_the_latest_annual_report_and_what_came_after():
    f = analyze_catalog(SHELF, "What does Northwind Traders sell?")
    assert f.docs == ["d4"] and f.companies == ["d4"]  # the FY2023 10-K; the Q2 FY2023 10-Q came before it
    assert f.notes == ["no period named: Northwind Traders's latest annual report and the filings after it searched "
                       "(1 of its 5 filings)"]
    later = {**SHELF, "d8": _m("Northwind Traders Holdings, Inc.", 2024, "10-Q", quarter=1),
             "d9": _m("Northwind Traders Holdings, Inc.", 2023, "earnings release", quarter=4)}
    assert analyze_catalog(later, "What does Northwind Traders sell?").docs == ["d4", "d8", "d9"]
    # a filing of unknown year cannot be placed before or after: it stays
    unknown = {**SHELF, "d0": _m("Northwind Traders Holdings, Inc.", None, "10-Q")}
    assert analyze_catalog(unknown, "What does Northwind Traders sell?").docs == ["d4", "d0"]
    # no annual report: every filing of the company
    eights = {**SHELF, "k1": _m("Kestrel Foods", 2022, "8-K", end="2022-05-20"),
              "k2": _m("Kestrel Foods", 2022, "8-K", end="2022-08-19")}
    f = analyze_catalog(eights, "What did Kestrel Foods announce?")
    assert f.docs == ["k1", "k2"] and f.notes == []
    f = analyze_catalog(SHELF, "What did Northwind Traders earn in FY2030?")
    assert f.docs == ["d1", "d2", "d3", "d4", "d5"]
    assert f.notes == ["no filing of Northwind Traders matches the period named: all 5 of its filings searched"]
    # a form or a date named is a period: no note, the filing named
    assert analyze_catalog(SHELF, "What did Northwind Traders' 8-K dated 1st July 2022 say?").notes == []


def test_a_two_word_name_by_the_first_letters_of_its_words():
    shelf = {**SHELF, "x1": _m("American Express Company", 2022, "10-K")}
    assert analyze_catalog(shelf, "Does AMEX have an improving margin as of 2022?").docs == ["x1"]
    assert analyze_catalog(shelf, "AmEx card fees in FY2022?").docs == ["x1"]
    assert analyze_catalog(shelf, "Amex card fees in FY2022?").companies == []  # written as a word: not the name


def test_shared_or_sentence_initial_words_select_nothing():
    # "American" is the first word of two companies; "General" opens the question
    assert analyze_catalog(SHELF, "Which American company grew most in FY2022?").companies == []
    assert analyze_catalog(SHELF, "General and administrative expenses in FY2020?").companies == []
    assert analyze_catalog(SHELF, "What did General Sprockets spend in FY2020?").docs == ["h1"]
    assert analyze_catalog(SHELF, "In FY2020, what did General spend?").docs == ["h1"]


def test_comparison_groups_filings_by_company():
    f = analyze_catalog(SHELF, "Compare FY2022 margins of American Widgets and Northwind Traders.")
    assert f.comparison and f.companies == ["e1", "d2"]
    assert f.company_docs == {"American Widgets": ["e1"], "Northwind Traders": ["d2"]}


def test_fiscal_years_written_as_such_come_first():
    f = analyze_catalog(SHELF, "As of FY 2022, how much did Northwind Traders expect to pay for retirees in 2026?")
    assert f.years == [2022, 2026] and f.docs == ["d2"]


def test_an_annual_question_also_searches_the_full_year_release():
    shelf = {**SHELF, "d6": _m("Northwind Traders Holdings, Inc.", 2023, "earnings release", quarter=4),
             "d7": _m("Northwind Traders Holdings, Inc.", 2022, "earnings release", quarter=4)}
    assert analyze_catalog(shelf, "Northwind Traders FY2023 adjusted EBITDA?").docs == ["d4", "d6"]
    # a quarter, a date or a form named: only that filing
    assert analyze_catalog(shelf, "Northwind Traders cash at the end of Q2 of FY2023?").docs == ["d3"]
    assert analyze_catalog(shelf, "Northwind Traders' 10-K for FY2023: revenue?").docs == ["d4"]
    # the release of another year is not the annual report's twin
    assert analyze_catalog(shelf, "How did Northwind's margin change between FY2021 and FY2022?").docs == ["d2", "d7"]
    # one company named twice is searched once
    assert analyze_catalog(shelf, "Did Northwind (NWT) grow in FY2021?").docs == ["d1"]


def test_ordinary_capitalised_words_are_no_names():
    # superlatives, measure and period words capitalised for emphasis or title case name nothing
    assert question_names("Which region had the Highest EBITDAR Contribution for MGM during FY2022?") == ["EBITDAR",
                                                                                                      "MGM"]
    assert question_names("What is the Real change in Sales for Coca-Cola in 2022?") == ["Coca-Cola"]
    assert question_names("What Was The Total Revenue Of Initech In Fiscal 2021?") == ["Initech"]
    assert question_names("Did Globex report a Net Loss on Monday?") == ["Globex"]


def test_names_of_the_chosen_documents_company_are_no_missing_names():
    """A caller who chose a filing asks about its company by ticker or short name: no "never mention 'JPM'"."""
    from ppkit.retrieval.analyze import chosen_names
    jpm = {"JPMORGAN_2021Q1_10Q": {"company": "JPMorgan Chase & Co.", "ticker": "JPM"}}
    assert chosen_names(jpm, "Which of JPM's business segments had the lowest net revenue in 2021 Q1?") == {"JPM"}
    assert chosen_names(jpm, "In 2021, what did JPMorgan report as net revenue?") == {"JPMorgan"}
    # another company named is still a name the sections must mention, and so is any word not of the company
    assert chosen_names(jpm, "What was Boeing's net revenue in Q1 of 2021 per JPM?") == {"JPM"}
    assert chosen_names(jpm, "What did Intel report?") == set()
    assert chosen_names({"AMCOR_2023_10K": {"company": "Amcor plc"}}, "What was AMC's revenue?") == set()
