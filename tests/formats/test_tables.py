"""Tables rendered for people and for other tools: alignment, widths, escapes and delimiters (mutation audit)."""

from __future__ import annotations

import pytest

from semrel.formats.tables import Latex, Table, render

TABLE = Table(["run_name", "P@10", "ok"], [["bm25 & co", 0.5, True], ["d_1", None, False], ["x", 12.0, True],
                                           [Latex("0.5$^{a}$"), 1.25, None]])


@pytest.mark.parametrize("fmt, text", [
    ("table", "run_name      P@10  ok\n---------  -------  -----\nbm25 & co   0.5000  True\nd_1                 False\n"
              "x          12.0000  True\n0.5$^{a}$   1.2500\n"),
    ("markdown", "| run_name  |    P@10 | ok    |\n| --------- | ------: | ----- |\n| bm25 & co |  0.5000 | True  |\n"
                 "| d_1       |         | False |\n| x         | 12.0000 | True  |\n| 0.5$^{a}$ |  1.2500 |       |\n"),
    ("latex", "\\begin{tabular}{lrl}\n\\toprule\nrun\\_name & P@10 & ok \\\\\n\\midrule\nbm25 \\& co & 0.5000 & True \\\\\n"
              "d\\_1 &  & False \\\\\nx & 12.0000 & True \\\\\n0.5$^{a}$ & 1.2500 &  \\\\\n\\bottomrule\n\\end{tabular}\n"),
    ("csv", "run_name,P@10,ok\nbm25 & co,0.5000,True\nd_1,,False\nx,12.0000,True\n0.5$^{a}$,1.2500,\n"),
    ("tsv", "run_name\tP@10\tok\nbm25 & co\t0.5000\tTrue\nd_1\t\tFalse\nx\t12.0000\tTrue\n0.5$^{a}$\t1.2500\t\n"),
])
def test_each_format_renders_the_exact_text(fmt, text):
    """Numbers right-aligned and text (true/false included) left-aligned, columns as wide as their header, a missing value
    empty, LaTeX specials escaped except in cells already LaTeX, no trailing blanks: any of these drifted unseen."""
    assert render(TABLE, fmt) == text


def test_whole_numbers_lose_their_decimals_only_at_zero_places():
    """12.0 printed as '12' at --places 4 would read as a count where every other cell has four decimals."""
    table = Table(["m", "v"], [["a", 12.0], ["b", 0.25]])
    assert render(table, "csv", places=0) == "m,v\na,12\nb,0\n"
    assert render(table, "csv", places=2) == "m,v\na,12.00\nb,0.25\n"


def test_control_characters_in_headers_and_cells_are_made_visible():
    """An escape sequence in a run name or id reached the terminal (or the CSV) as it was."""
    table = Table(["a\x1b[31m"], [["b\x07c"]])
    assert render(table, "csv") == "a\\x1b[31m\nb\\x07c\n"
    assert render(table, "table") == "a\\x1b[31m\n---------\nb\\x07c\n"


def test_latex_escapes_backslash_tilde_and_caret():
    """A run named 'bm25~v2' or 'q^2' or holding a backslash broke the LaTeX table (a non-breaking space, a
    'Missing $ inserted' error, an undefined command) where & _ and the others were escaped."""
    table = Table(["run", "v"], [["bm25~v2", 1.0], ["q^2\\x", 0.5]])
    assert render(table, "latex").splitlines()[4:6] == [
        "bm25\\textasciitilde{}v2 & 1.0000 \\\\", "q\\textasciicircum{}2\\textbackslash{}x & 0.5000 \\\\",
    ]
