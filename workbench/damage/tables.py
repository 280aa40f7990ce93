"""The Damage tables, declared once, and the SQL that fills them.

`damage_events` holds each record as written (payload as JSON). Each chunk of a file
is parsed once, by DuckDB, from its lines straight into `damage_events`; emotions,
drift and calls are derived in DuckDB from the chunk's rows there (`CHUNK`), in bulk,
so neither memory nor the work per chunk grows with the file or the database.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from workbench.catalog import DECISIONS
from workbench.damage.models import EMOTIONS, PAYLOADS, ActionSubmitted, Envelope, ProviderCall, Undocumented
from workbench.jsonl import OPENS_AN_OBJECT
from workbench.schema import Column, Table, once, read_values, run_on, values_at

EVENTS = Table(
    "damage_events",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("game_id", "VARCHAR", "the line's `game_id`", path="game_id", lenient=True),
        Column("seq", "BIGINT", "1-based line number: the log's own order", required=True),
        Column(
            "type",
            "VARCHAR",
            "the event type (`type`): hand_started, action_submitted, provider_call, ...",
            path="type",
            lenient=True,
        ),
        Column("ts", "TIMESTAMP", "when the event was written (`ts`), as UTC", path="ts"),
        Column("turn", "BIGINT", "the payload's `turn`; NULL for an event without one", path="payload.turn"),
        Column("payload", "JSON", "the event's payload as written", path="payload"),
        Column("extra", "JSON", "envelope keys the specification does not list"),
    ),
    doc="Each line of a log as written, one row per line.",
    model=Envelope,
    within={"payload": (*PAYLOADS.values(), Undocumented)},
)

EMOTION_VECTORS = Table(
    "damage_emotions",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("game_id", "VARCHAR", "the line's `game_id`"),
        Column("seq", "BIGINT", "the line the vector is on", required=True),
        Column("turn", "BIGINT", "the line's turn (`payload.turn`)"),
        Column(
            "player_id",
            "VARCHAR",
            "whose emotions: the vector's own `player_id`, else its holder's, else the "
            "event's `target_player_id`, else its `player_id`",
        ),
        *(
            Column(
                emotion,
                "DOUBLE",
                f"the vector's `{emotion}` as written (the specification's range: -1 to 1); "
                f"NULL where it is not a JSON number",
            )
            for emotion in EMOTIONS
        ),
        Column("origin", "VARCHAR", "where the vector was found: `hand_started.players[].emotions`, ..."),
    ),
    doc="Every emotion vector of a log, wherever in a line it is (see emotions.py).",
)

# The few fields of actions and provider calls that decisions need (paths within the
# payload), kept with the file: when it grows, only its new lines are read for them.
CALLS = Table(
    "damage_calls",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("game_id", "VARCHAR", "the line's `game_id`"),
        Column("seq", "BIGINT", "1-based line number", required=True),
        Column("turn", "BIGINT", "the payload's `turn`"),
        Column("type", "VARCHAR", "action_submitted or provider_call"),
        Column(
            "player_id",
            "VARCHAR",
            "the payload's `player_id`: the player who called or acted",
            path="player_id",
            lenient=True,
            of=(ProviderCall,),
        ),
        Column(
            "action_player_id",
            "VARCHAR",
            "an action's `action.player_id`",
            path="action.player_id",
            lenient=True,
            of=(ActionSubmitted,),
        ),
        Column(
            "kind",
            "VARCHAR",
            "an action's `action.kind`: fold, check, call, raise or pass",
            path="action.kind",
            lenient=True,
            of=(ActionSubmitted,),
        ),
        Column(
            "model",
            "VARCHAR",
            "a call's `resolved_model`: the model that served it",
            path="resolved_model",
            lenient=True,
            of=(ProviderCall,),
        ),
        Column(
            "latency_ms",
            "DOUBLE",
            "a call's `latency_ms`: milliseconds it took",
            path="latency_ms",
            lenient=True,
            of=(ProviderCall,),
        ),
        Column(
            "tokens",
            "BIGINT",
            "a call's `usage.total_tokens`",
            path="usage.total_tokens",
            lenient=True,
            of=(ProviderCall,),
        ),
        Column(
            "prompt_tokens",
            "BIGINT",
            "a call's `usage.prompt_tokens`",
            path="usage.prompt_tokens",
            lenient=True,
            of=(ProviderCall,),
        ),
        Column(
            "completion_tokens",
            "BIGINT",
            "a call's `usage.completion_tokens`",
            path="usage.completion_tokens",
            lenient=True,
            of=(ProviderCall,),
        ),
    ),
    doc="An action or provider call of a log: the fields its decision is derived from.",
    model=(ActionSubmitted, ProviderCall),
    added=("prompt_tokens", "completion_tokens"),
)

TABLES = (EVENTS, EMOTION_VECTORS, CALLS)

ENVELOPE_KEYS = list(Envelope.model_fields)
# JSON merge-patch with nulls deletes the envelope's own keys, leaving the extras.
_STRIP_ENVELOPE = "{" + ",".join(f'"{k}":null' for k in ENVELOPE_KEYS) + "}"

# The rows of the chunk of a file being loaded: its lines `$first` to `$last`.
CHUNK = "(SELECT * FROM damage_events WHERE source_id = $source_id AND seq BETWEEN $first AND $last)"


# The envelope, the turn and the payload (kept whole), read in one parse of each line
# (`event_lines`: seq, raw). Lines reach here unchecked; DuckDB's own parser has the
# last word on what is an object. `extra` is set afterwards, on the few lines whose
# envelope has keys the specification does not list (`SET_EXTRA`).
_FROM_LINE = [c for c in EVENTS.columns if c.path]
INSERT_EVENTS = EVENTS.insert(f"""
SELECT $source_id::BIGINT AS source_id, seq, {read_values("v", _FROM_LINE)}
FROM (SELECT seq, {once(f"try({values_at('raw', [c.path for c in _FROM_LINE if c.path])})")} AS v
      FROM event_lines WHERE {OPENS_AN_OBJECT})
WHERE v IS NOT NULL
""")

SET_EXTRA = f"""
UPDATE damage_events SET extra = json_merge_patch(l.raw, '{_STRIP_ENVELOPE}')
FROM event_lines l
WHERE damage_events.source_id = $source_id AND damage_events.seq = l.seq
  AND len(list_filter(json_keys(l.raw), lambda k: NOT list_contains({ENVELOPE_KEYS}, k))) > 0
"""

_FROM_PAYLOAD = [c for c in CALLS.columns if c.path]


def _keep_calls(events: str) -> str:
    return CALLS.insert(f"""
SELECT source_id, game_id, seq, turn, type, {read_values("v", _FROM_PAYLOAD)}
FROM (SELECT source_id, game_id, seq, turn, type,
             try({values_at("payload", [c.path for c in _FROM_PAYLOAD if c.path])}) AS v
      FROM {events} WHERE type IN ('action_submitted', 'provider_call'))
""")


KEEP_CHUNK_CALLS = _keep_calls(CHUNK)
KEEP_FILE_CALLS = _keep_calls("(SELECT * FROM damage_events WHERE source_id = $source_id)")

# One decision per `action_submitted` from line `$first` on, with the latest
# `provider_call` of the same player in the same turn before it (the betting call that
# produced the action); valid when its line has no error. And one per `action_rejected`
# from line `$failed_from` on: with the real simulator's only reason, `provider_failure`
# (the betting call raised, before any answer existed), a failed call whose `failure` is
# the simulator's `detail` ("provider HTTP error 500: ..."); with any other, an invalid
# decision. Either is of the model the
# player's latest `thinking` start of that turn named (no `provider_call` is written for
# a failed call; the simulator then applies a forced `call`, an ordinary
# `action_resolved`, which is no decision of the model's).
DERIVE_DECISIONS = DECISIONS.insert("""
WITH calls AS (SELECT *, coalesce(player_id, action_player_id) AS agent_id FROM damage_calls
               WHERE source_id = $source_id),
actions AS (SELECT * FROM calls WHERE type = 'action_submitted' AND seq >= $first),
-- Only the calls of a player's turn with an action to join (an append's few): the
-- ASOF join sorts what it is given.
provider_calls AS (
    SELECT * FROM calls c WHERE type = 'provider_call' AND EXISTS (
        SELECT 1 FROM actions a WHERE a.game_id IS NOT DISTINCT FROM c.game_id
          AND a.agent_id IS NOT DISTINCT FROM c.agent_id AND a.turn IS NOT DISTINCT FROM c.turn)
),
bad_lines AS (
    SELECT DISTINCT line FROM violation_lines
    WHERE source_id = $source_id AND severity = 'error' AND line >= $first
),
rejected AS (
    SELECT seq, game_id, turn, payload->>'player_id' AS agent_id,
           CASE WHEN payload->>'reason' = 'provider_failure'
                THEN coalesce(payload->>'detail', payload->>'reason') END AS failure
    FROM damage_events
    WHERE source_id = $source_id AND type = 'action_rejected' AND seq >= $failed_from
),
-- the `thinking` lines of the games and turns of a rejection, found by their columns
-- alone; their payloads are read below by line number, so an append reads those of its
-- last row groups only
turn_thinking AS (
    SELECT e.seq FROM damage_events e
    SEMI JOIN rejected r ON e.game_id IS NOT DISTINCT FROM r.game_id AND e.turn IS NOT DISTINCT FROM r.turn
    WHERE e.source_id = $source_id AND e.type = 'thinking'
),
-- the model a player's betting call was made with: its `thinking` start (a stage names
-- another kind of call)
thinking AS (
    SELECT e.seq, e.game_id, e.turn, e.payload->>'player_id' AS agent_id, e.payload->>'model' AS model
    FROM damage_events e SEMI JOIN turn_thinking t ON e.seq = t.seq
    WHERE e.source_id = $source_id AND e.payload->>'status' = 'start' AND e.payload->>'stage' IS NULL
),
decided AS (
    SELECT $source_id AS source_id, 'damage' AS format, a.game_id AS game_id, a.turn AS turn,
           a.agent_id AS agent_id, c.model AS model, a.kind AS action,
           a.seq NOT IN (SELECT line FROM bad_lines) AS valid, c.latency_ms AS latency_ms, c.tokens AS tokens,
           c.prompt_tokens AS input_tokens, c.completion_tokens AS output_tokens, a.seq, NULL::VARCHAR AS failure
    FROM actions a ASOF LEFT JOIN provider_calls c
      ON a.game_id IS NOT DISTINCT FROM c.game_id AND a.agent_id IS NOT DISTINCT FROM c.agent_id
     AND a.turn IS NOT DISTINCT FROM c.turn AND a.seq > c.seq
    UNION ALL
    SELECT $source_id, 'damage', r.game_id, r.turn, r.agent_id, t.model, NULL, false, NULL, NULL, NULL, NULL,
           r.seq, r.failure
    FROM rejected r ASOF LEFT JOIN thinking t
      ON r.game_id IS NOT DISTINCT FROM t.game_id AND r.agent_id IS NOT DISTINCT FROM t.agent_id
     AND r.turn IS NOT DISTINCT FROM t.turn AND r.seq > t.seq
),
-- the betting round of a decision: the street its hand last revealed before it (none yet:
-- before the flop in hold'em; draw5 has one round)
streets AS (
    SELECT e.seq, e.game_id, e.turn, e.payload->>'street' AS street FROM damage_events e
    SEMI JOIN decided d ON e.game_id IS NOT DISTINCT FROM d.game_id AND e.turn IS NOT DISTINCT FROM d.turn
    WHERE e.source_id = $source_id AND e.type = 'community_revealed'
),
styles AS (
    SELECT e.game_id, e.turn, any_value(e.payload->>'card_style') AS card_style FROM damage_events e
    SEMI JOIN decided d ON e.game_id IS NOT DISTINCT FROM d.game_id AND e.turn IS NOT DISTINCT FROM d.turn
    WHERE e.source_id = $source_id AND e.type = 'hand_started' GROUP BY ALL
)
SELECT d.* EXCLUDE (seq), 'line ' || d.seq AS locator,
       coalesce(s.street, CASE WHEN h.card_style = 'draw5' THEN 'betting' WHEN h.card_style IS NOT NULL
                               THEN 'preflop' END) AS round
FROM decided d ASOF LEFT JOIN streets s
  ON d.game_id IS NOT DISTINCT FROM s.game_id AND d.turn IS NOT DISTINCT FROM s.turn AND d.seq > s.seq
LEFT JOIN styles h ON d.game_id IS NOT DISTINCT FROM h.game_id AND d.turn IS NOT DISTINCT FROM h.turn
""")


def insert_events(con: duckdb.DuckDBPyConnection, source_id: int, event_lines: pa.Table) -> int:
    """Parse (seq, raw) lines into `damage_events`; returns how many became rows (the
    lines DuckDB cannot read as an object are left out)."""
    return run_on(con, event_lines, INSERT_EVENTS, "event_lines", {"source_id": source_id})[0][0]


def set_extra(con: duckdb.DuckDBPyConnection, source_id: int, event_lines: pa.Table) -> int:
    """Keep the envelope keys the specification does not list, for lines that have any;
    returns how many rows have such keys."""
    return run_on(con, event_lines, SET_EXTRA, "event_lines", {"source_id": source_id})[0][0]


def forget_derived(con: duckdb.DuckDBPyConnection, params: dict) -> None:
    """Take out what was derived from a chunk's rows (`params`: source_id, first, last)."""
    for table in (EMOTION_VECTORS, CALLS):
        con.execute(
            f"DELETE FROM {table.name} WHERE source_id = $source_id AND seq BETWEEN $first AND $last", params
        ).fetchall()


def backfill_calls(con: duckdb.DuckDBPyConnection, source_id: int) -> None:
    """The calls of a file's rows, for a file ingested before `damage_calls` kept them."""
    con.execute(f"DELETE FROM {CALLS.name} WHERE source_id = $source_id", {"source_id": source_id}).fetchall()
    con.execute(KEEP_FILE_CALLS, {"source_id": source_id}).fetchall()


def types_in(con: duckdb.DuckDBPyConnection, params: dict) -> set[str]:
    """The event types of a chunk's rows (`params`: source_id, first, last)."""
    return {t for (t,) in con.execute(f"SELECT DISTINCT type FROM {CHUNK} WHERE type IS NOT NULL", params).fetchall()}


def keep_calls(con: duckdb.DuckDBPyConnection, source_id: int, first: int, last: int) -> None:
    """Keep the calls of a chunk's rows, for the file's decisions."""
    con.execute(KEEP_CHUNK_CALLS, {"source_id": source_id, "first": first, "last": last})


def derive_decisions(
    con: duckdb.DuckDBPyConnection, source_id: int, first: int, failed_from: int | None = None
) -> None:
    """The decisions of a file's actions from line `first` on, and of its failed calls
    from line `failed_from` on (default: `first`)."""
    con.execute(
        DERIVE_DECISIONS,
        {"source_id": source_id, "first": first, "failed_from": first if failed_from is None else failed_from},
    )
