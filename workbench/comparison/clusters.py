"""The decisions as the comparisons count them, and what clustering does to the counts.

`decisions_sql` is the SQL of the decisions with `who` decided (the model the log names,
else the agent; an alias maps a name to the model it stands for) and `cluster`, the unit
that was sampled (a game, or a file). From rows per group and cluster, `spread` sums each
group's counts and `pools_of` measures how the games of each pool (a format) differ
(`stats.Between`), which gives each group its design effect (`effects_of`).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from workbench import stats
from workbench.catalog import DECISIONS
from workbench.errors import WorkbenchError
from workbench.naming import alias_sql
from workbench.outcomes import answered

# What a decision's cluster is: the unit that was sampled.
CLUSTERS = {
    # A game (Damage game, EC4X game, Arena episode, GM session) within its format; a
    # decision no game is named for is clustered with its file.
    "game": "CASE WHEN game_id IS NULL THEN 'file ' || source_id ELSE format || ' ' || game_id END",
    "file": "'file ' || source_id",
    None: "'all'",
}


def decisions_sql(
    aliases: dict[str, str] | None = None, cluster: str | None = "game", failures: str | None = "exclude"
) -> str:
    """The SQL text of a query of the decisions, each with `who` (the model when the log
    names one, else the agent; an alias maps a name to the model it stands for),
    `cluster` (the unit sampled) and `model_from` (model, agent or unknown): a subquery
    for `FROM (...)` or `WITH d AS (...)`. `failures`: "exclude" keeps the answered
    decisions only; "invalid" keeps every decision, a failed call as not valid; None
    keeps every decision as it is (a failed call's `valid` NULL)."""
    if cluster not in CLUSTERS:
        raise WorkbenchError(f"cannot cluster by {cluster!r}; use one of: game, file, or None")
    kept = "true" if failures is None else answered(failures)
    who = alias_sql(aliases or {}, "coalesce(model, agent_id, '(unknown)')")
    # every column as it is, but a failed call's validity where it counts as invalid
    columns = ", ".join(
        "coalesce(valid, false) AS valid" if name == "valid" and failures == "invalid" else name
        for name in DECISIONS.names
    )
    return f"""
    SELECT {columns}, {who} AS who, {CLUSTERS[cluster]} AS cluster,
           CASE WHEN model IS NOT NULL THEN 'model' WHEN agent_id IS NOT NULL THEN 'agent' ELSE 'unknown' END
               AS model_from
    FROM decisions WHERE {kept}
    """


def spread(games: pl.DataFrame, keys: list[str], n: str, hits: str, model_from: str | None = None) -> pl.DataFrame:
    """Per group, from its rows per cluster: `decisions` (or `calls`) and `valid` (or
    `failed`) summed, its clusters (`games`, or `failed_games`) and the sum of their
    squared sizes (`sizes`, or `failed_sizes`), which give the design effect."""
    counts, hit, clusters, sizes = (
        ("decisions", "valid", "games", "sizes") if n == "n" else ("calls", "failed", "failed_games", "failed_sizes")
    )
    return games.group_by(["pool", *keys], maintain_order=True).agg(
        *([pl.col(model_from).min()] if model_from else []),
        pl.col(n).sum().alias(counts),
        pl.col(hits).sum().alias(hit),
        pl.len().cast(pl.Int64).alias(clusters),
        (pl.col(n).cast(pl.Float64) ** 2).sum().alias(sizes),
    )


def effects_of(frame: pl.DataFrame, games: str, sizes: str, n: np.ndarray, pools: dict):
    """Per row: the design effect and degrees of freedom from its pool's ICC."""
    pooled = [pools.get(key, stats.NOTHING) for key in frame["pool"].to_list()]
    size = np.divide(frame[sizes].to_numpy().astype(float), n, out=np.ones_like(n), where=n > 0)
    return stats.effects(
        size,
        frame[games].to_numpy().astype(float),
        [b.cautious for b in pooled],
        [b.freedom for b in pooled],
        [b.high for b in pooled],
    )


INDEPENDENT = stats.Between(0.0, math.inf, 0.0, 0.0)


class _Independent(dict):
    """Decisions taken as independent (cluster=None): ICC 0, known."""

    def get(self, key, default=None):
        return INDEPENDENT

    def __getitem__(self, key):
        return INDEPENDENT


def pools_of(games: pl.DataFrame, keys: list[str], n: str, hits: str, cluster: str | None = "game") -> dict:
    """Per pool (a format, where the rows are per format; else one for all): how its
    games differ (`stats.Between`), from every game of every group in it, games nested
    in their group, given rows per pool, group and cluster with `n` decisions and
    `hits`. Decisions not clustered (`cluster=None`) are independent: ICC 0."""
    if cluster is None:
        return _Independent()
    named = [pl.col(k).cast(pl.String).fill_null("").alias(f"k_{k}") for k in keys]
    games = games.with_columns(named).sort(["pool", *(f"k_{k}" for k in keys), "cluster"])  # the rows in one order
    pools = {}
    for (name,), part in games.group_by("pool", maintain_order=True):
        group = part.select(pl.concat_str([f"k_{k}" for k in keys], separator="\x00")).to_series().to_numpy()
        pools[name] = stats.between_games(part[hits].to_numpy(), part[n].to_numpy(), group)
    return pools
