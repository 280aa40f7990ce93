"""Frames for people to read: a proportion with its interval, n and games in one cell,
numbers rounded to what they can say, lists and missing values in words.

`readable(frame)` gives a frame of strings (for a notebook, a CSV or a Markdown table);
`html_table(frame)` draws the same cells as a table that sorts on a click of its header
(by the raw values, so "94.2% (…)" sorts as 0.942) and filters its rows as you type,
with `SCRIPT` and `STYLE` included once in the page.

Which columns go together is read from the workbench's own column names:
- `validity` and `validity_<side>` are proportions, shown as percentages; their n is
  `decisions` (or `n`) and `n_<side>`, their games `games` and `games_<side>`;
  `failure_rate` is one too, bounded by `failure_low`/`failure_high`, of `calls` where
  the frame has them;
- `difference` in a frame with `validity_a` is a difference of proportions, in points;
- `<name>_low`/`<name>_high` bound `<name>`, and `ci_low`/`ci_high` bound the column just
  before `ci_low`;
- `p_value`, `p_<anything>` are p-values: below 0.001 they are shown as "<0.001".
The columns folded into another's cell are not shown again.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

import polars as pl

from workbench.paths import relative_to_common

MISSING = "—"
LONG_TEXT = 40  # characters past which a column's text is wrapped in a wide cell
LONGEST_WORD = 24  # characters past which a run that has no break is broken anywhere
UNBREAKABLE = re.compile(r"[\s\-_/]")  # where a browser may break a line (after _ by <wbr>)
PROPORTION = re.compile(r"validity(?:_(?P<side>\w+))?")
P_VALUE = re.compile(r"p_value|p_\w+")
# Other proportions, shown as percentages: a rate, the columns of its interval and of its n.
RATES = {"failure_rate": ("failure_low", "failure_high", "calls")}
# A column's heading for people, where its name says it in code's words (others: the name,
# its underscores as spaces).
HEADINGS = {
    "model_from": "named by",
    "ci_method": "interval",
    "design_effect": "design effect",
    "failure_rate": "failed calls",
    "p50_ms": "latency p50 (ms)",
    "p95_ms": "latency p95 (ms)",
    "p50_tokens": "tokens p50",
    "top_rule": "rule broken most",
    "top_rule_count": "times broken",
    "cost_per_decision": "cost per decision ($)",
    "cost_per_valid": "cost per valid decision ($)",
    "price_source": "price from",
    "validity_a": "validity of a",
    "validity_b": "validity of b",
    "p_value": "p",
    "p_holm": "p (Holm)",
    "games_needed": "games needed",
    "shared_turns": "shared turns",
    "shared_games": "shared games",
    "games_compared": "games compared",
    "rank_low": "best rank",
    "rank_high": "worst rank",
    "source_id": "source",
    "sha256": "SHA-256",
    "n": "n",
}


@dataclass(frozen=True)
class Estimate:
    """A value shown with what qualifies it, each a column of the frame (or None)."""

    value: str
    low: str | None = None
    high: str | None = None
    n: str | None = None
    games: str | None = None
    percent: bool = False  # a proportion: 0.942 is shown as 94.2%
    points: bool = False  # a difference of proportions: +0.083 is shown as +8.3 pp

    def parts(self) -> list[str]:
        """The frame's columns this estimate folds into one cell."""
        return [name for name in (self.value, self.low, self.high, self.n, self.games) if name is not None]


@dataclass(frozen=True)
class Column:
    """A column as a reader sees it: its values as text, what qualifies each (an
    estimate's interval, n and games), the raw values it sorts by, and whether it is long
    text (wrapped in a wide cell)."""

    name: str
    values: list[str]
    details: list[list[str]] | None  # per row; None: a plain column
    keys: list[float | None] | None  # None: sorted by its text
    long: bool = False

    def cell(self, row: int) -> str:
        """The row's cell as one line: "94.2% (31.3–99.8%, n=120, 2 games)"."""
        details = self.details[row] if self.details else []
        return self.values[row] + (f" ({', '.join(details)})" if details else "")


def readable(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` as strings to read: estimates with their interval, n and games, numbers
    rounded, lists joined, missing values as a dash."""
    shown = columns(frame)
    return pl.DataFrame(
        [pl.Series(column.name, [column.cell(row) for row in range(frame.height)], dtype=pl.String) for column in shown]
    )


def columns(frame: pl.DataFrame) -> list[Column]:
    """The columns of `frame` for reading, in order, estimates folded into their value's."""
    found = {estimate.value: estimate for estimate in estimates(frame)}
    folded = {name for estimate in found.values() for name in estimate.parts() if name != estimate.value}
    shown = []
    for name in frame.columns:
        if name in found:
            shown.append(_estimate_column(frame, found[name]))
        elif name not in folded:
            shown.append(_plain_column(frame[name]))
    return shown


def estimates(frame: pl.DataFrame) -> list[Estimate]:
    """The estimates in `frame`, found by the workbench's column names (see the module's
    docstring)."""
    names = frame.columns
    numeric = {name for name, dtype in frame.schema.items() if dtype.is_numeric()}

    def present(*candidates: str) -> str | None:
        return next((name for name in candidates if name in numeric), None)

    before_ci = names[names.index("ci_low") - 1] if "ci_low" in names and names.index("ci_low") > 0 else None
    found = []
    for name in names:
        if name not in numeric or name.endswith(("_low", "_high")):
            continue
        low, high = present(f"{name}_low"), present(f"{name}_high")
        if (low is None or high is None) and name == before_ci:
            low, high = present("ci_low"), present("ci_high")
        if name in RATES:
            low, high, n = (present(c) for c in RATES[name])
            found.append(
                Estimate(name, low, high, n, percent=True) if low and high else Estimate(name, n=n, percent=True)
            )
            continue
        proportion = PROPORTION.fullmatch(name)
        side = proportion and proportion.group("side")
        n = games = None
        if proportion:
            n = present(f"n_{side}") if side else present("decisions", "n")
            games = present(f"games_{side}" if side else "games")
        points = name == "difference" and "validity_a" in names
        if low is None or high is None:
            low = high = None
        if low or n or games or proportion or points:
            found.append(Estimate(name, low, high, n, games, percent=bool(proportion), points=points))
    return found


def _estimate_column(frame: pl.DataFrame, estimate: Estimate) -> Column:
    show = _percent if estimate.percent else _points if estimate.points else number
    values, details = [], []
    for row in frame.select(estimate.parts()).iter_rows(named=True):
        value = row[estimate.value]
        missing = value is None or (isinstance(value, float) and math.isnan(value))
        values.append(MISSING if missing else show(value))
        details.append([] if missing else _qualifiers(estimate, row))
    return Column(estimate.value, values, details, [_key(value) for value in frame[estimate.value]])


def _qualifiers(estimate: Estimate, row: dict) -> list[str]:
    """What qualifies an estimate: its interval, its n, its games, each where known."""
    found = []
    low, high = (row[estimate.low], row[estimate.high]) if estimate.low else (None, None)
    if low is not None and high is not None:
        found.append(_interval(low, high, estimate))
    if estimate.n and row[estimate.n] is not None:
        found.append(f"n={number(row[estimate.n])}")
    if estimate.games and row[estimate.games] is not None:
        games = row[estimate.games]
        found.append(f"{number(games)} game" + ("" if games == 1 else "s"))
    return found


def _interval(low: float, high: float, estimate: Estimate) -> str:
    if estimate.percent:
        return f"{_percent(low)[:-1]}–{_percent(high)}"
    if estimate.points:  # signed bounds: "to" reads better than a dash between them
        return f"{_points(low)[:-3]} to {_points(high)}"
    separator = "–" if low >= 0 else " to "
    return f"{number(low)}{separator}{number(high)}"


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def _points(value: float) -> str:
    return f"{100 * value:+.1f} pp"


def _plain_column(series: pl.Series) -> Column:
    dtype = series.dtype
    p_value = bool(P_VALUE.fullmatch(series.name)) and dtype.is_float()
    values = [cell(value, p_value) for value in series]
    keys = [_key(value) for value in series] if dtype.is_numeric() or dtype == pl.Boolean else None
    return Column(series.name, values, None, keys, long=keys is None and max(map(len, values), default=0) > LONG_TEXT)


def _key(value) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def cell(value, p_value: bool = False) -> str:
    """One value as text: numbers rounded (`number`), yes/no, lists and mappings joined,
    times to the second, a dash where there is none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if p_value and 0 <= value < 0.001:
        return "<0.001"
    if isinstance(value, (int, float)):
        return number(value)
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, (date, time, timedelta)):
        return str(value)
    if isinstance(value, (list, tuple, pl.Series)):
        return ", ".join(cell(item) for item in value) or MISSING
    if isinstance(value, dict):
        return ", ".join(f"{key}: {cell(item)}" for key, item in value.items()) or MISSING
    return str(value)


def number(value: float) -> str:
    """A number to read: whole numbers with thousands separators, others to three
    significant digits (two decimals at most from 1 up), trailing zeros dropped."""
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    size = abs(value)
    if size >= 100:
        return f"{value:,.0f}"
    decimals = 1 if size >= 10 else 2 if size >= 1 else 2 - math.floor(math.log10(size))
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


# --- HTML ------------------------------------------------------------------------------------


def html_table(frame: pl.DataFrame, table_id: str) -> str:
    """`frame` as a sortable, filterable HTML table (needs `SCRIPT` and `STYLE` in the
    page); wide tables scroll within their own box, never the page."""
    if frame.is_empty():
        return "<p class='note'>nothing to show</p>"
    shown = columns(frame)
    head = "".join(
        f"<th scope='col' title='sort by {html.escape(heading(c.name))}'>{html.escape(heading(c.name))}</th>"
        for c in shown
    )
    rows = "".join("<tr>" + "".join(_td(c, i) for c in shown) + "</tr>" for i in range(frame.height))
    return (
        f"<div class='table'><input type='search' class='filter' data-table='{table_id}' "
        f"placeholder='filter rows' aria-label='filter the rows of this table'>"
        f"<span class='shown' aria-live='polite'></span><div class='scroll'>"
        f"<table class='sortable' id='{table_id}'><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
        f"</div></div>"
    )


def heading(name: str) -> str:
    """A column's heading for people: `ci_method` is "interval", `games_won` "games won"."""
    return HEADINGS.get(name, name.replace("_", " "))


def _breakable(text: str) -> str:
    """Text that may break after its underscores, so a name (`raise_amount_positive_int`)
    does not widen its column to its full length."""
    return "_<wbr>".join(html.escape(part) for part in text.split("_"))


def _unbroken(text: str) -> bool:
    """Whether `text` has a run a line cannot break within that is wider than a column
    should be (a name from a log, a hash): such a cell may break anywhere."""
    return max(map(len, UNBREAKABLE.split(text))) > LONGEST_WORD


def _td(column: Column, row: int) -> str:
    if column.keys is None:
        value = column.values[row]
        if column.long:
            return f"<td class='long'>{html.escape(value)}</td>"
        return f"<td class='unbroken'>{_breakable(value)}</td>" if _unbroken(value) else f"<td>{_breakable(value)}</td>"
    text = html.escape(column.values[row])
    if column.details and column.details[row]:  # each part whole, the cell wrapping between them
        parts = ", ".join(f"<span>{html.escape(part)}</span>" for part in column.details[row])
        text += f" <span class='detail'>({parts})</span>"
    key = column.keys[row]
    return f"<td class='number' data-key='{'' if key is None else repr(key)}'>{text}</td>"


STYLE = """
.table { margin: 8px 0 16px; }
.table .scroll { overflow: auto; max-width: 100%; max-height: 80vh; }
.table .filter { font: inherit; font-size: 13px; padding: 2px 6px; margin-bottom: 4px; width: 16em; }
.table .shown { color: #666; font-size: 12px; margin-left: 8px; }
table.sortable { border-collapse: collapse; font-size: 13px; }
table.sortable th, table.sortable td { border-bottom: 1px solid #ddd; padding: 3px 6px; text-align: left;
  vertical-align: top; }
table.sortable th { cursor: pointer; user-select: none; background: #f6f6f6; position: sticky; top: 0;
  padding-right: 12px; }
table.sortable th::after { position: absolute; right: 2px; top: 4px; font-size: 10px; color: #333; }
table.sortable th:is(:hover, :focus)::after { content: "\\2195"; color: #999; }
table.sortable th[aria-sort=ascending]::after { content: "\\25B2"; color: #333; }
table.sortable th[aria-sort=descending]::after { content: "\\25BC"; color: #333; }
table.sortable td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.sortable td .detail { display: block; white-space: normal; color: #666; font-size: 12px; }
table.sortable td .detail span { white-space: nowrap; }
table.sortable td.long { min-width: 12em; max-width: 36em; }
table.sortable td:is(.long, .unbroken) { overflow-wrap: anywhere; }
"""

# Sorts a table by the column whose header is clicked (or given Enter), by each cell's
# data-key where it has one (numbers; an empty key is a missing value, always last), else
# by its text; filters the rows to those whose text holds what is typed above the table.
SCRIPT = """
document.querySelectorAll("table.sortable").forEach(table => {
  const body = table.tBodies[0];
  const headers = [...table.tHead.rows[0].cells];
  headers.forEach((header, column) => {
    header.tabIndex = 0;
    const sort = () => {
      const ascending = header.getAttribute("aria-sort") !== "ascending";
      headers.forEach(other => other.removeAttribute("aria-sort"));
      header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const key = row => {
        const cell = row.cells[column];
        if (cell.dataset.key === undefined) return cell.textContent;
        return cell.dataset.key === "" ? null : Number(cell.dataset.key);
      };
      const order = (a, b) => typeof a === "number" ? a - b : a.localeCompare(b, undefined, {numeric: true});
      const rows = [...body.rows].map(row => [key(row), row]);
      rows.sort(([a], [b]) => a === null ? (b === null ? 0 : 1) : b === null ? -1 : (ascending ? 1 : -1) * order(a, b));
      body.append(...rows.map(([, row]) => row));
    };
    header.addEventListener("click", sort);
    header.addEventListener("keydown", event => {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sort(); }
    });
  });
});
document.querySelectorAll("input.filter").forEach(input => {
  const table = document.getElementById(input.dataset.table);
  const shown = input.nextElementSibling;
  input.addEventListener("input", () => {
    const wanted = input.value.trim().toLowerCase();
    let count = 0;
    for (const row of table.tBodies[0].rows) {
      row.hidden = wanted !== "" && !row.textContent.toLowerCase().includes(wanted);
      count += !row.hidden;
    }
    shown.textContent = wanted === "" ? "" : `${count} of ${table.tBodies[0].rows.length} rows`;
  });
});
"""


def relative_paths(frame: pl.DataFrame, column: str = "path") -> tuple[pl.DataFrame, str | None]:
    """`frame` with the paths of `column` relative to the folder they have in common, and
    that folder; the frame as it was and None where they have none (`paths.relative_to_common`)."""
    relative, root = relative_to_common(frame[column].to_list())
    if root is None:
        return frame, None
    return frame.with_columns(pl.Series(column, relative, dtype=pl.String)), root
