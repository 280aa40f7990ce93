"""Comparing models honestly: every rate with its interval, its n and its games.

`scorecard` gives, per format and model (or agent where a log names no model), the share
of valid decisions with its 95% interval clustered by game (`stats`), the number of
games, latency and tokens, retries, the rule broken most and, with prices, costs.
`compare_models` sets two models (or many) side by side: the difference in validity with
its interval, paired where both decided the same turns of the same games, a test that
holds at small counts, Holm's correction over every comparison made, and a verdict that
claims a difference only where the p-value and the interval both show one. `plan` says
how many games a question needs.

The counts are aggregated in DuckDB; one row per model and game reaches Python, where
the statistics are computed over numpy arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import polars as pl

from workbench import stats
from workbench.catalog import DECISIONS, holder, ordered_frame, query_frame
from workbench.errors import WorkbenchError
from workbench.naming import alias_sql, read_aliases, two_models
from workbench.outcomes import FAILURES_SAID, INGEST_DECISIONS, answered
from workbench.prices import costs, known_prices

# Below this many aligned turns a paired test says little; the unpaired comparison is used.
MIN_PAIRS = 10
# Beyond this many models in a format, each is compared with the best one, not with every
# other (19,900 pairs for 200 models say little more, and cost minutes).
ALL_PAIRS_UP_TO = 30
POWER = 0.8
GROUPS = {"format": "format", "model": "who", "game_id": "game_id", "agent_id": "agent_id"}
# What a decision's cluster is: the unit that was sampled.
CLUSTERS = {
    # A game (Damage game, EC4X game, Arena episode, GM session) within its format; a
    # decision no game is named for is clustered with its file.
    "game": "CASE WHEN game_id IS NULL THEN 'file ' || source_id ELSE format || ' ' || game_id END",
    "file": "'file ' || source_id",
    None: "'all'",
}


def decided(aliases: dict[str, str] | None = None, cluster: str | None = "game", failures: str | None = "exclude") -> str:
    """The decisions with `who` (the model when the log names one, else the agent; an
    alias maps a name to the model it stands for) and `cluster` (the unit sampled).
    `failures`: "exclude" keeps the answered decisions only; "invalid" keeps every
    decision, a failed call as not valid; None keeps every decision as it is (a failed
    call's `valid` NULL)."""
    if cluster not in CLUSTERS:
        raise WorkbenchError(f"cannot cluster by {cluster!r}; use one of: game, file, or None")
    kept = "true" if failures is None else answered(failures)
    who = alias_sql(aliases, "coalesce(model, agent_id, '(unknown)')")
    # every column as it is, but a failed call's validity where it counts as invalid
    columns = ", ".join("coalesce(valid, false) AS valid" if name == "valid" and failures == "invalid" else name
                        for name in DECISIONS.names)
    return f"""
    SELECT {columns}, {who} AS who, {CLUSTERS[cluster]} AS cluster,
           CASE WHEN model IS NOT NULL THEN 'model' WHEN agent_id IS NOT NULL THEN 'agent' ELSE 'unknown' END
               AS model_from
    FROM decisions WHERE {kept}
    """


# --- the scorecard -------------------------------------------------------------------


def scorecard(con, by=("format", "model"), prices=None, aliases=None, cluster: str | None = "game",
              failures: str = "exclude") -> pl.DataFrame:
    """One row per `by` group (format, model, game_id, agent_id): decisions, valid,
    validity with its 95% interval (ci_low, ci_high) clustered by `cluster` ("game",
    "file", or None for independent decisions), games (the clusters), design_effect and
    ci_method ("wilson", or "wilson-clustered" where the games differ more than
    independent decisions would), latency p50/p95 (ms), tokens per decision (p50),
    retries where the log records them (EC4X attempts past the first), and the error
    rule broken most. Validity is of the answered decisions: a failed call (no answer
    came back) is shown in `failed`, with `failure_rate` of all calls and its interval
    (`failure_low`, `failure_high`), and left out of validity unless `failures="invalid"`
    counts it as an invalid decision. `aliases` (a dict or a JSON/CSV file) maps names to one model.
    Costs (cost_per_decision, cost_per_valid, price_source) use genai-prices' table,
    where it knows the model, and `prices` (a dict or a JSON/CSV file) over it."""
    by = [by] if isinstance(by, str) else list(by)
    keys = _group_keys(by)
    aliases = read_aliases(aliases)
    source = decided(aliases, cluster, failures)
    # Every count comes from one row per group and cluster (`_per_cluster_sql`), read
    # once: the spread over the games and the pools' ICCs are computed here from it.
    games = query_frame(con, _per_cluster_sql(keys, decided(aliases, cluster, None), failures))
    answered_games = games.filter(pl.col("n") > 0)
    frame = _with_intervals(_spread(answered_games, keys, "n", "hits", model_from="model_from").with_columns(
        validity=pl.col("valid") / pl.col("decisions")).join(
        query_frame(con, _scorecard_sql(keys, source)), on=keys, how="left", nulls_equal=True),
        _pools_of(answered_games, keys, "n", "hits", cluster))
    calls = _failure_rates(_spread(games, keys, "calls", "failed", model_from="calls_from"),
                           _pools_of(games, keys, "calls", "failed", cluster))
    # A group whose every call failed has no answered decision: a row all the same.
    frame = calls.join(frame, on=keys, how="left", nulls_equal=True
                       ).with_columns(pl.col("decisions", "valid", "games").fill_null(0),
                                      model_from=pl.coalesce("model_from", "calls_from")).sort(keys, nulls_last=True)
    columns = [*by, *(["model_from"] if "model" in by else []), "decisions", "valid", "validity", "ci_low",
               "ci_high", "games", "design_effect", "ci_method", "failed", "failure_rate", "failure_low",
               "failure_high", "p50_ms", "p95_ms", "p50_tokens", "retries", "top_rule", "top_rule_count"]
    frame = frame.rename({"who": "model"}) if "model" in by else frame
    if "model" in by:  # a price is a model's
        priced = known_prices(frame["model"].unique().to_list(), prices)
        frame = frame.join(costs(con, source, keys, priced), on=by, how="left", nulls_equal=True)
        columns += ["cost_per_decision", "cost_per_valid", "price_source"]
    return frame.select(columns)


def _group_keys(by: list[str]) -> list[str]:
    unknown = [key for key in by if key not in GROUPS]
    if not by or unknown:
        raise WorkbenchError(f"cannot group a scorecard by {', '.join(unknown) or 'nothing'}; "
                             f"use some of: {', '.join(GROUPS)}")
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


def _spread(games: pl.DataFrame, keys: list[str], n: str, hits: str, model_from: str | None = None) -> pl.DataFrame:
    """Per group, from its rows per cluster: `decisions` (or `calls`) and `valid` (or
    `failed`) summed, its clusters (`games`, or `failed_games`) and the sum of their
    squared sizes (`sizes`, or `failed_sizes`), which give the design effect."""
    counts, hit, clusters, sizes = (("decisions", "valid", "games", "sizes") if n == "n" else
                                    ("calls", "failed", "failed_games", "failed_sizes"))
    return games.group_by(["pool", *keys], maintain_order=True).agg(
        *([pl.col(model_from).min()] if model_from else []), pl.col(n).sum().alias(counts), pl.col(hits).sum().alias(hit),
        pl.len().cast(pl.Int64).alias(clusters), (pl.col(n).cast(pl.Float64) ** 2).sum().alias(sizes))


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
    effect, freedom = _effects(frame, "failed_games", "failed_sizes", n, pools)
    low, high = stats.intervals(failed, n, effect, freedom)
    return frame.drop("failed_games", "failed_sizes", "pool").with_columns(
        failure_rate=pl.Series(failed / n, dtype=pl.Float64),
        failure_low=pl.Series(np.atleast_1d(low), dtype=pl.Float64),
        failure_high=pl.Series(np.atleast_1d(high), dtype=pl.Float64))


def _effects(frame: pl.DataFrame, games: str, sizes: str, n: np.ndarray, pools: dict):
    """Per row: the design effect and degrees of freedom from its pool's ICC."""
    pooled = [pools.get(key, stats.NOTHING) for key in frame["pool"].to_list()]
    size = np.divide(frame[sizes].to_numpy().astype(float), n, out=np.ones_like(n), where=n > 0)
    return stats.effects(size, frame[games].to_numpy().astype(float), [b.cautious for b in pooled],
                         [b.freedom for b in pooled], [b.high for b in pooled])


INDEPENDENT = stats.Between(0.0, math.inf, 0.0, 0.0)


class _Independent(dict):
    """Decisions taken as independent (cluster=None): ICC 0, known."""

    def get(self, key, default=None):
        return INDEPENDENT

    def __getitem__(self, key):
        return INDEPENDENT


def _pools_of(games: pl.DataFrame, keys: list[str], n: str, hits: str, cluster: str | None = "game") -> dict:
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


def _with_intervals(frame: pl.DataFrame, pools: dict) -> pl.DataFrame:
    """ci_low, ci_high, design_effect and ci_method from decisions, valid, games, sizes
    and the pool's ICC."""
    n, valid = (frame[c].to_numpy().astype(float) for c in ("decisions", "valid"))
    effect, freedom = _effects(frame, "games", "sizes", n, pools)
    low, high = stats.intervals(valid, n, effect, freedom)
    one = frame["games"].to_numpy() == 1
    method = np.where(one & np.isinf(freedom) & (effect > 1), "one game: the game is one observation",
                      np.where(one & (effect > 1), "one game: wilson-clustered, ICC from the format's other games",
                               np.where(effect > 1, "wilson-clustered", "wilson")))
    return frame.drop("sizes", "pool").with_columns(
        ci_low=pl.Series(np.atleast_1d(low), dtype=pl.Float64), ci_high=pl.Series(np.atleast_1d(high), dtype=pl.Float64),
        design_effect=pl.Series(effect, dtype=pl.Float64).fill_nan(None),
        ci_method=pl.Series(method, dtype=pl.String),
        games=pl.col("games").cast(pl.Int64),
    ).with_columns(pl.col("ci_low", "ci_high").fill_nan(None))


# --- the calls that got no answer ------------------------------------------------------


def failed_calls(con, aliases=None) -> pl.DataFrame:
    """One row per format, model, game and failure (the provider's words): `calls`, how
    many failed so, in order."""
    return query_frame(con, f"""
        SELECT format, who AS model, game_id, failure, count(*) AS calls
        FROM ({decided(read_aliases(aliases), "game", None)}) WHERE outcome = 'failed'
        GROUP BY ALL ORDER BY format, model, game_id NULLS FIRST, failure
    """)


def failed_calls_in_words(failed: pl.DataFrame) -> str:
    """What `failed_calls` found, in one sentence: how many, the provider's words, and
    where."""
    total = int(failed["calls"].sum() or 0)
    if not total:
        return "Every call got an answer: no call failed at the provider."
    said = failed.group_by("failure").agg(pl.col("calls").sum()).sort(["calls", "failure"], descending=[True, False])
    where = failed.group_by("game_id", maintain_order=True).agg(pl.col("calls").sum())
    words = "; ".join(f"{failure} ×{calls}" for failure, calls in said.iter_rows())
    games = ", ".join(f"{calls} in game {game}" if game is not None else f"{calls} in no named game"
                      for game, calls in where.iter_rows())
    return f"{total} call{'s' if total != 1 else ''} failed at the provider: {words}; {games}."


# --- models side by side ----------------------------------------------------------------


def compare_models(con, a: str | None = None, b: str | None = None, format: str | None = None, aliases=None,
                   all_pairs: bool = False, cluster: str | None = "game", failures: str = "exclude") -> pl.DataFrame:
    """Model `a` against model `b` in every format both decided in (or only `format`):
    each one's n, games and validity; the difference a - b with its 95% interval; the
    method; a p-value, Holm's adjustment over every row, `significant` (adjusted p
    below 0.05 and an interval that excludes 0) and a verdict in plain words.

    Paired where both decided at least MIN_PAIRS of the same turns of the same games:
    the difference and both validities over those shared turns (`shared_turns`,
    `shared_games`), Newcombe's paired interval at the effective counts (the design
    effect from the format's ICC). Otherwise unpaired: each model's clustered interval
    combined by Newcombe's method. Either way the p-value is the interval's inversion
    (`stats.inverted`): p < 0.05 exactly where the 95% interval excludes 0. With no `a` and `b`: every pair of models within each format, or, in a format
    of more than ALL_PAIRS_UP_TO models (unless `all_pairs`), each model against the
    best one (the highest lower bound). `compared` says which. A comparison that finds
    no evidence says how many games per model would show its difference (`games_needed`).
    A difference is claimed only from at least MIN_GAMES games on each side (shared
    games, where paired: `games_compared`); one shown within a single game is
    `shown_in_the_games` and told as such. The answered decisions are compared: a failed
    call (no answer came back) is left out, unless `failures="invalid"` counts it as an
    invalid decision; `failures` and every verdict say which."""
    if (a is None) != (b is None):
        raise WorkbenchError("name two models to compare, or none to compare every pair")
    aliases = read_aliases(aliases)
    source = decided(aliases, cluster, failures)
    shares = _shares(con, source, format, cluster)
    if a is not None:
        a, b = two_models(a, b, aliases, "a comparison")
        _known(shares, (a, b), format)
    plans = _planned(con, source, format)
    wanted = _pairs(shares, a, b, all_pairs)
    if not shares:
        raise WorkbenchError(f"no decisions in {holder(con)} to compare; {INGEST_DECISIONS}")
    if not wanted:
        raise WorkbenchError(f"{a!r} and {b!r} share no format" if a is not None else "no two models to compare")
    cells = _shared_turns(con, source, wanted)
    rows = [_compare(fmt, shares[fmt, x], shares[fmt, y], cells.get((fmt, x, y)), how) for fmt, x, y, how in wanted]
    frame = pl.DataFrame(rows, infer_schema_length=None).with_columns(failures=pl.lit(failures))
    frame = frame.with_columns(p_holm=pl.Series(stats.holm(frame["p_value"].to_list()), dtype=pl.Float64))
    shown = ((pl.col("p_holm") < stats.ALPHA) & ((pl.col("ci_low") > 0) | (pl.col("ci_high") < 0))).fill_null(False)
    frame = frame.with_columns(shown_in_the_games=shown,
                               significant=shown & (pl.col("games_compared") >= stats.MIN_GAMES))
    needed = [_games_needed(row, plans.get(row["format"])) for row in frame.iter_rows(named=True)]
    frame = frame.with_columns(games_needed=pl.Series(needed, dtype=pl.Int64))
    return frame.with_columns(verdict=pl.Series([verdict(row) for row in frame.iter_rows(named=True)], dtype=pl.String))


@dataclass
class Share:
    """A model's decisions in one format: its clustered share and medians."""

    who: str
    share: stats.Clustered
    p50_ms: float | None
    p50_tokens: float | None
    between: stats.Between = stats.NOTHING  # how the format's games differ


def _shares(con, source: str, format: str | None, cluster: str | None = "game") -> dict[tuple[str, str], Share]:
    """Per format and model: its validity, clustered by game, and its medians."""
    kept = f"SELECT * FROM ({source}) WHERE $format IS NULL OR format = $format"
    games = query_frame(con, f"""
        SELECT format AS pool, format, who, cluster, count(*) AS n, count(*) FILTER (WHERE valid) AS hits
        FROM ({kept}) GROUP BY ALL
    """, {"format": format})
    if format is not None and games.is_empty():
        raise WorkbenchError(f"no decisions in format {format!r}")
    medians = query_frame(con, f"""
        SELECT format, who, quantile_cont(latency_ms, 0.5) AS p50_ms, quantile_cont(tokens, 0.5) AS p50_tokens
        FROM ({kept}) GROUP BY ALL
    """, {"format": format})
    frame = _spread(games, ["format", "who"], "n", "hits").join(medians, on=["format", "who"]).sort("format", "who")
    pools = _pools_of(games, ["format", "who"], "n", "hits", cluster)
    n = frame["decisions"].to_numpy().astype(float)
    effect, freedom = _effects(frame, "games", "sizes", n, pools)
    return {(row["format"], row["who"]): Share(row["who"], stats.Clustered(row["valid"], row["decisions"], row["games"],
                                                                          float(effect[i]), float(freedom[i])),
                                               row["p50_ms"], row["p50_tokens"], pools[row["format"]])
            for i, row in enumerate(frame.iter_rows(named=True))}


def _known(shares: dict, models: tuple[str, str], format: str | None) -> None:
    known = {who for _, who in shares}
    unknown = [m for m in models if m not in known]
    if unknown:
        raise WorkbenchError(f"no decisions by {', '.join(map(repr, unknown))}"
                             f"{f' in {format}' if format else ''}; known: {', '.join(sorted(known))}")


def _pairs(shares: dict, a: str | None, b: str | None, all_pairs: bool) -> list[tuple[str, str, str, str]]:
    """(format, x, y, how compared) for every comparison to make."""
    by_format: dict[str, list[str]] = {}
    for fmt, who in shares:
        by_format.setdefault(fmt, []).append(who)
    wanted = []
    for fmt, models in by_format.items():
        if a is not None:
            wanted += [(fmt, a, b, "the pair asked for")] if a in models and b in models else []
        elif len(models) <= ALL_PAIRS_UP_TO or all_pairs:
            wanted += [(fmt, x, y, "every pair") for x, y in combinations(sorted(models), 2)]
        else:
            best = min(models, key=lambda m: (-shares[fmt, m].share.interval[0], -shares[fmt, m].share.n, m))
            wanted += [(fmt, best, other, "each against the best") for other in sorted(models) if other != best]
    return wanted


def _shared_turns(con, source: str, wanted: list[tuple[str, str, str, str]]) -> dict[tuple, stats.Paired]:
    """Per pair: the shared turns (same format, game and turn) per game, as the four
    cells of the paired table. A model that decided a turn more than once is valid
    there if every decision was."""
    frame = ordered_frame(con, f"""
        WITH d AS ({source}),
        wanted AS (SELECT unnest($formats) AS format, unnest($xs) AS x, unnest($ys) AS y),
        turns AS (SELECT format, game_id, turn, who, any_value(cluster) AS cluster, bool_and(valid) AS valid FROM d
                  WHERE game_id IS NOT NULL AND turn IS NOT NULL
                    AND format IN (SELECT format FROM wanted)
                    AND (who IN (SELECT x FROM wanted) OR who IN (SELECT y FROM wanted))
                  GROUP BY ALL)
        SELECT w.format, w.x, w.y, t1.cluster AS cluster,
               count(*) FILTER (WHERE t1.valid AND t2.valid) AS both,
               count(*) FILTER (WHERE t1.valid AND NOT t2.valid) AS only_a,
               count(*) FILTER (WHERE NOT t1.valid AND t2.valid) AS only_b,
               count(*) FILTER (WHERE NOT t1.valid AND NOT t2.valid) AS neither
        FROM wanted w
        JOIN turns t1 ON t1.format = w.format AND t1.who = w.x
        JOIN turns t2 ON t2.format = w.format AND t2.who = w.y AND t2.game_id = t1.game_id AND t2.turn = t1.turn
        GROUP BY ALL
    """, {"formats": [w[0] for w in wanted], "xs": [w[1] for w in wanted], "ys": [w[2] for w in wanted]})
    found = {}
    for (fmt, x, y), games in frame.group_by("format", "x", "y", maintain_order=True):
        games = games.group_by("cluster", maintain_order=True).agg(pl.col("both", "only_a", "only_b", "neither").sum())
        found[fmt, x, y] = stats.Paired(*(games[c].to_numpy() for c in ("both", "only_a", "only_b", "neither")))
    return found


def _compare(fmt: str, a: Share, b: Share, pairs: stats.Paired | None, how: str) -> dict:
    row = {"format": fmt, "a": a.who, "b": b.who, "compared": how, "n_a": a.share.n, "n_b": b.share.n,
           "games_a": a.share.games, "games_b": b.share.games,
           "validity_a": a.share.validity, "validity_b": b.share.validity}
    shared = {"shared_turns": 0, "shared_games": 0, "validity_a_shared": None, "validity_b_shared": None}
    # The games the comparison rests on: those both played, or the fewer of either's.
    games = min(a.share.games, b.share.games)
    if pairs is not None and pairs.turns >= MIN_PAIRS:
        pairs = stats.Paired(pairs.both, pairs.only_a, pairs.only_b, pairs.neither, a.between)
        difference, low, high = stats.paired_interval(pairs)
        p_value = stats.paired_test(pairs)
        shared = {"shared_turns": pairs.turns, "shared_games": pairs.games,
                  "validity_a_shared": pairs.validity_a, "validity_b_shared": pairs.validity_b}
        games = pairs.games
        method = (f"paired on {pairs.turns} shared turns in {_games(pairs.games)}: Newcombe paired interval and "
                  f"its test" + (f", design effect {pairs.design_effect:.2g}" if pairs.design_effect > 1 else ""))
    else:
        difference, low, high = stats.newcombe(a.share, b.share)
        p_value, _ = stats.unpaired_test(a.share, b.share)
        effects = [f"{s.design_effect:.2g}" for s in (a.share, b.share)]
        clustered = a.share.clustered or b.share.clustered
        method = "unpaired: Newcombe interval and its test" + (f", design effects {' and '.join(effects)}"
                                                                if clustered else "")
        if pairs is not None:
            shared["shared_turns"], shared["shared_games"] = pairs.turns, pairs.games
    return {**row, "difference": difference, "ci_low": low, "ci_high": high, **shared, "games_compared": games,
            "method": method, "p_value": p_value, "latency_p50_diff_ms": _minus(a.p50_ms, b.p50_ms),
            "tokens_p50_diff": _minus(a.p50_tokens, b.p50_tokens)}


def _minus(x, y):
    return None if x is None or y is None else x - y


def _games(count: int) -> str:
    return f"{count} game" if count == 1 else f"{count} games"


def how_compared(frame: pl.DataFrame) -> list[str]:
    """What `compare_models` did, per format, in words: which pairs, how many, and the
    correction over them all."""
    lines = []
    for (fmt, how), rows in frame.group_by("format", "compared", maintain_order=True):
        models = len(set(rows["a"].to_list()) | set(rows["b"].to_list()))
        if how == "each against the best":
            lines.append(f"{fmt}: {models} models, each compared with the best, {rows['a'][0]} (the highest lower "
                         f"bound of validity): {rows.height} comparisons; --all-pairs for every pair")
        elif how == "every pair":
            lines.append(f"{fmt}: every pair of {models} models: {rows.height} comparisons")
    lines.append(f"p-values Holm-corrected over all {frame.height} comparison{'s' if frame.height != 1 else ''}")
    return lines


def verdict(row: dict) -> str:
    """The row in plain words. A difference is named only when `significant`; its number,
    sign and interval are then all the better model's lead over the other, and the
    better model is named first throughout. A difference the tests show within fewer
    than MIN_GAMES games is told as what it is: a result about that game."""
    first, second = ("a", "b") if row["difference"] > 0 else ("b", "a")
    lead, low, high = row["difference"], row["ci_low"], row["ci_high"]
    if first == "b":
        lead, low, high = -lead, -high, -low
    named = (f"{row[first]} is more often valid than {row[second]}: {lead * 100:+.1f} points "
             f"(95% CI {low * 100:+.1f} to {high * 100:+.1f}")
    # Without evidence the difference is told all the same: which model is ahead here, by
    # how much, and the interval, which spans no difference.
    ahead = (f"{row[first]} ahead of {row[second]} by {lead * 100:+.1f} points" if lead else
             f"{row['a']} and {row['b']} level")
    ahead += f" (95% CI {low * 100:+.1f} to {high * 100:+.1f}"
    if not row["significant"] and not row.get("shown_in_the_games"):
        first, second = "a", "b"
    if row["shared_turns"] >= MIN_PAIRS and row["validity_a_shared"] is not None:
        # each model's validity on those turns, beside the difference made of them (the
        # whole samples' validities may differ by another amount)
        where = (f"on {row['shared_turns']} shared turns in {_games(row['shared_games'])}: {row['a']} "
                 f"{row['validity_a_shared']:.1%} valid there, {row['b']} {row['validity_b_shared']:.1%}")
    else:
        where = (f"{row[first]} {row['n_' + first]} decisions in {_games(row['games_' + first])}, "
                 f"{row[second]} {row['n_' + second]} in {_games(row['games_' + second])}")
    where += FAILURES_SAID[row.get("failures", "exclude")]
    if row["significant"]:
        return f"{named}; {where})"
    if row.get("shown_in_the_games"):
        text = (f"no evidence of a difference beyond one game: in it, {named}; {where}), but one game cannot "
                f"tell a model from the game it played")
    else:
        text = f"no evidence of a difference: {ahead}; {where})"
    if row.get("games_needed"):
        text += (f"; about {row['games_needed']} games per model would show a {abs(row['difference']) * 100:.1f}"
                 f"-point difference at {POWER:.0%} power")
    return text


# --- how many games a question needs -----------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What a format's (or every format's) decisions say about planning a comparison: the
    ICC estimated from `games` model-game clusters and its upper bound (`icc_high`,
    one-sided at stats.PLAN_ICC_LEVEL), which the plan uses: an ICC from few games is
    often far below the truth (from a 3-game pilot, under half the games needed were
    planned 17-42% of the time in simulation; from the bound, 1-14%)."""

    validity: float
    decisions_per_game: float
    icc: float
    games: int  # model-game clusters seen
    models: int
    icc_high: float | None = None

    @property
    def planning_icc(self) -> float:
        return self.icc if self.icc_high is None else max(self.icc, self.icc_high)

    def games_needed(self, difference: float, validity: float | None = None, power: float = POWER,
                     level: float = stats.LEVEL) -> int:
        return stats.games_needed(difference, self.validity if validity is None else validity,
                                  self.decisions_per_game, self.planning_icc, power, level)


def plan(con, format: str | None = None, aliases=None, cluster: str | None = "game",
         failures: str = "exclude") -> Plan:
    """Validity, decisions per game and the intra-class correlation of validity within
    games (games nested in their model) with its upper bound, over `format`'s answered
    decisions or every format's (`failures="invalid"`: every call, a failed one as
    invalid)."""
    plans = _planned(con, decided(read_aliases(aliases), cluster, failures), format, pooled=format is None)
    if not plans:
        raise WorkbenchError(f"no decisions{f' in format {format!r}' if format else ''} in {holder(con)} to plan from")
    return next(iter(plans.values()))


def _planned(con, source: str, format: str | None, pooled: bool = False) -> dict[str, Plan]:
    """Per format (or one for all, `pooled`): the Plan its decisions give."""
    frame = ordered_frame(con, f"""
        SELECT format, who, cluster, count(*) AS n, count(*) FILTER (WHERE valid) AS valid
        FROM ({source}) WHERE $format IS NULL OR format = $format GROUP BY ALL
    """, {"format": format})
    plans = {}
    groups = [("all", frame)] if pooled else [(key[0], part) for key, part in frame.group_by("format", maintain_order=True)]
    for name, part in groups:
        if part.is_empty():
            continue
        group = (part["format"] + "\x00" + part["who"]).to_numpy()
        n, valid = part["n"].to_numpy(), part["valid"].to_numpy()
        between = stats.between_games(valid, n, group)
        icc = 0.0 if math.isnan(between.icc) else between.icc
        # nothing to measure the ICC with: plan as if each game were one decision
        high = 1.0 if math.isnan(between.high) else between.high
        plans[name] = Plan(float(valid.sum() / n.sum()), float(n.sum() / part.height), icc, part.height,
                           len(set(group)), high)
    return plans


def _games_needed(row: dict, planned: Plan | None) -> int | None:
    """For a comparison that found no evidence: games per model to show its difference
    (the better model's validity as the baseline)."""
    if row["significant"] or planned is None or not row["difference"]:
        return None
    better = max(row["validity_a"], row["validity_b"])
    difference = abs(row["difference"])
    if better - difference < 0 and better + difference > 1:
        return None
    return planned.games_needed(difference, validity=better)


def sample_size(difference: float | None = None, validity: float | None = None,
                decisions_per_game: float | None = None, icc: float | None = None, power: float = POWER,
                level: float = stats.LEVEL, *, con=None, format: str | None = None, aliases=None,
                failures: str = "exclude") -> int:
    """Games per model to detect `difference` in validity at `power` and `level`.

    `sample_size(difference, validity, decisions_per_game, icc)` (or each by keyword):
    the test's own power calculation (`stats.games_needed`). With `con=` (a connection),
    what is not given is estimated from the database, the ICC at its upper bound
    (`Plan.planning_icc`)."""
    if difference is None:
        raise WorkbenchError("sample_size needs the difference to detect (difference=0.05 for 5 points)")
    if con is not None:
        planned = plan(con, format, aliases, failures=failures)
        validity = planned.validity if validity is None else validity
        decisions_per_game = planned.decisions_per_game if decisions_per_game is None else decisions_per_game
        icc = planned.planning_icc if icc is None else icc
    missing = [name for name, value in (("validity", validity), ("decisions_per_game", decisions_per_game),
                                        ("icc", icc)) if value is None]
    if missing:
        raise WorkbenchError(f"sample_size needs {', '.join(missing)} (or con= a connection to estimate them from)")
    check_plan(difference, validity, decisions_per_game, icc, power, level)
    return stats.games_needed(difference, validity, decisions_per_game, icc, power, level)


def plan_numbers(con, difference: float, power: float = POWER, format: str | None = None, aliases=None,
                 validity=None, decisions_per_game=None, icc=None, failures: str = "exclude") -> dict:
    """`workbench plan --json`: games per model to detect `difference` and each number it
    rests on (`icc` and `games`, `models` as estimated from the database, None without
    one; `icc_planning` the one planned with: given, else the estimate's upper bound).
    Without a connection every input must be given."""
    estimated = plan(con, format, aliases, failures=failures) if con is not None else None
    validity = estimated.validity if validity is None else validity
    decisions_per_game = estimated.decisions_per_game if decisions_per_game is None else decisions_per_game
    planning = estimated.planning_icc if icc is None and estimated is not None else icc
    return {"games_per_model": sample_size(difference, validity, decisions_per_game, planning, power),
            "difference": abs(difference), "power": power, "level": stats.LEVEL, "validity": validity,
            "decisions_per_game": decisions_per_game, "icc_planning": planning,
            "icc_given": icc is not None, "design_effect": 1 + (decisions_per_game - 1) * planning,
            "icc": estimated.icc if estimated is not None else None,
            "games": estimated.games if estimated is not None else None,
            "models": estimated.models if estimated is not None else None,
            "format": format, "failures": failures}


def plan_in_words(con, difference: float, power: float = POWER, format: str | None = None, aliases=None,
                  db_label: str = "the database", validity=None, decisions_per_game=None, icc=None,
                  failures: str = "exclude") -> str:
    """`workbench plan`: games per model to detect `difference`, and what that rests on
    (`plan_numbers`). Without a connection every input must be given."""
    numbers = plan_numbers(con, difference, power, format, aliases, validity, decisions_per_game, icc, failures)
    text = (f"about {numbers['games_per_model']} games per model to detect {numbers['difference'] * 100:g} points "
            f"at {power:.0%} power (95% level): validity {numbers['validity']:.1%}, "
            f"{numbers['decisions_per_game']:.3g} decisions per game, ")
    if not numbers["icc_given"] and numbers["icc"] is not None:
        text += (f"ICC {numbers['icc']:.3f} from {_games(numbers['games'])}; planning at {numbers['icc_planning']:.3f}, "
                 f"its {stats.PLAN_ICC_LEVEL:.0%} upper bound (design effect {numbers['design_effect']:.2f})")
    else:
        text += f"ICC {numbers['icc_planning']:.3f} (design effect {numbers['design_effect']:.2f})"
    if numbers["games"] is not None:
        scope = f"{format}'s" if format else "every format's"
        text += (f"; estimated from {scope} {numbers['games']} games of {numbers['models']} models in {db_label}"
                 f"{FAILURES_SAID[failures]} (a value given on the command line replaces its estimate)")
    return text


def check_plan(difference, validity, decisions_per_game, icc, power, level) -> None:
    """Each input of a sample size within its range, or one line saying which is not."""
    checks = [("difference", difference, 0 < abs(difference) < 1, "between 0 and 1 (0.05 for 5 points)"),
              ("validity", validity, 0 <= validity <= 1, "between 0 and 1"),
              ("decisions per game", decisions_per_game, decisions_per_game >= 1, "at least 1"),
              ("icc", icc, 0 <= icc <= 1, "between 0 and 1"),
              ("power", power, 0 < power < 1, "between 0 and 1"),
              ("level", level, 0 < level < 1, "between 0 and 1")]
    for name, value, holds, expected in checks:
        if not (isinstance(value, (int, float)) and math.isfinite(value) and holds):
            raise WorkbenchError(f"{name} must be {expected}, not {value!r}")
    if validity - abs(difference) < 0 and validity + abs(difference) > 1:
        raise WorkbenchError(f"a difference of {abs(difference):g} does not fit around a validity of {validity:g}")


# --- can I stop now? ------------------------------------------------------------------------


def sequential(con, a: str | None = None, b: str | None = None, format: str | None = None, aliases=None,
               all_pairs: bool = False, cluster: str | None = "game", failures: str = "exclude") -> pl.DataFrame:
    """An anytime-valid comparison of `a` and `b` (or every pair, as `compare_models`
    picks them) that may be looked at after every game without raising its chance of a
    false difference above 5%: an e-process (`stats.e_process`) betting on each game's
    difference. Paired where both decided at least MIN_PAIRS of the same turns: each
    shared game's difference over its shared turns; otherwise the i-th game of each, in
    the order their files were read. Columns: format, a, b, paired, games (bet on),
    difference (the mean of the games' differences), e_value (now), p_value (anytime-
    valid: 1 / the largest e-value so far), decided, decided_after (games) and verdict."""
    if (a is None) != (b is None):
        raise WorkbenchError("name two models to compare, or none to compare every pair")
    aliases = read_aliases(aliases)
    source = decided(aliases, cluster, failures)
    shares = _shares(con, source, format, cluster)
    if not shares:
        raise WorkbenchError(f"no decisions in {holder(con)} to compare; {INGEST_DECISIONS}")
    if a is not None:
        a, b = two_models(a, b, aliases, "a comparison")
        _known(shares, (a, b), format)
    wanted = _pairs(shares, a, b, all_pairs)
    if not wanted:
        raise WorkbenchError(f"{a!r} and {b!r} share no format" if a is not None else "no two models to compare")
    cells = _shared_turns(con, source, wanted)
    games = query_frame(con, f"""
        SELECT format, who, cluster, count(*) AS n, count(*) FILTER (WHERE valid) AS valid, min(source_id) AS first
        FROM ({source}) WHERE $format IS NULL OR format = $format GROUP BY ALL ORDER BY format, who, first, cluster
    """, {"format": format})
    rates = {(fmt, who): (part["valid"] / part["n"]).to_numpy()
             for (fmt, who), part in games.group_by("format", "who", maintain_order=True)}
    rows = []
    for fmt, x, y, _ in wanted:
        pairs = cells.get((fmt, x, y))
        paired = pairs is not None and pairs.turns >= MIN_PAIRS
        if paired:
            differences = ((pairs.only_a - pairs.only_b) / np.maximum(pairs.sizes, 1))[pairs.sizes > 0]
        else:
            mine, theirs = rates[fmt, x], rates[fmt, y]
            played = min(len(mine), len(theirs))
            differences = mine[:played] - theirs[:played]
        test = stats.sequential(list(differences))
        row = {"format": fmt, "a": x, "b": y, "paired": paired, "games": len(differences),
               "difference": float(np.mean(differences)) if len(differences) else None,
               "e_value": test.e_value, "p_value": test.p_value, "decided": test.decided,
               "decided_after": test.decided_after}
        rows.append({**row, "verdict": sequential_verdict(row)})
    return pl.DataFrame(rows, schema_overrides={"difference": pl.Float64, "decided_after": pl.Int64},
                        infer_schema_length=None)


def sequential_verdict(row: dict) -> str:
    """A sequential comparison in words."""
    how = "paired games" if row["paired"] else "games of each"
    if row["decided"]:
        better, other = (row["a"], row["b"]) if row["difference"] > 0 else (row["b"], row["a"])
        return (f"{better} is more often valid than {other}: decided after {_games(row['decided_after'])} "
                f"({how}; e-value {row['e_value']:.3g}, anytime-valid p {row['p_value']:.3g}); the games may stop")
    return (f"not decided after {_games(row['games'])} ({how}; e-value {row['e_value']:.3g}, "
            f"{1 / stats.ALPHA:.0f} decides); play on, and look again after any game")
