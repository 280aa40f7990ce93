"""Step through a Damage game in a notebook: `ReplayScrubber(con, game_id)`.

`GameReplay` is the model: it reads the game's events once, then precomputes every
player's state after every event as arrays (one row per event, one column per
player, forward-filled), so the state at any position is a lookup, not a replay.
`ReplayScrubber` is the view on it: a Play button and a slider linked in the browser,
jump buttons, the table state, the event at the cursor, and the emotion chart whose
cursor moves through a Vega parameter, so a step never rebuilds the chart.

Neither keeps a database connection: everything is read in the constructor, so the
notebook does not hold the database while `workbench ingest` wants to write to it.
"""

from __future__ import annotations

import html
import json
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import polars as pl

from workbench import catalog
from workbench.analysis import EMOTIONS, GAME_FILTER, largest_game
from workbench.catalog import query_frame
from workbench.errors import WorkbenchError

PHASES = ("affect", "betting", "showdown", "discussion")
HAND = "hand"  # `jump("hand")`: the next `hand_started`
STATE_FIELDS = ("lives", "bankroll", "in_hand")


def _json_int(value: str) -> str:
    """SQL for a JSON integer; NULL for any other JSON type (float, string, bool)."""
    return f"CASE WHEN json_type({value}) IN ('BIGINT', 'UBIGINT') THEN CAST({value} AS BIGINT) END"


EVENTS = f"""
SELECT seq, type, turn, CAST(ts AS VARCHAR) AS ts, CAST(payload AS VARCHAR) AS payload,
       CASE WHEN type IN ('hand_ended', 'game_ended') THEN 0
            WHEN type IN ('hand_started', 'action_resolved', 'showdown') THEN {_json_int("payload->'pot'")}
       END AS pot,
       -- a new hand clears the phase until its first phase_changed
       CASE type WHEN 'phase_changed' THEN coalesce(payload->>'phase', '?') WHEN 'hand_started' THEN '' END AS phase
FROM damage_events WHERE {GAME_FILTER}
ORDER BY seq
"""

# Every place a log states a player's lives, bankroll or being in the hand. A field
# an event does not state is NULL there: the previous value holds.
STATE_UPDATES = f"""
WITH events AS (SELECT seq, type, payload FROM damage_events WHERE {GAME_FILTER}),
states AS (
    SELECT seq, unnest(CAST(payload->'players' AS JSON[])) AS p, NULL AS player_id FROM events
    WHERE type IN ('hand_started', 'hand_ended') AND json_type(payload->'players') = 'ARRAY'
    UNION ALL
    SELECT seq, unnest(CAST(payload->'final_state' AS JSON[])), NULL FROM events
    WHERE type = 'game_ended' AND json_type(payload->'final_state') = 'ARRAY'
    UNION ALL
    SELECT seq, payload->'player_state', payload->>'player_id' FROM events
    WHERE type = 'action_resolved' AND json_type(payload->'player_state') = 'OBJECT'
)
SELECT seq, coalesce(p->>'player_id', player_id) AS player_id,
       {_json_int("p->'lives'")} AS lives, {_json_int("p->'bankroll'")} AS bankroll,
       CASE WHEN json_type(p->'in_hand') = 'BOOLEAN' THEN CAST(p->>'in_hand' AS BOOLEAN) END AS in_hand
FROM states
UNION ALL
SELECT seq, payload->>'player_id', {_json_int("payload->'remaining_lives'")}, NULL,
       CASE WHEN type = 'player_eliminated' THEN false END
FROM events WHERE type IN ('life_lost', 'player_eliminated')
"""

EMOTION_VECTORS = f"""
SELECT seq, player_id, {', '.join(EMOTIONS)} FROM damage_emotions
WHERE {GAME_FILTER} AND player_id IS NOT NULL ORDER BY seq, rowid
"""


@contextmanager
def _connection(con_or_db):
    """The connection given, or a read-only one on a database path, closed after use."""
    if isinstance(con_or_db, (str, Path)):
        con = catalog.connect(con_or_db, read_only=True)
        try:
            yield con
        finally:
            con.close()
    else:
        yield con_or_db


class GameReplay:
    """A game's events and every player's state after each of them, in memory.

    Position `i` is the index of an event in the game's order (by line); the state at
    `i` reflects events 0..i. Lives, bankroll and in-hand come from the payloads that
    state them (`hand_started`, `action_resolved`, `hand_ended`, `life_lost`,
    `player_eliminated`, `game_ended`); emotions are the last vector `damage_emotions`
    holds for the player at or before the position.
    """

    def __init__(self, con, game_id: str | None = None):
        with _connection(con) as con:
            self.game_id = game_id or largest_game(con)
            params = {"game": self.game_id}
            events = query_frame(con, EVENTS, params)
            if events.is_empty():
                raise WorkbenchError(f"no events for game {self.game_id!r} in this database")
            updates = query_frame(con, STATE_UPDATES, params).filter(pl.col("player_id").is_not_null())
            vectors = query_frame(con, EMOTION_VECTORS, params)
        self.seqs = events["seq"].to_numpy()
        self.types = events["type"].to_list()
        self.turns = events["turn"].to_list()
        self.timestamps = events["ts"].to_list()
        self.payloads = events["payload"].to_list()
        self.players = _seat_order(updates, vectors)
        self._precompute(events, self._positioned(updates), self._positioned(vectors))

    def __len__(self) -> int:
        return len(self.seqs)

    def _positioned(self, frame: pl.DataFrame) -> pl.DataFrame:
        """`frame` with `pos` (the event index of its `seq`) and `player` (column index)."""
        seat = {player: k for k, player in enumerate(self.players)}
        return frame.with_columns(
            pos=pl.Series(np.searchsorted(self.seqs, frame["seq"].to_numpy()), dtype=pl.Int64),
            player=pl.col("player_id").replace_strict(seat, return_dtype=pl.Int64),
        )

    def _precompute(self, events: pl.DataFrame, updates: pl.DataFrame, vectors: pl.DataFrame) -> None:
        n, players = len(events), len(self.players)
        self._fields = {field: _filled(updates, field, n, players) for field in STATE_FIELDS}
        # Emotions fill as whole vectors: the index of the player's latest vector.
        self._vectors = vectors.select(EMOTIONS).to_numpy()
        self._vector_at = _filled(vectors.with_row_index("vector"), "vector", n, players)
        self._pot = _filled_column(events["pot"])
        self._phase = events["phase"].forward_fill().to_list()
        self._turn = events["turn"].forward_fill().to_list()
        self.boundaries = _boundaries(events)

    # --- lookups -----------------------------------------------------------------

    def state_at(self, i: int) -> dict:
        """Per player: `lives`, `bankroll`, `in_hand`, `emotions` (None where the log
        has not stated them yet)."""
        lives, bankroll, in_hand = (self._fields[f][i] for f in STATE_FIELDS)
        vector_at = self._vector_at[i]
        return {
            player: {
                "lives": _int_or_none(lives[k]),
                "bankroll": _int_or_none(bankroll[k]),
                "in_hand": None if np.isnan(in_hand[k]) else bool(in_hand[k]),
                "emotions": None if np.isnan(vector_at[k]) else _emotions(self._vectors[int(vector_at[k])]),
            }
            for k, player in enumerate(self.players)
        }

    def table_at(self, i: int) -> dict:
        """The table at position `i`: turn, phase, pot, and the event's line and type."""
        return {"turn": self._turn[i], "phase": self._phase[i] or None, "pot": _int_or_none(self._pot[i]),
                "seq": int(self.seqs[i]), "type": self.types[i]}

    def position_of_seq(self, seq: int) -> int:
        """The position of the last event at or before line `seq` (0 before the first)."""
        return max(0, int(np.searchsorted(self.seqs, seq, side="right")) - 1)

    def next_boundary(self, phase: str | None, position: int, backward: bool = False) -> int | None:
        """The next (or previous) position after `position` where `phase` starts; any
        phase when `phase` is None. None when there is no such boundary."""
        marks = self._marks(phase)
        if backward:
            k = int(np.searchsorted(marks, position, side="left")) - 1
            return int(marks[k]) if k >= 0 else None
        k = int(np.searchsorted(marks, position, side="right"))
        return int(marks[k]) if k < len(marks) else None

    def _marks(self, phase: str | None) -> np.ndarray:
        if phase is None:
            return np.sort(np.concatenate([v for k, v in self.boundaries.items() if k != HAND] or [np.array([], int)]))
        if phase not in self.boundaries and phase not in (*PHASES, HAND):
            known = ", ".join(sorted({*PHASES, HAND, *self.boundaries}))
            raise WorkbenchError(f"unknown phase {phase!r}; choose one of: {known}")
        return self.boundaries.get(phase, np.array([], dtype=np.int64))

    def event_at(self, i: int) -> dict:
        return {"position": i, "seq": int(self.seqs[i]), "type": self.types[i], "turn": self.turns[i],
                "ts": self.timestamps[i], "payload": _parsed(self.payloads[i])}


def _seat_order(updates: pl.DataFrame, vectors: pl.DataFrame) -> list[str]:
    """Players by first appearance in the log (the order `hand_started` seats them)."""
    seen = pl.concat([updates.select("seq", "player_id"), vectors.select("seq", "player_id")])
    first = seen.group_by("player_id").agg(pl.col("seq").min()).sort("seq", "player_id")
    return first["player_id"].to_list()


def _filled(updates: pl.DataFrame, field: str, n: int, players: int) -> np.ndarray:
    """An (events x players) float array: the latest stated `field` at each position
    (NaN before the first). Of several statements at one position the last counts."""
    stated = (updates.select("pos", "player", pl.col(field).cast(pl.Float64))
              .filter(pl.col(field).is_not_null())
              .unique(subset=["pos", "player"], keep="last", maintain_order=True))
    filled = np.full((n, players), np.nan)
    if stated.is_empty():
        return filled
    wide = (pl.DataFrame({"pos": np.arange(n, dtype=np.int64)})
            .join(stated.pivot(on="player", index="pos", values=field), on="pos", how="left")
            .sort("pos").fill_null(strategy="forward"))
    for k in range(players):
        if str(k) in wide.columns:
            filled[:, k] = wide[str(k)].fill_null(np.nan).to_numpy()
    return filled


def _filled_column(column: pl.Series) -> np.ndarray:
    return column.cast(pl.Float64).forward_fill().fill_null(np.nan).to_numpy()


def _boundaries(events: pl.DataFrame) -> dict[str, np.ndarray]:
    """Positions where each phase starts (from `phase_changed`) and where hands start."""
    indexed = events.with_row_index("pos").select(pl.col("pos").cast(pl.Int64), "type", "phase")
    marks = {HAND: indexed.filter(pl.col("type") == "hand_started")["pos"].to_numpy()}
    changes = indexed.filter(pl.col("type") == "phase_changed")
    for (phase,), group in changes.group_by("phase", maintain_order=True):
        marks[phase] = group["pos"].to_numpy()
    return marks


def _int_or_none(value) -> int | None:
    return None if np.isnan(value) else int(value)


def _emotions(vector: np.ndarray) -> dict[str, float | None]:
    return {e: None if np.isnan(v) else float(v) for e, v in zip(EMOTIONS, vector)}


def _parsed(payload: str | None):
    try:
        return json.loads(payload) if payload is not None else None
    except ValueError:
        return payload


# --- readable events -------------------------------------------------------------------


def describe_event(kind: str, payload) -> str:
    """One line a person reads at a glance; the payload itself is shown beside it."""
    if not isinstance(payload, dict):
        return f"{kind}: {_short(payload)}"
    describe = _DESCRIPTIONS.get(kind)
    try:
        return describe(payload) if describe else f"{kind} " + _pairs(payload)
    except (KeyError, TypeError, ValueError):  # a payload that lacks what the template needs
        return f"{kind} " + _pairs(payload)


def _signed(value) -> str:
    return f"{value:+.3f}" if isinstance(value, (int, float)) else "?"


def _affect(p: dict) -> str:
    mode = p.get("mode")
    if mode == "attack_team":
        helpers = f" with {', '.join(p['assistants'])}" if p.get("assistants") else ""
        return (f"{p.get('lead_player_id')}{helpers} attacks {p.get('target_player_id')} on {p.get('emotion')}: "
                f"intended {_signed(p.get('raw_delta'))}, applied {_signed(p.get('applied_delta'))}")
    if mode == "self_regulate":
        return f"{p.get('player_id')} self-regulates (stress -{p.get('stress_recovered', 0):.2f})"
    return f"affect {mode}: " + _pairs(p)


def _action(p: dict) -> str:
    plan = p.get("attack_plan")
    aim = (f"; aims {plan.get('emotional_intent')} at {plan.get('target_player_id')} "
           f"({plan.get('manipulation_plan')})") if isinstance(plan, dict) else ""
    return f"{p.get('player_id')} {p.get('kind')} → pot {p.get('pot')}, high bet {p.get('current_high_bet')}{aim}"


def _submitted(p: dict) -> str:
    action = p.get("action") or {}
    amount = (action.get("payload") or {}).get("amount")
    return f"{p.get('player_id')} submits {action.get('kind')}" + (f" {amount}" if amount is not None else "")


def _showdown(p: dict) -> str:
    winners = ", ".join(p.get("winners") or []) or "nobody"
    return f"showdown: {winners} win pot {p.get('pot')}; {p.get('life_losses', 0)} life lost"


_DESCRIPTIONS = {
    "hand_started": lambda p: f"hand {p.get('turn')} starts: {len(p.get('players') or [])} players, "
                              f"ante {p.get('ante')}, pot {p.get('pot')}",
    "hand_ended": lambda p: f"hand {p.get('turn')} ends",
    "phase_changed": lambda p: f"phase: {p.get('phase')}",
    "affect_intent": lambda p: f"{p.get('player_id')} intends {(p.get('intent') or {}).get('mode')} on "
                               f"{(p.get('intent') or {}).get('target_player_id')}",
    "affect_resolved": _affect,
    "action_submitted": _submitted,
    "action_resolved": _action,
    "showdown": _showdown,
    "life_lost": lambda p: f"{p.get('player_id')} loses a life ({p.get('remaining_lives')} left)",
    "player_eliminated": lambda p: f"{p.get('player_id')} is eliminated",
    "fold_saved_life": lambda p: f"{p.get('player_id')} folded and keeps its life",
    "chatter_posted": lambda p: f"{p.get('player_id')}: “{p.get('text')}”",
    "thinking": lambda p: f"{p.get('player_id')} thinking {p.get('status')}"
                          + (f" ({p['stage']})" if p.get("stage") else "")
                          + (f": {p['summary']}" if p.get("summary") else ""),
    "provider_call": lambda p: f"{p.get('player_id')} called {p.get('resolved_model')} "
                               f"({p.get('latency_ms')} ms, {(p.get('usage') or {}).get('total_tokens')} tokens)",
    "game_ended": lambda p: "game over",
}


def _pairs(payload: dict, limit: int = 6) -> str:
    items = [f"{k}={_short(v)}" for k, v in list(payload.items())[:limit]]
    return ", ".join(items) + (", …" if len(payload) > limit else "")


def _short(value, width: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= width else text[: width - 1] + "…"


# --- the view ----------------------------------------------------------------------------

CURSOR = "cursor"  # the chart's parameter: the line (seq) of the event at the position
PAYLOAD_CHARS = 4000  # of the event's payload shown under its description


class ReplayScrubber:
    """Step through a Damage game: `.position` (event index, settable), `.state` (per
    player), `.widget` (the ipywidgets view), `.jump(phase)`, `.refresh()`.

    `con` is a DuckDB connection or a database path (opened read-only and closed);
    either way it is only read here. `game_id=None` picks the game with most events.
    """

    def __init__(self, con, game_id: str | None = None):
        self._source = con
        self._position = 0
        self._view: _ScrubberView | None = None
        self._load(game_id)

    def _load(self, game_id: str | None) -> None:
        with _connection(self._source) as con:
            self.replay = GameReplay(con, game_id)
            self.chart, self.chart_note = _emotion_chart(con, self.replay)
        self.game_id = self.replay.game_id

    def refresh(self) -> int:
        """Read the game again, with the events written since (a game still being
        played, followed by `workbench ingest --watch`); the cursor stays on the same
        event. Returns how many events were added."""
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
        return self.replay.state_at(self._position)

    @property
    def table(self) -> dict:
        return self.replay.table_at(self._position)

    @property
    def event(self) -> dict:
        return self.replay.event_at(self._position)

    def jump(self, phase: str | None = None, backward: bool = False) -> int | None:
        """Move to the next boundary of `phase` (`affect`, `betting`, `showdown`,
        `discussion`, or `hand` for the next hand; None: any phase) and return the new
        position; with `backward=True` to the previous one. Stays put and returns None
        when there is none."""
        target = self.replay.next_boundary(phase, self._position, backward)
        if target is not None:
            self.position = target
        return target

    def figure(self):
        """The emotion chart with its cursor at the current position, to save or show."""
        if self.chart is None:
            raise WorkbenchError(self.chart_note or f"no emotion chart for game {self.game_id!r}")
        chart = self.chart.copy(deep=False)
        chart.params = [p.copy() for p in self.chart.params]
        next(p for p in chart.params if p.name == CURSOR).value = int(self.replay.seqs[self._position])
        return chart

    @property
    def widget(self):
        if self._view is None:
            self._view = _ScrubberView(self)
        return self._view.root

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def _emotion_chart(con, replay: GameReplay):
    """The game's emotion trajectories with a vertical rule at the `cursor` parameter,
    or None and the reason there is none."""
    import altair as alt

    from workbench.plots import emotion_trajectories

    try:
        chart = emotion_trajectories(con, replay.game_id)
    except WorkbenchError as exc:
        return None, str(exc)
    cursor = alt.param(name=CURSOR, value=int(replay.seqs[0]))
    rule = alt.Chart().mark_rule(color="black", strokeWidth=1.5, clip=True).encode(
        x=alt.X(datum=alt.expr(CURSOR), type="quantitative"))
    panels = []
    for panel in chart.vconcat:
        panel = panel.copy()
        panel.layer = [*panel.layer, rule]
        panels.append(panel)
    chart.vconcat = panels
    return chart.add_params(cursor), None


class _ScrubberView:
    """The widgets of a scrubber; `show(i)` updates them all for position `i`."""

    def __init__(self, scrubber: ReplayScrubber):
        import ipywidgets as widgets

        self.scrubber = scrubber
        self.play = widgets.Play(value=0, min=0, step=1, interval=200, description="play")
        self.slider = widgets.IntSlider(value=0, min=0, description="event",
                                        continuous_update=True, layout=widgets.Layout(width="560px"))
        # Linked in the browser: playing moves the slider without a round trip.
        self.link = widgets.jslink((self.play, "value"), (self.slider, "value"))
        self.slider.observe(self._slider_moved, names="value")
        self.status = widgets.HTML()
        self.table = widgets.HTML(layout=widgets.Layout(min_width="420px"))
        self.event = widgets.HTML(layout=widgets.Layout(width="520px"))
        self.title = widgets.HTML()
        self.root = widgets.VBox()
        self._rows = [
            self.title,
            widgets.HBox([self.play, self.slider]),
            widgets.HBox([*self._buttons(widgets), self.status]),
            widgets.HBox([self.table, self.event]),
        ]
        self.reload()

    def reload(self) -> None:
        """Fit the view to the scrubber's (re)loaded game: range, title, chart."""
        scrubber = self.scrubber
        last = len(scrubber.replay) - 1
        self.play.max = self.slider.max = last
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
        if change["new"] != self.scrubber.position:
            self.scrubber.position = change["new"]

    def show(self, i: int) -> None:
        replay = self.scrubber.replay
        self.slider.value = i  # the observer sees the position already set: no second update
        self.status.value = ""
        self.table.value = state_html(replay.table_at(i), replay.state_at(i))
        self.event.value = event_html(replay.event_at(i), len(replay))
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
        # The chart arrives aggregated; Altair's row limit would only refuse a long game.
        with alt.data_transformers.disable_max_rows():
            live = alt.JupyterChart(chart)
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
    import importlib.util

    return importlib.util.find_spec("anywidget") is not None


def enable_offline_charts() -> str:
    """Make every chart a notebook shows render without network access.

    Altair's default notebook output loads Vega from a CDN, and JupyterLab's built-in
    renderer does not know Vega-Lite 6. With anywidget, charts become `JupyterChart`
    widgets whose scripts come from vl-convert; without it, each chart's HTML carries
    the scripts inline. Returns which of the two is in use.
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
    Output. A value that cannot be drawn shows its reason instead."""
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
    from the log is escaped."""
    def cell(value, fmt="{}"):
        return "–" if value is None else html.escape(fmt.format(value))

    header = (f"turn {cell(table['turn'])} · phase {cell(table['phase'])} · pot <b>{cell(table['pot'])}</b>"
              f" · line {table['seq']} {html.escape(str(table['type']))}")
    head = "".join(f"<th>{h}</th>" for h in ("player", "lives", "bankroll", "in hand", *EMOTIONS))
    rows = []
    for player, s in state.items():
        emotions = s["emotions"] or {}
        in_hand = {True: "yes", False: "out", None: "–"}[s["in_hand"]]
        values = "".join(f"<td>{cell(emotions.get(e), '{:+.2f}')}</td>" for e in EMOTIONS)
        rows.append(f"<tr><td><b>{html.escape(player)}</b></td><td>{cell(s['lives'])}</td>"
                    f"<td>{cell(s['bankroll'])}</td><td>{in_hand}</td>{values}</tr>")
    return (f"<style>.wb-state td, .wb-state th {{padding: 1px 7px; text-align: right}}</style>"
            f"<div>{header}</div><table class='wb-state' style='border-collapse:collapse;font-size:12px'>"
            f"<tr>{head}</tr>{''.join(rows)}</table>")


def event_html(event: dict, events: int) -> str:
    """The event at the cursor: where it is, one readable line, and its payload."""
    payload = event["payload"]
    text = json.dumps(payload, indent=1) if not isinstance(payload, str) else payload
    if len(text) > PAYLOAD_CHARS:
        text = text[:PAYLOAD_CHARS] + "\n…"
    return (f"<div>event {event['position'] + 1} of {events} · line {event['seq']} · "
            f"{html.escape(str(event['ts']))}</div>"
            f"<div><b>{html.escape(str(event['type']))}</b>: "
            f"{html.escape(describe_event(event['type'], payload))}</div>"
            f"<details><summary>payload</summary><pre style='max-height:240px;overflow:auto;font-size:11px'>"
            f"{html.escape(text)}</pre></details>")


# --- pickers for the notebooks ----------------------------------------------------------


class GamePicker:
    """A game (largest first), its players, and two lines of its log to compare, kept
    in step when the game changes. `.box` lays them out."""

    def __init__(self, db):
        import ipywidgets as widgets

        from workbench.analysis import games, read_only

        self._db = db
        with read_only(db) as con:
            self._games = games(con)
        if self._games.is_empty():
            raise WorkbenchError("no Damage game in this database; ingest a replay log (*.events.jsonl) first")
        self.game = widgets.Dropdown(options=self._games["game_id"].to_list(), description="game",
                                     layout=widgets.Layout(width="420px"))
        self.players = widgets.SelectMultiple(description="players", rows=6)
        self.lines = widgets.IntRangeSlider(description="lines", continuous_update=False,
                                            layout=widgets.Layout(width="640px"))
        self.game.observe(lambda change: self._load(change["new"]), names="value")
        self._load(self.game.value)
        self.box = widgets.HBox([self.game, self.players])  # `lines` goes where positions are compared

    def _load(self, game_id: str) -> None:
        from workbench.analysis import game_players, read_only

        with read_only(self._db) as con:
            players = game_players(con, game_id)
        row = self._games.filter(pl.col("game_id") == game_id).row(0, named=True)
        self.players.options = players
        self.players.value = tuple(players)
        # Widen before narrowing so the slider never holds min > max in between.
        self.lines.max = max(self.lines.max, row["last_line"])
        self.lines.min = 1
        self.lines.value = (row["first_hand_line"] or 1, row["last_line"])
        self.lines.max = row["last_line"]
