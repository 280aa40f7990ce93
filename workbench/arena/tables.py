"""The Agent Arena table, declared once, its error-rate view, and the SQL that fills them.

Every line that is a JSON object becomes a row of `arena_decisions`, valid or not;
typed columns are NULL where the value has the wrong JSON type. A decision's outcome is
its own `result`, or else the `last_action_result` the same agent reports on its next
line (the next observation carries the previous action's result).
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from workbench.arena.models import ERROR_CODES, RUNTIME_TARGET, ActionResult, Decision
from workbench.catalog import DECISIONS
from workbench.schema import Column, Table, run_on

ARENA_DECISIONS = Table("arena_decisions", (
    Column("source_id", "BIGINT", required=True),
    Column("seq", "BIGINT", "1-based line number", required=True),
    Column("episode", "VARCHAR", "from the file name: <episode>.decisions.jsonl"),
    Column("agent_id", "VARCHAR", path="agent_id"),
    Column("tick", "BIGINT", path="tick"),
    Column("tool", "VARCHAR", path="tool"),
    Column("params", "JSON", path="params"),
    Column("reasoning", "VARCHAR", path="reasoning"),
    Column("model", "VARCHAR", path="model"),
    Column("result", "JSON", path="result"),
    Column("last_action_result", "JSON", path="last_action_result"),
    Column("success", "BOOLEAN", "outcome of this decision, where the log tells it"),
    Column("error_code", "VARCHAR"),
    Column("error_message", "VARCHAR"),
    Column("extra", "JSON", "top-level keys the log format does not list"),
    Column("valid", "BOOLEAN", "no error violation on the line", required=True),
), model=Decision)
TABLES = (ARENA_DECISIONS,)

# Not stored: the keys of an outcome object (a decision's `result`, or the
# `last_action_result` its agent reports next), read into the decision's columns of
# the same names.
OUTCOME = Table("arena_outcome", (
    Column("success", "BOOLEAN", path="success"),
    Column("error_code", "VARCHAR", path="error_code"),
    Column("error_message", "VARCHAR", path="error_message"),
), model=ActionResult)

DECISION_KEYS = list(Decision.model_fields)
# JSON merge-patch with nulls deletes the decision's own keys, leaving the extras.
_STRIP_KNOWN = "{" + ",".join(f'"{k}":null' for k in DECISION_KEYS) + "}"
_DOCUMENTED_CODES = ", ".join(f"'{code}'" for code in ERROR_CODES)

VIEWS = f"""
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

# The batch of (seq, raw, valid) lines the insert reads.
LINES = "arena_lines"

INSERT_DECISIONS = ARENA_DECISIONS.insert(f"""
SELECT $source_id AS source_id, seq, $episode AS episode, {ARENA_DECISIONS.select_paths("j")},
       nullif(json_merge_patch(j, '{_STRIP_KNOWN}'), '{{}}'::JSON) AS extra, valid
FROM (SELECT seq, valid, TRY_CAST(raw AS JSON) AS j FROM {LINES})
WHERE json_type(j) = 'OBJECT'
""")


def _object(expr: str) -> str:
    return f"CASE WHEN json_type({expr}) = 'OBJECT' THEN {expr} END"


OUTCOMES = f"""
UPDATE arena_decisions d
SET success = o.success, error_code = o.error_code, error_message = o.error_message
FROM (
    SELECT seq, {OUTCOME.select_paths("outcome")}
    FROM (SELECT seq, coalesce({_object('result')}, {_object('next_last')}) AS outcome
          FROM (SELECT seq, result,
                       lead(last_action_result) OVER (PARTITION BY agent_id ORDER BY tick, seq) AS next_last
                FROM arena_decisions WHERE source_id = $source_id))
    WHERE outcome IS NOT NULL
) o
WHERE d.source_id = $source_id AND d.seq = o.seq
"""

DERIVE_DECISIONS = DECISIONS.insert("""
SELECT source_id, 'arena' AS format, episode AS game_id, tick AS turn, agent_id, model, tool AS action, valid,
       'line ' || seq AS locator
FROM arena_decisions WHERE source_id = $source_id
""")

RUNTIME_TARGETS = f"""
SELECT count(*), min(seq) FROM arena_decisions
WHERE source_id = $source_id AND tool = 'move_to' AND json_exists(params, '$.{RUNTIME_TARGET}')
"""

_CODE = OUTCOME.column("error_code").path  # any JSON value's text, as drift reports it
UNDOCUMENTED_CODES = f"""
SELECT key, code, count(*), min(seq)
FROM (SELECT seq, 'result' AS key, result->>'{_CODE}' AS code FROM arena_decisions WHERE source_id = $source_id
      UNION ALL
      SELECT seq, 'last_action_result', last_action_result->>'{_CODE}' FROM arena_decisions
      WHERE source_id = $source_id)
WHERE code IS NOT NULL AND code NOT IN ({_DOCUMENTED_CODES})
GROUP BY ALL ORDER BY 4
"""

EXTRA_KEYS = """
SELECT k, count(*), min(seq)
FROM (SELECT seq, unnest(json_keys(extra)) AS k FROM arena_decisions WHERE source_id = $source_id AND extra IS NOT NULL)
GROUP BY k ORDER BY 3
"""


def insert(con: duckdb.DuckDBPyConnection, lines: pa.Table, params: dict) -> int:
    """Insert a batch of (seq, raw, valid) lines; returns the rows added."""
    return run_on(con, lines, INSERT_DECISIONS, LINES, params).fetchall()[0][0]


def forget_outcomes(con, source_id: int) -> None:
    """Outcomes are derived again over all the file's rows when it grew."""
    con.execute("UPDATE arena_decisions SET success = NULL, error_code = NULL, error_message = NULL "
                "WHERE source_id = $source_id AND success IS NOT NULL", {"source_id": source_id})


def derive(con, source_id: int) -> None:
    """Outcomes and decisions of the file's rows."""
    con.execute(OUTCOMES, {"source_id": source_id})
    con.execute(DERIVE_DECISIONS, {"source_id": source_id})
