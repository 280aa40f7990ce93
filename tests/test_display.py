"""Frames for reading: the expected cells are written out by hand from the numbers put in
(113 of 120 valid is 94.17%, shown 94.2%), not from the formatting code."""

from datetime import datetime
from html.parser import HTMLParser

import polars as pl
import pytest

from workbench import display


def scorecard_rows() -> pl.DataFrame:
    """Two rows shaped as `comparison.scorecard` makes them."""
    return pl.DataFrame(
        {
            "model": ["gpt-4o-mini", "llama"],
            "decisions": [120, 30],
            "valid": [113, 28],
            "validity": [113 / 120, 28 / 30],
            "ci_low": [0.31311, None],
            "ci_high": [0.99825, None],
            "games": [2, 1],
            "p50_ms": [912.55, None],
            "retries": [None, 50],
        }
    )


def test_a_validity_is_read_with_its_interval_n_and_games_and_they_are_not_shown_again():
    shown = display.readable(scorecard_rows())
    assert shown.columns == ["model", "valid", "validity", "p50_ms", "retries"]
    assert shown.schema == pl.Schema({name: pl.String for name in shown.columns})
    assert shown["validity"].to_list() == [
        "94.2% (31.3–99.8%, n=120, 2 games)",  # 113/120 = 0.94167
        "93.3% (n=30, 1 game)",
    ]  # 28/30, no interval: one game
    assert shown["p50_ms"].to_list() == ["913", "—"]
    assert shown["retries"].to_list() == ["—", "50"]


def test_a_comparison_reads_as_points_with_each_side_s_n_and_games():
    pairs = pl.DataFrame(
        {
            "a": ["m-a"],
            "b": ["m-b"],
            "n_a": [60],
            "n_b": [1_500],
            "games_a": [2],
            "games_b": [1],
            "validity_a": [0.9],
            "validity_b": [59 / 60],
            "difference": [0.9 - 59 / 60],
            "ci_low": [-0.2],
            "ci_high": [0.05],
            "p_holm": [0.0004],
            "p_value": [0.001],
        }
    )
    shown = display.readable(pairs).row(0, named=True)
    assert shown == {
        "a": "m-a",
        "b": "m-b",
        "validity_a": "90.0% (n=60, 2 games)",
        "validity_b": "98.3% (n=1,500, 1 game)",  # 59/60 = 0.98333
        "difference": "-8.3 pp (-20.0 to +5.0 pp)",  # 0.9 - 0.98333 = -0.08333
        "p_holm": "<0.001",  # 0.0004 is below the 0.001 shown
        "p_value": "0.001",
    }  # 0.001 itself is not


def test_any_value_with_low_and_high_columns_gets_its_interval():
    ratings = pl.DataFrame(
        {
            "model": ["a", "b"],
            "mu": [26.628, 25.5],
            "mu_low": [8.779, None],
            "mu_high": [43.614, None],
            "ordinal": [-0.134698, 1.4261],
        }
    )
    shown = display.readable(ratings)
    assert shown.columns == ["model", "mu", "ordinal"]
    assert shown["mu"].to_list() == ["26.6 (8.78–43.6)", "25.5"]
    assert shown["ordinal"].to_list() == ["-0.135", "1.43"]


@pytest.mark.parametrize(
    "value, expected",
    [
        (4300, "4,300"),
        (5.0, "5"),
        (-3, "-3"),
        (0.0, "0"),
        (1903.8, "1,904"),
        (100.4, "100"),
        (99.94, "99.9"),  # from 100 no decimals; below, one
        (10.04, "10"),
        (9.994, "9.99"),  # from 10 one decimal; below, two
        (1.004, "1"),
        (0.99949, "0.999"),  # from 1 two decimals; below, three significant digits
        (0.0029432, "0.00294"),
        (0.5, "0.5"),
        (float("inf"), "∞"),
    ],
)
def test_numbers_are_rounded_to_what_they_can_say(value, expected):
    assert display.number(value) == expected


def test_other_values_read_as_words():
    frame = pl.DataFrame(
        {
            "passed": [True, False],
            "placements": [[2, 4], []],
            "at": [datetime(2026, 2, 6, 9, 38, 54, 356464), None],
            "why": ['said "no"', None],
        }
    )
    assert display.readable(frame).rows() == [
        ("yes", "2, 4", "2026-02-06 09:38:54", 'said "no"'),
        ("no", "—", "—", "—"),
    ]


class Table(HTMLParser):
    """The cells of an HTML table: the text and attributes of each."""

    def __init__(self):
        super().__init__()
        self.headers, self.rows, self.inputs, self.tables, self.cell = [], [], [], [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("th", "td"):
            self.cell = [tag, attrs, ""]
        elif tag == "tr":
            self.rows.append([])
        elif tag == "input":
            self.inputs.append(attrs)
        elif tag == "table":
            self.tables.append(attrs)

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[2] += data

    def handle_endtag(self, tag):
        if tag in ("th", "td"):
            kind, attrs, text = self.cell
            (self.headers if kind == "th" else self.rows[-1]).append((text, attrs))
            self.cell = None


def parsed(markup: str) -> Table:
    table = Table()
    table.feed(markup)
    table.rows = [row for row in table.rows if row]
    return table


def test_an_html_table_sorts_by_raw_values_and_filters_its_own_rows():
    table = parsed(display.html_table(scorecard_rows(), "score"))
    assert table.tables == [{"class": "sortable", "id": "score"}]
    assert table.inputs == [
        {
            "type": "search",
            "class": "filter",
            "data-table": "score",
            "placeholder": "filter rows",
            "aria-label": "filter the rows of this table",
        }
    ]
    # headings in words: a reader's, not the column names of code
    assert [text for text, _ in table.headers] == ["model", "valid", "validity", "latency p50 (ms)", "retries"]
    first, second = table.rows
    assert first[2] == ("94.2% (31.3–99.8%, n=120, 2 games)", {"class": "number", "data-key": repr(113 / 120)})
    assert second[3] == ("—", {"class": "number", "data-key": ""})  # a missing value: sorted last
    assert first[0] == ("gpt-4o-mini", {})  # text sorts by itself
    assert "<th scope='col' title='sort by latency p50 (ms)'>latency p50 (ms)</th>" in display.html_table(
        scorecard_rows(), "s"
    )


def test_long_text_and_unbreakable_names_wrap_where_short_text_does_not():
    limit, word = display.LONG_TEXT, display.LONGEST_WORD
    frame = pl.DataFrame(
        {
            "note": ["a " * (limit // 2), "b"],  # exactly LONG_TEXT characters: not long
            "longer": ["a " * (limit // 2) + "c", "b"],  # one more: long
            "name": ["x" * word, "y" * (word + 1)],
        }
    )  # a run of LONGEST_WORD fits; one more breaks
    assert len(frame["note"][0]) == limit and len(frame["longer"][0]) == limit + 1
    first, second = parsed(display.html_table(frame, "t")).rows
    assert [attrs for _, attrs in first] == [{}, {"class": "long"}, {}]
    assert second[2][1] == {"class": "unbroken"}


def test_an_empty_frame_says_so():
    assert display.html_table(pl.DataFrame({"a": []}), "t") == "<p class='note'>nothing to show</p>"
    assert display.readable(pl.DataFrame({"a": []})).columns == ["a"]


def test_paths_are_shown_relative_to_the_folder_they_share(tmp_path):
    root = tmp_path / "logs"
    frame = pl.DataFrame({"path": [str(root / "a" / "x.jsonl"), str(root / "b.jsonl"), None]})
    shown, common = display.relative_paths(frame)
    assert common == str(root)
    assert shown["path"].to_list() == ["a/x.jsonl", "b.jsonl", None]
    one, folder = display.relative_paths(frame.head(1))
    assert (one["path"].to_list(), folder) == (["x.jsonl"], str(root / "a"))  # a single file: its folder
    mixed = pl.DataFrame({"path": ["/abs/x", "relative/y"]})
    assert display.relative_paths(mixed) == (mixed, None)
    assert display.relative_paths(pl.DataFrame({"path": []}, schema={"path": pl.String}))[1] is None
