"""Step through a Damage game in a notebook: `ReplayScrubber(con, game_id)`.

The scrubber is the view on a `GameReplay` (workbench.damage.replay): a Play button
and a slider linked in the browser, jump buttons, the table state, the event at the
cursor, and the emotion chart whose cursor moves through a Vega parameter, so a step
never rebuilds the chart. `state_html` and `event_html` draw its two panes.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

import numpy as np

from workbench.connection import reading
from workbench.damage.describe import describe_event
from workbench.damage.models import EMOTIONS
from workbench.damage.replay import HAND, GameReplay
from workbench.errors import WorkbenchError
from workbench.widgets.charts import offline_chart_scripts
from workbench.widgets.markup import findings_html

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
        self.slider = widgets.IntSlider(
            value=1, min=1, description="event", continuous_update=True, layout=widgets.Layout(width="560px")
        )
        # Linked in the browser: playing moves the slider without a round trip.
        self.link = widgets.jslink((self.play, "value"), (self.slider, "value"))
        self.slider.observe(self._slider_moved, names="value")
        self.speed = widgets.Dropdown(
            options=list(PLAY_SPEEDS), value="5 events/s", description="speed", layout=widgets.Layout(width="200px")
        )
        self.speed.observe(self._speed_chosen, names="value")
        self.status = widgets.HTML()
        # The table keeps its own width (it scrolls when narrower than its columns) and
        # the event pane wraps below it on a narrow screen instead of covering it.
        self.table = widgets.HTML(
            layout=widgets.Layout(flex="0 0 auto", max_width="100%", overflow="auto", margin="0 24px 0 0")
        )
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
        self.title.value = (
            f"<b>{html.escape(scrubber.game_id)}</b> · {len(scrubber.replay)} events · "
            f"{len(scrubber.replay.players)} players"
        )
        self.chart, chart_box = _chart_widget(scrubber.figure() if scrubber.chart else None, scrubber.chart_note)
        if self.chart is not None:
            self.chart.observe(self._keep_cursor, names="_params")
        self.root.children = [*self._rows, chart_box]
        self.show(scrubber.position)

    def _buttons(self, widgets) -> list:
        jumps = [
            ("◀ phase", None, True),
            ("phase ▶", None, False),
            ("hand ▶", HAND, False),
            ("showdown ▶", "showdown", False),
        ]
        buttons = []
        for label, phase, backward in jumps:
            button = widgets.Button(description=label, layout=widgets.Layout(width="auto"))
            button.on_click(lambda _, phase=phase, backward=backward: self._jump(phase, backward))
            buttons.append(button)
        refresh = widgets.Button(
            description="⟳ new events", tooltip="read events written since", layout=widgets.Layout(width="auto")
        )
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
    from workbench.lean_imports import altair

    alt = altair()
    import ipywidgets as widgets

    if chart is None:
        return None, widgets.HTML(f"<i>{html.escape(note or 'no emotion chart')}</i>")
    try:
        offline_chart_scripts(alt)
        live = alt.JupyterChart(chart)  # its rows are the spec's values: no row limit applies
        return live, live
    except ImportError:
        output = widgets.Output()
        with output:
            from IPython.display import display

            display(chart)
        hint = widgets.HTML("<i>install <code>anywidget</code> for a cursor that follows the slider</i>")
        return None, widgets.VBox([hint, output])


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

    header = (
        f"turn {cell(table['turn'])} · phase {cell(table['phase'])} · pot <b>{cell(table['pot'])}</b>"
        f" · line {table['seq']} {html.escape(str(table['type']))}"
    )
    head = "".join(f"<th>{h}</th>" for h in ("player", "lives", "bankroll", "in hand", *EMOTIONS))
    rows = []
    for player, s in state.items():
        emotions = s["emotions"] or {}
        in_hand = "eliminated" if s.get("eliminated") else {True: "yes", False: "out", None: "–"}[s["in_hand"]]
        values = "".join(f"<td>{cell(emotions.get(e), '{:+.2f}')}</td>" for e in EMOTIONS)
        rows.append(
            f"<tr><td><b>{html.escape(player)}</b></td><td>{cell(s['lives'])}</td>"
            f"<td>{cell(s['bankroll'])}</td><td>{in_hand}</td>{values}</tr>"
        )
    return (
        f"<style>.wb-state td, .wb-state th {{padding: 1px 7px; text-align: right}}</style>"
        f"<div>{header}</div><table class='wb-state' style='border-collapse:collapse;font-size:12px'>"
        f"<tr>{head}</tr>{''.join(rows)}</table>"
    )


def _event_findings(con, game_id: str) -> dict[int, list[dict]]:
    """The findings about each line (seq) of a game's log, most severe first."""
    rows = con.execute(
        """
        SELECT v.line, v.severity, v.rule, v.field, v.message FROM violation_lines v
        WHERE v.line IS NOT NULL
          AND v.source_id IN (SELECT DISTINCT source_id FROM damage_events WHERE game_id = ?)
        ORDER BY v.line, list_position(['error', 'warning', 'info'], v.severity), v.rule
    """,
        [game_id],
    ).fetchall()
    found: dict[int, list[dict]] = {}
    for line, severity, rule, field, message in rows:
        found.setdefault(line, []).append({"severity": severity, "rule": rule, "field": field, "message": message})
    return found


def event_html(event: dict, events: int, findings: Sequence[dict] = ()) -> str:
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
    return (
        f"<div>event {event['position'] + 1} of {events} · line {event['seq']} · "
        f"{html.escape(str(event['ts']))}</div>"
        f"<div><b>{html.escape(str(event['type']))}</b>: "
        f"{html.escape(describe_event(event['type'], payload))}</div>"
        + (
            f"<div style='color:#c0392b'>{len(findings)} finding{'s' if len(findings) != 1 else ''} "
            f"at this line:</div>{findings_html(findings)}"
            if findings
            else ""
        )
        + f"<details><summary>payload</summary><pre style='max-height:240px;overflow:auto;font-size:11px'>"
        f"{html.escape(text)}</pre></details>"
    )
