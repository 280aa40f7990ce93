"""What is read back from the Stellaris tables: each function takes a DuckDB connection
and returns rows or a polars frame. The net of a resource is written once, in `NETS`
(the player's totals), and once per country in `COUNTRY_NETS` (every country's budget
lines)."""

from __future__ import annotations

import duckdb
import polars as pl

from workbench.connection import query_frame
from workbench.errors import WorkbenchError

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


def series_names(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [s for (s,) in con.execute("SELECT DISTINCT series FROM stellaris_snapshots ORDER BY 1").fetchall()]


def resource_names(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [r for (r,) in con.execute("SELECT DISTINCT resource FROM stellaris_resources ORDER BY 1").fetchall()]


def resources_in_deficit(con: duckdb.DuckDBPyConnection, series=None) -> list[str]:
    """Resources that were in deficit at some snapshot (of `series`), by name."""
    deficits = months_in_deficit(con, series)
    return sorted(deficits.filter(pl.col("snapshots_in_deficit") > 0)["resource"].unique().to_list())


def months_in_deficit(con: duckdb.DuckDBPyConnection, series=None, resources=None) -> pl.DataFrame:
    """Per series and resource: snapshots, how many show a deficit (net below zero),
    the months those deficits cover, and the first and last date in deficit."""
    return query_frame(
        con,
        f"""
        SELECT series, resource, count(*) AS snapshots, count(*) FILTER (WHERE net < 0) AS snapshots_in_deficit,
               coalesce(sum(months_held) FILTER (WHERE net < 0), 0)::BIGINT AS months_in_deficit,
               sum(months_held)::BIGINT AS months_observed,
               arg_min(game_date, day) FILTER (WHERE net < 0) AS first_deficit,
               arg_max(game_date, day) FILTER (WHERE net < 0) AS last_deficit,
               min(net) AS worst_net
        FROM ({SERIES_NETS}) GROUP BY series, resource
        ORDER BY months_in_deficit DESC, series, resource
    """,
        _economy_params(series, resources),
    )


def compare_series(con: duckdb.DuckDBPyConnection, series_a: str, series_b: str, resources=None) -> pl.DataFrame:
    """Two series side by side on the game dates both have: net per resource in each
    and the difference (b minus a)."""
    nets = query_frame(con, SERIES_NETS, _economy_params([series_a, series_b], resources))
    a = nets.filter(pl.col("series") == series_a).select("game_date", "day", "resource", net_a="net")
    b = nets.filter(pl.col("series") == series_b).select("day", "resource", net_b="net")
    return (
        a.join(b, on=["day", "resource"])
        .with_columns(difference=pl.col("net_b") - pl.col("net_a"))
        .sort("resource", "day")
    )


def _economy_params(series, resources) -> dict:
    return {"series": _names(series), "resources": _names(resources)}


# --- nets over game time, for a chart --------------------------------------------------

# The snapshots of one source: a series name, a source id, or a file or folder path as
# ingested (NULL: every snapshot).
CHOSEN_SNAPSHOTS = """
SELECT s.source_id, s.locator
FROM stellaris_snapshots s JOIN sources src USING (source_id)
WHERE $source IS NULL OR s.series = $source OR CAST(s.source_id AS VARCHAR) = $source
   OR src.path = $source OR starts_with(src.path, rtrim($source, '/') || '/')
"""

# Nets are averaged over buckets of `$bucket` days.
BUCKETED_NETS = f"""
WITH chosen AS ({CHOSEN_SNAPSHOTS}),
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


def nets_over_time(
    con: duckdb.DuckDBPyConnection,
    resources: list[str] | None = None,
    source: str | None = None,
    max_points: int | None = None,
) -> pl.DataFrame:
    """Net per resource over game time, one row per series, resource and date (`year`
    on the 360-day calendar, `deficit`: net below zero); `resources` picks names,
    `source` a series, source id or ingested path. Beyond `max_points` dates in a
    series, nets are averaged over buckets of days so a line keeps at most about that
    many points."""
    bucket = _bucket_days(con, max_points) if max_points else 1
    return query_frame(con, BUCKETED_NETS, {"resources": resources, "source": source, "bucket": bucket})


def _bucket_days(con: duckdb.DuckDBPyConnection, max_points: int) -> int:
    dates, span = con.execute("""
        SELECT (SELECT coalesce(max(n), 0) FROM (SELECT count(DISTINCT day) AS n FROM stellaris_snapshots
                                                 GROUP BY series)),
               (SELECT coalesce(max(day) - min(day), 0) + 1 FROM stellaris_snapshots)
    """).fetchall()[0]
    return max(1, -(-span // max_points)) if dates > max_points else 1


# --- every country's budget -------------------------------------------------------------

COUNTRIES = """
SELECT series, country_id, arg_max(country_name, day) AS country_name, arg_max(country_type, day) AS country_type,
       bool_or(is_player) AS is_player, count(DISTINCT (source_id, locator)) AS snapshots,
       arg_min(game_date, day) AS first_date, arg_max(game_date, day) AS last_date
FROM stellaris_budget
GROUP BY series, country_id
ORDER BY series, is_player DESC, country_name, country_id
"""


def countries(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every country with a budget, per series: its id, its latest name and type
    (`default` for an empire, `fallen_empire`, `enclave`, ...), whether it is the
    player's, and the snapshots (first and last date) that hold its budget."""
    return query_frame(con, COUNTRIES)


def country_ids(con: duckdb.DuckDBPyConnection, chosen) -> list[int]:
    """The ids of countries given by id or by name (one, or a list of them). A name
    picks every country so named (case aside), digits an id; an unknown one is an
    error that lists the names there are."""
    wanted = [chosen] if isinstance(chosen, (str, int)) else list(chosen)
    known = con.execute("SELECT DISTINCT country_id, country_name FROM stellaris_budget").fetchall()
    ids: list[int] = []
    for item in wanted:
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            raise WorkbenchError(f"a country is a name or an id, not {item!r}")
        found = [
            cid for cid, name in known if isinstance(item, str) and (name or "").casefold() == item.strip().casefold()
        ]
        if not found and (isinstance(item, int) or item.strip().isdigit()):
            found = [cid for cid, _ in known if cid == int(item)]
        if not found:
            raise WorkbenchError(_no_such_country(item, known))
        ids += [cid for cid in found if cid not in ids]
    return ids


def _no_such_country(item, known) -> str:
    if not known:
        return "no country budgets in this database; ingest Stellaris saves (*.sav): only saves hold them"
    names = sorted({name for _, name in known if name})
    shown = ", ".join(names[:12]) + (f", ... ({len(names)} in all; see countries(con))" if len(names) > 12 else "")
    what = f"id {item}" if isinstance(item, int) else f"named {item!r}"
    return f"no country {what} in stellaris_budget; known: {shown}"


BUDGET_LINES = """
SELECT series, source_id, locator, game_date, day, country_id, country_name, country_type, is_player,
       category, resource, income, expenses, income - expenses AS balance
FROM stellaris_budget
WHERE ($countries IS NULL OR list_contains($countries, country_id))
  AND ($resources IS NULL OR list_contains($resources, resource))
  AND ($date IS NULL OR game_date = $date)
ORDER BY series, day, source_id, country_id, resource, category
"""


def budget_lines(con: duckdb.DuckDBPyConnection, country=None, resources=None, date=None) -> pl.DataFrame:
    """Budget lines by category: per snapshot, country, category and resource, the
    income, expenses and their balance (income - expenses). `country`: names or ids
    (default: every country); `resources`: names; `date`: a game date "YYYY.MM.DD"."""
    ids = country_ids(con, country) if country is not None else None
    return query_frame(con, BUDGET_LINES, {"countries": ids, "resources": _names(resources), "date": date})


# Net per resource per country and snapshot (summed over categories), then averaged over
# buckets of `$bucket` days like the player's nets. `country` tells countries apart in
# a legend: the player's is marked, a name several countries share gets their ids.
COUNTRY_NETS = f"""
WITH chosen AS ({CHOSEN_SNAPSHOTS}),
nets AS (
    SELECT b.series, b.day, b.game_date, b.country_id, b.country_name, b.is_player, b.resource,
           sum(b.income) AS income, sum(b.expenses) AS expenses, sum(b.income) - sum(b.expenses) AS net
    FROM stellaris_budget b SEMI JOIN chosen USING (source_id, locator)
    WHERE ($countries IS NULL OR list_contains($countries, b.country_id) OR ($with_player AND b.is_player))
      AND ($resources IS NULL OR list_contains($resources, b.resource))
    GROUP BY b.series, b.source_id, b.locator, b.day, b.game_date, b.country_id, b.country_name, b.is_player,
             b.resource
),
bucketed AS (
    SELECT series, country_id, arg_max(country_name, day) AS country_name, bool_or(is_player) AS is_player,
           resource, min(day) AS day, arg_min(game_date, day) AS game_date, min(day) / 360.0 AS year,
           avg(income) AS income, avg(expenses) AS expenses, avg(net) AS net, avg(net) < 0 AS deficit
    FROM nets GROUP BY series, country_id, resource, day // $bucket
)
SELECT *, country_name || CASE
           WHEN is_player THEN ' (player)'
           WHEN count(DISTINCT country_id) OVER (PARTITION BY country_name) > 1 THEN ' #' || country_id
           ELSE '' END AS country
FROM bucketed
ORDER BY series, is_player DESC, country_name, country_id, resource, day
"""


def country_nets(
    con: duckdb.DuckDBPyConnection,
    countries=None,
    resources=None,
    source: str | None = None,
    with_player: bool = False,
    max_points: int | None = None,
) -> pl.DataFrame:
    """Net per resource per country over game time (summed over budget categories in
    DuckDB): `series`, `country_id`, `country_name`, `is_player`, `resource`, `day`,
    `game_date`, `year`, `income`, `expenses`, `net`, `deficit`, and `country`, a
    label for a legend. `countries`: names or ids (default: every country);
    `with_player`: the player's too; `source`: a series, source id or ingested path.
    Beyond `max_points` dates in a series, nets are averaged over buckets of days."""
    ids = country_ids(con, countries) if countries is not None else None
    bucket = _bucket_days(con, max_points) if max_points else 1
    return query_frame(
        con,
        COUNTRY_NETS,
        {
            "countries": ids,
            "with_player": with_player,
            "resources": _names(resources),
            "source": None if source is None else str(source),
            "bucket": bucket,
        },
    )


# The snapshot a breakdown shows: the latest holding the country (the player's by
# default) at `$date` if given.
BREAKDOWN_SNAPSHOT = """
SELECT series, source_id, locator, game_date, list(DISTINCT country_id ORDER BY country_id) AS country_ids,
       arg_max(country_name, is_player) AS country_name
FROM stellaris_budget
WHERE CASE WHEN $countries IS NULL THEN is_player ELSE list_contains($countries, country_id) END
  AND ($date IS NULL OR game_date = $date)
GROUP BY series, source_id, locator, game_date, day
ORDER BY day DESC, source_id DESC
LIMIT 1
"""

# One country's lines at one snapshot as bars: per resource and side, the `$top`
# largest categories and the rest summed as `other`; expenses negative.
BREAKDOWN = """
WITH sides AS (
    SELECT resource, 'income' AS side, category, income AS amount FROM stellaris_budget
    WHERE source_id = $source_id AND locator = $locator AND country_id = $country_id AND income <> 0
    UNION ALL
    SELECT resource, 'expenses', category, expenses FROM stellaris_budget
    WHERE source_id = $source_id AND locator = $locator AND country_id = $country_id AND expenses <> 0
),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY resource, side ORDER BY amount DESC, category) AS rank,
           count(*) OVER (PARTITION BY resource, side) AS categories
    FROM sides WHERE $resources IS NULL OR list_contains($resources, resource)
),
bars AS (
    SELECT resource, side, CASE WHEN rank <= $top OR categories = $top + 1 THEN category ELSE 'other' END AS category,
           sum(CASE WHEN side = 'income' THEN amount ELSE -amount END) AS amount, count(*) AS lines, min(rank) AS rank
    FROM ranked GROUP BY ALL
)
SELECT *, sum(amount) OVER (PARTITION BY resource) AS net FROM bars
ORDER BY resource, side DESC, rank
"""


def breakdown_bars(
    con: duckdb.DuckDBPyConnection, country=None, resources=None, date=None, top: int = 5
) -> tuple[dict, pl.DataFrame]:
    """Where one country's resources come from and go at one snapshot: (the snapshot:
    `series`, `source_id`, `locator`, `game_date`, `country_id`, `country_name`; and per
    resource and side (`income`, `expenses`) the `top` largest categories, the rest
    as `other`: `amount` (expenses negative), `lines` summed, `net` of the resource).
    `country`: a name or id (default: the player); `date`: "YYYY.MM.DD" (default: the
    latest snapshot holding the country)."""
    ids = country_ids(con, country) if country is not None else None
    found = con.execute(BREAKDOWN_SNAPSHOT, {"countries": ids, "date": date}).fetchall()
    if not found:
        raise WorkbenchError(_no_breakdown(con, country, date))
    series, source_id, locator, game_date, found_ids, name = found[0]
    if len(found_ids) > 1:
        raise WorkbenchError(
            f"{len(found_ids)} countries are named {country!r} on {game_date} "
            f"(ids {', '.join(map(str, found_ids))}); give one id"
        )
    snapshot = {
        "series": series,
        "source_id": source_id,
        "locator": locator,
        "game_date": game_date,
        "country_id": found_ids[0],
        "country_name": name,
    }
    bars = query_frame(
        con,
        BREAKDOWN,
        {
            "source_id": source_id,
            "locator": locator,
            "country_id": found_ids[0],
            "resources": _names(resources),
            "top": top,
        },
    )
    return snapshot, bars


def _no_breakdown(con: duckdb.DuckDBPyConnection, country, date) -> str:
    who = "the player" if country is None else f"country {country!r}"
    ids = country_ids(con, country) if country is not None else None
    dates = [
        d
        for d, _ in con.execute(
            "SELECT DISTINCT game_date, day FROM stellaris_budget "
            "WHERE ($c IS NULL AND is_player) OR list_contains($c, country_id) ORDER BY day",
            {"c": ids},
        ).fetchall()
    ]
    if not dates:
        return f"no budget of {who} in this database; ingest Stellaris saves (*.sav): only saves hold budget lines"
    shown = ", ".join(dates[-8:]) + (f" (the latest of {len(dates)})" if len(dates) > 8 else "")
    return f"no budget of {who} on {date!r}; its dates: {shown}"


def _names(value) -> list | None:
    return [value] if isinstance(value, str) else (list(value) if value else None)


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


def series_overview(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    """Per series: (series, snapshots, first date, last date, and at its latest snapshot
    with an economy: its date, the energy net and how many resources are in deficit)."""
    return con.execute(SERIES_OVERVIEW).fetchall()
