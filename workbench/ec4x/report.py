"""Demo-summary lines for EC4X: order-draft validity and the bot's quality gates."""

from __future__ import annotations

from itertools import groupby

from workbench.ec4x.tables import GATES

GATES_QUERY = "SELECT * FROM ec4x_quality_gates ORDER BY game_id, model, gate"
GATE_ORDER = {name: number for number, (name, _, _) in enumerate(GATES)}


def summary(con) -> list[str]:
    lines = []
    drafts, valid = con.execute("SELECT count(*), count(*) FILTER (valid) FROM ec4x_orders").fetchone()
    if drafts:
        lines.append(f"ec4x order drafts: {drafts} ({valid} valid, {valid / drafts:.1%})")
    rows = con.execute(GATES_QUERY).fetchall()
    for (game_id, model, turns), gates in groupby(rows, key=lambda row: row[:3]):
        gates = sorted(gates, key=lambda row: GATE_ORDER[row[3]])
        verdict = "PASS" if all(g[7] for g in gates) else "FAIL"
        shown = "; ".join(
            f"{gate} {_number(value)} {comparison} {_number(threshold)} {'pass' if passed else 'fail'}"
            for _, _, _, gate, value, threshold, comparison, passed in gates
        )
        lines.append(f"ec4x quality gates, game {game_id} ({model}, {turns} turns): {shown} => {verdict}")
    return lines


def _number(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"
