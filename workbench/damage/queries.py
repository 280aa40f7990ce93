"""What the notebooks, the plots and the replay scrubber ask of a Damage database.

The only read-side code that knows the Damage tables and the keys of their payloads:
the others get polars frames from here. The values taken out of payloads are declared
as columns of the payload models they are read from, so a field renamed in `models.py`
fails at import, naming the column that reads it.
"""

from __future__ import annotations

import math

import duckdb
import polars as pl

from workbench.connection import query_frame
from workbench.damage.models import (
    EMOTIONS,
    ActionResolved,
    AffectResolved,
    GameEnded,
    HandEnded,
    HandStarted,
    LifeLost,
    PhaseChanged,
    PlayerPublicState,
    Showdown,
)
from workbench.errors import WorkbenchError
from workbench.schema import Column, Table

# An attack plan's `emotional_intent` names a feeling the emotion vector does not carry
# for two values; these are measured on the nearest carried emotion.
INTENT_MEASURED_ON = {"overconfidence": "confidence", "paranoia": "fear"}

# A game is read from the one file that holds most of its events (a game ingested from
# two copies is not doubled), including the lines of that file that lost their
# `game_id` key: they are still that game's events.
GAME_SOURCE = """(SELECT source_id FROM damage_events WHERE game_id = $game
                  GROUP BY source_id ORDER BY count(*) DESC, source_id DESC LIMIT 1)"""
GAME_FILTER = f"source_id = {GAME_SOURCE} AND (game_id = $game OR game_id IS NULL)"

# --- what is read out of payloads ---------------------------------------------------

TABLE_STATE = Table(
    "damage_table_state",
    (
        Column("pot", "BIGINT", path="pot", of=(HandStarted, ActionResolved, Showdown)),
        Column("phase", "VARCHAR", path="phase", lenient=True, of=(PhaseChanged,)),
    ),
    doc="The table as the payloads that state it say.",
    model=(HandStarted, ActionResolved, Showdown, PhaseChanged),
)

PLAYER_STATE = Table(
    "damage_player_state",
    (
        Column("player_id", "VARCHAR", path="player_id", lenient=True),
        Column("lives", "BIGINT", path="lives"),
        Column("bankroll", "BIGINT", path="bankroll"),
        Column("in_hand", "BOOLEAN", path="in_hand"),
    ),
    doc="One player's state, as payloads list it.",
    model=PlayerPublicState,
)

STATE_CHANGES = Table(
    "damage_state_changes",
    (
        Column("players", "JSON", path="players", of=(HandStarted, HandEnded)),
        Column("final_state", "JSON", path="final_state", of=(GameEnded,)),
        Column("player_state", "JSON", path="player_state", of=(ActionResolved,)),
        Column("player_id", "VARCHAR", path="player_id", lenient=True, of=(ActionResolved, LifeLost)),
        Column("remaining_lives", "BIGINT", path="remaining_lives", of=(LifeLost,)),
    ),
    doc="Where payloads state players' lives, bankroll and being in the hand.",
    model=(HandStarted, HandEnded, GameEnded, ActionResolved, LifeLost),
)

TEAM_ATTACK = Table(
    "damage_team_attack",
    (
        Column("mode", "VARCHAR", path="mode", lenient=True),
        Column("lead_player_id", "VARCHAR", path="lead_player_id", lenient=True),
        Column("player_id", "VARCHAR", path="player_id", lenient=True),
        Column("assistants", "VARCHAR[]", path="assistants"),
        Column("target", "VARCHAR", path="target_player_id", lenient=True),
        Column("emotion", "VARCHAR", path="emotion", lenient=True),
        Column("intended_delta", "DOUBLE", path="raw_delta", lenient=True),
        Column("applied_delta", "DOUBLE", path="applied_delta", lenient=True),
        Column("target_emotions", "JSON", path="target_emotions"),
    ),
    doc="An affect-phase attack of a team on one emotion of a player.",
    model=AffectResolved,
)

RAISE_ATTACK = Table(
    "damage_raise_attack",
    (
        Column("player_id", "VARCHAR", path="player_id", lenient=True),
        Column("attack_plan", "JSON", path="attack_plan"),
        Column("target", "VARCHAR", path="attack_plan.target_player_id", lenient=True),
        Column("intent", "VARCHAR", path="attack_plan.emotional_intent", lenient=True),
    ),
    doc="A raise that carries an attack plan.",
    model=ActionResolved,
)


def _read(table: Table, name: str, record: str = "payload") -> str:
    return table.column(name).read_from(record)


def _team(name: str, record: str = "payload") -> str:
    return _read(TEAM_ATTACK, name, record)


def _team_attacks(record: str = "payload") -> str:
    """The condition that a line is an affect-phase attack of a team."""
    return f"type = 'affect_resolved' AND {_team('mode', record)} = 'attack_team'"


def _attacker(record: str = "payload") -> str:
    return f"coalesce({_team('lead_player_id', record)}, {_team('player_id', record)})"


# --- games ---------------------------------------------------------------------------


def games(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every Damage game (files with hands, not tournament logs), largest first."""
    return query_frame(
        con,
        """
        SELECT game_id, count(*) AS events, max(turn) AS turns,
               count(*) FILTER (WHERE type = 'hand_started') AS hands, min(ts) AS started,
               min(seq) FILTER (WHERE type = 'hand_started') AS first_hand_line, max(seq) AS last_line
        FROM damage_events WHERE game_id IS NOT NULL
        GROUP BY game_id HAVING count(*) FILTER (WHERE type = 'hand_started') > 0
        ORDER BY events DESC, game_id
    """,
    )


def existing_games(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """`games`, or a clear error when the database holds none."""
    found = games(con)
    if found.is_empty():
        raise WorkbenchError("no Damage game in this database; ingest a replay log (*.events.jsonl) first")
    return found


def largest_game(con: duckdb.DuckDBPyConnection) -> str:
    """The game with most events: what a chart or a replay shows when given no game."""
    return existing_games(con)["game_id"][0]


def game_players(con: duckdb.DuckDBPyConnection, game_id: str) -> list[str]:
    """The game's players in seat order (first appearance)."""
    frame = query_frame(
        con,
        f"""
        SELECT player_id FROM damage_emotions WHERE {GAME_FILTER}
        GROUP BY player_id ORDER BY min(seq), player_id
    """,
        {"game": game_id},
    )
    return frame["player_id"].to_list()


# --- attacks and what they moved -----------------------------------------------------


def _attack_ctes() -> str:
    """The CTEs `events`, `emotions` and `attacks` of one game ($game): every attack on
    a player (`seq`, `turn`, `kind`, `attacker`, `assistants`, `target`, `intent`,
    `measured_on`, `intended_delta`, `applied_delta`) and the vectors it is measured on."""
    measured = " ".join(f"WHEN '{intent}' THEN '{emotion}'" for intent, emotion in INTENT_MEASURED_ON.items())
    plan = _read(RAISE_ATTACK, "attack_plan")
    return f"""
        events AS (SELECT * FROM damage_events WHERE {GAME_FILTER}),
        -- A direct emoter attack's line (`direct_emoter_attack_resolved.before` / `.after`)
        -- comes just before the raise's `action_resolved`: the span is measured around the
        -- raise from the vectors of the other lines, as for affect attacks.
        emotions AS (SELECT *, rowid AS written FROM damage_emotions WHERE {GAME_FILTER} AND player_id IS NOT NULL
                     AND NOT starts_with(origin, 'direct_emoter_attack_resolved.')),
        raw_attacks AS (
            SELECT seq, turn, 'affect' AS kind, {_attacker()} AS attacker,
                   {TEAM_ATTACK.select_paths("payload", ["assistants", "target"])}, {_team("emotion")} AS intent,
                   {TEAM_ATTACK.select_paths("payload", ["intended_delta", "applied_delta"])}
            FROM events WHERE {_team_attacks()}
            UNION ALL
            SELECT seq, turn, 'raise', {_read(RAISE_ATTACK, "player_id")}, NULL,
                   {RAISE_ATTACK.select_paths("payload", ["target", "intent"])}, NULL, NULL
            FROM events WHERE type = 'action_resolved' AND json_type({plan}) = 'OBJECT'
        ),
        attacks AS (SELECT *, CASE intent {measured} ELSE intent END AS measured_on FROM raw_attacks)"""


def attack_effects(con: duckdb.DuckDBPyConnection, game_id: str) -> pl.DataFrame:
    """One row per attack on a player: affect-phase team attacks (`emotion`, intended
    `raw_delta`, `applied_delta`, the `assistants` who joined the lead) and raises with
    an attack plan (`emotional_intent`; `assistants` NULL). `actual` is the target's
    change in the aimed-at emotion between its last vector before the attack and its
    first vector at or after it; `d_<emotion>` the change in each emotion over the same span."""
    deltas = ", ".join(f"after.{e} - before.{e} AS d_{e}" for e in EMOTIONS)
    actual = " ".join(f"WHEN '{e}' THEN d_{e}" for e in EMOTIONS)
    return query_frame(
        con,
        f"""
        WITH {_attack_ctes()},
        spans AS (
            SELECT a.*, {deltas}
            FROM attacks a
            ASOF LEFT JOIN emotions before ON before.player_id = a.target AND a.seq > before.seq
            ASOF LEFT JOIN emotions after ON after.player_id = a.target AND a.seq <= after.seq
        )
        SELECT seq, turn, kind, attacker, assistants, target, intent, measured_on, intended_delta, applied_delta,
               CASE measured_on {actual} END AS actual, d_{", d_".join(EMOTIONS)}
        FROM spans ORDER BY seq
    """,
        {"game": game_id},
    )


def attack_summary(effects: pl.DataFrame) -> pl.DataFrame:
    """Per kind of attack and aimed-at emotion: how many, the mean intended, applied and
    actual change, and how often the target moved the way the attack aimed."""
    return (
        effects.group_by("kind", "intent")
        .agg(
            attacks=pl.len(),
            mean_intended=pl.col("intended_delta").mean(),
            mean_applied=pl.col("applied_delta").mean(),
            mean_actual=pl.col("actual").mean(),
            moved_as_aimed=(pl.col("actual") > 0).mean(),
        )
        .sort("kind", "attacks", descending=[False, True])
    )


def attacks_of(con: duckdb.DuckDBPyConnection, game_id: str) -> pl.DataFrame:
    """`attack_effects` of a game the database holds, or a clear error when the game
    is unknown or carries no attack."""
    known = existing_games(con)["game_id"]
    if game_id not in known:
        shown = ", ".join(known.head(5))
        raise WorkbenchError(
            f"no Damage game {game_id!r} in this database; games: {shown}" + (", ..." if known.len() > 5 else "")
        )
    effects = attack_effects(con, game_id)
    if effects.is_empty():
        raise WorkbenchError(
            f"game {game_id!r} has no attack: no affect_resolved with mode attack_team and no raise with an attack plan"
        )
    return effects


def attack_matrix(con: duckdb.DuckDBPyConnection, game_id: str) -> pl.DataFrame:
    """Who attacks whom, and what it does: one row per (attacker, target).

    `attacks` counts the attacks the attacker aimed at the target: affect-phase team
    attacks it led (`team_attacks`; the lead is `lead_player_id`, as the real simulator
    writes it) and raises with an attack plan (`raises`). The players who joined a team
    attack are in `assistants` of the same line; they are counted in `assists` of their
    own (assistant, target) row, not as attacks: the deltas of a team attack are one
    outcome, and counting them once per member would add the same change several times.
    A pair where a player only assisted has `attacks` 0. `assisted` is how many of the
    led team attacks had at least one assistant.

    `intended_*`/`applied_*` are the team attacks' `raw_delta`/`applied_delta` (raises
    carry none); `actual_*` the target's change in the aimed-at emotion over each attack
    (`attack_effects.actual`, both kinds), `measured` how many attacks have one.
    """
    effects = attacks_of(con, game_id)
    team = pl.col("kind") == "affect"
    led = effects.group_by("attacker", "target").agg(
        attacks=pl.len(),
        team_attacks=team.sum(),
        raises=(~team).sum(),
        assisted=(team & (pl.col("assistants").list.len() > 0)).sum(),
        intended_total=_total("intended_delta"),
        intended_mean=pl.col("intended_delta").mean(),
        applied_total=_total("applied_delta"),
        applied_mean=pl.col("applied_delta").mean(),
        measured=pl.col("actual").count(),
        actual_total=_total("actual"),
        actual_mean=pl.col("actual").mean(),
    )
    assists = (
        effects.filter(team)
        .explode("assistants")
        .drop_nulls("assistants")
        .group_by(attacker="assistants", target="target")
        .agg(assists=pl.len())
    )
    counts = ["attacks", "team_attacks", "raises", "assisted", "measured", "assists"]
    return (
        led.join(assists, on=["attacker", "target"], how="full", coalesce=True)
        .with_columns(pl.col(counts).fill_null(0).cast(pl.Int64))
        .select(
            "attacker",
            "target",
            "attacks",
            "team_attacks",
            "raises",
            "assisted",
            "assists",
            "intended_total",
            "intended_mean",
            "applied_total",
            "applied_mean",
            "measured",
            "actual_total",
            "actual_mean",
        )
        .sort(["attacks", "assists", "attacker", "target"], descending=[True, True, False, False])
    )


def _total(column: str) -> pl.Expr:
    """The sum of a column's values, NULL (not 0) when it has none: a pair of raises
    has no intended delta at all."""
    return pl.when(pl.col(column).count() > 0).then(pl.col(column).sum())


# --- event study: what follows an attack, against the player's own drift ------------------


def event_windows(con: duckdb.DuckDBPyConnection, game_id: str, k: int = 5) -> pl.DataFrame:
    """One row per attack: the target's change in the aimed-at emotion over the next `k`
    of its emotion vectors, against that player's baseline drift.

    The window starts at the target's last vector before the attack and ends `k` vectors
    later (`start_seq`, `end_seq`), so `k = 1` is `attack_effects.actual`. The baseline
    is every other `k`-vector window of the same player and emotion with no attack on
    that player inside it (`baseline_n` windows, their mean and standard deviation).
    `difference` is `change - baseline_mean`; `ci_low`/`ci_high` its 95% interval as a
    Student t prediction interval: `difference ± t(n-1) · sd · sqrt(1 + 1/n)`, the spread
    of one ordinary window of this player plus the uncertainty of the baseline mean. An
    interval that excludes 0 says the change was outside what the player drifts by
    itself. `change` is NULL when fewer than `k` vectors follow the anchor (or none
    precedes the attack); the interval when the baseline has fewer than 2 windows.
    """
    if not isinstance(k, int) or k < 1:
        raise WorkbenchError(f"k must be a whole number of emotion vectors >= 1, not {k!r}")
    attacks_of(con, game_id)  # a known game with attacks, else a clear error
    frame = query_frame(
        con,
        f"""
        WITH {_attack_ctes()},
        series AS (
            SELECT player_id, seq, {", ".join(EMOTIONS)},
                   row_number() OVER (PARTITION BY player_id ORDER BY seq, written) AS i,
                   -- attacks on the player up to this line: a window holds an attack
                   -- when the count differs between its two ends
                   (SELECT count(*) FROM attacks a WHERE a.target = e.player_id AND a.seq <= e.seq) AS hits
            FROM emotions e
        ),
        long AS (UNPIVOT series ON {", ".join(EMOTIONS)} INTO NAME emotion VALUE value),
        windows AS (
            SELECT player_id, emotion, i, seq AS start_seq, lead(seq, $k) OVER w AS end_seq,
                   lead(value, $k) OVER w - value AS change, lead(hits, $k) OVER w - hits AS attacks_within
            FROM long WINDOW w AS (PARTITION BY player_id, emotion ORDER BY i)
        ),
        baseline AS (
            SELECT player_id, emotion, count(change) AS baseline_n, avg(change) AS baseline_mean,
                   stddev_samp(change) AS baseline_sd
            FROM windows WHERE attacks_within = 0 GROUP BY player_id, emotion
        ),
        anchored AS (
            SELECT a.*, s.i AS anchor FROM attacks a
            ASOF LEFT JOIN series s ON s.player_id = a.target AND a.seq > s.seq
        )
        SELECT a.seq, a.turn, a.kind, a.attacker, a.target, a.intent, a.measured_on AS emotion,
               w.start_seq, w.end_seq, w.change, w.attacks_within,
               coalesce(b.baseline_n, 0) AS baseline_n, b.baseline_mean, b.baseline_sd,
               w.change - b.baseline_mean AS difference
        FROM anchored a
        LEFT JOIN windows w ON w.player_id = a.target AND w.emotion = a.measured_on AND w.i = a.anchor
        LEFT JOIN baseline b ON b.player_id = a.target AND b.emotion = a.measured_on
        ORDER BY a.seq
    """,
        {"game": game_id, "k": k},
    )
    half = _t975_column("baseline_n") * pl.col("baseline_sd") * (1 + 1 / pl.col("baseline_n")).sqrt()
    return frame.with_columns(ci_low=pl.col("difference") - half, ci_high=pl.col("difference") + half)


def event_study(con: duckdb.DuckDBPyConnection, game_id: str, k: int = 5, by=("kind", "emotion")) -> pl.DataFrame:
    """Per group of attacks (`by`: columns of `event_windows`, e.g. ("kind", "emotion")
    or ("attacker", "target")): `attacks`, `n` of them with a measured change and a
    baseline, `mean_change` after them, `baseline_mean` (the mean of each attack's own
    target baseline), `difference` (the mean of the per-attack differences) and its 95%
    Student t interval, `difference ± t(n-1) · sd / sqrt(n)` over those differences
    (each attack compared with its own target's drift). NULL interval when n < 2:
    look the attack up in `event_windows`."""
    windows = event_windows(con, game_id, k)
    measured = pl.col("difference").is_not_null()
    summary = windows.group_by(*by).agg(
        attacks=pl.len().cast(pl.Int64),
        n=measured.sum().cast(pl.Int64),
        mean_change=pl.col("change").filter(measured).mean(),
        baseline_mean=pl.col("baseline_mean").filter(measured).mean(),
        difference=pl.col("difference").mean(),
        sd=pl.col("difference").std(),
    )
    half = _t975_column("n") * pl.col("sd") / pl.col("n").sqrt()
    return (
        summary.with_columns(ci_low=pl.col("difference") - half, ci_high=pl.col("difference") + half)
        .drop("sd")
        .sort(["n", *by], descending=[True, *([False] * len(by))], nulls_last=True)
    )


def t975(df: int) -> float:
    """The 97.5% quantile of Student's t with `df` degrees of freedom: the half-width
    factor of a two-sided 95% interval. NaN below one degree of freedom."""
    from scipy.special import stdtrit  # loaded here: the emotion figures need no scipy

    return float(stdtrit(df, 0.975)) if df >= 1 else math.nan


def _t975_column(n: str) -> pl.Expr:
    """t975(n - 1) for a column of counts: the quantile is computed once per distinct
    count (a handful), not per row."""
    return pl.col(n).map_batches(
        lambda counts: counts.replace_strict(
            {c: t975(c - 1) if c > 1 else None for c in counts.unique().drop_nulls()},
            default=None,
            return_dtype=pl.Float64,
        ),
        return_dtype=pl.Float64,
    )


# --- emotions over a game, for charts -------------------------------------------------


def emotion_series(
    con: duckdb.DuckDBPyConnection,
    game_id: str,
    players=None,
    emotions=EMOTIONS,
    x: str = "seq",
    max_points: int | None = None,
) -> pl.DataFrame:
    """(player_id, emotion, `x`, value): each player's emotions over the game's lines
    (`x="seq"`) or turns (`x="turn"`), in the order of the log, averaged over buckets of
    lines so that a player has at most `max_points` points. A player's vectors end at
    the line it was eliminated on: the log restates them after (`hand_ended`,
    `game_ended`), as they were when the player left."""
    bucket = max(1, -(-_seq_span(con, game_id) // max_points)) if max_points else 1
    return query_frame(
        con,
        f"""
        WITH out AS ({ELIMINATIONS})
        SELECT player_id, emotion, min({x}) AS {x}, avg(value) AS value
        FROM (SELECT e.player_id, e.seq, e.turn, e.seq // $bucket AS bucket, {", ".join(EMOTIONS)}
              FROM damage_emotions e LEFT JOIN out ON out.player_id = e.player_id
              WHERE e.game_id = $game AND (out.seq IS NULL OR e.seq <= out.seq)
                AND ($players IS NULL OR list_contains($players, e.player_id)))
        UNPIVOT (value FOR emotion IN ({", ".join(EMOTIONS)}))
        WHERE list_contains($emotions, emotion) AND {x} IS NOT NULL
        GROUP BY player_id, emotion, bucket ORDER BY player_id, emotion, {x}, min(seq)
    """,
        {"game": game_id, "bucket": bucket, "players": _listed(players), "emotions": list(emotions)},
    )


def _seq_span(con: duckdb.DuckDBPyConnection, game_id: str) -> int:
    """How many lines the game's vectors spread over."""
    return con.execute(
        "SELECT coalesce(max(seq) - min(seq) + 1, 0) FROM damage_emotions WHERE game_id = ?", [game_id]
    ).fetchall()[0][0]


def attacks_received(
    con: duckdb.DuckDBPyConnection, game_id: str, players=None, emotions=EMOTIONS, x: str = "seq"
) -> pl.DataFrame:
    """(player_id, emotion, attacker, `x`, intended_delta, applied_delta, value): every
    team attack on one of a player's emotions, and the value that emotion had after it."""
    emotion, target = _team("emotion", "e.payload"), _team("target", "e.payload")
    after = f"TRY_CAST(({_team('target_emotions', 'e.payload')}) ->> {emotion} AS DOUBLE)"
    return query_frame(
        con,
        f"""
        SELECT {target} AS player_id, {emotion} AS emotion, {_attacker("e.payload")} AS attacker,
               e.{x} AS {x}, {TEAM_ATTACK.select_paths("e.payload", ["intended_delta", "applied_delta"])},
               {after} AS value
        FROM damage_events e
        WHERE e.game_id = $game AND {_team_attacks("e.payload")}
          AND list_contains($emotions, {emotion})
          AND ($players IS NULL OR list_contains($players, {target}))
          AND value IS NOT NULL
        ORDER BY {x}
    """,
        {"game": game_id, "players": _listed(players), "emotions": list(emotions)},
    )


# Where each player taken out of the game left it: the line and turn of its
# `player_eliminated`, or of the real simulator's `bankroll_eliminated` (the first, where
# the log says it more than once).
ELIMINATIONS = f"""
    SELECT {_read(STATE_CHANGES, "player_id")} AS player_id, min(seq) AS seq, arg_min(turn, seq) AS turn
    FROM damage_events WHERE {GAME_FILTER} AND type IN ('player_eliminated', 'bankroll_eliminated')
    GROUP BY ALL HAVING player_id IS NOT NULL
"""


def eliminations(con: duckdb.DuckDBPyConnection, game_id: str, players=None) -> pl.DataFrame:
    """(player_id, seq, turn): where each player taken out of the game left it."""
    return query_frame(
        con,
        f"""
        SELECT * FROM ({ELIMINATIONS}) WHERE $players IS NULL OR list_contains($players, player_id)
        ORDER BY seq
    """,
        {"game": game_id, "players": _listed(players)},
    )


def _listed(values) -> list | None:
    return None if values is None else list(values)


# --- a game's events and the players' states, for the replay ----------------------------


def replay_events(con: duckdb.DuckDBPyConnection, game_id: str) -> pl.DataFrame:
    """(seq, type, turn, ts, payload, pot, phase) of each of the game's lines, in order:
    `pot` where a line states it, `phase` where one starts ('' where a hand starts)."""
    pot, phase = _read(TABLE_STATE, "pot"), _read(TABLE_STATE, "phase")
    return query_frame(
        con,
        f"""
        SELECT seq, type, turn, CAST(ts AS VARCHAR) AS ts, CAST(payload AS VARCHAR) AS payload,
               CASE WHEN type IN ('hand_ended', 'game_ended') THEN 0
                    WHEN type IN ('hand_started', 'action_resolved', 'showdown') THEN {pot}
               END AS pot,
               -- a new hand clears the phase until its first phase_changed
               CASE type WHEN 'phase_changed' THEN coalesce({phase}, '?') WHEN 'hand_started' THEN '' END AS phase
        FROM damage_events WHERE {GAME_FILTER}
        ORDER BY seq
    """,
        {"game": game_id},
    )


def state_statements(con: duckdb.DuckDBPyConnection, game_id: str) -> pl.DataFrame:
    """(seq, player_id, lives, bankroll, in_hand, eliminated): every place the game's log
    states a player's lives, bankroll or being in the hand, or takes the player out of
    the game (`eliminated` true). A field a line does not state is NULL there: the
    previous value holds."""
    players, final, state = (_read(STATE_CHANGES, name) for name in ("players", "final_state", "player_state"))
    player_id = _read(STATE_CHANGES, "player_id")
    return query_frame(
        con,
        f"""
        WITH events AS (SELECT seq, type, payload FROM damage_events WHERE {GAME_FILTER}),
        states AS (
            SELECT seq, unnest(CAST({players} AS JSON[])) AS p, NULL AS player_id FROM events
            WHERE type IN ('hand_started', 'hand_ended') AND json_type({players}) = 'ARRAY'
            UNION ALL
            SELECT seq, unnest(CAST({final} AS JSON[])), NULL FROM events
            WHERE type = 'game_ended' AND json_type({final}) = 'ARRAY'
            UNION ALL
            SELECT seq, {state}, {player_id} FROM events
            WHERE type = 'action_resolved' AND json_type({state}) = 'OBJECT'
        )
        SELECT seq, coalesce({_read(PLAYER_STATE, "player_id", "p")}, player_id) AS player_id,
               {PLAYER_STATE.select_paths("p", ["lives", "bankroll", "in_hand"])}, NULL AS eliminated
        FROM states
        UNION ALL
        SELECT seq, {player_id}, {_read(STATE_CHANGES, "remaining_lives")}, NULL,
               CASE WHEN type = 'player_eliminated' THEN false END, type = 'player_eliminated' OR NULL
        FROM events WHERE type IN ('life_lost', 'player_eliminated')
        UNION ALL
        -- The real simulator's undocumented `bankroll_eliminated` (turn, player_id,
        -- bankroll) takes a player out of the game as `player_eliminated` does.
        SELECT seq, {player_id}, NULL, NULL, false, true FROM events WHERE type = 'bankroll_eliminated'
    """,
        {"game": game_id},
    ).filter(pl.col("player_id").is_not_null())


def emotion_vectors(con: duckdb.DuckDBPyConnection, game_id: str) -> pl.DataFrame:
    """(seq, player_id, the five emotions): the game's vectors in the order of its log."""
    return query_frame(
        con,
        f"""
        SELECT seq, player_id, {", ".join(EMOTIONS)} FROM damage_emotions
        WHERE {GAME_FILTER} AND player_id IS NOT NULL ORDER BY seq, rowid
    """,
        {"game": game_id},
    )
