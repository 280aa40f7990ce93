"""Find records and read them: `RecordBrowser(db, **filters)`, and the HTML of a
record in full (`record_html`), of an Agent Arena decision with its reasoning trace
(`decision_html`), and of the records behind a rule (`records_html`)."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import polars as pl

from workbench.connection import reading
from workbench.errors import WorkbenchError
from workbench.widgets.markup import WRAPPED, findings_html, pretty
from workbench.widgets.scrubber import ReplayScrubber
from workbench.widgets.sortable_table import selectable_table

RECORD_WHERE = ("format", "locator", "severity", "field", "message")


def records_html(records: pl.DataFrame) -> str:
    """The records behind a rule (`analysis.violations_for_rule`) as cards that fit the
    page: where and what on one line, then `raw` and `stored` in full, wrapped, so
    neither hides behind a horizontal scroll. All log text is escaped.

    Args:
        records: a frame of `analysis.violations_for_rule`.

    Returns:
        HTML, one card per row (or "no records").
    """
    if records.is_empty():
        return "<i>no records</i>"
    cards = []
    for row in records.iter_rows(named=True):
        where = " · ".join(
            f"<b>{html.escape(str(row[key]))}</b>" if key == "locator" else html.escape(str(row[key]))
            for key in RECORD_WHERE
            if row.get(key) is not None
        )
        path = html.escape(str(row["path"]))
        cards.append(
            f"<div style='margin:0 0 10px 0'><div title='{path}'>{html.escape(Path(row['path']).name)} · {where}</div>"
            + "".join(
                f"<div><i>{key}</i><pre style='{WRAPPED}'>{html.escape(row[key] or '—')}</pre></div>"
                for key in ("raw", "stored")
            )
            + "</div>"
        )
    return "".join(cards)


TRACE_STEPS = ("observation", "retrieved", "prompt", "llm_request", "response", "traced_decision")


def decision_html(decision: dict) -> str:
    """One row of `arena.queries.decision_drilldown` as a card: the decision as logged and
    the rules it broke, the time spent in each traced step (a bar per step, to scale),
    then what each step saw or said, wrapped in full. All log text is escaped.

    Args:
        decision: a row of `arena.queries.decision_drilldown`, as a dict.

    Returns:
        HTML; a decision with no reasoning trace says so.
    """
    mark = "valid" if decision["valid"] else "<b style='color:#c0392b'>invalid</b>"
    head = (
        f"<div><b>{html.escape(decision['agent_id'])}</b> · {html.escape(decision['episode_id'])} · "
        f"tick {decision['tick']} · {html.escape(str(decision['model']))} · {mark}: "
        f"<code>{html.escape(str(decision['tool']))} {html.escape(str(decision['params']))}</code></div>"
        f"<div title='{html.escape(decision['decision_file'])}'>logged at {html.escape(decision['locator'])} of "
        f"{html.escape(Path(decision['decision_file']).name)}</div>"
    )
    broken = "".join(f"<li>{html.escape(found)}</li>" for found in decision["violations"] or [])
    if not decision["traced"]:
        return head + (f"<ul>{broken}</ul>" if broken else "") + "<i>no reasoning trace for this decision</i>"
    slowest = max((step["duration_ms"] or 0 for step in decision["step_ms"]), default=0) or 1
    times = "".join(
        f"<tr><td>{html.escape(step['name'])}</td><td style='text-align:right'>{_ms(step['duration_ms'])}</td>"
        f"<td><div style='background:#4c78a8;height:10px;width:{240 * (step['duration_ms'] or 0) / slowest:.0f}px'>"
        f"</div></td></tr>"
        for step in decision["step_ms"]
    )
    steps = "".join(
        f"<div><i>{name}</i><pre style='{WRAPPED}'>{html.escape(pretty(decision[name]))}</pre></div>"
        for name in TRACE_STEPS
        if decision.get(name) is not None
    )
    return (
        head + f"<div title='{html.escape(decision['trace_file'])}'>traced at "
        f"{html.escape(decision['trace_locator'])} of {html.escape(Path(decision['trace_file']).name)}, "
        f"{_ms(decision['trace_ms'])} in all</div>"
        + (f"<ul>{broken}</ul>" if broken else "")
        + f"<table>{times}</table>"
        + steps
    )


def _ms(value) -> str:
    return "—" if value is None else f"{value:,.1f} ms"


VALIDITY = {"any": None, "valid": True, "invalid": False}
RAW_CHARS = 90  # of a record's text shown in its row of the table


class RecordBrowser:
    """Find records and read them: filters (format, model, game, rule, validity, words
    of the text), a sortable, paged table, and the selected record in full: its raw
    text pretty-printed, its findings with their field paths, the reasoning trace of an
    Agent Arena decision, and for a Damage event a button that opens the replay there.

    `db` is a database path or a connection (only read). The filters given here are the
    first search; `.show(**filters)` searches again (what a chart's selection calls);
    `.records` is the frame shown, `.select(i)` shows row i in the detail pane.
    Displaying the browser in a notebook shows `.widget`.

    Args:
        db: a database path or a connection (only read).
        limit: at most this many records per search.
        aliases: a dict, or a JSON or CSV file, mapping names to one model (for `model`).
        **filters: the first search, as `analysis.records` takes them: `format`, `model`,
            `game_id`, `rule`, `valid`, `text`, `severity`, `at`.

    Raises:
        WorkbenchError: a filter not among those.
    """

    FILTERS = ("format", "model", "game_id", "rule", "valid", "text")

    def __init__(self, db, limit: int = 500, aliases=None, **filters):
        unknown = set(filters) - set(self.FILTERS) - {"severity", "at"}
        if unknown:
            raise WorkbenchError(
                f"RecordBrowser has no filter {', '.join(sorted(unknown))}; "
                f"filters: {', '.join(self.FILTERS)}, severity, at"
            )
        self._db, self.limit, self.aliases = db, limit, aliases
        self.filters: dict = {}
        self.records = pl.DataFrame()
        self._view = _BrowserView(self)
        self.show(**filters)

    def show(self, **filters) -> pl.DataFrame:
        """Search with `filters` (None or absent: any) and show the first `limit` records.

        Args:
            **filters: `format`, `model`, `game_id`, `rule`, `valid`, `text`, `severity`,
                `at`, as `analysis.records` takes them.

        Returns:
            The records found (`.records`), as `analysis.records` gives them.
        """
        from workbench.records import records

        self.filters = {key: value for key, value in filters.items() if value is not None}
        with reading(self._db) as con:
            self.records = records(con, limit=self.limit, aliases=self.aliases, **self.filters)
        self._view.fill(self.records, self.filters)
        return self.records

    def select(self, index: int) -> str:
        """Show row `index` of `.records` in the detail pane.

        Args:
            index: the row of `.records`, from 0.

        Returns:
            The pane's HTML (`record_html`).
        """
        row = self.records.row(index, named=True)
        with reading(self._db) as con:
            detail = record_html(con, row)
        self._view.detail(detail, index, row)
        return detail

    def scrubber(self, index: int) -> ReplayScrubber:
        """The replay of the Damage game of row `index`, at its event.

        Args:
            index: the row of `.records`, from 0.

        Returns:
            A `ReplayScrubber` of the record's game, its position at the record's line (or
            the last event before it).

        Raises:
            WorkbenchError: the row is not an event of a Damage game.
        """
        row = self.records.row(index, named=True)
        if row["format"] != "damage" or row["game_id"] is None:
            raise WorkbenchError(f"{row['locator']} of {Path(row['path']).name} is no event of a Damage game")
        scrubber = ReplayScrubber(self._db, row["game_id"])
        at = np.searchsorted(scrubber.replay.seqs, row["line"])
        scrubber.position = int(min(at, len(scrubber.replay) - 1))
        return scrubber

    @property
    def widget(self):
        """The ipywidgets view: the filters, the count, the table and the detail pane."""
        return self._view.root

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


class _BrowserView:
    """The widgets of a RecordBrowser."""

    def __init__(self, browser: RecordBrowser):
        import ipywidgets as widgets

        self.browser = browser
        with reading(browser._db) as con:
            choices = _filter_choices(con)
        self.inputs = {
            "format": widgets.Dropdown(
                options=[("any", None), *[(f, f) for f in choices["format"]]], description="format"
            ),
            "model": widgets.Combobox(
                options=choices["model"], placeholder="any", description="model", ensure_option=False
            ),
            "game_id": widgets.Combobox(options=choices["game_id"], placeholder="any", description="game"),
            "rule": widgets.Combobox(options=choices["rule"], placeholder="any", description="rule"),
            "valid": widgets.ToggleButtons(
                options=list(VALIDITY), description="records", style={"button_width": "64px"}
            ),
            "text": widgets.Text(placeholder="words of the record", description="text", continuous_update=False),
        }
        for control in self.inputs.values():
            control.observe(lambda _: self._search(), names="value")
        self.count = widgets.HTML()
        self.table = widgets.Box(layout=widgets.Layout(max_width="100%", overflow="auto"))
        self.pane = widgets.HTML(layout=widgets.Layout(max_width="100%"))
        self.replay = widgets.Output()
        self.open_replay = widgets.Button(description="open the replay here", layout=widgets.Layout(display="none"))
        self.open_replay.on_click(lambda _: self._open_replay())
        self._table_widget = None
        self._filling = False
        rows = list(self.inputs.values())
        self.root = widgets.VBox(
            [
                widgets.HBox(rows[:3], layout=widgets.Layout(flex_flow="row wrap")),
                widgets.HBox(rows[3:], layout=widgets.Layout(flex_flow="row wrap")),
                self.count,
                self.table,
                self.pane,
                self.open_replay,
                self.replay,
            ]
        )

    def _search(self) -> None:
        if self._filling:
            return
        filters = {}
        for name, control in self.inputs.items():
            value = control.value
            filters[name] = VALIDITY[value] if name == "valid" else (value or None)
        self.browser.show(**filters)

    def fill(self, records: pl.DataFrame, filters: dict) -> None:
        """Show `records`, and the filters they were found with in the controls."""
        self._filling = True
        try:
            for name, control in self.inputs.items():
                value = filters.get(name)
                if name == "valid":
                    control.value = next(k for k, v in VALIDITY.items() if v is value)
                elif name == "format":
                    control.value = value if value in [v for _, v in control.options] else None
                else:
                    control.value = "" if value is None else str(value)
        finally:
            self._filling = False
        more = " (the first ones; narrow the search to see others)" if records.height >= self.browser.limit else ""
        self.count.value = f"<b>{records.height:,}</b> record{'s' if records.height != 1 else ''}{more}"
        self._table_widget = _record_table(records)
        self.table.children = [] if self._table_widget is None else [self._table_widget]
        if self._table_widget is not None:
            self._table_widget.observe(self._selected, names="selected_rows")
        self.pane.value = "<i>select a record to read it</i>" if records.height else "<i>no records</i>"
        self.open_replay.layout.display = "none"
        self.replay.clear_output()

    def _selected(self, change) -> None:
        if change["new"]:
            self.browser.select(change["new"][0])

    def detail(self, html_text: str, index: int, row: dict) -> None:
        self.pane.value = html_text
        self._index = index
        damage = row["format"] == "damage" and row["game_id"] is not None
        self.open_replay.layout.display = None if damage else "none"
        self.replay.clear_output()

    def _open_replay(self) -> None:
        from IPython.display import display

        self.replay.clear_output()
        with self.replay:
            display(self.browser.scrubber(self._index).widget)


def _filter_choices(con) -> dict[str, list[str]]:
    """What the filters offer: the formats, models, games and rules of the database."""

    def column(sql: str) -> list[str]:
        return [value for (value,) in con.execute(sql).fetchall() if value is not None]

    return {
        "format": column("SELECT DISTINCT format FROM sources ORDER BY 1"),
        "model": column("SELECT DISTINCT model FROM decisions ORDER BY 1"),
        "game_id": column("SELECT DISTINCT game_id FROM decisions ORDER BY 1 LIMIT 5000"),
        "rule": column("SELECT DISTINCT rule FROM violations ORDER BY 1"),
    }


TABLE_COLUMNS = ("file", "locator", "format", "game_id", "turn", "model", "valid", "rules", "text")


def _record_table(records: pl.DataFrame):
    """The records as a sortable, paged, searchable table with rows to select
    (itables' DataTables widget, whose scripts come with the package: no network)."""
    if records.is_empty():
        return None
    shown = records.with_columns(
        file=pl.col("path").map_elements(lambda p: Path(p).name, return_dtype=pl.String),
        rules=pl.col("rules").list.join(", "),
        valid=pl.when(pl.col("outcome") == "failed").then(pl.lit("failed")).otherwise(_validity_words("valid")),
        text=pl.col("raw").str.slice(0, RAW_CHARS),
    ).select(TABLE_COLUMNS)
    return selectable_table(shown)


def _validity_words(column: str) -> pl.Expr:
    """A validity column in words: valid, invalid, or — where it is not known."""
    known = pl.when(pl.col(column)).then(pl.lit("valid")).when(pl.col(column).not_()).then(pl.lit("invalid"))
    return known.otherwise(pl.lit("—")).alias(column)


def record_html(con, row: dict) -> str:
    """One record in full: where it is, its raw text (JSON pretty-printed), its findings
    with their field paths, and an Agent Arena decision's reasoning trace. Escaped.

    Args:
        con: a connection to the database the record is from.
        row: a row of `analysis.records`, as a dict.

    Returns:
        HTML; a record whose file no longer holds what was ingested says so instead of its text.
    """
    from workbench.records import findings_of

    where = (
        f"<div title='{html.escape(row['path'])}'><b>{html.escape(Path(row['path']).name)}</b> · "
        f"{html.escape(row['locator'])} · {html.escape(row['format'])}"
        + "".join(
            f" · {html.escape(str(row[key]))}"
            for key in ("game_id", "turn", "model", "action")
            if row.get(key) is not None
        )
        + f" · {'valid' if row['valid'] else '<b style=color:#c0392b>invalid</b>'}</div>"
    )
    raw = row["raw"]
    text = pretty(raw) if raw is not None else "(the file no longer holds what was ingested: ingest it again)"
    found = findings_of(con, row["source_id"], row["locator"], row["line"]).to_dicts()
    parts = [
        where,
        f"<pre style='{WRAPPED}'>{html.escape(text)}</pre>",
        f"<div><i>findings</i>{findings_html(found)}</div>" if found else "<div><i>no findings</i></div>",
    ]
    if row["format"] == "arena" and row["game_id"] is not None and row["turn"] is not None:
        from workbench.arena.queries import decision_drilldown

        # the decision's game is its episode within its run (`run/ep`); its log is its file
        episode = row["game_id"].rsplit("/", 1)[-1]
        traced = decision_drilldown(con, row["agent_id"], episode, row["turn"])
        traced = traced.filter(pl.col("decision_file") == row["path"]) if traced.height else traced
        parts += [decision_html(decision) for decision in traced.iter_rows(named=True)]
    return "".join(parts)
