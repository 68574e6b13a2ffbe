"""ppkit.answer.which: "which one" questions answered from a retrieved table, statement or cover page, or not at all.

Each section is a small hand-written table; every expected figure is checked by hand in the comments.
"""

from ppkit.answer.asked import asked_type
from ppkit.answer.which import _direction, _kind, _measure, _written, selects, which_block
from ppkit.core.text import stems
from ppkit.retrieval.types import Section


def _sec(breadcrumb: str, text: str, node: str = "0001", rank: int = 1, doc: str = "ACME_2021_10K") -> Section:
    lines = text.count("\n") + 1
    return Section(doc, node, f"{doc} > {breadcrumb}", 10, 10 + lines - 1, text, rank, 1.0)


def _ask(question: str, *sections: Section):
    asked = asked_type(question)
    assert selects(question, asked)
    got = which_block(question, asked, [], set(stems(question)) - {"acm"}, list(sections))
    return None if got is None else got[0]


DERIVATIVES = _sec("Notes > Derivative Instruments", """The notional amounts of our derivative instruments:

| (dollars in millions) | 2021 | 2020 |
|---|---|---|
| Interest rate swaps | $19,779 | $17,768 |
| Cross currency swaps | 32,502 | 26,288 |
| Foreign exchange forwards | 932 | 1,405 |""")

GEOGRAPHY = _sec("Notes > Geographic Information", """(millions of dollars)

| | 2023 | 2022 | Change |
|---|---|---|---|
| United States | $6,185 | $11,222 | (45) |
| Developed Europe | 2,415 | 5,480 | (56) |
| Emerging Markets | 2,828 | 6,006 | (53) |
| Revenues | $11,428 | $22,708 | (50) |""")


def test_the_part_with_the_highest_value_named_with_its_figure_and_the_runner_up():
    block = _ask("Among all of the derivative instruments ACME used, which one had the highest notional value in "
                 "FY 2021?", DERIVATIVES)
    assert block.kind == "figure"
    assert block.text == ("Cross currency swaps: $32,502 million in 2021, the highest of the table's 3 parts; next: "
                          "Interest rate swaps, $19,779 million in 2021.")
    # the header line (12), the winner's row (15), the runner-up's (14)
    assert [(c.line_start, c.line_end) for c in block.citations] == [(12, 12), (15, 15), (14, 14)]


def test_the_biggest_drop_is_the_lowest_percent_change_computed_from_the_two_years():
    # Europe 2,415 / 5,480 - 1 = -55.9%; Emerging -52.9%; US -44.9%; the total row is no part
    block = _ask("Which geographic region had the biggest drop in 2023 revenues year over year (on a percentage "
                 "basis)?", GEOGRAPHY)
    assert block.text.startswith("Developed Europe: -55.9%, down $3,065 million ($2,415 million in 2023 vs $5,480 "
                                 "million in 2022), the lowest change of the table's 3 parts; next: Emerging Markets, "
                                 "-52.9%, down $3,178 million")
    # the smallest drop is the highest change: United States, -44.9%
    assert _ask("Which geographic region had the smallest decline in 2023 revenues on a percentage basis?",
                GEOGRAPHY).text.startswith("United States: -44.9%, down $5,037 million")
    # neither percent nor amount asked, and they differ (Europe fell most in percent, Emerging Markets in dollars)
    assert _ask("Which geographic region had the biggest drop in 2023 revenues?", GEOGRAPHY) is None


def test_the_share_of_the_group_total_is_stated():
    # corporate bonds 416 of the short-term investments' 500: 83.2%
    s = _sec("Notes > Investments", """The following table presents the Company's debt investments:

| | Level | June 30, 2023 | December 31, 2022 |
|---|---|---|---|
| U.S. government securities | Level 1 | 57 | 56 |
| U.S. agency securities | Level 2 | 27 | 9 |
| Corporate bonds | Level 2 | 416 | 213 |
| Short-term investments | | 500 | 278 |""")
    block = _ask("Which type of debt received the largest investment among the short term investments in 2023?", s)
    assert block.text.startswith("Corporate bonds: 416 at June 30, 2023, 83.2% of Short-term investments (500), the "
                                 "highest of the table's 3 parts")


def test_a_change_column_is_read_when_the_table_gives_no_two_years():
    # the parts add up to the total (40 + 35 + 25 = 100) and the table is no statement: one whole
    s = _sec("Results of Operations > Domestic Segment", """Revenue mix and comparable sales:

| | Revenue Mix | Comparable Sales % Change |
|---|---|---|
| Computing | 40 % | (6.4)% |
| Appliances | 35 % | (16.1)% |
| Entertainment | 25 % | 9.0 % |
| Total | 100 % | (6.3)% |""")
    block = _ask("Which product category performed the best (by top line) in the quarter?", s)
    assert block.text.startswith("Entertainment: 9.0% (Comparable Sales % Change), the highest change of the "
                                 "table's 3 parts; next: Computing, -6.4%")


def test_no_winner_among_the_measures_own_line_items():
    # the rows are net revenue's components (they add up to it), not the segments asked among
    s = _sec("Note 25 - Business segments", """| (in millions) | 2021 | 2020 |
|---|---|---|
| Noninterest revenue | $4,588 | $4,097 |
| Net interest income | 7,929 | 9,190 |
| Total net revenue | 12,517 | 13,287 |
| Provision for credit losses | (3,602) | 5,772 |""")
    assert _ask("Which of ACME's business segments had the lowest net revenue in 2021?", s) is None


def test_no_winner_among_a_statements_line_items_of_another_kind():
    # revenue lines add up to revenues, but an income statement's lines are no regions
    s = _sec("CONSOLIDATED STATEMENTS OF OPERATIONS", """| (In thousands) | 2022 | 2021 |
|---|---|---|
| Casino | $1,548 | $1,200 |
| Rooms | 700 | 600 |
| Food and beverage | 500 | 400 |
| Revenues | 2,748 | 2,200 |""")
    assert _ask("Which region had the highest EBITDAR contribution in 2022?", s) is None


def _notional(rows: str) -> Section:
    return _sec("Notes > Derivative Instruments", "The notional amounts of our derivative instruments:\n\n"
                "| | 2021 | 2020 |\n|---|---|---|\n" + rows)


def test_no_winner_when_units_differ_or_values_tie():
    q = "Among the derivative instruments, which one had the highest notional value in 2021?"
    untied = "| Interest rate swaps | 700 | 4 |\n| Cross currency swaps | 710 | 5 |\n| Foreign exchange forwards | 600 | 6 |"
    assert _ask(q, _notional(untied)).text.startswith("Cross currency swaps: 710 in 2021")
    assert _ask(q, _notional(untied.replace("710", "700"))) is None  # a tie
    assert _ask(q, _notional(untied.replace("700 |", "7 % |"))) is None  # a percent among amounts


def test_the_cash_flow_activity_that_brought_in_the_most():
    s = _sec("CONSOLIDATED STATEMENTS OF CASH FLOWS", """| (In millions) | 2023 | 2022 |
|---|---|---|
| Net income | $5,070 | $6,046 |
| Cash provided (used) by operations | 5,841 | 5,188 |
| Cash provided (used) by investing activities | 564 | (1,524) |
| Cash provided (used) by financing activities | (7,447) | (4,836) |""")
    block = _ask("Among operations, investing, and financing activities, which brought in the most (or lost the "
                 "least) cash flow in FY2023?", s)
    assert block.text == ("Operating activities brought in the most cash in 2023: $5,841 million (investing: "
                          "$564 million; financing: -$7,447 million).")
    assert len(block.citations) == 3
    # the cash used: the most used is the lowest net flow (financing's outflow), never the largest inflow
    used = _ask("Which of operating, investing and financing activities used the most cash in FY2023?", s)
    assert used.text.startswith("Financing activities used the most cash in 2023: -$7,447 million")
    least = _ask("Which of the operating, investing and financing activities used the least cash in FY2023?", s)
    assert least.text.startswith("Operating activities brought in the most cash in 2023")


COVER = """Securities registered pursuant to Section 12(b) of the Act:

Title of each class Trading Symbol(s) Name of each exchange on which registered

Common Stock, Par Value $.01 Per Share ACM New York Stock Exchange

1.500% Notes due 2026 ACM26 New York Stock Exchange 1.750% Notes due 2030 ACM30 New York Stock Exchange

Securities registered pursuant to section 12(g) of the Act: None"""


def test_registered_debt_securities_listed_from_the_cover_page_or_none():
    q = "Which debt securities are registered to trade on a national securities exchange under ACME's name?"
    block = _ask(q, _sec("Cover", COVER))
    assert block.kind == "passage"
    assert block.text.endswith(": 1.500% Notes due 2026; 1.750% Notes due 2030.")
    assert (block.citations[0].line_start, block.citations[0].line_end) == (10, 16)
    none = _ask(q, _sec("Cover", COVER.split("\n\n1.500%")[0]))
    assert none.text.startswith("None: the cover page lists no debt securities under Section 12(b)")
    assert "Common Stock" in none.text
    # a floating-rate class is a debt class; notes written in a way not read give no "None"
    floating = COVER.replace("1.750% Notes due 2030", "Floating Rate Notes due 2030")
    assert _ask(q, _sec("Cover", floating)).text.endswith(": 1.500% Notes due 2026; Floating Rate Notes due 2030.")
    assert _ask(q, _sec("Cover", COVER.split("\n\n1.500%")[0] + "\n\nZero Coupon Notes, Series B ACM NYSE")) is None
    # the heading alone (the list cut off at the section's end) says nothing of what is listed: no "None"
    assert _ask(q, _sec("Cover", COVER.split("\n\nTitle")[0])) is None


def test_a_which_question_asking_no_superlative_answered_by_its_sentence():
    s = _sec("Press release", "The quarter was strong. ACME will now present its Consumer business financial results "
                              "as discontinued operations from August 30, 2023.")
    q = "Which business segment of ACME will be treated as a discontinued operation from August 30, 2023 onward?"
    asked = asked_type(q)
    from ppkit.answer.passages import rank_passages
    ranked = rank_passages(q, [s], asked, q_terms=set(stems(q)))
    block, used = which_block(q, asked, ranked, set(stems(q)), [s])
    assert block.kind == "passage" and block.text.startswith("ACME will now present its Consumer business")


def test_reading_the_question():
    assert _direction("Which region had the worst topline performance?") == (False, True)
    assert _direction("Which segment had the highest net revenue?") == (True, False)
    assert _direction("Which segment dragged down growth?") == (False, True)
    assert _direction("Which segment weighed on growth the most?") == (False, True)  # other words of a drag
    assert _direction("Which region held back sales?") == (False, True)
    assert _direction("Which segment is discontinued?") is None
    assert _measure("Which segment had the lowest net revenue in 2021?") == {"net", "revenu"}
    assert _kind("Which of ACME's business segments had the lowest net revenue?") == {"segment"}
    assert _written("(6.4)%") == "-6.4%" and _written("9.0 %") == "9.0%"


PRODUCT_MIX = _sec("Results of Operations", """Revenue mix:

| | 2022 | 2021 |
|---|---|---|
| Computing | 400 | 380 |
| Appliances | 350 | 300 |
| Entertainment | 250 | 260 |
| Total | 1,000 | 940 |""")


def test_a_region_is_never_picked_from_another_kind_of_whole():
    # the parts add up, but regions are asked and the table names neither regions nor the measure asked
    assert _ask("Which region had the highest EBITDAR contribution in 2022?", PRODUCT_MIX) is None


def test_regions_picked_from_a_table_of_the_measure_asked():
    # no "region" in the table, but it is a table of EBITDAR whose parts add up: 3,142 of 3,497 is 89.8%
    s = _sec("Adjusted Property EBITDAR", """Year Ended December 31,

| (In thousands) | 2022 | 2021 |
|---|---|---|
| Las Vegas Strip Resorts | $3,142 | $1,738 |
| Regional Operations | 1,295 | 1,218 |
| MGM China | (203) | 25 |
| Corporate and other | (737) | (560) |
| Adjusted EBITDAR | $3,497 | $2,421 |""")
    block = _ask("Which region had the highest EBITDAR contribution in 2022?", s)
    assert block.text.startswith("Las Vegas Strip Resorts: $3,142 thousand in 2022, 89.8% of Adjusted EBITDAR "
                                 "($3,497 thousand), the highest of the table's 4 parts; next: Regional Operations")


def test_no_winner_among_line_items_even_in_a_table_of_the_kind():
    s = _sec("Segment Information > Segment A", """| (in millions) | 2022 | 2021 |
|---|---|---|
| Revenue | 900 | 800 |
| Operating income | 120 | 100 |
| Capital expenditures | 40 | 30 |""")
    assert _ask("Which segment had the highest profit in 2022?", s) is None


GEO = _sec("Note 17 > Geographic Information", """The tables below list our revenue and property by geographic area.

| Revenue Americas: | 2016 | 2015 |
|---|---|---|
| United States | $3,088 | $2,548 |
| Other | 312 | 240 |
| Total Americas | 3,400 | 2,788 |
| EMEA | 1,619 | 1,336 |
| Japan | 401 | 348 |
| Other | 434 | 323 |
| Total APAC | 835 | 671 |
| Revenue | $5,854 | $4,795 |

The following table lists property and equipment, net:

| Property and Equipment Americas: | 2016 | 2015 |
|---|---|---|
| United States | $643 | $621 |
| EMEA | 49 | 44 |
| India | 106 | 112 |
| Property and equipment, net | $798 | $777 |""")


def test_groups_of_parts_need_the_group_named_and_the_measure_its_table():
    # revenue: leaves (United States) or groups (Americas)? the question does not say; property is no revenue
    assert _ask("Which geographic area had the highest revenue in 2016?", GEO) is None
    # property: one group, the measure named above the table: the United States, 643 of 798 = 80.6%
    block = _ask("Which geographic area had the highest property and equipment in 2016?", GEO)
    assert block.text.startswith("United States: $643 in 2016, 80.6% of Property and equipment, net ($798)")


def test_a_table_broken_down_by_another_kind_is_no_answer():
    s = _sec("Note 21 - Segments", """Sales by major product were:

| ($in millions) | Segment | 2023 | 2022 |
|---|---|---|---|
| Films | Flexibles | $10,061 | 10,033 |
| Cartons | Flexibles | 1,093 | 1,118 |
| Containers | Rigid Packaging | 3,540 | 3,393 |
| Net sales | | $14,694 | 14,544 |""")
    assert _ask("Which of ACME's segments had the highest net sales in FY2023?", s) is None


def test_no_winner_from_a_narrower_total_a_repeated_name_a_rate_of_amounts_or_two_loose_rows():
    fios = _sec("Segment Results", """Fios revenue by segment:

| (dollars in millions) | 2021 | 2020 |
|---|---|---|
| Consumer | 11,558 | 11,200 |
| Business | 1,136 | 1,100 |
| Total Fios revenue | 12,694 | 12,300 |""")
    assert _ask("Which of ACME's segments generated the most revenue in 2021?", fios) is None  # Fios is narrower
    twice = _sec("Business Segment Information", """Net sales, then operating income, by segment:

| (millions) | 2022 | 2021 |
|---|---|---|
| Health Care | 8,421 | 8,000 |
| Consumer | 5,298 | 5,100 |
| Safety | 11,604 | 11,000 |
| Health Care | 1,783 | 1,900 |
| Consumer | 936 | 1,000 |
| Safety | 2,466 | 2,200 |""")
    assert _ask("Which business segment had the highest operating income in 2022?", twice) is None
    margins = "Segment operating income and operating margin:\n\n| | 2022 | 2021 |\n|---|---|---|\n"
    rows = "| Health Care | 8,421 | 8,000 |\n| Consumer | 5,298 | 5,100 |\n| Safety | 11,604 | 11,000 |"
    q = "Which segment had the highest operating margin in 2022?"
    assert _ask(q, _sec("Segment Results", margins + rows)) is None  # amounts, where a margin is asked
    as_percent = rows.replace("8,421", "21.2 %").replace("5,298", "18.9 %").replace("11,604", "20.1 %")
    assert _ask(q, _sec("Segment Results", margins + as_percent)).text.startswith("Health Care: 21.2% in 2022")
    loose = "| Interest rate swaps | 19,779 | 17,768 |\n| Cross currency swaps | 32,502 | 26,288 |"
    assert _ask("Among the derivative instruments, which one had the highest notional value in 2021?",
                _notional(loose)) is None
