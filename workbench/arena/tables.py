"""The Agent Arena table, its error-rate view, and the SQL that fills them.

Every line that is a JSON object becomes a row of `arena_decisions`, valid or not;
typed columns are NULL where the value has the wrong JSON type. A decision's outcome is
its own `result`, or else the `last_action_result` the same agent reports on its next
line (the next observation carries the previous action's result).
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from workbench.arena.models import ERROR_CODES, Decision
from workbench.sqljson import json_bool, json_int, json_object, json_str


DECISION_KEYS = list(Decision.model_fields)
# JSON merge-patch with nulls deletes the decision's own keys, leaving the extras.
_STRIP_KNOWN = "{" + ",".join(f'"{k}":null' for k in DECISION_KEYS) + "}"
_DOCUMENTED_CODES = ", ".join(f"'{code}'" for code in ERROR_CODES)

DDL = f"""
CREATE TABLE IF NOT EXISTS arena_decisions (
    source_id          BIGINT NOT NULL,
    seq                BIGINT NOT NULL,   -- 1-based line number
    episode            VARCHAR,           -- from the file name: <episode>.decisions.jsonl
    agent_id           VARCHAR,
    tick               BIGINT,
    tool               VARCHAR,
    params             JSON,
    reasoning          VARCHAR,
    model              VARCHAR,
    result             JSON,
    last_action_result JSON,
    success            BOOLEAN,           -- outcome of this decision, where the log tells it
    error_code         VARCHAR,
    error_message      VARCHAR,
    extra              JSON,              -- top-level keys the log format does not list
    valid              BOOLEAN NOT NULL   -- no error violation on the line
);
CREATE OR REPLACE VIEW arena_error_rates AS
WITH outcomes AS (
    SELECT coalesce(model, '(unknown model)') AS model, coalesce(tool, '(no tool)') AS tool, success,
           coalesce(error_code, '(no code)') AS error_code
    FROM arena_decisions WHERE success IS NOT NULL
),
totals AS (
    SELECT coalesce(model, '(all models)') AS model, coalesce(tool, '(all tools)') AS tool, count(*) AS outcomes
    FROM outcomes GROUP BY GROUPING SETS ((model, tool), (model), (tool), ())
),
failures AS (
    SELECT coalesce(model, '(all models)') AS model, coalesce(tool, '(all tools)') AS tool, error_code,
           count(*) AS failures
    FROM outcomes WHERE NOT success
    GROUP BY GROUPING SETS ((model, tool, error_code), (model, error_code), (tool, error_code), (error_code))
)
SELECT model, tool, error_code, error_code IN ({_DOCUMENTED_CODES}) AS documented, failures, outcomes,
       failures / outcomes AS rate
FROM failures JOIN totals USING (model, tool);
"""

INSERT_DECISIONS = f"""
INSERT INTO arena_decisions
SELECT $source_id, seq, $episode, {json_str("j->'agent_id'")}, {json_int("j->'tick'")}, {json_str("j->'tool'")},
       j->'params', {json_str("j->'reasoning'")}, {json_str("j->'model'")}, j->'result', j->'last_action_result',
       NULL, NULL, NULL, nullif(json_merge_patch(j, '{_STRIP_KNOWN}'), '{{}}'::JSON), valid
FROM (SELECT seq, valid, TRY_CAST(raw AS JSON) AS j FROM arena_lines)
WHERE json_type(j) = 'OBJECT'
"""

OUTCOMES = f"""
UPDATE arena_decisions d
SET success = {json_bool("o.outcome->'success'")},
    error_code = {json_str("o.outcome->'error_code'")},
    error_message = {json_str("o.outcome->'error_message'")}
FROM (
    SELECT seq, coalesce({json_object('result')}, {json_object('next_last')}) AS outcome
    FROM (SELECT seq, result,
                 lead(last_action_result) OVER (PARTITION BY agent_id ORDER BY tick, seq) AS next_last
          FROM arena_decisions WHERE source_id = $source_id)
) o
WHERE d.source_id = $source_id AND d.seq = o.seq AND o.outcome IS NOT NULL
"""

DECISIONS = """
INSERT INTO decisions
SELECT source_id, 'arena', episode, tick, agent_id, model, tool, valid, NULL, NULL, 'line ' || seq
FROM arena_decisions WHERE source_id = $source_id
"""

RUNTIME_TARGETS = """
SELECT count(*), min(seq) FROM arena_decisions
WHERE source_id = $source_id AND tool = 'move_to' AND json_exists(params, '$.target_position')
"""

UNDOCUMENTED_CODES = f"""
SELECT key, code, count(*), min(seq)
FROM (SELECT seq, 'result' AS key, result->>'error_code' AS code FROM arena_decisions WHERE source_id = $source_id
      UNION ALL
      SELECT seq, 'last_action_result', last_action_result->>'error_code' FROM arena_decisions
      WHERE source_id = $source_id)
WHERE code IS NOT NULL AND code NOT IN ({_DOCUMENTED_CODES})
GROUP BY ALL ORDER BY 4
"""

EXTRA_KEYS = """
SELECT k, count(*), min(seq)
FROM (SELECT seq, unnest(json_keys(extra)) AS k FROM arena_decisions WHERE source_id = $source_id AND extra IS NOT NULL)
GROUP BY k ORDER BY 3
"""

HEADLINE = """
SELECT count(*), count(*) FILTER (valid), count(DISTINCT agent_id), count(DISTINCT model) FROM arena_decisions
"""
RATES = """
SELECT error_code, failures, outcomes, rate FROM arena_error_rates
WHERE model = '(all models)' AND tool = '(all tools)' ORDER BY failures DESC, error_code
"""


def insert(con: duckdb.DuckDBPyConnection, lines: pa.Table, params: dict) -> int:
    """Insert a batch of (seq, raw, valid) lines; returns the rows added."""
    # INSERT_DECISIONS reads `arena_lines` by name: a DuckDB replacement scan, which unlike
    # register() does not pin the batch in memory until the file's transaction ends.
    arena_lines = lines  # noqa: F841
    return con.execute(INSERT_DECISIONS, params).fetchall()[0][0]


def forget_outcomes(con, source_id: int) -> None:
    """Outcomes are derived again over all the file's rows when it grew."""
    con.execute("UPDATE arena_decisions SET success = NULL, error_code = NULL, error_message = NULL "
                "WHERE source_id = $source_id AND success IS NOT NULL", {"source_id": source_id})


def derive(con, source_id: int) -> None:
    """Outcomes and decisions of the file's rows."""
    con.execute(OUTCOMES, {"source_id": source_id})
    con.execute(DECISIONS, {"source_id": source_id})
