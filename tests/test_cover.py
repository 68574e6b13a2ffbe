"""Cover pages: form, registrant, ticker and period (ppkit.documents.cover), on hand-written covers."""

from datetime import date
from pathlib import Path

import pytest

from ppkit.documents.cover import fiscal_year_of, parse_date, read_cover

COVERS = Path(__file__).parent / "fixtures" / "covers"


def _cover(name):
    c = read_cover((COVERS / name).read_text().splitlines())
    return (c.form_type, c.company, c.ticker, c.fiscal_year, c.quarter, c.period_end)


@pytest.mark.parametrize("name, want", [
    # a retailer's year ended in January is named by that year
    ("northwind_10k.md", ("10-K", "Northwind Stores, Inc.", "NWS", 2023, None, "2023-01-28")),
    # a June fiscal year: the quarter ended December 31, 2022 is Q2 of FY2023; the date sits after
    # an interleaved "Commission file" column
    ("contoso_10q.md", ("10-Q", "Contoso Packaging PLC", "CPKG", 2023, 2, "2022-12-31")),
    # an 8-K's period is its report date's year; letter-spaced capitals are joined
    ("titan_8k.md", ("8-K", "Titan Industries Corporation", "TTN", 2022, None, "2022-05-20")),
    # the release calls it "Fiscal 2022", but the year ended January 28, 2023: FY2023 by the rule
    ("fabrikam_release_q4.md", ("earnings release", "Fabrikam Beauty, Inc.", "FBK", 2023, 4, "2023-01-28")),
    # no end date: the year written beside the quarter
    ("lee_release_q2.md", ("earnings release", "Lee & Lee", "LNL", 2023, 2, None)),
    # no registrant label, no symbol column (the "SWX" in a note is no ticker); a 53-week year
    # ending January 3 is the year before
    ("globex_old_10k.md", ("10-K", "Globex Company", None, 2015, None, "2016-01-03")),
    # the registrant's name is an image above its label: the name the report defines its terms by
    ("fizz_image_name_10k.md", ("10-K", "The Fizz-Pop Company", None, 2019, None, "2019-12-31")),
])
def test_cover_pages(name, want):
    assert _cover(name) == want


def test_a_form_named_in_a_sentence_is_no_cover():
    lines = ["Our results", "Read this with our Quarterly Report on Form 10-Q for the period.", "Nothing else."]
    c = read_cover(lines)
    assert (c.form_type, c.company, c.fiscal_year) == (None, None, None)


def test_fiscal_year_rule():
    assert fiscal_year_of(date(2023, 1, 28)) == 2023
    assert fiscal_year_of(date(2021, 1, 3)) == 2020  # 52/53-week year ending in the first week of January
    assert fiscal_year_of(date(2022, 12, 31), quarter=2) == 2023  # June year end
    assert fiscal_year_of(date(2023, 7, 2), quarter=2) == 2023  # a quarter ending just after June 30
    assert fiscal_year_of(date(2023, 7, 29), quarter=2) == 2024  # a January year end


def test_parse_date():
    assert parse_date("Sept. 30 2022") == date(2022, 9, 30)
    assert parse_date("DECEMBER 31, 2018") == date(2018, 12, 31)
    assert parse_date("Smarch 3, 2020") is None


def test_annual_date_lost_from_the_cover():
    # the latest "year(s) ended" date of the text: a 10-K reports no year after its own
    lines = ["FORM 10-K", "ACME CORP", "(Exact name of registrant as specified in its charter)"] + [""] * 300 + [
             "In the year ended December 31, 2021 we grew.",
             "Consolidated results for the years ended December 31, 2022 and 2021"]
    c = read_cover(lines)
    assert (c.fiscal_year, c.period_end) == (2022, "2022-12-31")
    assert c.evidence["period_end"].startswith("the latest 'year ended' date")
