"""The Damage tables and the SQL that fills them.

`damage_events` holds each record as written (payload as JSON). Each batch of a file
is parsed once into `damage_batch` (an Arrow table, freed after the batch: a temporary
table would keep every batch's rows until the file's transaction ends); emotions and
drift are derived from it in DuckDB, in bulk, so neither memory nor the work per batch
grows with the file or the database.
"""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa

from workbench.damage import emotions
from workbench.damage.models import Envelope
from workbench.sqljson import json_int

DDL = """
CREATE TABLE IF NOT EXISTS damage_events (
    source_id BIGINT NOT NULL,
    game_id   VARCHAR,
    seq       BIGINT NOT NULL,      -- 1-based line number: the log's own order
    type      VARCHAR,
    ts        TIMESTAMP,            -- UTC
    turn      BIGINT,
    payload   JSON,
    extra     JSON                  -- envelope keys the specification does not list
);
CREATE TABLE IF NOT EXISTS damage_emotions (
    source_id  BIGINT NOT NULL,
    game_id    VARCHAR,
    seq        BIGINT NOT NULL,
    turn       BIGINT,
    player_id  VARCHAR,
    fear       DOUBLE,
    anger      DOUBLE,
    shame      DOUBLE,
    confidence DOUBLE,
    tilt       DOUBLE,
    origin     VARCHAR              -- where the vector was found: `hand_started.players[].emotions`, ...
);
"""

ENVELOPE_KEYS = list(Envelope.model_fields)
# JSON merge-patch with nulls deletes the envelope's own keys, leaving the extras.
_STRIP_ENVELOPE = "{" + ",".join(f'"{k}":null' for k in ENVELOPE_KEYS) + "}"

# What DuckDB reads each line into, in one parse: the envelope and the turn. Emotion
# vectors, wherever they are, are found by `emotions.EMOTION_VECTORS`. A value of the
# wrong type comes out NULL (pydantic reports it).
LINE_SHAPE = json.dumps({
    "game_id": "VARCHAR", "type": "VARCHAR", "ts": "VARCHAR", "payload": {"turn": "JSON"},
})

# Lines reach here checked; DuckDB's own parser has the last word on what is an object.
PARSE_EVENTS = f"""
SELECT $source_id::BIGINT AS source_id, line.game_id AS game_id, seq, line.type AS type,
       TRY_CAST(TRY_CAST(line.ts AS TIMESTAMPTZ) AS TIMESTAMP) AS ts,
       {json_int('line.payload.turn')} AS turn,
       json_extract(raw, '$.payload') AS payload,
       CASE WHEN len(list_filter(json_keys(raw), lambda k: NOT list_contains({ENVELOPE_KEYS}, k))) > 0
            THEN json_merge_patch(raw, '{_STRIP_ENVELOPE}') END AS extra,
       line
FROM (SELECT seq, raw, try(from_json(raw, '{LINE_SHAPE}')) AS line FROM event_lines
      WHERE starts_with(ltrim(raw, ' \t'), '{{'))
WHERE line IS NOT NULL
"""

# The few fields of actions and provider calls that decisions need, kept per file.
CALLS_TABLE = """
CREATE TEMP TABLE IF NOT EXISTS damage_calls (
    game_id VARCHAR, seq BIGINT, turn BIGINT, type VARCHAR, player_id VARCHAR, kind VARCHAR,
    model VARCHAR, latency_ms DOUBLE, tokens BIGINT
)
"""
CALL_FIELDS = """
SELECT game_id, seq, turn, type, coalesce(payload->>'player_id', payload->'action'->>'player_id') AS player_id,
       payload->'action'->>'kind' AS kind, payload->>'resolved_model' AS model,
       TRY_CAST(payload->>'latency_ms' AS DOUBLE) AS latency_ms,
       TRY_CAST(payload->'usage'->>'total_tokens' AS BIGINT) AS tokens
FROM {events} WHERE type IN ('action_submitted', 'provider_call') {only}
"""

# One decision per `action_submitted`, with the latest `provider_call` of the same
# player in the same turn before it (the betting call that produced the action).
DECISIONS = """
WITH actions AS (SELECT * FROM damage_calls WHERE type = 'action_submitted'),
calls AS (SELECT * FROM damage_calls WHERE type = 'provider_call'),
bad_lines AS (
    SELECT DISTINCT locator FROM violations WHERE source_id = $source_id AND severity = 'error'
)
INSERT INTO decisions
SELECT $source_id, 'damage', a.game_id, a.turn, a.player_id, c.model, a.kind,
       'line ' || a.seq NOT IN (SELECT locator FROM bad_lines), c.latency_ms, c.tokens, 'line ' || a.seq
FROM actions a ASOF LEFT JOIN calls c
  ON a.game_id IS NOT DISTINCT FROM c.game_id AND a.player_id IS NOT DISTINCT FROM c.player_id
 AND a.turn IS NOT DISTINCT FROM c.turn AND a.seq > c.seq
"""


class FileStage:
    """Loading one file: each batch is parsed once into an Arrow table, which the SQL
    reads by the name `damage_batch` (a DuckDB replacement scan: unlike register(), it
    does not pin every batch in memory until the file's transaction ends); the batch is
    derived from, moved to `damage_events` and dropped. The file's actions and provider
    calls are kept (a few fields each) for its decisions."""

    def __init__(self, con: duckdb.DuckDBPyConnection, source_id: int, earlier_lines: bool = False):
        self.con, self.source_id = con, source_id
        self.batch: pa.Table | None = None
        con.execute("SET arrow_lossless_conversion = true")  # JSON stays JSON through Arrow
        con.execute(CALLS_TABLE)
        con.execute("DELETE FROM damage_calls")
        if earlier_lines:  # a file that grew: its decisions are derived again over all its actions
            earlier = CALL_FIELDS.format(events="damage_events", only="AND source_id = $source_id")
            con.execute(f"INSERT INTO damage_calls {earlier}", {"source_id": source_id})

    def parse(self, event_lines: pa.Table) -> int:
        """Parse a batch of (seq, raw) lines; returns how many became rows."""
        self.batch = self.con.sql(PARSE_EVENTS, params={"source_id": self.source_id}).to_arrow_table()
        return self.batch.num_rows

    def publish(self) -> None:
        """Derive the batch's emotion vectors and decision fields, then move its events."""
        damage_batch = self.batch  # noqa: F841 - read by name in the SQL below
        emotions.insert_vectors(self.con, self.source_id, damage_batch)  # wherever they are
        self.con.execute(f"INSERT INTO damage_calls {CALL_FIELDS.format(events='damage_batch', only='')}")
        self.con.execute("INSERT INTO damage_events SELECT * EXCLUDE (line) FROM damage_batch")
        self.batch = None

    def derive_decisions(self) -> None:
        """The file's decisions, once all its events (and their violations) are in."""
        self.con.execute(DECISIONS, {"source_id": self.source_id})
