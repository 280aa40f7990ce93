"""Demo summary lines: per series, its span of game time and its latest economy."""

from __future__ import annotations

import duckdb

from workbench.stellaris.queries import series_overview


def summary(con: duckdb.DuckDBPyConnection) -> list[str]:
    lines = []
    for series, snapshots, first, last, economy_date, energy, deficits in series_overview(con):
        line = f"stellaris {series}: {snapshots} snapshot(s) {first} to {last}"
        if economy_date is not None:
            energy_text = f"energy net {energy:+,.1f}/month, " if energy is not None else ""
            line += f"; on {economy_date}: {energy_text}{deficits} resource(s) in deficit"
        lines.append(line)
    return lines
