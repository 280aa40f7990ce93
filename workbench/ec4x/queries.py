"""What is asked of the EC4X tables: the demo-summary lines (order-draft validity and the
bot's quality gates) and the command-family coverage and validity matrix per model."""

from __future__ import annotations

from itertools import groupby

import duckdb
import polars as pl

from workbench.connection import query_frame
from workbench.ec4x.families import FAMILIES, draft_keys, tag_family_sql
from workbench.ec4x.tables import GATES
from workbench.ec4x.trace import ERROR_CLASS_OF_STAGE

GATES_QUERY = "SELECT * FROM ec4x_quality_gates ORDER BY game_id, model, gate"
GATE_ORDER = {name: number for number, (name, _, _) in enumerate(GATES)}


def summary(con: duckdb.DuckDBPyConnection) -> list[str]:
    lines = []
    [(drafts, valid)] = con.execute("SELECT count(*), count(*) FILTER (valid) FROM ec4x_orders").fetchall()
    if drafts:
        lines.append(f"ec4x order drafts: {drafts} ({valid} valid, {valid / drafts:.1%})")
    rows = con.execute(GATES_QUERY).fetchall()
    for (game_id, model, turns), grouped in groupby(rows, key=lambda row: row[:3]):
        gates = sorted(grouped, key=lambda row: GATE_ORDER[row[3]])
        verdict = "PASS" if all(g[7] for g in gates) else "FAIL"
        shown = "; ".join(
            f"{gate} {_number(value)} {comparison} {_number(threshold)} {'pass' if passed else 'fail'}"
            for _, _, _, gate, value, threshold, comparison, passed in gates
        )
        lines.append(f"ec4x quality gates, game {game_id} ({model}, {turns} turns): {shown} => {verdict}")
    return lines


def _number(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"


# --- the family x model matrix ------------------------------------------------------
#
# The bot's playtest plan asks that every command family be executed at least once
# across its matrix runs; this is that coverage per model, with how often each family's
# orders were valid and the rule they broke most. Order drafts and bot traces are two
# sources (`source`: drafts, trace), never added together: they count different things.
#
# Drafts. A draft tries a family when it uses it (`ec4x_orders.families`, the bot's own
# tagging) or when an error violation sits under the family's key (a malformed
# `diplomaticCommand` is a diplomacy attempt). The use is valid when the draft has no
# error under that key and none about the draft as a whole (`turn`, `houseId`, an
# unknown top-level key), since the compiler then refuses the whole packet. The rules
# counted are the distinct error rules of each invalid use (so top_rule_count never
# exceeds tried - valid). A draft's model is the `decisions` row's model for its line;
# order-draft logs name none, so it is `unknown`.
#
# Traces. The bot tags only the packet it compiled, so a turn that failed outright
# carries no tags and belongs to no family: it cannot be placed in the matrix. A
# tagged turn tried its families; it is valid when it went through at the first
# attempt (a tagged turn is `ok` by construction, so `ok` alone would always read 100%;
# this differs from the turn's row in `decisions`, which is valid when ok), and
# otherwise broke the rule `<errorClass>/<stage>` of its last failed attempt (the
# stage the bot classifies a turn by: `validation/compile`, `validation/schema_parse`,
# `llm_request/llm_request`, `transport/submit`). A turn's
# model is its session's (`ec4x_turns.model`), `unknown` before any session_start.
#
# Every family appears for every (source, model) with data, tried = 0 where never used,
# so the coverage gap shows.

UNKNOWN_MODEL = "unknown"
DRAFTS, TRACE = "drafts", "trace"


def _values(pairs) -> str:
    """A VALUES list of (name, name or position) pairs known at import (no user text)."""
    return ", ".join(f"('{a}', {b!r})" if isinstance(b, int) else f"('{a}', '{b}')" for a, b in pairs)


FAMILY_USES = f"""
WITH family_order(family, position) AS (VALUES {_values((f, i) for i, f in enumerate(FAMILIES))}),
draft_key(key, family) AS (VALUES {_values(draft_keys().items())}),
drafts AS (
    SELECT o.source_id, o.seq, coalesce(d.model, '{UNKNOWN_MODEL}') AS model, o.families
    FROM ec4x_orders o
    LEFT JOIN decisions d ON d.source_id = o.source_id AND d.format = 'ec4x' AND d.locator = 'line ' || o.seq
),
-- Error violations on draft lines, with the family whose key holds the field (NULL: the whole draft).
draft_errors AS (
    SELECT v.source_id, v.line AS seq, v.rule, k.family
    FROM violation_lines v
    LEFT JOIN draft_key k ON k.key = regexp_extract(v.field, '^[A-Za-z_]+')
    JOIN drafts d ON d.source_id = v.source_id AND d.seq = v.line
    WHERE v.severity = 'error'
),
draft_uses AS (
    SELECT source_id, seq, model, unnest(families) AS family FROM drafts
    UNION
    SELECT d.source_id, d.seq, d.model, e.family
    FROM drafts d JOIN draft_errors e USING (source_id, seq) WHERE e.family IS NOT NULL
),
draft_broken AS (
    SELECT DISTINCT u.source_id, u.seq, u.model, u.family, e.rule
    FROM draft_uses u JOIN draft_errors e
      ON e.source_id = u.source_id AND e.seq = u.seq AND (e.family = u.family OR e.family IS NULL)
),
turns AS (
    SELECT source_id, seq, coalesce(model, '{UNKNOWN_MODEL}') AS model, feature_tags,
           coalesce(ok, false) AND coalesce(attempts, 1) = 1 AS first_try,
           coalesce(CASE WHEN NOT coalesce(ok, false) THEN error_class END,
                    CASE failed_stages[-1] {" ".join(f"WHEN '{s}' THEN '{c}'" for s, c in ERROR_CLASS_OF_STAGE.items())}
                    END, 'unknown') || '/' || coalesce(failed_stages[-1], 'no stage') AS rule
    FROM ec4x_turns
),
turn_uses AS (
    SELECT DISTINCT source_id, seq, model, first_try, rule, family
    FROM (SELECT *, {tag_family_sql("tag")} AS family FROM turns, unnest(feature_tags) AS u(tag))
    WHERE family IS NOT NULL
),
uses AS (
    SELECT '{DRAFTS}' AS source, source_id, seq, u.model, family,
           b.broken IS NULL AS valid
    FROM draft_uses u
    LEFT JOIN (SELECT DISTINCT source_id, seq, family, true AS broken FROM draft_broken) b
           USING (source_id, seq, family)
    UNION ALL
    SELECT '{TRACE}', source_id, seq, model, family, first_try FROM turn_uses
),
broken AS (
    SELECT '{DRAFTS}' AS source, model, family, rule FROM draft_broken
    UNION ALL
    SELECT '{TRACE}', model, family, rule FROM turn_uses WHERE NOT first_try
),
top_rules AS (
    -- a tie goes to the rule first in alphabetical order
    SELECT source, model, family, rule AS top_rule, n AS top_rule_count
    FROM (SELECT *, row_number() OVER (PARTITION BY source, model, family ORDER BY n DESC, rule) AS rank
          FROM (SELECT source, model, family, rule, count(*) AS n FROM broken GROUP BY ALL))
    WHERE rank = 1
),
cells AS (
    SELECT source, model, family, count(*) AS tried, count(*) FILTER (WHERE valid) AS valid FROM uses GROUP BY ALL
),
grid AS (
    SELECT DISTINCT '{DRAFTS}' AS source, model FROM drafts
    UNION SELECT DISTINCT '{TRACE}', model FROM turns
)
"""

# Per family, model and source: tried, valid, validity and the rule broken most.
FAMILY_MATRIX = (
    FAMILY_USES
    + """
SELECT f.family, g.model, coalesce(c.tried, 0) AS tried, coalesce(c.valid, 0) AS valid,
       c.valid / c.tried AS validity, t.top_rule, coalesce(t.top_rule_count, 0) AS top_rule_count, g.source
FROM grid g CROSS JOIN family_order f
LEFT JOIN cells c USING (source, model, family)
LEFT JOIN top_rules t USING (source, model, family)
ORDER BY g.source, g.model, f.position
"""
)


def family_lines(con: duckdb.DuckDBPyConnection, family: str, model: str, source: str = DRAFTS) -> pl.DataFrame:
    """The lines (source_id, line) behind one cell of the family matrix: the drafts (or
    bot-trace turns) of `model` that used `family`."""
    return query_frame(
        con,
        FAMILY_USES
        + """
        SELECT DISTINCT source_id, seq AS line FROM uses
        WHERE family = $family AND model = $model AND source = $source ORDER BY ALL
    """,
        {"family": family, "model": model, "source": source},
    )


def family_matrix(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Per command family, model and source (drafts, trace): how often the family was
    tried, how often validly, the validity, and the rule its invalid uses broke most.
    Every family is listed for every model and source with data, tried = 0 if unused."""
    return query_frame(con, FAMILY_MATRIX).with_columns(pl.col("tried", "valid", "top_rule_count").cast(pl.Int64))
