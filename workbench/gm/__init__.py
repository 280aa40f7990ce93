"""gm: AI game-master responses (`*.gm.jsonl`, one response per line: `id`, `text`,
optional `ts`, `model`), read from raw model text into `gm_responses`."""

from __future__ import annotations

from pathlib import Path

import duckdb

from workbench.formats import Format, generated_by
from workbench.gm import reader, tables


def claims(path: Path, head: bytes) -> bool:
    return path.name.endswith(reader.SUFFIX)


def summary(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Per kind: responses, how many offered a decision, and how many needed repaired JSON."""
    rows = con.execute(
        """
        SELECT r.kind, count(*), count(r.player_decision),
               count(*) FILTER (WHERE EXISTS (
                   SELECT 1 FROM violation_lines v WHERE v.source_id = r.source_id
                   AND v.locator = 'response ' || r.response_id AND v.rule = 'json_repaired'))
        FROM gm_responses r GROUP BY r.kind ORDER BY r.kind
        """
    ).fetchall()
    return [
        f"gm {kind}: {n} responses, {decisions} with a decision, {repaired} with repaired JSON"
        for kind, n, decisions, repaired in rows
    ]


FORMAT = Format(
    name="gm",
    tables=tables.TABLES,
    claims=claims,
    load=reader.load,
    line_based=True,
    describe="AI game-master responses (*.gm.jsonl)",
    summary=summary,
    locators=(("gm_responses", "'response ' || response_id"),),
    generate=generated_by("workbench.gm.synth"),
)
