"""The EC4X tables, the quality-gate view, and the SQL that fills them.

Every line that is a JSON object becomes a row, valid or not (`valid` says whether the
line has an error violation); typed columns are NULL where the value has the wrong
JSON type, and the whole record stays in a JSON column.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from workbench.ec4x.families import FAMILIES, draft_families_sql, tag_family_sql
from workbench.sqljson import json_bool, json_int, json_list, json_str, json_ts

# The bot's own gates (its trace evaluation script): name, threshold, comparison.
GATES = (
    ("success_rate", 0.75, ">="),
    ("retry_rate", 0.50, "<="),
    ("longest_success_run", 20, ">="),
    ("feature_families", len(FAMILIES), ">="),
)


def _gate_rows() -> str:
    values = {
        "success_rate": "g.success_rate",
        "retry_rate": "g.retry_rate",
        "longest_success_run": "coalesce(r.longest, 0)",
        "feature_families": "coalesce(f.covered, 0)",
    }
    rows = ", ".join(
        f"{{'gate': '{name}', 'value': CAST({values[name]} AS DOUBLE), 'threshold': CAST({threshold} AS DOUBLE), "
        f"'comparison': '{comparison}'}}"
        for name, threshold, comparison in GATES
    )
    return f"unnest([{rows}])"


DDL = f"""
CREATE TABLE IF NOT EXISTS ec4x_orders (
    source_id BIGINT NOT NULL,
    seq       BIGINT NOT NULL,      -- 1-based line number
    game_id   VARCHAR,              -- from the file name: <game_id>.orders.jsonl
    turn      BIGINT,
    house_id  BIGINT,
    families  VARCHAR[],            -- feature families the draft uses (families.py)
    payload   JSON,                 -- the draft as written
    valid     BOOLEAN NOT NULL      -- no error violation on the line
);
CREATE TABLE IF NOT EXISTS ec4x_sessions (
    source_id   BIGINT NOT NULL,
    seq         BIGINT NOT NULL,
    kind        VARCHAR,            -- session_start, or a kind the bot is not known to write
    game_id     VARCHAR,
    ts          TIMESTAMP,          -- UTC
    model       VARCHAR,
    max_retries BIGINT,
    record      JSON,
    valid       BOOLEAN NOT NULL
);
CREATE TABLE IF NOT EXISTS ec4x_turns (
    source_id          BIGINT NOT NULL,
    seq                BIGINT NOT NULL,
    game_id            VARCHAR,
    ts                 TIMESTAMP,   -- UTC (the bot writes local time with its offset)
    turn               BIGINT,
    ok                 BOOLEAN,
    error_class        VARCHAR,
    attempts           BIGINT,
    errors             VARCHAR[],
    feature_tags       VARCHAR[],
    failed_stages      VARCHAR[],   -- trace[].stage, one per failed attempt
    llm_ms             DOUBLE,      -- sum of trace[].llmRequestMs (the trace times failed attempts only)
    llm_response_bytes BIGINT,      -- sum of trace[].llmResponseBytes
    trace              JSON,
    model              VARCHAR,     -- from the latest session_start before the line
    valid              BOOLEAN NOT NULL
);
CREATE OR REPLACE VIEW ec4x_quality_gates AS
WITH turns AS (
    SELECT game_id, coalesce(model, '(no session_start)') AS model, source_id, seq,
           coalesce(ok, false) AS ok, coalesce(attempts, 1) > 1 AS retried, feature_tags
    FROM ec4x_turns
),
islands AS (
    SELECT game_id, model, ok,
           row_number() OVER (PARTITION BY game_id, model ORDER BY source_id, seq)
         - row_number() OVER (PARTITION BY game_id, model, ok ORDER BY source_id, seq) AS island
    FROM turns
),
runs AS (
    SELECT game_id, model, max(n) AS longest
    FROM (SELECT game_id, model, island, count(*) AS n FROM islands WHERE ok GROUP BY ALL)
    GROUP BY ALL
),
families AS (
    SELECT game_id, model, count(DISTINCT family) AS covered
    FROM (SELECT game_id, model, {tag_family_sql('tag')} AS family FROM turns, unnest(feature_tags) AS u(tag))
    WHERE family IS NOT NULL
    GROUP BY ALL
),
games AS (
    SELECT game_id, model, count(*) AS turns, avg(CAST(ok AS INTEGER)) AS success_rate,
           avg(CAST(retried AS INTEGER)) AS retry_rate
    FROM turns GROUP BY ALL
),
gates AS (
    SELECT g.game_id, g.model, g.turns, {_gate_rows()} AS gate
    FROM games g LEFT JOIN runs r USING (game_id, model) LEFT JOIN families f USING (game_id, model)
)
SELECT game_id, model, turns, gate.gate AS gate, gate.value AS value, gate.threshold AS threshold,
       gate.comparison AS comparison,
       CASE gate.comparison WHEN '>=' THEN gate.value >= gate.threshold ELSE gate.value <= gate.threshold END AS passed
FROM gates;
"""

INSERT_ORDERS = f"""
INSERT INTO ec4x_orders
SELECT $source_id, seq, $game_id, {json_int("j->'turn'")}, {json_int("j->'houseId'")},
       {draft_families_sql()}, j, valid
FROM (SELECT seq, valid, TRY_CAST(raw AS JSON) AS j FROM ec4x_lines)
WHERE json_type(j) = 'OBJECT'
"""

INSERT_SESSIONS = f"""
INSERT INTO ec4x_sessions
SELECT $source_id, seq, coalesce({json_str("j->'kind'")}, CAST(j->'kind' AS VARCHAR)),
       {json_str("j->'gameId'")}, {json_ts("j->'timestamp'")}, {json_str("j->'model'")},
       {json_int("j->'maxRetries'")}, j, valid
FROM (SELECT seq, valid, TRY_CAST(raw AS JSON) AS j FROM ec4x_lines)
WHERE json_type(j) = 'OBJECT' AND json_exists(j, '$.kind')
"""

INSERT_TURNS = f"""
INSERT INTO ec4x_turns
SELECT $source_id, t.seq, {json_str("j->'gameId'")}, {json_ts("j->'timestamp'")}, {json_int("j->'turn'")},
       {json_bool("j->'ok'")}, {json_str("j->'errorClass'")}, {json_int("j->'attempts'")},
       {json_list("j->'errors'", "VARCHAR")}, {json_list("j->'featureTags'", "VARCHAR")},
       json_extract_string(j, '$.trace[*].stage'),
       list_sum(TRY_CAST(json_extract(j, '$.trace[*].llmRequestMs') AS DOUBLE[])),
       list_sum(TRY_CAST(json_extract(j, '$.trace[*].llmResponseBytes') AS BIGINT[])),
       j->'trace', s.model, t.valid
FROM (SELECT seq, valid, TRY_CAST(raw AS JSON) AS j FROM ec4x_lines) t
ASOF LEFT JOIN (SELECT seq, model FROM ec4x_sessions WHERE source_id = $source_id AND kind = 'session_start') s
  ON t.seq > s.seq
WHERE json_type(j) = 'OBJECT' AND NOT json_exists(j, '$.kind')
"""

ORDER_DECISIONS = """
INSERT INTO decisions
SELECT source_id, 'ec4x', game_id, turn, 'house ' || house_id, NULL,
       coalesce(nullif(array_to_string(families, ' '), ''), '(empty draft)'), valid, NULL, NULL, 'line ' || seq
FROM ec4x_orders WHERE source_id = $source_id
"""

# One decision per turn: valid when the bot's turn succeeded; the action says how.
TURN_DECISIONS = """
INSERT INTO decisions
SELECT source_id, 'ec4x', game_id, turn, NULL, model,
       coalesce(error_class, '?') || ' (attempts ' || coalesce(CAST(attempts AS VARCHAR), '?') || ')'
         || CASE WHEN len(feature_tags) > 0 THEN ': ' || array_to_string(feature_tags, ' ') ELSE '' END,
       coalesce(ok, false), llm_ms, NULL, 'line ' || seq
FROM ec4x_turns WHERE source_id = $source_id
"""

OTHER_KINDS = """
SELECT kind, count(*), min(seq) FROM ec4x_sessions
WHERE source_id = $source_id AND kind IS DISTINCT FROM 'session_start' GROUP BY kind ORDER BY 3
"""

UNMAPPED_TAGS = f"""
SELECT tag, count(DISTINCT seq), min(seq)
FROM (SELECT seq, unnest(feature_tags) AS tag FROM ec4x_turns WHERE source_id = $source_id)
WHERE ({tag_family_sql('tag')}) IS NULL
GROUP BY tag ORDER BY 3
"""

GATES_QUERY = "SELECT * FROM ec4x_quality_gates ORDER BY game_id, model, gate"


def insert(con: duckdb.DuckDBPyConnection, statements: list[str], lines: pa.Table, params: dict) -> int:
    """Run the INSERT statements over a batch of (seq, raw, valid) lines; returns the rows added."""
    # The statements read `ec4x_lines` by name: a DuckDB replacement scan, which unlike
    # register() does not pin the batch in memory until the file's transaction ends.
    ec4x_lines = lines  # noqa: F841
    added = 0
    for sql in statements:
        added += con.execute(sql, params).fetchall()[0][0]
    return added
