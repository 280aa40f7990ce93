"""Demo-summary lines for Agent Arena: decision validity and tool error rates."""

from __future__ import annotations

HEADLINE = """
SELECT count(*), count(*) FILTER (valid), count(DISTINCT agent_id), count(DISTINCT model) FROM arena_decisions
"""
RATES = """
SELECT error_code, failures, outcomes, rate FROM arena_error_rates
WHERE model = '(all models)' AND tool = '(all tools)' ORDER BY failures DESC, error_code
"""


def summary(con) -> list[str]:
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
