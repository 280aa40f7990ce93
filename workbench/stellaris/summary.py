"""Demo summary lines: per series, its span of game time and its latest economy."""

from __future__ import annotations

SERIES = """
WITH spans AS (
    SELECT series, count(*) AS snapshots, arg_min(game_date, day) AS first_date, arg_max(game_date, day) AS last_date
    FROM stellaris_snapshots GROUP BY series
),
latest_economy AS (
    SELECT s.series, s.source_id, s.locator, s.game_date,
           row_number() OVER (PARTITION BY s.series ORDER BY s.day DESC, s.source_id DESC) AS recency
    FROM stellaris_snapshots s SEMI JOIN stellaris_resources r USING (source_id, locator)
),
economy AS (
    SELECT l.series, l.game_date,
           max(coalesce(r.net, r.income - r.expenses)) FILTER (WHERE r.resource = 'energy') AS energy_net,
           count(*) FILTER (WHERE coalesce(r.net, r.income - r.expenses) < 0) AS in_deficit
    FROM latest_economy l JOIN stellaris_resources r USING (source_id, locator)
    WHERE l.recency = 1
    GROUP BY ALL
)
SELECT p.series, p.snapshots, p.first_date, p.last_date, e.game_date, e.energy_net, e.in_deficit
FROM spans p LEFT JOIN economy e USING (series)
ORDER BY p.series
"""


def summary(con) -> list[str]:
    lines = []
    for series, snapshots, first, last, economy_date, energy, deficits in con.execute(SERIES).fetchall():
        line = f"stellaris {series}: {snapshots} snapshot(s) {first} to {last}"
        if economy_date is not None:
            energy_text = f"energy net {energy:+,.1f}/month, " if energy is not None else ""
            line += f"; on {economy_date}: {energy_text}{deficits} resource(s) in deficit"
        lines.append(line)
    return lines
