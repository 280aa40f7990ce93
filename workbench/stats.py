"""The statistics behind every conclusion: intervals of a share of valid decisions that
respect the games those decisions came from, tests that hold at small counts, Holm's
correction, and the number of games a question needs.

Decisions come in games. A model's decisions in one game share a prompt, a history and a
state, so they succeed and fail together; counted as independent coin flips they give
intervals that are too narrow and differences that are not there. Every interval here
therefore starts from the decisions' *design effect*: the cluster-robust variance of the
share (clustered by game, with the small-sample factor G/(G-1)) over the variance the
same share would have from independent decisions, never below 1. The counts are shrunk
to their *effective* size, n / design effect, and the Wilson interval is taken there
(the method Dean & Pagano 2015, Stat Med 34:3315, found to keep its coverage in
clustered samples; Korn & Graubard 1998, Survey Methodology 24:193).

That variance is estimated from only G games: where it is used (the games differ more
than chance), the normal quantile becomes Student's t with G - 1 degrees of freedom (Korn
& Graubard's correction; Cameron & Miller 2015, J Human Resources 50:317, for few
clusters). With one game, or games that differ no more than independent decisions would,
the counts are the counts and every method below is its textbook self: Wilson, Newcombe,
Fisher, McNemar. So the interval widens at once when the games start to differ: from then
on the spread between them is what it rests on, and G - 1 numbers measure it. (A
smoother t, at Satterthwaite's degrees of freedom for the two parts of the variance, was
tried and dropped: its 95% intervals held 78-87% in simulation with 2-4 games at an
intra-class correlation of 0.2, against 86-93% with G - 1.)

Why not a bootstrap over games: these logs hold a handful of games per model (often 1 to
4), and resampling 2 games can only ever return those 2 games' shares. The cluster-robust
variance with its t quantile widens honestly as G shrinks; a bootstrap narrows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
# The quantiles and tails as ufuncs: scipy.special loads in a tenth of scipy.stats' time
# (a second), so the exact tests are written out here rather than taken from it.
from scipy.special import bdtr, ndtr, ndtri, stdtrit

from workbench.errors import WorkbenchError

LEVEL = 0.95
ALPHA = 1 - LEVEL
Z = float(ndtri(1 - ALPHA / 2))
# Cochran's rule: the score test's normal approximation wants every expected count of the
# 2x2 table at 5 or more; below, the exact test.
MIN_EXPECTED = 5
# A difference between models is claimed only from decisions of at least this many games
# on each side: from one game, how a model did cannot be told from how that game went,
# and the spread between games cannot be measured (two models of one game each of equal
# validity were called different in 42% of simulated runs at ICC 0.05).
MIN_GAMES = 2


# --- one share: the Wilson interval, at the effective sample size ------------------------


def wilson(valid, n, quantile=Z):
    """The Wilson score interval of valid / n, in closed form (NaN where n = 0). Takes
    numbers or numpy arrays (then returns arrays)."""
    valid, n, q = np.asarray(valid, dtype=float), np.asarray(n, dtype=float), np.asarray(quantile, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        centre = (valid + q * q / 2) / (n + q * q)
        half = q * np.sqrt(np.maximum(valid * (n - valid) / n, 0) + q * q / 4) / (n + q * q)
        low, high = np.where(n > 0, centre - half, np.nan), np.where(n > 0, centre + half, np.nan)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def design_effects(n, valid, games, squares):
    """Per row (numbers or numpy arrays): the design effect of a share valid / n seen in
    `games` clusters, where `squares` is the sum over its clusters of (valid_g - p n_g)^2
    with p = valid / n. The cluster-robust (CR1) variance of p is
    games / (games - 1) * squares / n^2; the variance from independent decisions is
    p (1 - p) / n. Their ratio, floored at 1; 1 for one game or p of 0 or 1 (no spread
    to estimate)."""
    n, valid, games, squares = (np.asarray(x, dtype=float) for x in (n, valid, games, squares))
    p = np.divide(valid, n, out=np.zeros_like(n), where=n > 0)
    spread = games >= 2
    independent = p * (1 - p) / np.where(n > 0, n, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        robust = games / np.where(spread, games - 1, 1) * squares / np.where(n > 0, n * n, 1)
        ratio = np.where(spread & (independent > 0), robust / independent, 1.0)
    return np.maximum(ratio, 1.0)


def quantiles(games, design_effect):
    """The quantile of a 95% interval: Student's t with games - 1 degrees of freedom
    where the design effect is above 1 (the variance then rests on the spread between
    games), else z."""
    games, effect = np.asarray(games, dtype=float), np.asarray(design_effect, dtype=float)
    clustered = (effect > 1) & (games >= 2)
    return np.where(clustered, stdtrit(np.where(clustered, games - 1, 1), 1 - ALPHA / 2), Z)


def shrinks(games, design_effect):
    """The factor that turns counts into effective counts: (z / t)^2 / design effect."""
    return (Z / quantiles(games, design_effect)) ** 2 / np.asarray(design_effect, dtype=float)


@dataclass(frozen=True)
class Clustered:
    """A share of valid decisions seen in `games` games, and what clustering does to it."""

    valid: int
    n: int
    games: int
    design_effect: float  # >= 1; 1 where the games differ no more than independent decisions would

    @property
    def validity(self) -> float:
        return self.valid / self.n if self.n else math.nan

    @property
    def clustered(self) -> bool:
        return self.design_effect > 1

    @cached_property
    def shrink(self) -> float:
        return float(shrinks(self.games, self.design_effect))

    @cached_property
    def interval(self) -> tuple[float, float]:
        """Wilson at the effective counts (equal to Wilson at n / design effect with the
        t quantile)."""
        return wilson(self.valid * self.shrink, self.n * self.shrink)


def clustered(valid_by_game, n_by_game) -> Clustered:
    """The share of valid decisions over the games given (valid and decided per game)."""
    valid_g, n_g = np.asarray(valid_by_game, dtype=float), np.asarray(n_by_game, dtype=float)
    valid, n = valid_g.sum(), n_g.sum()
    p = valid / n if n else 0.0
    games = int((n_g > 0).sum())
    effect = float(design_effects(n, valid, games, ((valid_g - p * n_g) ** 2).sum()))
    return Clustered(int(valid), int(n), games, effect)


# --- two shares ------------------------------------------------------------------------


def newcombe(a: Clustered, b: Clustered) -> tuple[float, float, float]:
    """The difference of the shares a - b and its 95% interval by Newcombe's hybrid
    score method (method 10 of Newcombe 1998, Stat Med 17:873), built from each share's
    own interval: with clustering, each one's clustered Wilson interval."""
    p_a, p_b = a.validity, b.validity
    (low_a, high_a), (low_b, high_b) = a.interval, b.interval
    difference = p_a - p_b
    low = difference - math.sqrt((p_a - low_a) ** 2 + (high_b - p_b) ** 2)
    high = difference + math.sqrt((high_a - p_a) ** 2 + (p_b - low_b) ** 2)
    return difference, low, high


def effective_counts(share: Clustered) -> tuple[int, int]:
    """(valid, n) shrunk by the design effect, for a test that needs whole counts: n
    rounded down (never more evidence than there is), valid to the nearest whole number
    within it; the counts themselves where the decisions are not clustered."""
    n = math.floor(share.n * share.shrink + 1e-9)
    return min(math.floor(share.valid * share.shrink + 0.5), n), n


def unpaired_test(a: Clustered, b: Clustered) -> tuple[float, str]:
    """Two-sided p-value that the two shares differ, and the test's name: Fisher's exact
    test where an expected count of the (effective) 2x2 table is below 5, else the
    pooled two-proportion score test."""
    (valid_a, n_a), (valid_b, n_b) = effective_counts(a), effective_counts(b)
    if min(n_a, n_b) == 0:
        return 1.0, "no test (no effective decisions)"
    table = [[valid_a, n_a - valid_a], [valid_b, n_b - valid_b]]
    if min(expected_counts(table)) < MIN_EXPECTED:
        return fisher(table), "Fisher exact"
    return two_proportion_p(valid_a, n_a, valid_b, n_b), "score test"


def expected_counts(table) -> list[float]:
    """The four expected counts of a 2x2 table under independence."""
    rows = [sum(row) for row in table]
    columns = [table[0][j] + table[1][j] for j in range(2)]
    total = sum(rows)
    return [rows[i] * columns[j] / total for i in range(2) for j in range(2)]


def fisher(table) -> float:
    """Fisher's exact test, two-sided: the probability, given the margins, of a table at
    most as likely as this one. Each table's chance is a product of binomial coefficients
    in whole numbers, so ties are exact; there are few tables to sum, since the test is
    taken only where an expected count is below 5."""
    (a, not_a), (b, not_b) = table
    n_a, n_b, valid = a + not_a, b + not_b, a + b

    def weight(k: int) -> int:  # the number of ways to draw a table with k valid in the first row
        return math.comb(n_a, k) * math.comb(n_b, valid - k)

    weights = [weight(k) for k in range(max(0, valid - n_b), min(valid, n_a) + 1)]
    seen = weight(a)
    return sum(w for w in weights if w <= seen) / sum(weights)


def two_proportion_p(valid_a, n_a, valid_b, n_b) -> float:
    """Two-sided p-value of the pooled two-proportion score (z) test, the test the score
    intervals invert."""
    pooled = (valid_a + valid_b) / (n_a + n_b)
    spread = math.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
    if spread == 0:
        return 1.0
    return float(2 * ndtr(-abs(valid_a / n_a - valid_b / n_b) / spread))


# --- two shares over the same turns ----------------------------------------------------


@dataclass(frozen=True)
class Paired:
    """Shared turns of two models, per game: both valid, only a, only b, neither."""

    both: np.ndarray
    only_a: np.ndarray
    only_b: np.ndarray
    neither: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        return self.both + self.only_a + self.only_b + self.neither

    @property
    def turns(self) -> int:
        return int(self.sizes.sum())

    @property
    def games(self) -> int:
        return int((self.sizes > 0).sum())

    @property
    def validity_a(self) -> float:
        return float(self.both.sum() + self.only_a.sum()) / self.turns

    @property
    def validity_b(self) -> float:
        return float(self.both.sum() + self.only_b.sum()) / self.turns

    @property
    def difference(self) -> float:
        return float(self.only_a.sum() - self.only_b.sum()) / self.turns

    @property
    def design_effect(self) -> float:
        """Of the mean paired difference (a valid - b valid, per turn): its
        cluster-robust variance over games against its variance from independent
        turns, at least 1."""
        n, games = self.turns, self.games
        independent = ((self.only_a.sum() + self.only_b.sum()) / n - self.difference ** 2) / n
        if games < 2 or independent <= 0:
            return 1.0
        gaps = self.only_a - self.only_b - self.difference * self.sizes
        robust = games / (games - 1) * float((gaps ** 2).sum()) / n ** 2
        return max(robust / independent, 1.0)

    @cached_property
    def shrink(self) -> float:
        return float(shrinks(self.games, self.design_effect))


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """McNemar's exact test: of the discordant pairs (valid for one model only), is the
    split further from even than chance allows? A binomial test at 1/2."""
    if only_a + only_b == 0:
        return 1.0
    # The binomial at 1/2 is symmetric: twice the chance of a split at least as uneven.
    return min(1.0, 2 * float(bdtr(min(only_a, only_b), only_a + only_b, 0.5)))


def paired_test(pairs: Paired) -> float:
    """McNemar's exact test on the discordant counts shrunk by the design effect."""
    f = pairs.shrink
    return mcnemar_exact(math.floor(float(pairs.only_a.sum()) * f + 0.5), math.floor(float(pairs.only_b.sum()) * f + 0.5))


def newcombe_paired(both, only_a, only_b, neither) -> tuple[float, float, float]:
    """The paired difference (a - b) and its 95% interval by Newcombe's square-and-add
    method for paired data (Newcombe 1998, Stat Med 17:2635, method 10), which corrects
    the two Wilson intervals for the correlation of the pairs. Counts may be effective
    (not whole) counts."""
    n = both + only_a + only_b + neither
    p_a, p_b = (both + only_a) / n, (both + only_b) / n
    (low_a, high_a), (low_b, high_b) = wilson(both + only_a, n), wilson(both + only_b, n)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    cross = both * neither - only_a * only_b
    if margins == 0 or 0 <= cross <= n / 2:
        phi = 0.0
    else:
        phi = (cross - n / 2 if cross > n / 2 else cross) / math.sqrt(margins)
    difference = p_a - p_b
    low = difference - math.sqrt((p_a - low_a) ** 2 + (high_b - p_b) ** 2 - 2 * phi * (p_a - low_a) * (high_b - p_b))
    high = difference + math.sqrt((p_b - low_b) ** 2 + (high_a - p_a) ** 2 - 2 * phi * (p_b - low_b) * (high_a - p_a))
    return difference, low, high


def paired_interval(pairs: Paired) -> tuple[float, float, float]:
    """The paired difference over the shared turns and its 95% interval: Newcombe's
    paired interval at the effective counts (shrunk by the design effect of the games
    the turns came from)."""
    f = pairs.shrink
    _, low, high = newcombe_paired(*(float(x.sum()) * f for x in (pairs.both, pairs.only_a, pairs.only_b,
                                                                  pairs.neither)))
    return pairs.difference, low, high


# --- many comparisons ------------------------------------------------------------------


def holm(p_values) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    p = np.asarray(list(p_values), dtype=float)
    order = np.argsort(p, kind="stable")
    scaled = (len(p) - np.arange(len(p))) * p[order]
    adjusted = np.empty(len(p))
    adjusted[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return adjusted.tolist()


# --- how many games a question needs ------------------------------------------------------


def decisions_needed(p_a: float, p_b: float, power: float = 0.8, level: float = LEVEL,
                     freedom: float | None = None) -> float:
    """Decisions per model for a two-sided test at `level` to find p_a != p_b with the
    given power, were decisions independent: the two-proportion formula (Fleiss, Levin &
    Paik, Statistical Methods for Rates and Proportions, 3rd ed., 2003, eq. 4.14), without
    the continuity correction; with `freedom`, Student's t quantiles in place of z."""
    quantile = ndtri if freedom is None else (lambda q: stdtrit(freedom, q))
    z_level, z_power = quantile(1 - (1 - level) / 2), quantile(power)
    mean = (p_a + p_b) / 2
    root = z_level * math.sqrt(2 * mean * (1 - mean)) + z_power * math.sqrt(p_a * (1 - p_a) + p_b * (1 - p_b))
    gap = (p_a - p_b) ** 2
    return float(root) ** 2 / gap if gap > 0 else math.inf  # inf: no number of decisions tells them apart


def games_needed(difference: float, validity: float, decisions_per_game: float, icc: float,
                 power: float = 0.8, level: float = LEVEL) -> int:
    """Games per model to tell a model at `validity` from one `difference` below it
    (above, where below would be under 0): the decisions the two-proportion formula
    needs, times the design effect 1 + (m - 1) ICC of games of m decisions, in games of
    m, rounded up. Where decisions are correlated within games (ICC > 0), the games
    themselves are the sample: two models of g games each leave 2(g - 1) degrees of
    freedom, so the normal quantiles are replaced by Student's t with those, and the
    number solved again until it holds (Donner & Klar, Design and Analysis of Cluster
    Randomization Trials, 2000, ch. 5). Never fewer than MIN_GAMES: a verdict needs them."""
    difference = abs(difference)
    other = validity - difference if validity - difference >= 0 else validity + difference
    # the design effect over m, (1 + (m - 1) ICC) / m, written so that no m overflows it
    per_decision = 1 / decisions_per_game + icc * (1 - 1 / decisions_per_game)

    def games(freedom=None) -> int:
        needed = decisions_needed(validity, other, power, level, freedom) * per_decision
        if not math.isfinite(needed):
            raise WorkbenchError(f"a difference of {difference:g} is too small to plan for at a validity of "
                                 f"{validity:g}: no number of games shows it")
        return max(math.ceil(needed - 1e-9), 1)

    needed = games()
    if icc > 0:
        for _ in range(100):  # it settles within a few rounds: more games, more freedom, fewer games
            again = games(freedom=2 * (max(needed, MIN_GAMES) - 1))
            if again <= needed:
                break
            needed = again
    return max(needed, MIN_GAMES)


def icc_anova(valid_g, n_g, group) -> float:
    """The intra-class correlation of valid decisions within games: the one-way ANOVA
    estimator for binary outcomes and games of unequal size (Fleiss, Levin & Paik 2003,
    ch. 15), with games nested in the `group` (model) they belong to, so that a
    difference between models is not taken for one between games; within [0, 1]."""
    valid_g, n_g, group = np.asarray(valid_g, dtype=float), np.asarray(n_g, dtype=float), np.asarray(group)
    keep = n_g > 0
    valid_g, n_g, group = valid_g[keep], n_g[keep], group[keep]
    _, index = np.unique(group, return_inverse=True)
    n_group = np.bincount(index, weights=n_g)
    p_group = np.bincount(index, weights=valid_g) / n_group
    games, models, n = len(n_g), len(n_group), n_g.sum()
    if games - models < 1 or n - games < 1:
        return 0.0
    p_g = valid_g / n_g
    between = float((n_g * (p_g - p_group[index]) ** 2).sum()) / (games - models)
    within = float((n_g * p_g * (1 - p_g)).sum()) / (n - games)
    size = (n - float((n_g ** 2 / n_group[index]).sum())) / (games - models)
    if between + (size - 1) * within <= 0:
        return 0.0
    return float(min(max((between - within) / (between + (size - 1) * within), 0.0), 1.0))
