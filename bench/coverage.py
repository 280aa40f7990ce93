"""What the intervals and verdicts promise, checked by simulation against a known truth.

    python -m bench.coverage                      # every table, 2,000 replicates a cell
    python -m bench.coverage --replicates 500     # fewer, faster
    python -m bench.coverage --quick              # a small grid (what the test suite runs)
    python -m bench.coverage --docs               # write the tables into docs/comparing-models.md

A format's decisions are simulated as the audit of issue 57 did: per model a true validity
p, G games of 40 decisions, each game's rate drawn from a Beta with mean p and intra-class
correlation ICC (variance ICC p (1 - p)), the game's valid decisions binomial at that
rate. The per-game counts go to the same functions `workbench.stats` gives the scorecard
and `compare_models` (the ingest path is held equal to those direct calls by the tests),
vectorised over replicates. With a fixed seed, the tables are the same on every run.

Tables: the scorecard's 95% interval (coverage of the true p; four models in the format,
their games pooled for the ICC), false differences between two equally valid models
(unpaired: each in its own G games; paired: both in the same G games, every turn
shared), the planner (power of the games it plans, with the ICC known and with the ICC
estimated from a 3-game pilot), ratings (coverage of the expected rating by the
bootstrap interval) and the sequential test (false differences when checked after every
one of 60 games, and how often and how soon it decides a real difference).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

import numpy as np

from workbench import stats

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "comparing-models.md"
SEED = 57
M = 40  # decisions per game
MODELS = 4  # models in a simulated format, for the scorecard

FULL = {"p": (0.6, 0.9, 0.97), "icc": (0.0, 0.1, 0.3), "games": (1, 2, 3, 5, 10, 30, 60)}
QUICK = {"p": (0.6, 0.97), "icc": (0.0, 0.3), "games": (1, 2, 5, 30)}
PLANS = [(0.10, 0.6), (0.10, 0.9), (0.10, 0.97), (0.05, 0.9)]  # (difference, validity)
QUICK_PLANS = [(0.10, 0.9), (0.10, 0.97)]


def game_rates(rng, p, icc, shape):
    """Each game's rate of valid decisions: Beta with mean p and ICC, or p at ICC 0."""
    if icc == 0:
        return np.full(shape, p)
    total = (1 - icc) / icc
    return rng.beta(p * total, (1 - p) * total, size=shape)


def valid_counts(rng, p, icc, shape, m=M):
    return rng.binomial(m, game_rates(rng, p, icc, shape)).astype(float)


# --- the scorecard's interval --------------------------------------------------------------


def scorecard_cell(rng, p, icc, games, replicates):
    """Coverage of p by each model's 95% interval (None where no interval is given), and
    the share of intervals given."""
    valid = valid_counts(rng, p, icc, (replicates, MODELS, games))
    n = np.full(valid.shape, float(M))
    _, freedom, high, cautious = stats.between_arrays(valid, n)
    v, total, effect, dof = stats.share_arrays(valid, n, cautious[:, None], freedom[:, None], high[:, None])
    low, up = stats.intervals(v, total, effect, dof)
    given = ~np.isnan(low)
    if not given.any():
        return None, 0.0
    return float(((low <= p) & (p <= up))[given].mean()), float(given.mean())


# --- verdicts between equally valid models -----------------------------------------------------


def unpaired_significant(valid_a, valid_b, n_a, n_b, level=stats.LEVEL):
    """Per replicate: the unpaired comparison's p-value and whether a difference is
    claimed (p < 1 - level and at least MIN_GAMES games each), games along the last axis."""
    both = np.stack([valid_a, valid_b], axis=-2)
    _, freedom, high, cautious = stats.between_arrays(both, np.stack([n_a, n_b], axis=-2))
    shares = [stats.share_arrays(v, m, cautious, freedom, high) for v, m in ((valid_a, n_a), (valid_b, n_b))]

    def bounds(at):
        (va, na, ea, fa), (vb, nb, eb, fb) = shares
        low_a, high_a = stats.intervals(va, na, ea, fa, at)
        low_b, high_b = stats.intervals(vb, nb, eb, fb, at)
        return stats.newcombe_arrays(va / na, low_a, high_a, vb / nb, low_b, high_b)[1:]

    difference = shares[0][0] / shares[0][1] - shares[1][0] / shares[1][1]
    p_value = stats.inverted(bounds, difference)
    return p_value, (p_value < 1 - level) & (valid_a.shape[-1] >= stats.MIN_GAMES)


def paired_cells(rng, p_a, p_b, icc, replicates, games):
    """Both models in the same games, every turn shared: per game the four cells of the
    paired table (turns independent given each model's game rate)."""
    rate_a, rate_b = game_rates(rng, p_a, icc, (replicates, games)), game_rates(rng, p_b, icc, (replicates, games))
    probabilities = np.stack(
        [rate_a * rate_b, rate_a * (1 - rate_b), (1 - rate_a) * rate_b, (1 - rate_a) * (1 - rate_b)], axis=-1
    )
    cells = rng.multinomial(M, probabilities).astype(float)
    return [cells[..., i] for i in range(4)]


def paired_significant(cells, level=stats.LEVEL):
    both, only_a, only_b, neither = cells
    valid_a, valid_b = both + only_a, both + only_b
    n = both + only_a + only_b + neither
    _, freedom, high, cautious = stats.between_arrays(np.stack([valid_a, valid_b], axis=-2), np.stack([n, n], axis=-2))
    effect, dof = stats.paired_effects(both, only_a, only_b, neither, cautious, freedom, high)
    sums = [x.sum(axis=-1) / effect for x in cells]

    def bounds(at):
        return stats.newcombe_paired(*sums, quantile=stats.quantile(dof, at))[1:]

    difference = (only_a.sum(axis=-1) - only_b.sum(axis=-1)) / n.sum(axis=-1)
    p_value = stats.inverted(bounds, difference)
    return p_value, (p_value < 1 - level) & (both.shape[-1] >= stats.MIN_GAMES)


def unpaired_cell(rng, p, icc, games, replicates):
    valid_a, valid_b = (valid_counts(rng, p, icc, (replicates, games)) for _ in range(2))
    n = np.full(valid_a.shape, float(M))
    return float(unpaired_significant(valid_a, valid_b, n, n)[1].mean())


def paired_cell(rng, p, icc, games, replicates):
    return float(paired_significant(paired_cells(rng, p, p, icc, replicates, games))[1].mean())


# --- the planner ----------------------------------------------------------------------------


def planner_cell(rng, difference, p, icc, replicates):
    """Games the planner asks for with the ICC known, and the power they give (unpaired)."""
    games = stats.games_needed(difference, p, M, icc)
    other = p - difference
    valid_a, valid_b = (
        valid_counts(rng, p, icc, (replicates, games)),
        valid_counts(rng, other, icc, (replicates, games)),
    )
    n = np.full(valid_a.shape, float(M))
    return games, float(unpaired_significant(valid_a, valid_b, n, n)[1].mean())


def pilot_cell(rng, difference, p, icc, replicates, pilot_games=3):
    """The ICC estimated from a pilot of two models of `pilot_games` games each: how often
    the games planned from the estimate, and from its upper bound, fall below half those
    planned with the true ICC."""
    needed = stats.games_needed(difference, p, M, icc)
    valid = valid_counts(rng, p, icc, (replicates, 2, pilot_games))
    estimate, _, high, _ = stats.between_arrays(valid, np.full(valid.shape, float(M)))
    plan = lambda x: stats.games_needed(difference, p, M, 1.0 if np.isnan(x) else float(x))  # noqa: E731
    from_estimate = np.array([plan(x) for x in estimate])
    from_high = np.array([plan(x) for x in high])
    return needed, float((from_estimate < needed / 2).mean()), float((from_high < needed / 2).mean())


# --- ratings -------------------------------------------------------------------------------


def ratings_cell(rng, strengths, games, replicates, bootstrap=200):
    """Four-player games among len(strengths) models (each game seats every model once,
    places drawn by Plackett-Luce with these strengths): coverage of each model's
    expected rating (the mean over replicates) by the 95% bootstrap interval, the
    half-width in standard deviations of mu, and how often the strongest and weakest
    models' rank intervals are apart."""
    from workbench.damage import ratings as rating

    teams = [f"m{i}" for i in range(len(strengths))]
    weights = np.asarray(strengths, dtype=float)
    mus, lows, highs, apart = [], [], [], []
    for _ in range(replicates):
        keys = rng.gumbel(size=(games, len(teams))) + np.log(weights)
        order = np.argsort(-keys, axis=1)
        places = np.empty_like(order)
        np.put_along_axis(places, order, np.arange(1, len(teams) + 1)[None, :], axis=1)
        played = [dict(zip(teams, map(float, row))) for row in places]
        mu, _ = rating._rate(played, teams)
        low, high, rank_low, rank_high = rating._bootstrap(played, teams, bootstrap, int(rng.integers(2**31)))
        mus.append(mu)
        lows.append(low)
        highs.append(high)
        strongest, weakest = int(np.argmax(weights)), int(np.argmin(weights))
        apart.append(rank_high[strongest] < rank_low[weakest])
    mus, lows, highs = (np.asarray(x, dtype=float) for x in (mus, lows, highs))
    truth = mus.mean(axis=0)
    covered = (lows <= truth) & (truth <= highs)
    spread = mus.std(axis=0)
    half = ((highs - lows) / 2).mean(axis=0) / spread
    return float(covered.mean()), float(half.mean()), float(np.mean(apart))


# --- the sequential test -------------------------------------------------------------------------


def sequential_cell(rng, p_a, p_b, icc, replicates, games=60, paired=True):
    """Checked after each of `games` games: how often the comparison is ever decided, and
    after how many games (median of those decided)."""
    if paired:
        both, only_a, only_b, neither = paired_cells(rng, p_a, p_b, icc, replicates, games)
        differences = (only_a - only_b) / M
    else:
        differences = (
            valid_counts(rng, p_a, icc, (replicates, games)) - valid_counts(rng, p_b, icc, (replicates, games))
        ) / M
    e = stats.e_process(differences)
    crossed = e >= 1 / stats.ALPHA
    decided = crossed.any(axis=1)
    when = np.where(decided, crossed.argmax(axis=1) + 1, 0)
    return float(decided.mean()), (float(np.median(when[decided])) if decided.any() else None)


# --- tables -----------------------------------------------------------------------------------


def percent(x, digits=1):
    return "–" if x is None else f"{100 * x:.{digits}f}"


def tables(replicates: int, quick: bool, seed: int = SEED, ratings: bool = True) -> dict[str, str]:
    grid, plans = (QUICK, QUICK_PLANS) if quick else (FULL, PLANS)
    rng = np.random.default_rng(seed)
    out = {}
    header = (
        "| p | ICC | " + " | ".join(f"G={g}" for g in grid["games"]) + " |\n|---|---|" + "---|" * len(grid["games"])
    )
    rows, worst = [], {}
    for p in grid["p"]:
        for icc in grid["icc"]:
            cells = []
            for games in grid["games"]:
                coverage, given = scorecard_cell(rng, p, icc, games, replicates)
                cells.append(
                    percent(coverage)
                    if given == 1
                    else f"{percent(coverage)} ({percent(given, 0)}% given)"
                    if given
                    else "no interval"
                )
                worst[p, icc, games] = coverage
            rows.append(f"| {p:g} | {icc:g} | " + " | ".join(cells) + " |")
    out["scorecard"] = header + "\n" + "\n".join(rows)
    for name, cell in (("unpaired", unpaired_cell), ("paired", paired_cell)):
        games = [g for g in grid["games"] if g >= 2]
        head = "| p | ICC | " + " | ".join(f"G={g}" for g in games) + " |\n|---|---|" + "---|" * len(games)
        rows = [
            f"| {p:g} | {icc:g} | " + " | ".join(percent(cell(rng, p, icc, g, replicates)) for g in games) + " |"
            for p in grid["p"]
            for icc in grid["icc"]
        ]
        out[name] = head + "\n" + "\n".join(rows)
    rows = []
    for difference, p in plans:
        for icc in grid["icc"]:
            games, power = planner_cell(rng, difference, p, icc, replicates)
            rows.append(f"| {difference * 100:g} points below {p:g} | {icc:g} | {games} | {percent(power)} |")
    out["planner"] = "| difference | ICC | games planned | power |\n|---|---|---|---|\n" + "\n".join(rows)
    rows = []
    for difference, p in plans[:2] if quick else plans:
        for icc in [x for x in grid["icc"] if x > 0]:
            needed, low_estimate, low_high = pilot_cell(rng, difference, p, icc, min(replicates, 500))
            rows.append(
                f"| {difference * 100:g} points below {p:g} | {icc:g} | {needed} | {percent(low_estimate)} | "
                f"{percent(low_high)} |"
            )
    out["pilot"] = (
        "| difference | ICC | games needed | plans under half, from the estimate | "
        "from its upper bound |\n|---|---|---|---|---|\n" + "\n".join(rows)
    )
    rows = []
    for paired in (True, False):
        for p in grid["p"]:
            for icc in grid["icc"]:
                false, _ = sequential_cell(rng, p, p, icc, replicates, paired=paired)
                other = p - 0.1
                power, when = sequential_cell(rng, p, other, icc, replicates, paired=paired)
                rows.append(
                    f"| {'paired' if paired else 'unpaired'} | {p:g} | {icc:g} | {percent(false)} | "
                    f"{percent(power)} | {'–' if when is None else f'{when:g}'} |"
                )
    out["sequential"] = (
        "| comparison | p | ICC | false differences | 10 points found | median games to decide |\n"
        "|---|---|---|---|---|---|\n" + "\n".join(rows)
    )
    if ratings:
        rows = []
        settings = [((1.0, 1.0, 1.0, 1.0), 100), ((1.0, 1.5, 2.2, 3.3), 30), ((1.0, 1.5, 2.2, 3.3), 100)]
        for strengths, games in settings[1:] if quick else settings:
            coverage, half, apart = ratings_cell(
                rng, strengths, games, max(replicates // 10, 20) if quick else replicates // 4
            )
            rows.append(
                f"| {', '.join(f'{s:g}' for s in strengths)} | {games} | {percent(coverage)} | {half:.2f} | "
                f"{percent(apart)} |"
            )
        out["ratings"] = (
            "| strengths | games | coverage | half-width (sd of mu) | strongest and weakest apart |\n"
            "|---|---|---|---|---|\n" + "\n".join(rows)
        )
    return out


TITLES = {
    "scorecard": "Coverage (%) of the scorecard's 95% interval, four models in the format",
    "unpaired": "False differences (%), unpaired, two equally valid models of G games each",
    "paired": "False differences (%), paired, two equally valid models in the same G games",
    "planner": "Power (%) of the games the planner asks for (ICC known)",
    "pilot": "Plans (%) under half the games needed, ICC estimated from a pilot of 2 models x 3 games",
    "sequential": "The sequential test, checked after each of 60 games (%)",
    "ratings": "Ratings: coverage (%) of the expected rating by the 95% bootstrap interval",
}


def markdown(out: dict[str, str], replicates: int, quick: bool) -> str:
    parts = [
        f"Generated by `python -m bench.coverage{' --quick' if quick else ''} --replicates {replicates}` "
        f"(seed {SEED}; games of {M} decisions).\n"
    ]
    for key, table in out.items():
        parts.append(f"**{TITLES[key]}.**\n\n{table}\n")
    return "\n".join(parts)


def write_docs(text: str) -> None:
    page = DOCS.read_text()
    start, end = "<!-- coverage:start -->", "<!-- coverage:end -->"
    block = f"{start}\n{text}\n{end}"
    if start in page:
        page = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: block, page, flags=re.S)
    else:
        page = page.rstrip("\n") + "\n\n" + block + "\n"
    DOCS.write_text(page)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.coverage", description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="a small grid (the test suite's)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--no-ratings", action="store_true", help="leave out the ratings (the slowest table)")
    parser.add_argument("--docs", action="store_true", help="write the tables into docs/comparing-models.md")
    parser.add_argument("--only", help="one table's name (scorecard, unpaired, paired, ...), for a quick look")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    out = tables(args.replicates, args.quick, args.seed, ratings=not args.no_ratings)
    text = markdown(out, args.replicates, args.quick)
    print(text)
    if args.docs:
        write_docs(text)
    print(f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
