"""Models side by side: the difference in validity of two models (or many) with its
interval, paired where both decided the same turns of the same games, a test that holds
at small counts, Holm's correction over every comparison made, and a verdict that claims
a difference only where the p-value and the interval both show one; and the sequential
comparison, which may be looked at after every game.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import polars as pl

from workbench import stats
from workbench.comparison.clusters import decisions_sql, effects_of, pools_of, spread
from workbench.comparison.plans import POWER, _games_needed, games_in_words, plans_by_format
from workbench.connection import holder, ordered_frame, query_frame
from workbench.errors import WorkbenchError
from workbench.naming import read_aliases, two_models
from workbench.outcomes import FAILURES_SAID, INGEST_DECISIONS

# Below this many aligned turns a paired test says little; the unpaired comparison is used.
MIN_PAIRS = 10
# Beyond this many models in a format, each is compared with the best one, not with every
# other (19,900 pairs for 200 models say little more, and cost minutes).
ALL_PAIRS_UP_TO = 30


def compare_models(
    con,
    a: str | None = None,
    b: str | None = None,
    format: str | None = None,
    aliases=None,
    all_pairs: bool = False,
    cluster: str | None = "game",
    failures: str = "exclude",
) -> pl.DataFrame:
    """Model a against b (or every pair, or each against the best beyond 30 models),
    per format, with clustered intervals, exact tests, Holm's correction and a verdict
    in plain words.

    Paired where both decided at least 10 (MIN_PAIRS) of the same turns of the same
    games: the difference and both validities over those shared turns, Newcombe's paired
    interval at the effective counts (the design effect from the format's ICC).
    Otherwise unpaired: Newcombe's interval over each model's clustered interval. Either
    way the p-value is the interval's own inversion (`stats.inverted`), so the two never
    disagree. A difference is claimed only where the Holm-adjusted p-value is below 0.05,
    the interval excludes 0 and each side has at least 2 games (shared games, where
    paired); one shown within a single game is `shown_in_the_games` and told as such. A
    comparison that finds no evidence says how many games per model would show its
    difference. With no `a` and `b`: every pair of models within each format, or, in a
    format of more than 30 (ALL_PAIRS_UP_TO) models unless `all_pairs`, each model
    against the best one (the highest lower bound).

    Args:
        con: a connection to a workbench database (or a Parquet tree open on Spark).
        a: a model (or an alias); give both `a` and `b`, or neither for every pair.
        b: the model `a` is compared with.
        format: only this format; None: every format both decided in.
        aliases: a dict, or a JSON or CSV file, mapping names to one model.
        all_pairs: compare every pair even in a format of more than 30 models.
        cluster: what intervals are clustered by: `game`, `file`, or None.
        failures: `exclude` (compare the answered decisions) or `invalid` (a failed call
            counted against its model as an invalid decision).

    Returns:
        A polars DataFrame, one row per comparison: `format`, `a`, `b`, `compared` (which
        pairs), `n_a`, `n_b`, `games_a`, `games_b`, `validity_a`, `validity_b`, `difference`
        (a - b) with `ci_low`, `ci_high` (95%), `shared_turns`, `shared_games`,
        `validity_a_shared`, `validity_b_shared`, `games_compared`, `method`, `p_value`,
        `latency_p50_diff_ms`, `tokens_p50_diff`, `failures` (how failed calls were
        counted), `p_holm`, `shown_in_the_games` (shown, but perhaps within a single game),
        `significant`, `games_needed` (per model, to show the difference where no evidence
        was found) and `verdict` (in plain words, saying that too).

    Raises:
        WorkbenchError: only one of `a` and `b` given, a model or format with no decisions,
            two models that share no format, or nothing to compare.
    """
    if (a is None) != (b is None):
        raise WorkbenchError("name two models to compare, or none to compare every pair")
    aliases = read_aliases(aliases)
    source = decisions_sql(aliases, cluster, failures)
    shares = _shares(con, source, format, cluster)
    if a is not None and b is not None:
        a, b = two_models(a, b, aliases, "a comparison")
        _known(shares, (a, b), format)
    plans = plans_by_format(con, source, format)
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
    frame = frame.with_columns(
        shown_in_the_games=shown, significant=shown & (pl.col("games_compared") >= stats.MIN_GAMES)
    )
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
    games = query_frame(
        con,
        f"""
        SELECT format AS pool, format, who, cluster, count(*) AS n, count(*) FILTER (WHERE valid) AS hits
        FROM ({kept}) GROUP BY ALL
    """,
        {"format": format},
    )
    if format is not None and games.is_empty():
        raise WorkbenchError(f"no decisions in format {format!r}")
    medians = query_frame(
        con,
        f"""
        SELECT format, who, quantile_cont(latency_ms, 0.5) AS p50_ms, quantile_cont(tokens, 0.5) AS p50_tokens
        FROM ({kept}) GROUP BY ALL
    """,
        {"format": format},
    )
    frame = spread(games, ["format", "who"], "n", "hits").join(medians, on=["format", "who"]).sort("format", "who")
    pools = pools_of(games, ["format", "who"], "n", "hits", cluster)
    n = frame["decisions"].to_numpy().astype(float)
    effect, freedom = effects_of(frame, "games", "sizes", n, pools)
    return {
        (row["format"], row["who"]): Share(
            row["who"],
            stats.Clustered(row["valid"], row["decisions"], row["games"], float(effect[i]), float(freedom[i])),
            row["p50_ms"],
            row["p50_tokens"],
            pools[row["format"]],
        )
        for i, row in enumerate(frame.iter_rows(named=True))
    }


def _known(shares: dict, models: tuple[str, str], format: str | None) -> None:
    known = {who for _, who in shares}
    unknown = [m for m in models if m not in known]
    if unknown:
        raise WorkbenchError(
            f"no decisions by {', '.join(map(repr, unknown))}"
            f"{f' in {format}' if format else ''}; known: {', '.join(sorted(known))}"
        )


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
    frame = ordered_frame(
        con,
        f"""
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
    """,
        {"formats": [w[0] for w in wanted], "xs": [w[1] for w in wanted], "ys": [w[2] for w in wanted]},
    )
    found = {}
    for (fmt, x, y), games in frame.group_by("format", "x", "y", maintain_order=True):
        games = games.group_by("cluster", maintain_order=True).agg(pl.col("both", "only_a", "only_b", "neither").sum())
        found[fmt, x, y] = stats.Paired(*(games[c].to_numpy() for c in ("both", "only_a", "only_b", "neither")))
    return found


def _compare(fmt: str, a: Share, b: Share, pairs: stats.Paired | None, how: str) -> dict:
    row = {
        "format": fmt,
        "a": a.who,
        "b": b.who,
        "compared": how,
        "n_a": a.share.n,
        "n_b": b.share.n,
        "games_a": a.share.games,
        "games_b": b.share.games,
        "validity_a": a.share.validity,
        "validity_b": b.share.validity,
    }
    shared: dict[str, float | None] = {
        "shared_turns": 0,
        "shared_games": 0,
        "validity_a_shared": None,
        "validity_b_shared": None,
    }
    # The games the comparison rests on: those both played, or the fewer of either's.
    games = min(a.share.games, b.share.games)
    if pairs is not None and pairs.turns >= MIN_PAIRS:
        pairs = stats.Paired(pairs.both, pairs.only_a, pairs.only_b, pairs.neither, a.between)
        difference, low, high = stats.paired_interval(pairs)
        p_value = stats.paired_test(pairs)
        shared = {
            "shared_turns": pairs.turns,
            "shared_games": pairs.games,
            "validity_a_shared": pairs.validity_a,
            "validity_b_shared": pairs.validity_b,
        }
        games = pairs.games
        method = (
            f"paired on {pairs.turns} shared turns in {games_in_words(pairs.games)}: Newcombe paired "
            f"interval and its test" + (f", design effect {pairs.design_effect:.2g}" if pairs.design_effect > 1 else "")
        )
    else:
        difference, low, high = stats.newcombe(a.share, b.share)
        p_value, _ = stats.unpaired_test(a.share, b.share)
        effects = [f"{s.design_effect:.2g}" for s in (a.share, b.share)]
        clustered = a.share.clustered or b.share.clustered
        method = "unpaired: Newcombe interval and its test" + (
            f", design effects {' and '.join(effects)}" if clustered else ""
        )
        if pairs is not None:
            shared["shared_turns"], shared["shared_games"] = pairs.turns, pairs.games
    return {
        **row,
        "difference": difference,
        "ci_low": low,
        "ci_high": high,
        **shared,
        "games_compared": games,
        "method": method,
        "p_value": p_value,
        "latency_p50_diff_ms": _minus(a.p50_ms, b.p50_ms),
        "tokens_p50_diff": _minus(a.p50_tokens, b.p50_tokens),
    }


def _minus(x, y):
    return None if x is None or y is None else x - y


def how_compared(frame: pl.DataFrame) -> list[str]:
    """What `compare_models` did, per format, in words: which pairs, how many, and the
    correction over them all."""
    lines = []
    for (fmt, how), rows in frame.group_by("format", "compared", maintain_order=True):
        models = len(set(rows["a"].to_list()) | set(rows["b"].to_list()))
        if how == "each against the best":
            lines.append(
                f"{fmt}: {models} models, each compared with the best, {rows['a'][0]} (the highest lower "
                f"bound of validity): {rows.height} comparisons; --all-pairs for every pair"
            )
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
    named = (
        f"{row[first]} is more often valid than {row[second]}: {lead * 100:+.1f} points "
        f"(95% CI {low * 100:+.1f} to {high * 100:+.1f}"
    )
    # Without evidence the difference is told all the same: which model is ahead here, by
    # how much, and the interval, which spans no difference.
    ahead = (
        f"{row[first]} ahead of {row[second]} by {lead * 100:+.1f} points"
        if lead
        else f"{row['a']} and {row['b']} level"
    )
    ahead += f" (95% CI {low * 100:+.1f} to {high * 100:+.1f}"
    if not row["significant"] and not row.get("shown_in_the_games"):
        first, second = "a", "b"
    if row["shared_turns"] >= MIN_PAIRS and row["validity_a_shared"] is not None:
        # each model's validity on those turns, beside the difference made of them (the
        # whole samples' validities may differ by another amount)
        where = (
            f"on {row['shared_turns']} shared turns in {games_in_words(row['shared_games'])}: {row['a']} "
            f"{row['validity_a_shared']:.1%} valid there, {row['b']} {row['validity_b_shared']:.1%}"
        )
    else:
        where = (
            f"{row[first]} {row['n_' + first]} decisions in {games_in_words(row['games_' + first])}, "
            f"{row[second]} {row['n_' + second]} in {games_in_words(row['games_' + second])}"
        )
    where += FAILURES_SAID[row.get("failures", "exclude")]
    if row["significant"]:
        return f"{named}; {where})"
    if row.get("shown_in_the_games"):
        text = (
            f"no evidence of a difference beyond one game: in it, {named}; {where}), but one game cannot "
            f"tell a model from the game it played"
        )
    else:
        text = f"no evidence of a difference: {ahead}; {where})"
    if row.get("games_needed"):
        text += (
            f"; about {row['games_needed']} games per model would show a {abs(row['difference']) * 100:.1f}"
            f"-point difference at {POWER:.0%} power"
        )
    return text


# --- can I stop now? ------------------------------------------------------------------------


def sequential(
    con,
    a: str | None = None,
    b: str | None = None,
    format: str | None = None,
    aliases=None,
    all_pairs: bool = False,
    cluster: str | None = "game",
    failures: str = "exclude",
) -> pl.DataFrame:
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
    source = decisions_sql(aliases, cluster, failures)
    shares = _shares(con, source, format, cluster)
    if not shares:
        raise WorkbenchError(f"no decisions in {holder(con)} to compare; {INGEST_DECISIONS}")
    if a is not None and b is not None:
        a, b = two_models(a, b, aliases, "a comparison")
        _known(shares, (a, b), format)
    wanted = _pairs(shares, a, b, all_pairs)
    if not wanted:
        raise WorkbenchError(f"{a!r} and {b!r} share no format" if a is not None else "no two models to compare")
    cells = _shared_turns(con, source, wanted)
    games = query_frame(
        con,
        f"""
        SELECT format, who, cluster, count(*) AS n, count(*) FILTER (WHERE valid) AS valid, min(source_id) AS first
        FROM ({source}) WHERE $format IS NULL OR format = $format GROUP BY ALL ORDER BY format, who, first, cluster
    """,
        {"format": format},
    )
    rates = {
        (fmt, who): (part["valid"] / part["n"]).to_numpy()
        for (fmt, who), part in games.group_by("format", "who", maintain_order=True)
    }
    rows = []
    for fmt, x, y, _ in wanted:
        pairs = cells.get((fmt, x, y))
        paired = pairs is not None and pairs.turns >= MIN_PAIRS
        if pairs is not None and paired:
            differences = ((pairs.only_a - pairs.only_b) / np.maximum(pairs.sizes, 1))[pairs.sizes > 0]
        else:
            mine, theirs = rates[fmt, x], rates[fmt, y]
            played = min(len(mine), len(theirs))
            differences = mine[:played] - theirs[:played]
        test = stats.sequential(list(differences))
        row = {
            "format": fmt,
            "a": x,
            "b": y,
            "paired": paired,
            "games": len(differences),
            "difference": float(np.mean(differences)) if len(differences) else None,
            "e_value": test.e_value,
            "p_value": test.p_value,
            "decided": test.decided,
            "decided_after": test.decided_after,
        }
        rows.append({**row, "verdict": sequential_verdict(row)})
    return pl.DataFrame(
        rows, schema_overrides={"difference": pl.Float64, "decided_after": pl.Int64}, infer_schema_length=None
    )


def sequential_verdict(row: dict) -> str:
    """A sequential comparison in words."""
    how = "paired games" if row["paired"] else "games of each"
    if row["decided"]:
        better, other = (row["a"], row["b"]) if row["difference"] > 0 else (row["b"], row["a"])
        return (
            f"{better} is more often valid than {other}: decided after {games_in_words(row['decided_after'])} "
            f"({how}; e-value {row['e_value']:.3g}, anytime-valid p {row['p_value']:.3g}); the games may stop"
        )
    return (
        f"not decided after {games_in_words(row['games'])} ({how}; e-value {row['e_value']:.3g}, "
        f"{1 / stats.ALPHA:.0f} decides); play on, and look again after any game"
    )
