"""Demo-summary lines for Agent Arena: decision validity, tool error rates and how much
of the decisions' reasoning was traced."""

from __future__ import annotations

HEADLINE = """
SELECT count(*), count(*) FILTER (valid), count(DISTINCT agent_id), count(DISTINCT model) FROM arena_decisions
"""
RATES = """
SELECT error_code, failures, outcomes, rate FROM arena_error_rates
WHERE model = '(all models)' AND tool = '(all tools)' ORDER BY failures DESC, error_code
"""

TRACED = """
SELECT (SELECT count(*) FROM arena_traces), (SELECT count(*) FROM arena_trace_steps),
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM arena_traces t WHERE t.agent_id = d.agent_id
                                      AND t.episode_id = d.episode AND t.tick = d.tick)),
       count(*)
FROM arena_decisions d
"""


def summary(con) -> list[str]:
    return _decision_lines(con) + _trace_lines(con)


def _decision_lines(con) -> list[str]:
    decisions, valid, agents, models = con.execute(HEADLINE).fetchone()
    if not decisions:
        return []
    lines = [f"arena decisions: {decisions} from {agents} agents, {models} models "
             f"({valid} valid, {valid / decisions:.1%})"]
    rates = con.execute(RATES).fetchall()
    if rates:
        shown = ", ".join(f"{code} {rate:.1%}" for code, _, _, rate in rates)
        lines.append(f"arena tool failures by error code (of {rates[0][2]} known outcomes): {shown}")
    return lines


def _trace_lines(con) -> list[str]:
    records, steps, traced, decisions = con.execute(TRACED).fetchone()
    if not records:
        return []
    share = f"; {traced} of {decisions} decisions have one ({traced / decisions:.1%})" if decisions else ""
    return [f"arena reasoning traces: {records} records, {steps} steps{share}"]
