"""What is asked of the Agent Arena tables: the demo-summary lines (decision validity,
tool error rates, how much of the decisions' reasoning was traced), and the way from a
decision back to the reasoning behind it: decisions joined to their reasoning traces by
agent, episode and tick, and the time each step of the pipeline takes.

A decision's episode is its log's name (`<episode>.decisions.jsonl`); a trace's is its
record's `episode_id` (the runtime names the file after it). Where one tick was traced
twice (the runtime opens an episode's file for appending, so a rerun adds records), the
last record read is the one shown.
"""

from __future__ import annotations

import duckdb
import polars as pl

from workbench.arena.models import TRACE_STEP_NAMES
from workbench.connection import query_frame
from workbench.errors import WorkbenchError

# --- the demo summary ----------------------------------------------------------------

DECISION_COUNTS = """
SELECT count(*), count(*) FILTER (valid), count(DISTINCT agent_id), count(DISTINCT model) FROM arena_decisions
"""
ERROR_RATES = """
SELECT error_code, failures, outcomes, rate FROM arena_error_rates
WHERE model = '(all models)' AND tool = '(all tools)' ORDER BY failures DESC, error_code
"""
TRACE_COVERAGE = """
SELECT (SELECT count(*) FROM arena_traces), (SELECT count(*) FROM arena_trace_steps),
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM arena_traces t WHERE t.agent_id = d.agent_id
                                      AND t.episode_id = d.episode AND t.tick = d.tick)),
       count(*)
FROM arena_decisions d
"""


def summary(con: duckdb.DuckDBPyConnection) -> list[str]:
    return _decision_lines(con) + _trace_lines(con)


def _decision_lines(con: duckdb.DuckDBPyConnection) -> list[str]:
    [(decisions, valid, agents, models)] = con.execute(DECISION_COUNTS).fetchall()
    if not decisions:
        return []
    lines = [
        f"arena decisions: {decisions} from {agents} agents, {models} models ({valid} valid, {valid / decisions:.1%})"
    ]
    rates = con.execute(ERROR_RATES).fetchall()
    if rates:
        shown = ", ".join(f"{code} {rate:.1%}" for code, _, _, rate in rates)
        lines.append(f"arena tool failures by error code (of {rates[0][2]} known outcomes): {shown}")
    return lines


def _trace_lines(con: duckdb.DuckDBPyConnection) -> list[str]:
    [(records, steps, traced, decisions)] = con.execute(TRACE_COVERAGE).fetchall()
    if not records:
        return []
    share = f"; {traced} of {decisions} decisions have one ({traced / decisions:.1%})" if decisions else ""
    return [f"arena reasoning traces: {records} records, {steps} steps{share}"]


# --- from a decision to its reasoning -------------------------------------------------

# The drill-down's column for each of the runtime's steps: its `data` (the last such
# step of the trace). The trace's own decision step is named apart from the logged one.
STEP_COLUMNS = {name: ("traced_decision" if name == "decision" else name) for name in TRACE_STEP_NAMES}

_NAMES = "[" + ", ".join(f"'{name}'" for name in TRACE_STEP_NAMES) + "]"
# Steps in pipeline order, then other names alphabetically.
PIPELINE_ORDER = f"coalesce(list_position({_NAMES}, name), {len(TRACE_STEP_NAMES) + 1}), name"

LATEST_TRACES = """
SELECT t.*, s.path AS trace_file FROM arena_traces t JOIN sources s USING (source_id)
WHERE t.agent_id IS NOT NULL AND t.tick IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY t.agent_id, t.episode_id, t.tick ORDER BY t.source_id DESC, t.seq DESC) = 1
"""

_STEP_DATA = ",\n       ".join(
    f"arg_max(data, step) FILTER (WHERE name = '{name}') AS {column}" for name, column in STEP_COLUMNS.items()
)
STEPS_PER_TRACE = f"""
SELECT source_id, seq,
       list({{'name': name, 'duration_ms': duration_ms}} ORDER BY step) AS step_ms,
       sum(duration_ms) AS trace_ms,
       {_STEP_DATA}
FROM arena_trace_steps GROUP BY source_id, seq
"""

DECISION_VIOLATIONS = """
SELECT source_id, line, list(severity || ' ' || rule || ' at ' || field || ': ' || message ORDER BY field, rule, message) AS violations
FROM violation_lines WHERE line IS NOT NULL GROUP BY source_id, line
"""

DRILLDOWN = f"""
SELECT d.agent_id, d.episode AS episode_id, d.tick, d.model, d.tool, d.params, d.reasoning, d.valid,
       coalesce(v.violations, []) AS violations, d.success, d.error_code,
       src.path AS decision_file, 'line ' || d.seq AS locator,
       t.seq IS NOT NULL AS traced, t.trace_file, 'line ' || t.seq AS trace_locator,
       {", ".join(f"p.{column}" for column in STEP_COLUMNS.values())},
       p.step_ms, p.trace_ms
FROM arena_decisions d
JOIN sources src USING (source_id)
LEFT JOIN ({DECISION_VIOLATIONS}) v ON v.source_id = d.source_id AND v.line = d.seq
LEFT JOIN ({LATEST_TRACES}) t ON t.agent_id = d.agent_id AND t.episode_id = d.episode AND t.tick = d.tick
LEFT JOIN ({STEPS_PER_TRACE}) p ON p.source_id = t.source_id AND p.seq = t.seq
WHERE ($agent_id IS NULL OR d.agent_id = $agent_id)
  AND ($episode_id IS NULL OR d.episode = $episode_id)
  AND ($tick IS NULL OR d.tick = $tick)
ORDER BY d.episode, d.tick, d.agent_id, d.source_id, d.seq
"""

# A step's model: its decision's (the log names it), else the one its trace asked
# (`llm_request`'s data.model), else its agent.
STEP_TIMES = f"""
WITH decided AS (
    SELECT agent_id, episode AS episode_id, tick, min(model) AS model FROM arena_decisions
    WHERE model IS NOT NULL GROUP BY ALL
),
requested AS (
    SELECT source_id, seq, min(data->>'model') AS model FROM arena_trace_steps
    WHERE name = 'llm_request' AND data->>'model' IS NOT NULL GROUP BY ALL
),
steps AS (
    SELECT s.name, s.duration_ms,
           coalesce(d.model, r.model, s.agent_id, '(unknown)') AS model,
           CASE WHEN d.model IS NOT NULL THEN 'decisions' WHEN r.model IS NOT NULL THEN 'trace' ELSE 'agent' END
               AS model_from
    FROM arena_trace_steps s
    LEFT JOIN decided d USING (agent_id, episode_id, tick)
    LEFT JOIN requested r USING (source_id, seq)
    WHERE s.name IS NOT NULL
)
SELECT name, model, string_agg(DISTINCT model_from, ', ' ORDER BY model_from) AS model_from,
       count(*) AS steps, count(duration_ms) AS timed,
       quantile_cont(duration_ms, 0.5) AS p50_ms, quantile_cont(duration_ms, 0.95) AS p95_ms
FROM steps GROUP BY name, model
ORDER BY {PIPELINE_ORDER}, model
"""

DECIDED_TICKS = """
SELECT agent_id, episode AS episode_id, tick, bool_and(valid) AS decision_valid, min(seq) AS decision_line
FROM arena_decisions WHERE agent_id IS NOT NULL AND tick IS NOT NULL GROUP BY ALL
"""

TRACED_TICKS = f"""
SELECT t.agent_id, t.episode_id, t.tick, t.steps,
       list(s.name ORDER BY s.step) FILTER (WHERE s.name IS NOT NULL) AS names,
       sum(s.duration_ms) AS trace_ms,
       coalesce(bool_or(s.name = 'decision'), false) AS has_decision_step,
       t.valid AS trace_valid, t.trace_file, 'line ' || t.seq AS trace_locator,
       d.decision_line, d.decision_valid
FROM ({LATEST_TRACES}) t
LEFT JOIN arena_trace_steps s ON s.source_id = t.source_id AND s.seq = t.seq
LEFT JOIN ({DECIDED_TICKS}) d ON d.agent_id = t.agent_id AND d.episode_id = t.episode_id AND d.tick = t.tick
WHERE ($agent_id IS NULL OR t.agent_id = $agent_id) AND ($episode_id IS NULL OR t.episode_id = $episode_id)
GROUP BY ALL
ORDER BY t.episode_id, t.tick, t.agent_id
"""


def decision_drilldown(
    con: duckdb.DuckDBPyConnection, agent_id: str | None = None, episode_id: str | None = None, tick: int | None = None
) -> pl.DataFrame:
    """Each Agent Arena decision (of `agent_id`, `episode_id`, `tick` when given): valid or
    not, its tool, params and violations, and, when its tick was traced, the data of each
    of the runtime's steps (observation, retrieved, prompt, llm_request, response, the
    traced decision) and the time spent in each step (`step_ms`, in order; `trace_ms`,
    their sum). `traced` is false where the agent ran with tracing off."""
    return _frame(con, DRILLDOWN, {"agent_id": agent_id, "episode_id": episode_id, "tick": tick})


def step_times(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per step name and model: how many steps, how many timed (`duration_ms` is
    optional), and the median and 95th percentile of their duration_ms. Percentiles
    interpolate linearly between the two nearest ranks (DuckDB's quantile_cont: the
    (n-1)·p rank; statistics.quantiles' `inclusive` method). `model_from` says where the
    model was found: `decisions`, the `trace`'s llm_request, or `agent` when neither
    (several, comma-separated, when the steps of one model were found in several ways)."""
    return _frame(con, STEP_TIMES, {})


def traced_ticks(
    con: duckdb.DuckDBPyConnection, agent_id: str | None = None, episode_id: str | None = None
) -> pl.DataFrame:
    """The (agent, episode, tick) that have a trace, to jump to one: its step names in
    order, total time, whether it reached a decision step (a tick whose LLM call failed
    has none), and the decision logged for that tick (`decision_line`, NULL if none)."""
    return _frame(con, TRACED_TICKS, {"agent_id": agent_id, "episode_id": episode_id})


def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: dict) -> pl.DataFrame:
    try:
        return query_frame(con, sql, params)
    except duckdb.CatalogException:
        raise WorkbenchError(
            "this database has no Agent Arena trace tables; ingest Agent Arena logs "
            "(*.decisions.jsonl, traces/<episode_id>.jsonl) with this workbench first"
        ) from None
