"""What is read back from the Stellaris tables: each function takes a DuckDB connection
and returns rows or a polars frame. The net of a resource is written once, in `NETS`."""

from __future__ import annotations

import polars as pl

from workbench.catalog import query_frame

# Every snapshot's net per resource: the net as stored, else income - expenses (NULL
# when neither is known). A resource row carries its snapshot's date.
NETS = """
SELECT s.source_id, s.locator, s.series, s.origin, s.game_date, s.day, r.resource,
       coalesce(r.net, r.income - r.expenses) AS net
FROM stellaris_resources r JOIN stellaris_snapshots s USING (source_id, locator)
"""

# Each snapshot's net is taken to hold until the series' next snapshot (a month for
# the last one), so yearly autosaves and monthly histories count months alike.
SERIES_NETS = f"""
WITH nets AS (
    SELECT series, game_date, day, resource, net FROM ({NETS})
    WHERE ($series IS NULL OR list_contains($series, series))
      AND ($resources IS NULL OR list_contains($resources, resource))
)
SELECT *, greatest(1, coalesce(lead(day) OVER (PARTITION BY series, resource ORDER BY day) - day, 30) // 30)
          AS months_held
FROM nets WHERE net IS NOT NULL
"""


def series_names(con) -> list[str]:
    return [s for (s,) in con.execute("SELECT DISTINCT series FROM stellaris_snapshots ORDER BY 1").fetchall()]


def resource_names(con) -> list[str]:
    return [r for (r,) in con.execute("SELECT DISTINCT resource FROM stellaris_resources ORDER BY 1").fetchall()]


def resources_in_deficit(con, series=None) -> list[str]:
    """Resources that were in deficit at some snapshot (of `series`), by name."""
    deficits = months_in_deficit(con, series)
    return sorted(deficits.filter(pl.col("snapshots_in_deficit") > 0)["resource"].unique().to_list())


def months_in_deficit(con, series=None, resources=None) -> pl.DataFrame:
    """Per series and resource: snapshots, how many show a deficit (net below zero),
    the months those deficits cover, and the first and last date in deficit."""
    return query_frame(con, f"""
        SELECT series, resource, count(*) AS snapshots, count(*) FILTER (WHERE net < 0) AS snapshots_in_deficit,
               coalesce(sum(months_held) FILTER (WHERE net < 0), 0)::BIGINT AS months_in_deficit,
               sum(months_held)::BIGINT AS months_observed,
               arg_min(game_date, day) FILTER (WHERE net < 0) AS first_deficit,
               arg_max(game_date, day) FILTER (WHERE net < 0) AS last_deficit,
               min(net) AS worst_net
        FROM ({SERIES_NETS}) GROUP BY series, resource
        ORDER BY months_in_deficit DESC, series, resource
    """, _economy_params(series, resources))


def compare_series(con, series_a: str, series_b: str, resources=None) -> pl.DataFrame:
    """Two series side by side on the game dates both have: net per resource in each
    and the difference (b minus a)."""
    nets = query_frame(con, SERIES_NETS, _economy_params([series_a, series_b], resources))
    a = nets.filter(pl.col("series") == series_a).select("game_date", "day", "resource", net_a="net")
    b = nets.filter(pl.col("series") == series_b).select("day", "resource", net_b="net")
    return a.join(b, on=["day", "resource"]).with_columns(difference=pl.col("net_b") - pl.col("net_a")).sort(
        "resource", "day")


def _economy_params(series, resources) -> dict:
    as_list = lambda v: [v] if isinstance(v, str) else (list(v) if v else None)  # noqa: E731
    return {"series": as_list(series), "resources": as_list(resources)}


# --- nets over game time, for a chart --------------------------------------------------

# The snapshots of one source: a series name, a source id, or a file or folder path as
# ingested (NULL: every snapshot). Nets are averaged over buckets of `$bucket` days.
BUCKETED_NETS = f"""
WITH chosen AS (
    SELECT s.source_id, s.locator
    FROM stellaris_snapshots s JOIN sources src USING (source_id)
    WHERE $source IS NULL OR s.series = $source OR CAST(s.source_id AS VARCHAR) = $source
       OR src.path = $source OR starts_with(src.path, rtrim($source, '/') || '/')
),
nets AS (
    SELECT n.series, n.origin, n.resource, n.day // $bucket AS bucket, n.day, n.game_date, n.net
    FROM ({NETS}) n SEMI JOIN chosen USING (source_id, locator)
    WHERE $resources IS NULL OR list_contains($resources, n.resource)
)
SELECT series, origin, resource, min(day) AS day, arg_min(game_date, day) AS game_date,
       min(day) / 360.0 AS year, avg(net) AS net, avg(net) < 0 AS deficit
FROM nets WHERE net IS NOT NULL
GROUP BY series, origin, resource, bucket
ORDER BY series, resource, day
"""


def nets_over_time(con, resources: list[str] | None = None, source: str | None = None,
                   max_points: int | None = None) -> pl.DataFrame:
    """Net per resource over game time, one row per series, resource and date (`year`
    on the 360-day calendar, `deficit`: net below zero); `resources` picks names,
    `source` a series, source id or ingested path. Beyond `max_points` dates in a
    series, nets are averaged over buckets of days so a line keeps at most about that
    many points."""
    bucket = _bucket_days(con, max_points) if max_points else 1
    return query_frame(con, BUCKETED_NETS, {"resources": resources, "source": source, "bucket": bucket})


def _bucket_days(con, max_points: int) -> int:
    dates, span = con.execute("""
        SELECT (SELECT coalesce(max(n), 0) FROM (SELECT count(DISTINCT day) AS n FROM stellaris_snapshots
                                                 GROUP BY series)),
               (SELECT coalesce(max(day) - min(day), 0) + 1 FROM stellaris_snapshots)
    """).fetchall()[0]
    return max(1, -(-span // max_points)) if dates > max_points else 1


# --- the demo summary -------------------------------------------------------------------

SERIES_OVERVIEW = f"""
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
           max(n.net) FILTER (WHERE n.resource = 'energy') AS energy_net,
           count(*) FILTER (WHERE n.net < 0) AS in_deficit
    FROM latest_economy l JOIN ({NETS}) n USING (source_id, locator)
    WHERE l.recency = 1
    GROUP BY l.series, l.game_date
)
SELECT p.series, p.snapshots, p.first_date, p.last_date, e.game_date, e.energy_net, e.in_deficit
FROM spans p LEFT JOIN economy e USING (series)
ORDER BY p.series
"""


def series_overview(con) -> list[tuple]:
    """Per series: (series, snapshots, first date, last date, and at its latest snapshot
    with an economy: its date, the energy net and how many resources are in deficit)."""
    return con.execute(SERIES_OVERVIEW).fetchall()
