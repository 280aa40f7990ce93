"""The Agent Arena tables, declared once, the error-rate view, and the SQL that fills them.

Every line that is a JSON object becomes a row of `arena_decisions` (decision logs) or
`arena_traces` (reasoning traces), valid or not; typed columns are NULL where the value
has the wrong JSON type. A decision's outcome is its own `result`, or else the
`last_action_result` the same agent reports on its next line (the next observation
carries the previous action's result). Each step of a trace is a row of
`arena_trace_steps`, carrying its record's agent, episode and tick, the keys a trace
joins its decision on.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from workbench.arena.models import (
    ERROR_CODES,
    RUNTIME_TARGET,
    STEP_STAMPS,
    ActionResult,
    Decision,
    TraceRecord,
    TraceStep,
)
from workbench.catalog import DECISIONS
from workbench.schema import Column, Table, once, run_on

ARENA_DECISIONS = Table(
    "arena_decisions",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("seq", "BIGINT", "1-based line number", required=True),
        Column("episode", "VARCHAR", "from the file name: `<episode>.decisions.jsonl`"),
        Column("agent_id", "VARCHAR", "the agent that decided (`agent_id`)", path="agent_id"),
        Column("tick", "BIGINT", "the simulation tick it decided at (`tick`)", path="tick"),
        Column("tool", "VARCHAR", "the tool it called (`tool`): move_to, collect, craft, ...", path="tool"),
        Column("params", "JSON", "the tool's parameters as written (`params`)", path="params"),
        Column(
            "reasoning",
            "VARCHAR",
            "the agent's stated reasoning (`reasoning`); NULL where the line has none",
            path="reasoning",
        ),
        Column(
            "model", "VARCHAR", "the model behind the agent (`model`); NULL where the line names none", path="model"
        ),
        Column("result", "JSON", "the decision's own outcome object (`result`), where the line has one", path="result"),
        Column(
            "last_action_result",
            "JSON",
            "the outcome of the agent's previous decision, as this line reports it (`last_action_result`)",
            path="last_action_result",
        ),
        Column("success", "BOOLEAN", "outcome of this decision, where the log tells it"),
        Column(
            "error_code",
            "VARCHAR",
            "that outcome's `error_code` (OUT_OF_RANGE, NOT_FOUND, ...); NULL where it has none",
        ),
        Column("error_message", "VARCHAR", "that outcome's `error_message`"),
        Column("extra", "JSON", "top-level keys the log format does not list, and a tick beyond 64 bits as written"),
        Column("valid", "BOOLEAN", "no error violation on the line", required=True),
    ),
    doc="One row per line of a decision log (`*.decisions.jsonl`): an agent's tool call, valid or not, with its "
    "outcome: its own `result`, else the `last_action_result` the agent reports on its next line.",
    model=Decision,
)

ARENA_TRACES = Table(
    "arena_traces",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("seq", "BIGINT", "1-based line number", required=True),
        Column("agent_id", "VARCHAR", "the agent traced (`agent_id`)", path="agent_id"),
        Column(
            "episode_id",
            "VARCHAR",
            "the record's, else from the file name: `traces/<episode_id>.jsonl`",
            path="episode_id",
        ),
        Column("tick", "BIGINT", "the simulation tick traced (`tick`)", path="tick"),
        Column(
            "start_time", "TIMESTAMP", "when the tick's reasoning started (`start_time`), as UTC", path="start_time"
        ),
        Column("steps", "BIGINT", "how many steps the record holds"),
        Column("extra", "JSON", "top-level keys a trace record does not have"),
        Column("valid", "BOOLEAN", "no error violation on the line", required=True),
    ),
    doc="One row per reasoning-trace record: a traced tick of one agent.",
    model=TraceRecord,
)

ARENA_TRACE_STEPS = Table(
    "arena_trace_steps",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("seq", "BIGINT", "the record's line", required=True),
        Column("agent_id", "VARCHAR", "the record's `agent_id`"),
        Column("episode_id", "VARCHAR", "the record's `episode_id` (as `arena_traces.episode_id`)"),
        Column("tick", "BIGINT", "the record's `tick`"),
        Column(
            "step", "BIGINT", "position in the record's steps, from 0 as in a violation's `steps[N]`", required=True
        ),
        Column(
            "name",
            "VARCHAR",
            "the step's `name`: observation, retrieved, prompt, llm_request, response, decision",
            path="name",
        ),
        Column("ts", "TIMESTAMP", "the step's `timestamp`, as UTC", path="timestamp"),
        Column(
            "duration_ms",
            "DOUBLE",
            "milliseconds the step took (`duration_ms`); NULL where it was not measured",
            path="duration_ms",
        ),
        Column("data", "JSON", "the step's `data`, as written", path="data"),
        Column("defaulted", "VARCHAR[]", "agent_id, tick: keys the step leaves out and takes from its record"),
        Column("extra", "JSON", "keys a step does not have"),
    ),
    doc="One row per step of a reasoning trace, joinable to arena_decisions by agent, episode and tick.",
    model=TraceStep,
)

TABLES = (ARENA_DECISIONS, ARENA_TRACES, ARENA_TRACE_STEPS)

# Not stored: the keys of an outcome object (a decision's `result`, or the
# `last_action_result` its agent reports next), read into the decision's columns of
# the same names.
OUTCOME = Table(
    "arena_outcome",
    (
        Column("success", "BOOLEAN", path="success"),
        Column("error_code", "VARCHAR", path="error_code"),
        Column("error_message", "VARCHAR", path="error_message"),
    ),
    model=ActionResult,
)

DECISION_KEYS = list(Decision.model_fields)
# JSON merge-patch with nulls deletes the decision's own keys, leaving the extras.
_STRIP_KNOWN = "{" + ",".join(f'"{k}":null' for k in DECISION_KEYS) + "}"
_DOCUMENTED_CODES = ", ".join(f"'{code}'" for code in ERROR_CODES)
# A tick the BIGINT column cannot hold (beyond 64 bits: its line breaks the tick's rule)
# is kept in `extra` as written, not lost as a NULL.
_UNFIT_TICK = (
    "CASE WHEN json_type(j -> 'tick') IN ('UBIGINT', 'BIGINT', 'DOUBLE') "
    "AND TRY_CAST(j -> 'tick' AS BIGINT) IS NULL THEN json_object('tick', j -> 'tick') ELSE '{}' END"
)

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

# What each view holds, by its name.
VIEW_DOCS = {
    "arena_error_rates": "Tool failures per error code, over the decisions whose outcome is known: per model and "
    "tool, per model, per tool and over all (`(all models)`, `(all tools)`), with the "
    "failures, the outcomes they are out of, their rate, and whether the code is one the "
    "specification documents.",
}

# The batch of (seq, raw, valid) lines the insert reads.
LINES = "arena_lines"

INSERT_DECISIONS = ARENA_DECISIONS.insert(f"""
SELECT $source_id AS source_id, seq, $episode AS episode, {ARENA_DECISIONS.select_paths("j")},
       nullif(json_merge_patch(json_merge_patch(j, '{_STRIP_KNOWN}'), {_UNFIT_TICK}), '{{}}'::JSON) AS extra, valid
FROM (SELECT seq, valid, {once("TRY_CAST(raw AS JSON)")} AS j FROM {LINES})
WHERE json_type(j) = 'OBJECT'
""")


def _object(expr: str) -> str:
    return f"CASE WHEN json_type({expr}) = 'OBJECT' THEN {expr} END"


def _outcomes(rows: str) -> str:
    """UPDATE of the outcomes of the file's `rows` (a condition on arena_decisions): its
    own `result`, else the `last_action_result` of the agent's next decision (by tick,
    then line), which reports how the action went; NULL where neither is an object, so
    an outcome whose report went does not stay."""
    return f"""
UPDATE arena_decisions d
SET success = o.success, error_code = o.error_code, error_message = o.error_message
FROM (
    SELECT seq, {OUTCOME.select_paths("outcome")}
    FROM (SELECT seq, coalesce({_object("result")}, {_object("next_last")}) AS outcome
          FROM (SELECT seq, result,
                       lead(last_action_result) OVER (PARTITION BY agent_id ORDER BY tick, seq) AS next_last
                FROM arena_decisions WHERE source_id = $source_id AND ({rows})))
) o
WHERE d.source_id = $source_id AND d.seq = o.seq
"""


OUTCOMES = _outcomes("true")

# Whether the lines from `$first` on keep the order outcomes follow: no tick of the file
# is NULL (its row would sort apart), and each agent's rows from there come after its
# rows before (a tick no lower than any of theirs).
KEEPS_ORDER = """
SELECT sum(rows) = sum(ticks) AND coalesce(bool_and(coalesce(first_new >= last_before, true)), true)
FROM (SELECT count(*) AS rows, count(tick) AS ticks, min(tick) FILTER (WHERE seq >= $first) AS first_new,
             max(tick) FILTER (WHERE seq < $first) AS last_before
      FROM arena_decisions WHERE source_id = $source_id GROUP BY agent_id)
"""

# Then the only outcomes the lines from `$first` on can set or change are theirs and
# those of each agent's last decision before them (its next decision may be new).
OUTCOMES_FROM = _outcomes("""seq >= $first OR seq IN (
    SELECT arg_max(seq, (tick, seq)) FROM arena_decisions WHERE source_id = $source_id AND seq < $first
    GROUP BY agent_id)""")

# A decision is its own line's: those of the lines from `$first` on. Its game is the
# episode within its run (`paths.game_of_file`): two runs' `ep1` are two games.
DERIVE_DECISIONS = DECISIONS.insert("""
SELECT source_id, 'arena' AS format, $game_id AS game_id, tick AS turn, agent_id, model, tool AS action, valid,
       'line ' || seq AS locator
FROM arena_decisions WHERE source_id = $source_id AND seq >= $first
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


TRACE_KEYS = list(TraceRecord.model_fields)
STEP_KEYS = list(TraceStep.model_fields)
_STRIP_TRACE_KEYS = "{" + ",".join(f'"{k}":null' for k in TRACE_KEYS) + "}"
_STRIP_STEP_KEYS = "{" + ",".join(f'"{k}":null' for k in STEP_KEYS) + "}"


def _extra(expr: str, strip: str) -> str:
    """The keys of the JSON object `expr` that `strip` (a merge patch of nulls) does not delete."""
    return f"CASE WHEN json_type({expr}) = 'OBJECT' THEN nullif(json_merge_patch({expr}, '{strip}'), '{{}}'::JSON) END"


_EPISODE = ARENA_TRACES.column("episode_id")
INSERT_TRACES = ARENA_TRACES.insert(f"""
SELECT $source_id AS source_id, seq, {ARENA_TRACES.select_paths("j", ["agent_id", "tick", "start_time"])},
       coalesce({_EPISODE.read_from("j")}, $episode) AS episode_id,
       CASE WHEN json_type(j, '$.steps') = 'ARRAY' THEN json_array_length(j, '$.steps') END AS steps,
       {_extra("j", _STRIP_TRACE_KEYS)} AS extra, valid
FROM (SELECT seq, valid, {once("TRY_CAST(raw AS JSON)")} AS j FROM {LINES})
WHERE json_type(j) = 'OBJECT'
""")

# A stamp written as null is left out too: the step model takes None for it.
_LEFT_OUT = ", ".join(
    f"CASE WHEN coalesce(json_type(s, '$.{key}'), 'NULL') = 'NULL' THEN '{key}' END" for key in STEP_STAMPS
)
INSERT_TRACE_STEPS = ARENA_TRACE_STEPS.insert(f"""
SELECT $source_id AS source_id, seq, t.agent_id, t.episode_id, t.tick, step, {ARENA_TRACE_STEPS.select_paths("s")},
       CASE WHEN json_type(s) = 'OBJECT' THEN list_filter([{_LEFT_OUT}], lambda k: k IS NOT NULL) END AS defaulted,
       {_extra("s", _STRIP_STEP_KEYS)} AS extra
FROM (SELECT seq, unnest(steps) AS s, unnest(range(len(steps))) AS step
      FROM (SELECT seq, json_extract(j, '$.steps[*]') AS steps
            FROM (SELECT seq, {once("TRY_CAST(raw AS JSON)")} AS j FROM {LINES})
            WHERE json_type(j) = 'OBJECT' AND json_type(j, '$.steps') = 'ARRAY'))
JOIN arena_traces t USING (seq)
WHERE t.source_id = $source_id
""")

EPISODE_MISMATCH = """
SELECT count(*), min(seq), any_value(episode_id ORDER BY seq) FROM arena_traces
WHERE source_id = $source_id AND episode_id <> $episode
"""

DEFAULTED_STAMPS = """
SELECT count(*), min(seq), arg_min(step, (seq, step)), arg_min(defaulted, (seq, step)) FROM arena_trace_steps
WHERE source_id = $source_id AND len(defaulted) > 0
"""

TRACE_EXTRA_KEYS = """
SELECT k, count(*), min(seq)
FROM (SELECT seq, unnest(json_keys(extra)) AS k FROM arena_traces WHERE source_id = $source_id AND extra IS NOT NULL)
GROUP BY k ORDER BY 3, 1
"""

STEP_EXTRA_KEYS = """
SELECT k, count(DISTINCT seq), min(seq), arg_min(step, (seq, step))
FROM (SELECT seq, step, unnest(json_keys(extra)) AS k FROM arena_trace_steps
      WHERE source_id = $source_id AND extra IS NOT NULL)
GROUP BY k ORDER BY 3, 1
"""


def insert_traces(con: duckdb.DuckDBPyConnection, lines: pa.Table, params: dict) -> int:
    """Insert a batch of (seq, raw, valid) trace lines and their steps; returns the records added."""
    records = run_on(con, lines, INSERT_TRACES, LINES, params)[0][0]
    run_on(con, lines, INSERT_TRACE_STEPS, LINES, {"source_id": params["source_id"]})
    return records


def insert(con: duckdb.DuckDBPyConnection, lines: pa.Table, params: dict) -> int:
    """Insert a batch of (seq, raw, valid) lines; returns the rows added."""
    return run_on(con, lines, INSERT_DECISIONS, LINES, params)[0][0]


def derive(con: duckdb.DuckDBPyConnection, source_id: int, first: int, whole: bool, game_id: str) -> None:
    """The outcomes of the file's rows and the decisions of its lines from `first` on, of
    the game `game_id`.
    `whole`: the outcomes are derived over every row of the file again, as they must be
    when the lines read broke the order they follow (or rows of earlier lines went)."""
    params = {"source_id": source_id, "first": first}
    if whole or not con.execute(KEEPS_ORDER, params).fetchall()[0][0]:
        con.execute(OUTCOMES, {"source_id": source_id}).fetchall()
    else:
        con.execute(OUTCOMES_FROM, params).fetchall()
    con.execute(DERIVE_DECISIONS, {"source_id": source_id, "first": first, "game_id": game_id})
