"""ppkit.core.markup: HTML tables rendered as numbered pipe rows."""

from ppkit.core.markup import render

TABLE = """Before the table.
<table>
  <thead>
    <tr>
        <th> </th>
        <th colspan="2">Year Ended</th>
    </tr>
  </thead>
  <tbody>
    <tr>
        <td>Net revenue</td>
        <td>$23,601</td>
        <td>$16,434</td>
    </tr>
    <tr><td>R&amp;D</td><td>(5,005)</td></tr>
  </tbody>
</table>
After <u>the</u> table.""".split("\n")


def test_rows_keep_their_source_line():
    assert render(TABLE, 10) == [
        (10, "Before the table."),
        (13, "| Year Ended |"),
        (19, "| Net revenue | $23,601 | $16,434 |"),
        (24, "| R&D | (5,005) |"),
        (27, "After the table."),
    ]


def test_unclosed_table_is_left_alone():
    lines = ["<table>", "<tr><td>x</td></tr>", "text"]
    assert render(lines) == [(1, "<table>"), (2, "<tr><td>x</td></tr>"), (3, "text")]


def test_inline_table_and_text_around_it():
    got = render(["Intro <table><tr><td>a</td><td>1</td></tr></table> outro"])
    assert got == [(1, "Intro"), (1, "| a | 1 |"), (1, "outro")]


def test_figure_rows_counts_rows_of_two_or_more_numbers():
    from ppkit.core.markup import figure_rows

    lines = ["| Net sales | 1,200 | 1,100 |", "| Contents | 41 |", "prose 2022 2021",
             "|Cash|**$**<br>**1,671**|$ 2,148|", "|Other|<br>**(779**)|(604)|",
             "<table>", "<tr><td>Total assets</td><td>2,000</td><td>1,900</td></tr>", "</table>"]
    assert figure_rows(lines) == 4
