"""Step through a Damage game in a notebook: `ReplayScrubber(con, game_id)`, and the
widgets the notebooks share.

The scrubber is the view on a `GameReplay` (workbench.damage.replay): a Play button
and a slider linked in the browser, jump buttons, the table state, the event at the
cursor, and the emotion chart whose cursor moves through a Vega parameter, so a step
never rebuilds the chart.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np
import polars as pl

from workbench.catalog import query_frame, reading
from workbench.damage import queries
from workbench.damage.describe import describe_event
from workbench.damage.models import EMOTIONS
# GameReplay is public here too: callers that step through a game import it with the scrubber.
from workbench.damage.replay import HAND, GameReplay
from workbench.errors import WorkbenchError

# --- the replay scrubber -------------------------------------------------------------------

CURSOR = "cursor"  # the chart's parameter: the line (seq) of the event at the position
PAYLOAD_CHARS = 4000  # of the event's payload shown under its description


class ReplayScrubber:
    """Step through a Damage game: `.position` (event index, settable), `.state` (per
    player), `.widget` (the ipywidgets view), `.jump(phase)`, `.refresh()`.

    The view: a Play button and a slider linked in the browser, a choice of speed, jump
    buttons, the table state, the event at the cursor with the findings about its line,
    and the emotion chart with a cursor at the event (moving with the slider where
    anywidget is installed). Displaying the scrubber in a notebook shows `.widget`.

    Args:
        con: a DuckDB connection or a database path (opened read-only and closed);
            either way it is only read here.
        game_id: the game; None picks the game with most events.

    Raises:
        WorkbenchError: no Damage game in the database, or no events for `game_id`.
    """

    def __init__(self, con, game_id: str | None = None):
        self._source = con
        self._position = 0
        self._view: _ScrubberView | None = None
        self._load(game_id)

    def _load(self, game_id: str | None) -> None:
        with reading(self._source) as con:
            self.replay = GameReplay(con, game_id)
            self.chart, self.chart_note = _emotion_chart(con, self.replay)
            self.findings = _event_findings(con, self.replay.game_id)
        self.game_id = self.replay.game_id

    def refresh(self) -> int:
        """Read the game again, with the events written since (a game still being
        played, followed by `workbench ingest --watch`); the cursor stays on the same
        event.

        Returns:
            How many events were added.
        """
        before = len(self.replay)
        self._load(self.game_id)
        self._position = min(self._position, len(self.replay) - 1)
        if self._view is not None:
            self._view.reload()
        return len(self.replay) - before

    def __len__(self) -> int:
        return len(self.replay)

    @property
    def position(self) -> int:
        """The index of the event at the cursor, from 0; set it to move the cursor and the view.

        Raises:
            TypeError: set to something other than an int.
            IndexError: set outside the game's events.
        """
        return self._position

    @position.setter
    def position(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"position is an event index (int), got {value!r}")
        if not 0 <= value < len(self.replay):
            raise IndexError(f"position {value} is outside the game's events 0..{len(self.replay) - 1}")
        self._position = int(value)
        if self._view is not None:
            self._view.show(self._position)

    @property
    def state(self) -> dict:
        """Per player, after the event at the cursor: `lives`, `bankroll`, `in_hand`,
        `emotions` (None where the log has not stated them yet) and `eliminated`."""
        return self.replay.state_at(self._position)

    @property
    def table(self) -> dict:
        """The table at the cursor: `turn`, `phase`, `pot`, and the event's line (`seq`) and `type`."""
        return self.replay.table_at(self._position)

    @property
    def event(self) -> dict:
        """The event at the cursor: `position`, `seq` (its line), `type`, `turn`, `ts` and `payload`."""
        return self.replay.event_at(self._position)

    def jump(self, phase: str | None = None, backward: bool = False) -> int | None:
        """Move to the next boundary of `phase` (`affect`, `betting`, `showdown`,
        `discussion`, or `hand` for the next hand; None: any phase) and return the new
        position; with `backward=True` to the previous one. Stays put and returns None
        when there is none.

        Args:
            phase: the phase whose start to move to, `hand` for a hand's; None: any phase.
            backward: move to the previous boundary instead of the next.

        Returns:
            The new position, or None when there is no such boundary.

        Raises:
            WorkbenchError: an unknown phase.
        """
        target = self.replay.next_boundary(phase, self._position, backward)
        if target is not None:
            self.position = target
        return target

    def figure(self):
        """The emotion chart with its cursor at the current position, to save or show.

        Returns:
            An Altair chart: the game's emotion trajectories with a rule at the event's line.

        Raises:
            WorkbenchError: the game has no emotion chart (the reason why).
        """
        if self.chart is None:
            raise WorkbenchError(self.chart_note or f"no emotion chart for game {self.game_id!r}")
        chart = self.chart.copy(deep=False)
        chart.params = [p.copy() for p in self.chart.params]
        next(p for p in chart.params if p.name == CURSOR).value = int(self.replay.seqs[self._position])
        return chart

    @property
    def widget(self):
        """The ipywidgets view of the scrubber, built on first use."""
        if self._view is None:
            self._view = _ScrubberView(self)
        return self._view.root

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def _emotion_chart(con, replay: GameReplay):
    """The game's emotion trajectories with a vertical rule at the `cursor` parameter,
    or None and the reason there is none."""
    from workbench.plots.emotions import cursor_rule, emotion_trajectories
    from workbench.plots.vega import as_altair

    try:
        spec = emotion_trajectories.spec(con, replay.game_id, overlay=cursor_rule(CURSOR))
    except WorkbenchError as exc:
        return None, str(exc)
    spec["params"].append({"name": CURSOR, "value": int(replay.seqs[0])})
    return as_altair(spec), None


# Play's speeds: (milliseconds between steps, events per step). Past 20 events a second
# it takes bigger steps rather than shorter intervals, which the kernel could not keep up
# with: a 2,500-event game plays in 8 minutes at 5/s, in 25 s at 100/s.
PLAY_SPEEDS = {"5 events/s": (200, 1), "20 events/s": (50, 1), "100 events/s": (50, 5), "500 events/s": (50, 25)}


class _ScrubberView:
    """The widgets of a scrubber; `show(i)` updates them all for position `i`."""

    def __init__(self, scrubber: ReplayScrubber):
        import ipywidgets as widgets

        self.scrubber = scrubber
        # The slider counts events from 1, as the text beside it does ("event 117 of 2495").
        self.play = widgets.Play(value=1, min=1, step=1, interval=200, description="play")
        self.slider = widgets.IntSlider(value=1, min=1, description="event",
                                        continuous_update=True, layout=widgets.Layout(width="560px"))
        # Linked in the browser: playing moves the slider without a round trip.
        self.link = widgets.jslink((self.play, "value"), (self.slider, "value"))
        self.slider.observe(self._slider_moved, names="value")
        self.speed = widgets.Dropdown(options=list(PLAY_SPEEDS), value="5 events/s", description="speed",
                                      layout=widgets.Layout(width="200px"))
        self.speed.observe(self._speed_chosen, names="value")
        self.status = widgets.HTML()
        # The table keeps its own width (it scrolls when narrower than its columns) and
        # the event pane wraps below it on a narrow screen instead of covering it.
        self.table = widgets.HTML(layout=widgets.Layout(flex="0 0 auto", max_width="100%", overflow="auto",
                                                        margin="0 24px 0 0"))
        self.event = widgets.HTML(layout=widgets.Layout(flex="1 1 360px", min_width="360px"))
        self.title = widgets.HTML()
        self.root = widgets.VBox()
        self._rows = [
            self.title,
            widgets.HBox([self.play, self.slider, self.speed]),
            widgets.HBox([*self._buttons(widgets), self.status]),
            widgets.HBox([self.table, self.event], layout=widgets.Layout(flex_flow="row wrap")),
        ]
        self.reload()

    def reload(self) -> None:
        """Fit the view to the scrubber's (re)loaded game: range, title, chart."""
        scrubber = self.scrubber
        self.play.max = self.slider.max = len(scrubber.replay)
        self.title.value = (f"<b>{html.escape(scrubber.game_id)}</b> · {len(scrubber.replay)} events · "
                            f"{len(scrubber.replay.players)} players")
        self.chart, chart_box = _chart_widget(scrubber.figure() if scrubber.chart else None, scrubber.chart_note)
        if self.chart is not None:
            self.chart.observe(self._keep_cursor, names="_params")
        self.root.children = [*self._rows, chart_box]
        self.show(scrubber.position)

    def _buttons(self, widgets) -> list:
        jumps = [("◀ phase", None, True), ("phase ▶", None, False), ("hand ▶", HAND, False),
                 ("showdown ▶", "showdown", False)]
        buttons = []
        for label, phase, backward in jumps:
            button = widgets.Button(description=label, layout=widgets.Layout(width="auto"))
            button.on_click(lambda _, phase=phase, backward=backward: self._jump(phase, backward))
            buttons.append(button)
        refresh = widgets.Button(description="⟳ new events", tooltip="read events written since",
                                 layout=widgets.Layout(width="auto"))
        refresh.on_click(lambda _: self._refresh())
        return [*buttons, refresh]

    def _refresh(self) -> None:
        added = self.scrubber.refresh()
        self.status.value = f"<i>{added} new event{'s' if added != 1 else ''}</i>"

    def _jump(self, phase: str | None, backward: bool) -> None:
        moved = self.scrubber.jump(phase, backward)
        if moved is None:
            where = "earlier" if backward else "later"
            self.status.value = f"<i>no {where} {html.escape(phase or 'phase')} boundary</i>"

    def _keep_cursor(self, change) -> None:
        # A chart view that renders in the browser reports the spec's own cursor back,
        # which lags the scrubber when it moved before the view rendered: put it back.
        at = int(self.scrubber.replay.seqs[self.scrubber.position])
        if change["new"].get(CURSOR) != at:
            self.chart._params = {**change["new"], CURSOR: at}

    def _slider_moved(self, change) -> None:
        if change["new"] - 1 != self.scrubber.position:
            self.scrubber.position = change["new"] - 1

    def _speed_chosen(self, change) -> None:
        self.play.interval, self.play.step = PLAY_SPEEDS[change["new"]]

    def show(self, i: int) -> None:
        replay = self.scrubber.replay
        self.slider.value = i + 1  # the observer sees the position already set: no second update
        self.status.value = ""
        self.table.value = state_html(replay.table_at(i), replay.state_at(i))
        event = replay.event_at(i)
        self.event.value = event_html(event, len(replay), self.scrubber.findings.get(event["seq"], []))
        if self.chart is not None:
            setattr(self.chart.params, CURSOR, int(replay.seqs[i]))


def _chart_widget(chart, note: str | None):
    """(the JupyterChart whose cursor moves, or None; the widget to place). Without
    anywidget the chart is drawn once, without a moving cursor."""
    import altair as alt
    import ipywidgets as widgets

    if chart is None:
        return None, widgets.HTML(f"<i>{html.escape(note or 'no emotion chart')}</i>")
    try:
        _enable_offline(alt)
        live = alt.JupyterChart(chart)  # its rows are the spec's values: no row limit applies
        return live, live
    except ImportError:
        output = widgets.Output()
        with output:
            from IPython.display import display

            display(chart)
        hint = widgets.HTML("<i>install <code>anywidget</code> for a cursor that follows the slider</i>")
        return None, widgets.VBox([hint, output])


_offline_tried = False


def _enable_offline(alt) -> None:
    """Serve the chart's JavaScript from vl-convert instead of a CDN, once per process.
    Where that fails the chart still works, loading its scripts online."""
    global _offline_tried
    if not _offline_tried:
        _offline_tried = True
        try:
            alt.JupyterChart.enable_offline()
        except ImportError:  # no anywidget: the caller falls back to a static chart
            _offline_tried = False
            raise
        except Exception:  # noqa: BLE001 - offline mode is a nicety; the CDN still works
            pass


def has_anywidget() -> bool:
    """Whether the `anywidget` package is installed (charts can then be live `JupyterChart` widgets)."""
    import importlib.util

    return importlib.util.find_spec("anywidget") is not None


def enable_offline_charts() -> str:
    """Make every chart a notebook shows render without network access.

    Altair's default notebook output loads Vega from a CDN, and JupyterLab's built-in
    renderer does not know Vega-Lite 6. With anywidget, charts become `JupyterChart`
    widgets whose scripts come from vl-convert; without it, each chart's HTML carries
    the scripts inline.

    Returns:
        Which of the two is in use, in words.
    """
    import altair as alt

    if has_anywidget():
        _enable_offline(alt)
        alt.renderers.enable("jupyter", offline=True)
        return "JupyterChart widgets, offline"
    alt.renderers.enable("html", template="inline")
    return "inline HTML (install anywidget for chart widgets)"


def live_chart(make_chart, controls: dict):
    """A chart that follows widgets: `make_chart(**values)` is drawn with the controls'
    values and redrawn when one changes. With anywidget, one `JupyterChart` gets the
    new chart (no new widget per change); otherwise the chart is redrawn into an
    Output. A value that cannot be drawn shows its reason instead.

    Args:
        make_chart: a function of the controls' values, by name, that returns a chart; a
            WorkbenchError it raises is shown as its message.
        controls: ipywidgets controls by the name of the argument each gives.

    Returns:
        The widget to display: a VBox of a note and the live chart, or an `interactive_output`.
    """
    import altair as alt
    import ipywidgets as widgets

    if not has_anywidget():
        return widgets.interactive_output(lambda **values: _show(make_chart, values), controls)
    _enable_offline(alt)
    note = widgets.HTML()

    def values() -> dict:
        return {name: control.value for name, control in controls.items()}

    def redraw(_=None) -> None:
        try:
            live.chart = make_chart(**values())
            note.value = ""
        except WorkbenchError as exc:
            note.value = f"<i>{html.escape(str(exc))}</i>"

    live = alt.JupyterChart(alt.Chart(alt.Data(values=[{}])).mark_text().properties(width=20, height=20))
    redraw()
    for control in controls.values():
        control.observe(redraw, names="value")
    return widgets.VBox([note, live])


def _show(make_chart, values: dict) -> None:
    from IPython.display import display

    try:
        display(make_chart(**values))
    except WorkbenchError as exc:
        print(exc)


def state_html(table: dict, state: dict) -> str:
    """The table at a position: turn, phase, pot, then one row per player. Every text
    from the log is escaped.

    Args:
        table: `GameReplay.table_at` of the position (turn, phase, pot, seq, type).
        state: `GameReplay.state_at` of the position (per player).

    Returns:
        HTML: a header line, and a table of each player's lives, bankroll, whether in the
        hand, and emotions.
    """
    def cell(value, fmt="{}"):
        return "–" if value is None else html.escape(fmt.format(value))

    header = (f"turn {cell(table['turn'])} · phase {cell(table['phase'])} · pot <b>{cell(table['pot'])}</b>"
              f" · line {table['seq']} {html.escape(str(table['type']))}")
    head = "".join(f"<th>{h}</th>" for h in ("player", "lives", "bankroll", "in hand", *EMOTIONS))
    rows = []
    for player, s in state.items():
        emotions = s["emotions"] or {}
        in_hand = "eliminated" if s.get("eliminated") else {True: "yes", False: "out", None: "–"}[s["in_hand"]]
        values = "".join(f"<td>{cell(emotions.get(e), '{:+.2f}')}</td>" for e in EMOTIONS)
        rows.append(f"<tr><td><b>{html.escape(player)}</b></td><td>{cell(s['lives'])}</td>"
                    f"<td>{cell(s['bankroll'])}</td><td>{in_hand}</td>{values}</tr>")
    return (f"<style>.wb-state td, .wb-state th {{padding: 1px 7px; text-align: right}}</style>"
            f"<div>{header}</div><table class='wb-state' style='border-collapse:collapse;font-size:12px'>"
            f"<tr>{head}</tr>{''.join(rows)}</table>")


def _event_findings(con, game_id: str) -> dict[int, list[dict]]:
    """The findings about each line (seq) of a game's log, most severe first."""
    rows = con.execute("""
        SELECT v.line, v.severity, v.rule, v.field, v.message FROM violation_lines v
        WHERE v.line IS NOT NULL
          AND v.source_id IN (SELECT DISTINCT source_id FROM damage_events WHERE game_id = ?)
        ORDER BY v.line, list_position(['error', 'warning', 'info'], v.severity), v.rule
    """, [game_id]).fetchall()
    found: dict[int, list[dict]] = {}
    for line, severity, rule, field, message in rows:
        found.setdefault(line, []).append({"severity": severity, "rule": rule, "field": field, "message": message})
    return found


def findings_html(findings: list[dict]) -> str:
    """Findings as a list: severity, rule, field path and message, escaped.

    Args:
        findings: dicts with `severity`, `rule`, `field` and `message`.

    Returns:
        HTML: an unordered list, one item per finding.
    """
    return "<ul style='margin:2px 0'>" + "".join(
        f"<li><b>{html.escape(f['severity'])}</b> {html.escape(f['rule'])} at <code>{html.escape(f['field'])}</code>: "
        f"{html.escape(f['message'])}</li>" for f in findings) + "</ul>"


def event_html(event: dict, events: int, findings: list[dict] = ()) -> str:
    """The event at the cursor: where it is, one readable line, the findings about its
    line, and its payload.

    Args:
        event: `GameReplay.event_at` of the position (position, seq, type, turn, ts, payload).
        events: the number of events in the game.
        findings: the findings about the event's line (see `findings_html`).

    Returns:
        HTML, every log text escaped; the payload (cut to 4,000 characters) folded away.
    """
    payload = event["payload"]
    text = json.dumps(payload, indent=1) if not isinstance(payload, str) else payload
    if len(text) > PAYLOAD_CHARS:
        text = text[:PAYLOAD_CHARS] + "\n…"
    return (f"<div>event {event['position'] + 1} of {events} · line {event['seq']} · "
            f"{html.escape(str(event['ts']))}</div>"
            f"<div><b>{html.escape(str(event['type']))}</b>: "
            f"{html.escape(describe_event(event['type'], payload))}</div>"
            + (f"<div style='color:#c0392b'>{len(findings)} finding{'s' if len(findings) != 1 else ''} "
               f"at this line:</div>{findings_html(findings)}" if findings else "")
            + f"<details><summary>payload</summary><pre style='max-height:240px;overflow:auto;font-size:11px'>"
            f"{html.escape(text)}</pre></details>")


# --- pickers for the notebooks ----------------------------------------------------------


class GamePicker:
    """A game (largest first), its players, and two lines of its log to compare, kept
    in step when the game changes. `.box` lays them out.

    `.game` is a Dropdown of the Damage games, `.players` a SelectMultiple of the game's
    players in seat order (all selected), `.lines` an IntRangeSlider over the game's log
    lines, set from the first hand's line to the last line; `.box` leaves `.lines` out,
    for the notebook to place where positions are compared.

    Args:
        db: a database path or a connection (only read).

    Raises:
        WorkbenchError: no Damage game in the database.
    """

    def __init__(self, db):
        import ipywidgets as widgets

        self._db = db
        with reading(db) as con:
            self._games = queries.existing_games(con)
        self.game = widgets.Dropdown(options=self._games["game_id"].to_list(), description="game",
                                     layout=widgets.Layout(width="420px"))
        self.players = widgets.SelectMultiple(description="players", rows=6)
        self.lines = widgets.IntRangeSlider(description="lines", continuous_update=False,
                                            layout=widgets.Layout(width="640px"))
        self.game.observe(lambda change: self._load(change["new"]), names="value")
        self._load(self.game.value)
        self.box = widgets.HBox([self.game, self.players])  # `lines` goes where positions are compared

    def _load(self, game_id: str) -> None:
        with reading(self._db) as con:
            players = queries.game_players(con, game_id)
        row = self._games.filter(pl.col("game_id") == game_id).row(0, named=True)
        self.players.options = players
        self.players.value = tuple(players)
        # Widen before narrowing so the slider never holds min > max in between.
        self.lines.max = max(self.lines.max, row["last_line"])
        self.lines.min = 1
        self.lines.value = (row["first_hand_line"] or 1, row["last_line"])
        self.lines.max = row["last_line"]


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
        where = " · ".join(f"<b>{html.escape(str(row[key]))}</b>" if key == "locator" else html.escape(str(row[key]))
                           for key in RECORD_WHERE if row.get(key) is not None)
        path = html.escape(str(row["path"]))
        cards.append(
            f"<div style='margin:0 0 10px 0'><div title='{path}'>{html.escape(Path(row['path']).name)} · {where}</div>"
            + "".join(f"<div><i>{key}</i><pre style='{WRAPPED}'>{html.escape(row[key] or '—')}</pre></div>"
                      for key in ("raw", "stored"))
            + "</div>")
    return "".join(cards)


WRAPPED = "white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0 4px 12px;font-size:12px"


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
    head = (f"<div><b>{html.escape(decision['agent_id'])}</b> · {html.escape(decision['episode_id'])} · "
            f"tick {decision['tick']} · {html.escape(str(decision['model']))} · {mark}: "
            f"<code>{html.escape(str(decision['tool']))} {html.escape(str(decision['params']))}</code></div>"
            f"<div title='{html.escape(decision['decision_file'])}'>logged at {html.escape(decision['locator'])} of "
            f"{html.escape(Path(decision['decision_file']).name)}</div>")
    broken = "".join(f"<li>{html.escape(found)}</li>" for found in decision["violations"] or [])
    if not decision["traced"]:
        return head + (f"<ul>{broken}</ul>" if broken else "") + "<i>no reasoning trace for this decision</i>"
    slowest = max((step["duration_ms"] or 0 for step in decision["step_ms"]), default=0) or 1
    times = "".join(
        f"<tr><td>{html.escape(step['name'])}</td><td style='text-align:right'>{_ms(step['duration_ms'])}</td>"
        f"<td><div style='background:#4c78a8;height:10px;width:{240 * (step['duration_ms'] or 0) / slowest:.0f}px'>"
        f"</div></td></tr>" for step in decision["step_ms"])
    steps = "".join(f"<div><i>{name}</i><pre style='{WRAPPED}'>{html.escape(_pretty(decision[name]))}</pre></div>"
                    for name in TRACE_STEPS if decision.get(name) is not None)
    return (head + f"<div title='{html.escape(decision['trace_file'])}'>traced at "
            f"{html.escape(decision['trace_locator'])} of {html.escape(Path(decision['trace_file']).name)}, "
            f"{_ms(decision['trace_ms'])} in all</div>" + (f"<ul>{broken}</ul>" if broken else "")
            + f"<table>{times}</table>" + steps)


def _ms(value) -> str:
    return "—" if value is None else f"{value:,.1f} ms"


def _pretty(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=1, ensure_ascii=False)
    except ValueError:
        return text


# --- the record browser -----------------------------------------------------------------------

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
            raise WorkbenchError(f"RecordBrowser has no filter {', '.join(sorted(unknown))}; "
                                 f"filters: {', '.join(self.FILTERS)}, severity, at")
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

    def scrubber(self, index: int) -> "ReplayScrubber":
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
            "format": widgets.Dropdown(options=[("any", None), *[(f, f) for f in choices["format"]]],
                                       description="format"),
            "model": widgets.Combobox(options=choices["model"], placeholder="any", description="model",
                                      ensure_option=False),
            "game_id": widgets.Combobox(options=choices["game_id"], placeholder="any", description="game"),
            "rule": widgets.Combobox(options=choices["rule"], placeholder="any", description="rule"),
            "valid": widgets.ToggleButtons(options=list(VALIDITY), description="records",
                                           style={"button_width": "64px"}),
            "text": widgets.Text(placeholder="words of the record", description="text", continuous_update=False),
        }
        for name, control in self.inputs.items():
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
        self.root = widgets.VBox([
            widgets.HBox(rows[:3], layout=widgets.Layout(flex_flow="row wrap")),
            widgets.HBox(rows[3:], layout=widgets.Layout(flex_flow="row wrap")),
            self.count, self.table, self.pane, self.open_replay, self.replay,
        ])

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
    from itables.widget import ITable

    shown = records.with_columns(
        file=pl.col("path").map_elements(lambda p: Path(p).name, return_dtype=pl.String),
        rules=pl.col("rules").list.join(", "),
        valid=pl.when(pl.col("outcome") == "failed").then(pl.lit("failed")).otherwise(_validity_words("valid")),
        text=pl.col("raw").str.slice(0, RAW_CHARS),
    ).select(TABLE_COLUMNS)
    return ITable(shown, select={"style": "single"}, selected_rows=[], pageLength=10, scrollX=True,
                  classes="display compact", showIndex=False, show_dtypes=False)


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

    where = (f"<div title='{html.escape(row['path'])}'><b>{html.escape(Path(row['path']).name)}</b> · "
             f"{html.escape(row['locator'])} · {html.escape(row['format'])}"
             + "".join(f" · {html.escape(str(row[key]))}" for key in ("game_id", "turn", "model", "action")
                       if row.get(key) is not None)
             + f" · {'valid' if row['valid'] else '<b style=color:#c0392b>invalid</b>'}</div>")
    raw = row["raw"]
    text = _pretty(raw) if raw is not None else "(the file no longer holds what was ingested: ingest it again)"
    found = findings_of(con, row["source_id"], row["locator"], row["line"]).to_dicts()
    parts = [where, f"<pre style='{WRAPPED}'>{html.escape(text)}</pre>",
             f"<div><i>findings</i>{findings_html(found)}</div>" if found else "<div><i>no findings</i></div>"]
    if row["format"] == "arena" and row["game_id"] is not None and row["turn"] is not None:
        from workbench.arena.queries import decision_drilldown

        # the decision's game is its episode within its run (`run/ep`); its log is its file
        episode = row["game_id"].rsplit("/", 1)[-1]
        traced = decision_drilldown(con, row["agent_id"], episode, row["turn"])
        traced = traced.filter(pl.col("decision_file") == row["path"]) if traced.height else traced
        parts += [decision_html(decision) for decision in traced.iter_rows(named=True)]
    return "".join(parts)


class DrillDown:
    """A chart that leads to its records: clicking a mark fills a RecordBrowser.

    The chart declares a point selection named `param` (the workbench's charts name
    theirs `pick`; the emotion chart one per panel, `pick_<emotion>`: give the list)
    over the fields that say which records are behind a mark;
    `to_filters(values)` turns the selected mark's fields (a dict) into the browser's
    filters (default: the fields as they are). Your own chart works the same way:

        pick = alt.selection_point(name="pick", fields=["format", "model"], on="click")
        chart = alt.Chart(frame).mark_bar().encode(...).add_params(pick)
        DrillDown(chart, browser)          # display `.widget`

    `.chart` is the live `JupyterChart`; `.picked(values)` is what a click calls;
    `.widget` shows the chart above the browser.

    Args:
        chart: an Altair chart with a point selection named `param`.
        browser: the RecordBrowser a click fills.
        param: the selection's name, or a list of names (a chart of panels may name one each).
        to_filters: a function from the selected mark's fields (a dict) to the browser's
            filters; None: the fields as they are. See `scorecard_filters`, `decision_filters`,
            `attack_filters`, `emotion_filters`, `mistake_filters`, `family_filters`, `economy_filters`.
    """

    def __init__(self, chart, browser: RecordBrowser, param="pick", to_filters=None):
        import altair as alt
        import ipywidgets as widgets

        self.browser = browser
        self.params = [param] if isinstance(param, str) else list(param)  # a chart of panels may name one each
        self.to_filters = to_filters or (lambda values: dict(values))
        _enable_offline(alt)
        with alt.data_transformers.disable_max_rows():
            self.chart = alt.JupyterChart(chart)
        self.chart.selections.observe(self._clicked, names=self.params)
        self.widget = widgets.VBox([self.chart, browser.widget])

    def _clicked(self, change) -> None:
        selected = change["new"].value
        if selected:
            self.picked(selected[0])

    def picked(self, values: dict) -> pl.DataFrame:
        """Show the records behind the mark whose selected fields are `values`.

        Args:
            values: the selected mark's fields, by name.

        Returns:
            The records the browser shows (`RecordBrowser.show`).
        """
        return self.browser.show(**self.to_filters(values))

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def scorecard_filters(values: dict) -> dict:
    """The records behind a bar of the scorecard (`plots.scorecard`): that model's
    invalid decisions in that format (switch `records` to `any` for all of them).

    A `to_filters` for `DrillDown`.

    Args:
        values: the selected mark's `format` and `model_name`.

    Returns:
        The filters `format`, `model` and `valid=False`.
    """
    return {"format": values["format"], "model": values["model_name"], "valid": False}


def decision_filters(values: dict) -> dict:
    """The records behind a bar of the decision-quality chart (`plots.decision_quality`,
    its selections `plots.decisions.PICKS`): a format's invalid records (its invalid
    decisions and the lines that could not be read), a model's invalid decisions in that
    format, or the format's records that break that rule.

    A `to_filters` for `DrillDown(chart, browser, param=PICKS, to_filters=decision_filters)`.

    Args:
        values: the selected bar's `format`, and `model_name` or `rule_name`.

    Returns:
        The filters `format` and `valid=False`, with `model`; or `format` and `rule`.
    """
    if "rule_name" in values:
        return {"format": values["format"], "rule": values["rule_name"]}
    if "model_name" in values:
        return scorecard_filters(values)
    return {"format": values["format"], "valid": False}


# What a mark of each workbench chart stands for, as the records behind it. Each takes
# the database (and the game) and gives the `to_filters` of a DrillDown.


def attack_filters(db, game_id: str):
    """A cell of the attack matrix (`attacker`, `target`): the game's lines where the
    attacker led an attack on the target.

    Args:
        db: a database path or a connection (only read).
        game_id: the game the attack matrix shows.

    Returns:
        A `to_filters` for `DrillDown` over `plots.attack_heatmap`: the Damage records at those lines.
    """
    def to_filters(values: dict) -> dict:
        with reading(db) as con:
            effects = queries.attack_effects(con, game_id)
            seqs = effects.filter((pl.col("attacker") == values["attacker"]) & (pl.col("target") == values["target"]))
            return {"format": "damage", "at": _event_lines(con, game_id, seqs["seq"].to_list())}
    return to_filters


def mistake_filters(db, aliases=None):
    """A point of the play-quality chart's mistakes (`model_name`, `mistake`): that
    model's decisions named with that mistake.

    Args:
        db: a database path or a connection (only read).
        aliases: the aliases the chart was drawn with (a dict, or a JSON or CSV file).

    Returns:
        A `to_filters` for `DrillDown(chart, browser, to_filters=...)` over
        `plots.play_quality_chart`: the Damage records at those lines.
    """
    from workbench.damage.quality import named_with

    def to_filters(values: dict) -> dict:  # the browser reads the lines' raw text
        with reading(db) as con:
            found = named_with(con, values["mistake"], model=values["model_name"], aliases=aliases)
        return {"format": "damage", "at": found.select("source_id", "line")}
    return to_filters


def emotion_filters(db, game_id: str):
    """A point of an emotion trajectory (`seq`): the event at that line of the game.

    Args:
        db: a database path or a connection (only read).
        game_id: the game the trajectories show.

    Returns:
        A `to_filters` for `DrillDown` over `plots.emotion_trajectories`: the Damage record at that line.
    """
    def to_filters(values: dict) -> dict:
        with reading(db) as con:
            return {"format": "damage", "at": _event_lines(con, game_id, [int(values["seq"])])}
    return to_filters


def family_filters(db):
    """A cell of the EC4X family x model matrix (`family`, `model`, `source`): the
    drafts (or bot-trace turns) of that model that used that family.

    Args:
        db: a database path or a connection (only read).

    Returns:
        A `to_filters` for `DrillDown` over `plots.family_matrix_chart`: those EC4X records.
    """
    from workbench.ec4x.queries import family_lines

    def to_filters(values: dict) -> dict:
        with reading(db) as con:
            return {"format": "ec4x", "at": family_lines(con, values["family"], values["model"], values["source"])}
    return to_filters


def economy_filters(db):
    """A point of the economy nets (`game_date`): the records of the saves of that date.

    Args:
        db: a database path or a connection (only read).

    Returns:
        A `to_filters` for `DrillDown` over `plots.economy_nets`: the Stellaris records of those saves.
    """
    def to_filters(values: dict) -> dict:
        with reading(db) as con:
            saves = con.execute("SELECT DISTINCT source_id FROM stellaris_resources WHERE CAST(game_date AS VARCHAR) "
                                "= ?", [str(values["game_date"])[:10]]).fetchall()
        return {"format": "stellaris", "at": {"source_id": [s for (s,) in saves], "line": [None] * len(saves)}}
    return to_filters


def _event_lines(con, game_id: str, seqs: list[int]) -> pl.DataFrame:
    """(source_id, line) of a Damage game's events at `seqs`."""
    return query_frame(con, "SELECT DISTINCT source_id, seq AS line FROM damage_events "
                            "WHERE game_id = $game AND list_contains($seqs, seq) ORDER BY ALL",
                       {"game": game_id, "seqs": seqs})


# --- tables to read, and two models side by side -------------------------------------------


def table(frame: pl.DataFrame, page: int = 10):
    """A frame as people read it (`display.readable`: intervals with their n, rounded
    numbers, no dtype row) in a sortable, paged, searchable table that scrolls within
    its cell when wide.

    Args:
        frame: the frame to show.
        page: rows per page.

    Returns:
        An itables `ITable` widget.
    """
    from itables.widget import ITable

    from workbench.display import readable

    return ITable(readable(frame), pageLength=page, scrollX=True, classes="display compact", showIndex=False,
                  show_dtypes=False)


# How a side's outcome reads in the pane.
OUTCOME_HTML = {"valid": "valid", "invalid": "<b style=color:#c0392b>invalid</b>",
                "failed": "<b style=color:#7f8c8d>failed</b> (no answer came back)"}


def _side_html(row: dict, who: str, side: str) -> str:
    """One model's decision of a side-by-side row: outcome, rules, seat, place and its raw
    text pretty-printed; a side with no decision in this row says so."""
    if row["locator" + side] is None:
        return (f"<div style='flex:1 1 0;min-width:0'><b>{html.escape(row[who])}</b> · "
                f"<i>no decision of its own in this row</i></div>")
    seat = f" · as {html.escape(row['agent_id' + side])}" if row["agent_id" + side] is not None else ""
    return (f"<div style='flex:1 1 0;min-width:0'><b>{html.escape(row[who])}</b>{seat} · "
            f"{OUTCOME_HTML.get(row['outcome' + side], '—')}"
            f"{' · ' + html.escape(', '.join(row['rules' + side])) if row['rules' + side] else ''}"
            f"<div title='{html.escape(row['path' + side] or '')}'>{html.escape(row['locator' + side] or '')} of "
            f"{html.escape(Path(row['path' + side] or '').name)}</div>"
            f"<pre style='{WRAPPED}'>{html.escape(_pretty(row['raw' + side] or '—'))}</pre></div>")


SIDE_ROW = ("format", "game_id", "turn", "round", "disagree", "agent_id_a", "action_a", "outcome_a", "rules_a",
            "agent_id_b", "action_b", "outcome_b", "rules_b")


class SideBySide:
    """Two models' decisions on the turns they shared (`analysis.side_by_side`), the
    disagreements first: a table with one decision a side per row (a Damage hand: one
    row per betting round and seat), and the selected row's two records as written,
    each pretty-printed, side by side. `.pairs` is the frame; `.select(i)` shows row i;
    `.widget` the view.

    Args:
        db: a database path or a connection (only read).
        a: the first model (or agent, where a log names no model).
        b: the second model, another than `a`.
        format: only this format's decisions; None: every format.
        aliases: a dict, or a JSON or CSV file, mapping names to one model.

    Raises:
        WorkbenchError: `a` and `b` are the same model.
    """

    def __init__(self, db, a: str, b: str, format: str | None = None, aliases=None):
        import ipywidgets as widgets
        from itables.widget import ITable

        from workbench.records import side_by_side

        self.a, self.b = a, b
        with reading(db) as con:
            self.pairs = side_by_side(con, a, b, format=format, aliases=aliases)
        turns = self.pairs.select("format", "game_id", "turn", "disagree").unique()
        disagree = int(turns["disagree"].sum()) if turns.height else 0
        self.count = widgets.HTML(f"<b>{turns.height:,}</b> turns both decided, <b>{disagree:,}</b> where one's "
                                  f"answers were all valid and the other's not (listed first)")
        self.pane = widgets.HTML("<i>select a turn to read both decisions</i>" if self.pairs.height else "")
        children = [self.count]
        if self.pairs.height:
            shown = self.pairs.select(SIDE_ROW).with_columns(
                pl.col("rules_a", "rules_b").list.join(", "), pl.col("outcome_a", "outcome_b").fill_null("—"))
            self.table = ITable(shown, select={"style": "single"}, selected_rows=[], pageLength=10, scrollX=True,
                                classes="display compact", showIndex=False, show_dtypes=False)
            self.table.observe(lambda change: change["new"] and self.select(change["new"][0]), names="selected_rows")
            children.append(self.table)
        self.widget = widgets.VBox([*children, self.pane])

    def select(self, index: int) -> str:
        """Show the two decisions of row `index` of `.pairs` side by side in the pane.

        Args:
            index: the row of `.pairs`, from 0.

        Returns:
            The pane's HTML: each model's validity, rules broken, place and raw text.
        """
        row = self.pairs.row(index, named=True)
        sides = "".join(_side_html(row, who, side) for who, side in (("a", "_a"), ("b", "_b")))
        within = f" · {html.escape(row['round'])}" if row["round"] is not None else ""
        self.pane.value = (f"<div>{html.escape(row['format'])} · {html.escape(str(row['game_id']))} · turn "
                           f"{row['turn']}{within}</div><div style='display:flex;gap:16px'>{sides}</div>")
        return self.pane.value

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
