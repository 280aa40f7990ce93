"""Questions the notebooks ask across formats, as short functions over a workbench
database: the model comparisons (`comparison`), the records behind a number
(`records`), Damage's ratings and play quality (`damage`), the violations and the
records behind them, and what a database holds.

Each takes a DuckDB connection (or a Parquet tree open on Spark) and returns a polars
frame; the notebooks only wire these to widgets and charts. Nothing here draws (that is
`workbench.plots`) or keeps a connection open (the database a notebook works on is
`workbench.notebook`'s). A question about one format's tables is that format's
(`workbench.<format>.queries`); Damage's are imported when first asked, so that
`import workbench.analysis` loads no format.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import polars as pl

from workbench.comparison import compare_models, sample_size, scorecard
from workbench.connection import format_summary, query_frame
from workbench.records import records, side_by_side

if TYPE_CHECKING:  # imported when first asked for (`__getattr__` below)
    from workbench.damage.quality import attack_outcomes, play_quality, play_summary
    from workbench.damage.ratings import ratings

__all__ = [
    "scorecard",
    "compare_models",
    "sample_size",
    "ratings",
    "records",
    "side_by_side",
    "play_quality",
    "play_summary",
    "attack_outcomes",
    "top_violation_rules",
    "violations_for_rule",
    "provenance",
    "quality_gates",
    "format_summary",
]


# --- decision quality --------------------------------------------------------------


def top_violation_rules(con, limit: int = 10, severities=("error", "warning"), examples: int = 0) -> pl.DataFrame:
    """The rules broken most often, with the formats and files they were found in; with
    `examples`, that many places to look (`path:locator`, first by file and line).

    Args:
        con: a connection to a workbench database (or a Parquet tree open on Spark).
        limit: how many rules, the most often broken first.
        severities: the severities counted: `error`, `warning`, `info`, or several.
        examples: how many places to list per rule; 0: no `examples` column.

    Returns:
        A polars DataFrame, one row per rule, most findings first: `rule`, `severity` (the
        severities it was found with, joined by `/`), `formats` (comma-separated),
        `violations` (findings), `files`, `example` (the message of the first finding by
        file and line) and, with `examples`, `examples` (a list of `path:locator`, the
        path as ingested).

    Raises:
        WorkbenchError: a severity that is none of `error`, `warning` and `info`.
    """
    from workbench.records import known_severities

    severities = known_severities(severities)
    frame = query_frame(
        con,
        """
        SELECT v.rule, array_to_string(list_sort(list_distinct(list(v.severity))), '/') AS severity,
               array_to_string(list_sort(list_distinct(list(s.format))), ', ') AS formats,
               count(*) AS violations, count(DISTINCT v.source_id) AS files,
               -- the first finding's, by file and line: the same on every engine
               arg_min(v.message, s.path || lpad(CAST(coalesce(v.line, 0) AS VARCHAR), 20, '0') || v.locator) AS example
        FROM violation_lines v JOIN sources s USING (source_id)
        WHERE list_contains($severities, v.severity)
        GROUP BY v.rule ORDER BY violations DESC, v.rule LIMIT $limit
    """,
        {"limit": limit, "severities": list(severities)},
    )
    if not examples:
        return frame
    # The places are listed by a query of their own, and the lists above sorted, not
    # aggregated in order: an ordered aggregate is DuckDB's, not Spark's.
    places = query_frame(
        con,
        """
        SELECT rule, place FROM (
            SELECT v.rule, s.path || ':' || v.locator AS place,
                   row_number() OVER (PARTITION BY v.rule ORDER BY s.path, v.line, v.locator) AS nth
            FROM violation_lines v JOIN sources s USING (source_id)
            WHERE list_contains($severities, v.severity) AND list_contains($rules, v.rule))
        WHERE nth <= $examples ORDER BY rule, nth
    """,
        {"severities": list(severities), "rules": frame["rule"].to_list(), "examples": examples},
    )
    listed = places.group_by("rule", maintain_order=True).agg(examples=pl.col("place"))
    return frame.join(listed, on="rule", how="left", maintain_order="left")


# --- what a database holds ------------------------------------------------------------


def provenance(con) -> pl.DataFrame:
    """Every file the database holds: path, format, sha256, size, records, rejected, when read.

    Args:
        con: a connection to a workbench database.

    Returns:
        A polars DataFrame, one row per file, by format and path: `path`, `format`, `sha256`,
        `size` (bytes), `records`, `rejected`, `ingested_at`.
    """
    return query_frame(
        con,
        """
        SELECT path, format, sha256, size, records, rejected, ingested_at
        FROM sources ORDER BY format, path
    """,
    )


def quality_gates(con) -> pl.DataFrame:
    """The EC4X bot's quality gates per game and model (`ec4x_quality_gates`).

    Args:
        con: a connection to a workbench database.

    Returns:
        A polars DataFrame, one row per game, model and gate, in that order: `game_id`,
        `model`, `turns`, `gate`, `value`, `threshold`, `comparison` (`>=` or `<=`) and
        `passed` (the value against the threshold).
    """
    from workbench.ec4x.queries import GATES_QUERY

    return query_frame(con, GATES_QUERY)


def violations_for_rule(con, rule: str, limit: int = 100) -> pl.DataFrame:
    """The records behind a rule, one row per violation: where (file, locator, field),
    the message, `raw` (the record as written: the rejected text, or the line read back
    from the file while it holds what was ingested, `raw_text.raw_texts`) and `stored`
    (the rows the workbench keeps from that record, as a JSON object by table).

    Args:
        con: a connection to a workbench database.
        rule: the rule's name, as `violations.rule` holds it.
        limit: at most this many violations, first by file, line and locator.

    Returns:
        A polars DataFrame, by file, line and locator: `format`, `path`, `locator`,
        `severity`, `field`, `message`, `raw` (NULL when the file no longer holds what was
        ingested) and `stored` (JSON text; NULL when nothing is kept from the record).
    """
    hits = query_frame(
        con,
        f"""
        WITH hits AS (
            SELECT v.*, s.path, s.format, s.sha256, s.size,
                   TRY_CAST(regexp_extract(v.locator, '^line (\\d+)$', 1) AS BIGINT) AS line
            FROM violations v JOIN sources s USING (source_id)
            WHERE v.rule = $rule
            ORDER BY s.path, line, v.locator LIMIT $limit
        ),
        stored AS (
            SELECT source_id, locator, table_name,
                   CASE WHEN count(*) = 1 THEN first(record) ELSE to_json(list(record)) END AS record
            FROM ({_stored_records(con)}) GROUP BY ALL
        )
        SELECT h.format, h.path, h.locator, h.line, h.severity, h.field, h.message, r.raw,
               CAST(st.stored AS VARCHAR) AS stored, h.source_id, h.sha256, h.size
        FROM hits h
        LEFT JOIN rejects r USING (source_id, locator)
        LEFT JOIN (SELECT source_id, locator, json_group_object(table_name, record) AS stored
                   FROM stored GROUP BY ALL) st USING (source_id, locator)
        ORDER BY h.path, h.line, h.locator
    """,
        {"rule": rule, "limit": limit},
    )
    from workbench.raw_text import raw_texts

    return hits.with_columns(raw=pl.Series(raw_texts(hits), dtype=pl.String)).drop(
        "line", "source_id", "sha256", "size"
    )


def _stored_records(con) -> str:
    """The rows stored from the records in `hits`, from every table that keeps rows per
    record, found from the schema: keyed by `seq` (the line number: locator `line N`)
    or by its own `locator` column."""
    columns = con.execute("""
        SELECT table_name, list(column_name) FROM information_schema.columns
        WHERE table_schema = 'main' AND table_name NOT IN ('violations', 'rejects', 'sources')
        GROUP BY table_name ORDER BY table_name
    """).fetchall()
    selects = []
    for table, names in columns:
        key = "'line ' || t.seq" if "seq" in names else "t.locator" if "locator" in names else None
        if key is None or "source_id" not in names:
            continue
        selects.append(
            f"SELECT t.source_id, {key} AS locator, '{table}' AS table_name, to_json(t) AS record "
            f"FROM {table} t SEMI JOIN hits h ON h.source_id = t.source_id AND h.locator = {key}"
        )
    nothing = "SELECT NULL::BIGINT AS source_id, NULL AS locator, NULL AS table_name, NULL::JSON AS record"
    return " UNION ALL ".join(selects) or nothing


# --- Damage: ratings and play quality -----------------------------------------------------


# Damage's questions, re-exported as they are: imported when first asked for, so that
# `import workbench.analysis` loads no format.
_DAMAGE = {
    "ratings": "workbench.damage.ratings",
    "play_quality": "workbench.damage.quality",
    "play_summary": "workbench.damage.quality",
    "attack_outcomes": "workbench.damage.quality",
}


def __getattr__(name: str):
    if name in _DAMAGE:
        return getattr(importlib.import_module(_DAMAGE[name]), name)
    raise AttributeError(f"module 'workbench.analysis' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
