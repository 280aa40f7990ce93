"""A Damage game in memory, to step through: `GameReplay(con, game_id)`.

It reads the game's events once, then precomputes every player's state after every
event as arrays (one row per event, one column per player, forward-filled), so the
state at any position is a lookup, not a replay. It keeps no database connection:
everything is read in the constructor, so a notebook does not hold the database while
`workbench ingest` wants to write to it.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
import numpy as np
import polars as pl

from workbench.connection import reading
from workbench.damage import queries
from workbench.damage.models import EMOTIONS
from workbench.errors import WorkbenchError

PHASES = ("affect", "betting", "showdown", "discussion")
HAND = "hand"  # `next_boundary("hand", ...)`: the next `hand_started`
STATE_FIELDS = ("lives", "bankroll", "in_hand")


class GameReplay:
    """A game's events and every player's state after each of them, in memory.

    Position `i` is the index of an event in the game's order (by line); the state at
    `i` reflects events 0..i. Lives, bankroll and in-hand come from the payloads that
    state them (`hand_started`, `action_resolved`, `hand_ended`, `life_lost`,
    `player_eliminated`, `game_ended`); emotions are the player's last emotion vector
    at or before the position.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, game_id: str | None = None) -> None:
        with reading(con) as con:
            self.game_id = game_id or queries.largest_game(con)
            events = queries.replay_events(con, self.game_id)
            if events.is_empty():
                raise WorkbenchError(f"no events for game {self.game_id!r} in this database")
            updates = queries.state_statements(con, self.game_id)
            vectors = queries.emotion_vectors(con, self.game_id)
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
        # Out of the game from the line that says so to the end: seed 003's
        # `player_eliminated` (or the real simulator's `bankroll_eliminated`).
        self._eliminated = ~np.isnan(_filled(updates, "eliminated", n, players))
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
        has not stated them yet) and `eliminated`. An eliminated player is never in the
        hand again, whatever a later line lists for it."""
        lives, bankroll, in_hand = (self._fields[f][i] for f in STATE_FIELDS)
        vector_at, eliminated = self._vector_at[i], self._eliminated[i]
        return {
            player: {
                "lives": _int_or_none(lives[k]),
                "bankroll": _int_or_none(bankroll[k]),
                "in_hand": False if eliminated[k] else None if np.isnan(in_hand[k]) else bool(in_hand[k]),
                "eliminated": bool(eliminated[k]),
                "emotions": None if np.isnan(vector_at[k]) else _emotions(self._vectors[int(vector_at[k])]),
            }
            for k, player in enumerate(self.players)
        }

    def table_at(self, i: int) -> dict:
        """The table at position `i`: turn, phase, pot, and the event's line and type."""
        return {
            "turn": self._turn[i],
            "phase": self._phase[i] or None,
            "pot": _int_or_none(self._pot[i]),
            "seq": int(self.seqs[i]),
            "type": self.types[i],
        }

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
        return {
            "position": i,
            "seq": int(self.seqs[i]),
            "type": self.types[i],
            "turn": self.turns[i],
            "ts": self.timestamps[i],
            "payload": _parsed(self.payloads[i]),
        }


def _seat_order(updates: pl.DataFrame, vectors: pl.DataFrame) -> list[str]:
    """Players by first appearance in the log (the order `hand_started` seats them)."""
    seen = pl.concat([updates.select("seq", "player_id"), vectors.select("seq", "player_id")])
    first = seen.group_by("player_id").agg(pl.col("seq").min()).sort("seq", "player_id")
    return first["player_id"].to_list()


def _filled(updates: pl.DataFrame, field: str, n: int, players: int) -> np.ndarray:
    """An (events x players) float array: the latest stated `field` at each position
    (NaN before the first). Of several statements at one position the last counts."""
    stated = (
        updates.select("pos", "player", pl.col(field).cast(pl.Float64))
        .filter(pl.col(field).is_not_null())
        .unique(subset=["pos", "player"], keep="last", maintain_order=True)
    )
    filled = np.full((n, players), np.nan)
    if stated.is_empty():
        return filled
    wide = (
        pl.DataFrame({"pos": np.arange(n, dtype=np.int64)})
        .join(stated.pivot(on="player", index="pos", values=field), on="pos", how="left")
        .sort("pos")
        .fill_null(strategy="forward")
    )
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


# --- two positions compared -------------------------------------------------------------

MEASURES = ("lives", "bankroll", "in_hand", *EMOTIONS)


def compare_positions(con: duckdb.DuckDBPyConnection, game_id: str, seq_a: int, seq_b: int) -> pl.DataFrame:
    """Every player's state at two lines of the game's log (the state after the last
    event at or before each line) and the change from the first to the second: one row
    per player; for each measure (`lives`, `bankroll`, `in_hand` as 0/1, the five
    emotions) the columns `<measure>_a`, `<measure>_b` and `<measure>_change`."""
    replay = GameReplay(con, game_id)
    state_a = replay.state_at(replay.position_of_seq(seq_a))
    state_b = replay.state_at(replay.position_of_seq(seq_b))
    rows = []
    for player in replay.players:
        row: dict[str, Any] = {"player_id": player}
        for measure, a, b in zip(MEASURES, _measures(state_a[player]), _measures(state_b[player])):
            row |= {
                f"{measure}_a": a,
                f"{measure}_b": b,
                f"{measure}_change": None if a is None or b is None else b - a,
            }
        rows.append(row)
    schema = {"player_id": pl.String} | {f"{m}_{end}": pl.Float64 for m in MEASURES for end in ("a", "b", "change")}
    return pl.DataFrame(rows, schema=schema)


def _measures(state: dict) -> list:
    emotions = state["emotions"] or {}
    in_hand = None if state["in_hand"] is None else float(state["in_hand"])
    return [state["lives"], state["bankroll"], in_hand, *(emotions.get(e) for e in EMOTIONS)]
