"""The scorecard: per format and model (or agent where a log names no model), the share
of valid decisions with its 95% interval clustered by game (`stats`), the number of
games, the calls that got no answer, latency and tokens, retries, the rule broken most
and, with prices, costs. The counts are aggregated in DuckDB; one row per group and game
reaches Python, where the intervals are computed over numpy arrays.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workbench import stats
from workbench.comparison.clusters import decisions_sql, effects_of, pools_of, spread
from workbench.connection import query_frame
from workbench.errors import WorkbenchError
from workbench.naming import read_aliases
from workbench.outcomes import answered
from workbench.prices import costs, known_prices

GROUPS = {"format": "format", "model": "who", "game_id": "game_id", "agent_id": "agent_id"}


def scorecard(
    con, by=("format", "model"), prices=None, aliases=None, cluster: str | None = "game", failures: str = "exclude"
) -> pl.DataFrame:
    """Per format and model: validity with its 95% interval clustered by game, n and
    games, latency, tokens, retries, the rule broken most, and costs.

    A decision's model is the one its log names, else its agent. Validity is of the
    answered decisions: a failed call (no answer came back) is shown in `failed`, beside
    the failure rate of all calls, and left out of validity unless `failures="invalid"`
    counts it as an invalid decision. Costs use genai-prices' table where it knows the
    model, and `prices` over it.

    Args:
        con: a connection to a workbench database (or a Parquet tree open on Spark).
        by: the groups, one or more of `format`, `model`, `game_id`, `agent_id`.
        prices: a dict, or a JSON or CSV file, of prices laid over genai-prices' table.
        aliases: a dict, or a JSON or CSV file, mapping names to one model.
        cluster: what the interval is clustered by: `game`, `file`, or None for
            independent decisions.
        failures: `exclude` (validity of the answered decisions) or `invalid` (a failed
            call, which got no answer, counted as an invalid decision).

    Returns:
        A polars DataFrame, one row per group: the `by` columns (with `model`, also
        `model_from`: model, agent or unknown), `decisions`, `valid`, `validity`, `ci_low`,
        `ci_high` (95%), `games` (the clusters), `design_effect`, `ci_method` (`wilson`, or
        `wilson-clustered` where the games differ more than independent decisions would),
        `failed` (calls that got no answer), `failure_rate` (of all calls) with `failure_low`
        and `failure_high` (95%, clustered), `p50_ms`, `p95_ms` (latency), `p50_tokens` (per
        decision), `retries` (EC4X attempts past the first), `top_rule` and `top_rule_count`
        (the error rule broken most); with `model`, also `cost_per_decision`,
        `cost_per_valid` and `price_source` where a price is known.

    Raises:
        WorkbenchError: an unknown group or `cluster`, an unknown `failures`, or `prices` or
            `aliases` that cannot be read.
    """
    by = [by] if isinstance(by, str) else list(by)
    keys = _group_keys(by)
    aliases = read_aliases(aliases)
    source = decisions_sql(aliases, cluster, failures)
    # Every count comes from one row per group and cluster (`_per_cluster_sql`), read
    # once: the spread over the games and the pools' ICCs are computed here from it.
    games = query_frame(con, _per_cluster_sql(keys, decisions_sql(aliases, cluster, None), failures))
    answered_games = games.filter(pl.col("n") > 0)
    frame = _with_intervals(
        spread(answered_games, keys, "n", "hits", model_from="model_from")
        .with_columns(validity=pl.col("valid") / pl.col("decisions"))
        .join(query_frame(con, _scorecard_sql(keys, source)), on=keys, how="left", nulls_equal=True),
        pools_of(answered_games, keys, "n", "hits", cluster),
    )
    calls = _failure_rates(
        spread(games, keys, "calls", "failed", model_from="calls_from"),
        pools_of(games, keys, "calls", "failed", cluster),
    )
    # A group whose every call failed has no answered decision: a row all the same.
    frame = (
        calls.join(frame, on=keys, how="left", nulls_equal=True)
        .with_columns(
            pl.col("decisions", "valid", "games").fill_null(0), model_from=pl.coalesce("model_from", "calls_from")
        )
        .sort(keys, nulls_last=True)
    )
    columns = [
        *by,
        *(["model_from"] if "model" in by else []),
        "decisions",
        "valid",
        "validity",
        "ci_low",
        "ci_high",
        "games",
        "design_effect",
        "ci_method",
        "failed",
        "failure_rate",
        "failure_low",
        "failure_high",
        "p50_ms",
        "p95_ms",
        "p50_tokens",
        "retries",
        "top_rule",
        "top_rule_count",
    ]
    frame = frame.rename({"who": "model"}) if "model" in by else frame
    if "model" in by:  # a price is a model's
        priced = known_prices(frame["model"].unique().to_list(), prices)
        frame = frame.join(costs(con, source, keys, priced), on=by, how="left", nulls_equal=True)
        columns += ["cost_per_decision", "cost_per_valid", "price_source"]
    return frame.select(columns)


def _group_keys(by: list[str]) -> list[str]:
    unknown = [key for key in by if key not in GROUPS]
    if not by or unknown:
        raise WorkbenchError(
            f"cannot group a scorecard by {', '.join(unknown) or 'nothing'}; use some of: {', '.join(GROUPS)}"
        )
    if len(set(by)) < len(by):
        raise WorkbenchError(f"a scorecard is grouped by each of {', '.join(GROUPS)} once, not by {', '.join(by)}")
    return [GROUPS[key] for key in by]


def _per_cluster_sql(keys: list[str], every_call: str, failures: str) -> str:
    """Per group and cluster (its `pool`: the format, where the rows are per format):
    every call, the failed ones, the decisions compared (`n`: the answered ones, or every
    one where `failures` counts a failed call as invalid) and the valid ones among them,
    and where the group's names come from."""
    kept = answered(failures)
    pool = "format" if "format" in keys else "'all'"
    return f"""
    SELECT {pool} AS pool, {", ".join(keys)}, cluster, count(*) AS calls,
           count(*) FILTER (WHERE outcome = 'failed') AS failed, count(*) FILTER (WHERE {kept}) AS n,
           count(*) FILTER (WHERE {kept} AND valid) AS hits, min(model_from) FILTER (WHERE {kept}) AS model_from,
           min(model_from) AS calls_from
    FROM ({every_call}) GROUP BY ALL
    """


def _scorecard_sql(keys: list[str], source: str) -> str:
    """Per group of the decisions compared: latency, tokens, retries and the rule broken most."""
    group = ", ".join(keys)
    joined = " AND ".join(f"t.{k} IS NOT DISTINCT FROM d.{k}" for k in keys)
    return f"""
    WITH d AS ({source}),
    rules AS (
        SELECT {", ".join(f"d.{k}" for k in keys)}, v.rule, count(*) AS n
        FROM d JOIN violation_lines v ON v.source_id = d.source_id AND v.locator = d.locator AND v.severity = 'error'
        GROUP BY ALL
    ),
    top AS (
        SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY {group} ORDER BY n DESC, rule) AS rank FROM rules)
        WHERE rank = 1
    )
    SELECT {", ".join(f"d.{k}" for k in keys)},
           quantile_cont(d.latency_ms, 0.5) AS p50_ms, quantile_cont(d.latency_ms, 0.95) AS p95_ms,
           quantile_cont(d.tokens, 0.5) AS p50_tokens, sum(d.retries)::BIGINT AS retries,
           any_value(t.rule) AS top_rule, coalesce(any_value(t.n), 0) AS top_rule_count
    FROM d LEFT JOIN top t ON {joined}
    GROUP BY {", ".join(f"d.{k}" for k in keys)}
    """


def _failure_rates(frame: pl.DataFrame, pools: dict) -> pl.DataFrame:
    """failure_rate of all calls, with its 95% interval clustered as validity's is."""
    n, failed = (frame[c].to_numpy().astype(float) for c in ("calls", "failed"))
    effect, freedom = effects_of(frame, "failed_games", "failed_sizes", n, pools)
    low, high = stats.intervals(failed, n, effect, freedom)
    return frame.drop("failed_games", "failed_sizes", "pool").with_columns(
        failure_rate=pl.Series(failed / n, dtype=pl.Float64),
        failure_low=pl.Series(np.atleast_1d(low), dtype=pl.Float64),
        failure_high=pl.Series(np.atleast_1d(high), dtype=pl.Float64),
    )


def _with_intervals(frame: pl.DataFrame, pools: dict) -> pl.DataFrame:
    """ci_low, ci_high, design_effect and ci_method from decisions, valid, games, sizes
    and the pool's ICC."""
    n, valid = (frame[c].to_numpy().astype(float) for c in ("decisions", "valid"))
    effect, freedom = effects_of(frame, "games", "sizes", n, pools)
    low, high = stats.intervals(valid, n, effect, freedom)
    one = frame["games"].to_numpy() == 1
    method = np.where(
        one & np.isinf(freedom) & (effect > 1),
        "one game: the game is one observation",
        np.where(
            one & (effect > 1),
            "one game: wilson-clustered, ICC from the format's other games",
            np.where(effect > 1, "wilson-clustered", "wilson"),
        ),
    )
    return (
        frame.drop("sizes", "pool")
        .with_columns(
            ci_low=pl.Series(np.atleast_1d(low), dtype=pl.Float64),
            ci_high=pl.Series(np.atleast_1d(high), dtype=pl.Float64),
            design_effect=pl.Series(effect, dtype=pl.Float64).fill_nan(None),
            ci_method=pl.Series(method, dtype=pl.String),
            games=pl.col("games").cast(pl.Int64),
        )
        .with_columns(pl.col("ci_low", "ci_high").fill_nan(None))
    )


# --- the calls that got no answer ------------------------------------------------------


def failed_calls(con, aliases=None) -> pl.DataFrame:
    """One row per format, model, game and failure (the provider's words): `calls`, how
    many failed so, in order."""
    return query_frame(
        con,
        f"""
        SELECT format, who AS model, game_id, failure, count(*) AS calls
        FROM ({decisions_sql(read_aliases(aliases), "game", None)}) WHERE outcome = 'failed'
        GROUP BY ALL ORDER BY format, model, game_id NULLS FIRST, failure
    """,
    )


def failed_calls_in_words(failed: pl.DataFrame) -> str:
    """What `failed_calls` found, in one sentence: how many, the provider's words, and
    where."""
    total = int(failed["calls"].sum() or 0)
    if not total:
        return "Every call got an answer: no call failed at the provider."
    said = failed.group_by("failure").agg(pl.col("calls").sum()).sort(["calls", "failure"], descending=[True, False])
    where = failed.group_by("game_id", maintain_order=True).agg(pl.col("calls").sum())
    words = "; ".join(f"{failure} ×{calls}" for failure, calls in said.iter_rows())
    games = ", ".join(
        f"{calls} in game {game}" if game is not None else f"{calls} in no named game"
        for game, calls in where.iter_rows()
    )
    return f"{total} call{'s' if total != 1 else ''} failed at the provider: {words}; {games}."
