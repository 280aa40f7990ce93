"""Demo-summary lines for Agent Arena: decision validity and tool error rates."""

from __future__ import annotations

from workbench.arena import tables


def summary(con) -> list[str]:
    decisions, valid, agents, models = con.execute(tables.HEADLINE).fetchone()
    if not decisions:
        return []
    lines = [f"arena decisions: {decisions} from {agents} agents, {models} models "
             f"({valid} valid, {valid / decisions:.1%})"]
    rates = con.execute(tables.RATES).fetchall()
    if rates:
        shown = ", ".join(f"{code} {rate:.1%}" for code, _, _, rate in rates)
        lines.append(f"arena tool failures by error code (of {rates[0][2]} known outcomes): {shown}")
    return lines
