"""Does the answer block answer the question? (ppkit.answer.answered): the type, measure, period and company
checks on hand-written statements of two made-up companies, and the verdict every view shows."""

from ppkit.answer.answered import asked_docs, check_answered, check_block, verdict, verdict_line
from ppkit.answer.block import AnswerBlock, BlockCitation
from ppkit.answer.question import read_question
from ppkit.answer.synth import Answer
from ppkit.retrieval.analyze import Analysis, QueryFilters
from ppkit.retrieval.types import Section

def _section(doc, node, title, lines, rank=1):
    """A retrieved section of hand-written lines: ``lines`` maps each source line to its text."""
    return Section(doc=doc, node_id=node, breadcrumb=f"{doc} > {title}", line_start=min(lines), line_end=max(lines),
                   rank=rank, score=1.0 / rank, sent_ranges=((min(lines), max(lines)),), chars_total=0,
                   text="\n".join(lines.values()), line_numbers=tuple(lines))


# Norwell Foods' income statement and a sentence of its MD&A; Kestrel Air's income statement
NORWELL = _section("Norwell", "0040", "Consolidated Statement of Income", {
    400: "## Consolidated Statement of Income", 402: "| (In millions) | 2023 | 2022 |", 403: "| --- | --- | --- |",
    404: "| Net revenue | $ 12,400 | $ 11,050 |", 405: "| Cost of sales | 7,100 | 6,500 |",
    406: "| Advertising and marketing | 1,210 | 1,100 |", 407: "| Operating profit | 2,480 | 2,150 |"})
MDA = _section("Norwell", "0031", "Results of Operations", {
    300: "## Results of Operations",
    301: "Net revenue increased 12% to $12.4 billion in 2023, driven by higher pricing.",
    302: "Gross margin was 42.7% of net revenue in 2023."}, rank=2)
KESTREL = _section("Kestrel", "0070", "Consolidated Statements of Operations", {
    700: "## Consolidated Statements of Operations", 702: "| (In millions) | 2023 | 2022 |", 703: "| --- | --- | --- |",
    704: "| Total revenues | 31,900 | 29,400 |"}, rank=3)
SECTIONS = [NORWELL, MDA, KESTREL]


def _row(doc, node, line, text, header=402):
    return AnswerBlock(text, "figure", (BlockCitation(doc, node, header, header), BlockCitation(doc, node, line, line)),
                       "amount", 0.9)


REVENUE = _row("Norwell", "0040", 404, "$12,400 million: Net revenue, 2023 (Consolidated Statement of Income)")
ADVERTISING = _row("Norwell", "0040", 406, "$1,210 million: Advertising and marketing, 2023 (Consolidated Statement "
                                           "of Income)")
COST = _row("Norwell", "0040", 405, "$7,100 million: Cost of sales, 2023 (Consolidated Statement of Income)")
REVENUE_BEFORE = _row("Norwell", "0040", 404, "$11,050 million: Net revenue, 2022 (Consolidated Statement of Income)")
KESTREL_REVENUE = _row("Kestrel", "0070", 704, "$31,900 million: Total revenues, 2023 (Consolidated Statements of "
                                              "Operations)", header=702)
CHANGE = AnswerBlock("12%: \u201cNet revenue increased 12% to $12.4 billion in 2023, driven by higher pricing.\u201d",
                     "figure", (BlockCitation("Norwell", "0031", 301, 301),), "percent", 0.8)


def _analysis(question, company="Norwell"):
    """The analysis the conductor would make: the company the question names, as a filter."""
    f = QueryFilters(docs=[company], matched={company: company}, companies=[company],
                     company_docs={company: [company]}) if company else None
    return Analysis.of(question, f)


def _check(block, question, company="Norwell"):
    analysis = _analysis(question, company)
    return check_answered(block, SECTIONS, read_question(question, analysis), docs=asked_docs(analysis.filters))


def test_the_row_of_the_measure_period_and_company_asked_answers():
    a = _check(REVENUE, "What was Norwell's net revenue in 2023?")
    assert a.answered is True
    assert {k: c.ok for k, c in a.checks.items()} == {"type": True, "measure": True, "period": True, "company": True}
    assert _check(REVENUE, "How much did Norwell sell in total in 2023? Give its top line.").answered is True  # glossary


def test_a_real_quote_of_another_measure_does_not_answer():
    a = _check(ADVERTISING, "What was Norwell's net revenue in 2023?")
    assert a.answered is False and a.checks["measure"].ok is False
    assert "'Advertising and marketing'" in a.reason and "revenue" in a.reason
    a = _check(COST, "What was Norwell's net revenue in 2023?")  # a row the catalogue knows by another name
    assert a.answered is False and "names cost of sales, not revenue" in a.reason


def test_another_period_does_not_answer():
    a = _check(REVENUE_BEFORE, "What was Norwell's net revenue in 2023?")
    assert a.answered is False and a.reason == "its figure is of 2022; 2023 is asked"
    a = _check(REVENUE_BEFORE, "What was Norwell's net revenue?")  # no year asked: the table's latest is meant
    assert a.answered is False and "an earlier year than its table's latest (2023)" in a.reason
    assert _check(REVENUE, "What was Norwell's net revenue?").answered is True


def test_another_company_does_not_answer():
    a = _check(KESTREL_REVENUE, "What was Norwell's net revenue in 2023?")
    assert a.answered is False and a.checks["measure"].ok is True
    assert a.reason == "it cites Kestrel; the question asks about Norwell"
    assert _check(KESTREL_REVENUE, "What were revenues in 2023?", company=None).checks["company"].ok is None


def test_the_answer_type_and_a_change_where_a_level_is_asked():
    a = _check(CHANGE, "What was Norwell's net revenue in 2023?")
    assert a.answered is False and a.reason.startswith("it states a percent (12%); an amount is asked")
    a = _check(CHANGE, "What was Norwell's gross margin in 2023?")  # a change of revenue is no margin
    assert a.answered is False and "is a change; gross margin is asked" in a.reason
    assert _check(CHANGE, "By what percent did Norwell's net revenue grow in 2023?").answered is True


def test_hedges_and_abstentions_state_no_answer_and_nothing_to_check_is_none():
    hedge = AnswerBlock("Not stated directly; the closest passage: Net revenue increased 12%.", "closest")
    assert check_answered(hedge, SECTIONS, read_question("What was Norwell's net revenue?")).answered is False
    nothing = AnswerBlock("Not found: the retrieved sections never mention 'Ostrava'.", "not_found")
    assert check_answered(nothing, SECTIONS, read_question("What was Ostrava's revenue?")).answered is False
    assert check_answered(REVENUE, SECTIONS, None).answered is None
    assert check_answered(None, SECTIONS, read_question("What was Norwell's revenue?")).reason == "no answer block"


def test_check_block_runs_the_quote_check_and_the_answered_check():
    q = "What was Norwell's net revenue in 2023?"
    v = check_block(ADVERTISING, SECTIONS, question=q, analysis=_analysis(q))
    assert v["verified"] is True and v["answered"] is False  # a faithful quote that answers something else
    assert set(v["answered_checks"]) == {"type", "measure", "period", "company"}
    v = check_block(REVENUE, SECTIONS, question=q, analysis=_analysis(q))
    assert (v["verified"], v["answered"], v["kind"], v["confidence"]) == (True, True, "figure", 0.9)


def test_verdict_shows_verified_only_when_the_quotes_check_and_the_block_answers():
    q = "What was Norwell's net revenue in 2023?"
    good = {"ok": True, "block": check_block(REVENUE, SECTIONS, question=q)}
    off = {"ok": True, "block": check_block(ADVERTISING, SECTIONS, question=q)}
    assert verdict(good, REVENUE)["status"] == "verified"
    assert verdict_line(good, REVENUE) == "answer block: [verified] (figure, confidence 0.90)"
    d = verdict(off, ADVERTISING)
    assert d["status"] == "unanswered" and d["label"].startswith(
        "quotes check, but the block may not answer the question: its row 'Advertising and marketing'")
    bad = {"ok": True, "block": {**off["block"], "verified": False, "reasons": ["'$1,310 million' is not found"]}}
    assert verdict(bad, ADVERTISING)["status"] == "problems"
    assert verdict(None)["status"] == "none"


def test_the_printed_answer_and_its_warnings_say_the_block_may_not_answer():
    q = "What was Norwell's net revenue in 2023?"
    v = {"ok": True, "counts": {"claims": 1, "verified": 1, "citations": 1, "unretrieved": 0},
         "block": check_block(ADVERTISING, SECTIONS, question=q)}
    answer = Answer(q, ADVERTISING.text, SECTIONS, "offline", verification=v, block=ADVERTISING)
    assert any(w.startswith("quotes check, but the block may not answer the question: ") for w in answer.warnings())
    printed = str(answer)
    assert "[verified]" not in printed and "answer block: [quotes check, but" in printed
    v["block"] = check_block(REVENUE, SECTIONS, question=q)
    assert "answer block: [verified] (figure, confidence 0.90)" in str(replace_block(answer, v, REVENUE))


def replace_block(answer, verification, block):
    from dataclasses import replace

    return replace(answer, verification=verification, block=block)


SEGMENTS = _section("Norwell", "0050", "Segment Results", {
    500: "## Segment Results", 501: "Net revenue by segment:", 502: "| (In millions) | 2023 | 2022 |",
    503: "| --- | --- | --- |", 504: "| Snacks | 5,100 | 4,800 |", 505: "| Beverages | 7,300 | 6,250 |"}, rank=4)


def test_a_part_asked_must_be_the_part_stated_and_a_quarter_asked_is_no_year():
    secs = SECTIONS + [SEGMENTS]
    q = "What were Norwell's Snacks segment revenues in 2023?"
    analysis = _analysis(q)

    def check(block, question=q):
        return check_answered(block, secs, read_question(question, analysis), docs={"Norwell"})

    snacks = _row("Norwell", "0050", 504, "$5,100 million: Snacks, 2023 (Segment Results)", header=502)
    drinks = _row("Norwell", "0050", 505, "$7,300 million: Beverages, 2023 (Segment Results)", header=502)
    assert check(snacks).answered is True  # the row is the part; its table's caption names the measure
    a = check(drinks)
    assert a.answered is False and a.reason == "its row 'Beverages' does not name Snacks, the part asked"
    a = check(REVENUE, "What was Norwell's net revenue in Q4 2023?")
    assert a.answered is False and "a full year's; Q4 is asked" in a.reason
