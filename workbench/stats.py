"""The statistics behind every conclusion: intervals of a share of valid decisions that
respect the games those decisions came from, comparisons whose p-value and interval are
one test, Holm's correction, the number of games a question needs, and a sequential test
that may be checked after every game.

Decisions come in games. A model's decisions in one game share a prompt, a history and a
state, so they succeed and fail together; counted as independent coin flips they give
intervals that are too narrow and differences that are not there. How much, is the
*intra-class correlation* (ICC) of validity within games: a share of n decisions from
games of sizes n_g has the variance p (1 - p) / n times the design effect
1 + (m - 1) ICC, with m = sum n_g^2 / n (Kish 1965; Donner & Klar 2000, ch. 2).

The ICC is estimated once per format, from every game of every model in it (`Between`):
the one-way ANOVA estimator with games nested in their model (Fleiss, Levin & Paik 2003,
ch. 15), whose between-game mean square rests on games - models degrees of freedom. A
model seen in one game, or in games that happen to agree, so borrows what games in its
format typically do (the pooled variance of a random-effects model; Smyth 2004, Stat Appl
Genet Mol Biol 3:3, for the same idea in moderated t). The interval is Wilson's at the
effective sample size n / design effect (Dean & Pagano 2015, Stat Med 34:3315; Korn &
Graubard 1998, Survey Methodology 24:193), with the quantile of Student's t at
Satterthwaite's degrees of freedom for a variance that is part known (binomial) and part
estimated (between games): d (deff / (deff - 1))^2, with d the ICC's degrees of freedom.
At ICC 0 that is the normal quantile; as the between-game part grows it tends to t(d).
The interval moves smoothly with every decision and every game: there is no switch.

Where the ICC cannot be measured (one game per model, or every game exactly at its
model's share, as when all are all valid) it is unknown, not 0: a share then takes ICC
1, each game one observation. A
model seen in one game, in a format with nothing to borrow from, so gets the interval of
one observation (Wilson at n = 1, nearly all of [0, 1]): one game cannot tell a model
from the game it played.

Two shares are compared by one test. Unpaired: Newcombe's hybrid score interval from the
two clustered Wilson intervals; paired (the same turns): Newcombe's paired interval at the
effective counts. The p-value is that interval's inversion, the largest level at which it
excludes no difference, so p < 0.05 exactly when the 95% interval excludes 0; no count is
rounded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
# The quantiles and tails as ufuncs: scipy.special loads in a tenth of scipy.stats' time
# (a second), so the exact tests are written out here rather than taken from it.
from scipy.special import bdtr, fdtri, ndtr, ndtri, stdtr, stdtrit

from workbench.errors import WorkbenchError

LEVEL = 0.95
ALPHA = 1 - LEVEL
Z = float(ndtri(1 - ALPHA / 2))
# Cochran's rule: the score test's normal approximation wants every expected count of the
# 2x2 table at 5 or more; below, the exact test.
MIN_EXPECTED = 5
# A difference between models is claimed only from decisions of at least this many games
# on each side: from one game, how a model did cannot be told from how that game went.
MIN_GAMES = 2
# The one-sided upper confidence bound of an estimated ICC that the degrees of freedom of
# an interval and the planner's ICC are taken at.
PLAN_ICC_LEVEL = 0.9
# The design effect of an interval is taken at this one-sided upper bound of the ICC, a
# little above its estimate: an ICC estimated low by chance from few games otherwise
# gives intervals that hold 92% (p 0.97, ICC 0.3, 5 games) and lets 5.8% of equal models
# through; with many games the bound and the estimate meet.
EFFECT_ICC_LEVEL = 0.7
# What one degree of freedom of the between-game mean square is worth in Satterthwaite's
# formula. The ANOVA estimate of the ICC of binary outcomes from few games varies more
# than a chi-square variance with as many degrees of freedom (its distribution is skewed
# and tied to the share itself): counted whole, 5.3-7.1% of equally valid models were
# called different with 3 to 10 games at p 0.6, ICC 0.1 (simulation, bench.coverage);
# counted as half, at most 5%.
FREEDOM_SHARE = 0.5


# --- one share: the Wilson interval, at the effective sample size ------------------------


def wilson(valid, n, quantile=Z):
    """The Wilson score interval of valid / n, in closed form (NaN where n = 0 or the
    quantile is NaN). Takes numbers or numpy arrays (then returns arrays)."""
    valid, n, q = np.asarray(valid, dtype=float), np.asarray(n, dtype=float), np.asarray(quantile, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        centre = (valid + q * q / 2) / (n + q * q)
        half = q * np.sqrt(np.maximum(valid * (n - valid) / n, 0) + q * q / 4) / (n + q * q)
        low, high = np.where(n > 0, centre - half, np.nan), np.where(n > 0, centre + half, np.nan)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


@dataclass(frozen=True)
class Between:
    """How games of a format differ: the ICC of validity within games and the degrees
    of freedom it was estimated with (games - models). `icc` is NaN where it cannot be
    measured; `cautious` and `high` are its one-sided upper confidence bounds at
    EFFECT_ICC_LEVEL and PLAN_ICC_LEVEL."""

    icc: float
    freedom: float
    high: float = math.nan
    cautious: float = math.nan

    @property
    def known(self) -> bool:
        return not math.isnan(self.icc)


NOTHING = Between(math.nan, 0.0, math.nan)


def _icc(between, within, size, freedom, within_freedom):
    """The ANOVA ICC and its upper bounds from the two mean squares (arrays welcome): NaN
    where nothing is measured (no freedom, or every game exactly at its model's share);
    1 where games differ but never within."""
    between, within, size, freedom, within_freedom = (np.asarray(x, dtype=float) for x in
                                                      (between, within, size, freedom, within_freedom))
    measured = (freedom >= 1) & (within_freedom >= 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        icc = np.clip((between - within) / (between + (size - 1) * within), 0.0, 1.0)

        def bound(level):
            ratio = between / within / fdtri(np.where(measured, freedom, 1), np.where(measured, within_freedom, 1),
                                             1 - level)
            return np.clip(np.maximum((ratio - 1) / (ratio + size - 1), icc), 0.0, 1.0)

        cautious, high = bound(EFFECT_ICC_LEVEL), bound(PLAN_ICC_LEVEL)
    spread_only = measured & (within <= 0) & (between > 0)
    # every game exactly at its model's share: the bound collapses to 0 however few the
    # games, which says nothing about how games differ
    unknown = ~measured | (between <= 0)
    return tuple(np.where(unknown, np.nan, np.where(spread_only, 1.0, x)) for x in (icc, cautious, high))


def between_games(valid_g, n_g, group=None) -> Between:
    """The ICC of valid decisions within games, by the one-way ANOVA estimator for binary
    outcomes and games of unequal size (Fleiss, Levin & Paik 2003, ch. 15), with games
    nested in the `group` (model) they belong to, so that a difference between models is
    not taken for one between games; within [0, 1]. Its upper bound is Searle's (1971,
    Linear Models, 9.8): the F ratio of the two mean squares over F's lower quantile.
    NaN where there is nothing to measure it with (no game beside its model's first, or
    every game exactly at its model's share, as when all are all valid)."""
    valid_g, n_g = np.asarray(valid_g, dtype=float), np.asarray(n_g, dtype=float)
    group = np.zeros(len(n_g), dtype=int) if group is None else np.asarray(group)
    keep = n_g > 0
    valid_g, n_g, group = valid_g[keep], n_g[keep], group[keep]
    if not len(n_g):
        return NOTHING
    _, index = np.unique(group, return_inverse=True)
    n_group = np.bincount(index, weights=n_g)
    p_group = np.bincount(index, weights=valid_g) / n_group
    games, models, n = len(n_g), len(n_group), n_g.sum()
    if games - models < 1 or n - games < 1:
        return Between(math.nan, float(max(games - models, 0)), math.nan)
    p_g = valid_g / n_g
    between = float((n_g * (p_g - p_group[index]) ** 2).sum()) / (games - models)
    within = float((n_g * p_g * (1 - p_g)).sum()) / (n - games)
    size = (n - float((n_g ** 2 / n_group[index]).sum())) / (games - models)
    icc, cautious, high = _icc(between, within, size, games - models, n - games)
    return Between(float(icc), float(games - models), float(high), float(cautious))


def between_arrays(valid, n):
    """`between_games` for many formats at once: `valid` and `n` of shape (..., models,
    games), every model with the same number of games (none empty). Returns arrays icc,
    freedom, high, cautious of shape (...)."""
    valid, n = np.asarray(valid, dtype=float), np.asarray(n, dtype=float)
    models, games = valid.shape[-2], valid.shape[-2] * valid.shape[-1]
    total = n.sum(axis=(-2, -1))
    p_group = valid.sum(axis=-1, keepdims=True) / n.sum(axis=-1, keepdims=True)
    p_g = valid / n
    freedom = games - models
    with np.errstate(divide="ignore", invalid="ignore"):
        between = (n * (p_g - p_group) ** 2).sum(axis=(-2, -1)) / freedom
        within = (n * p_g * (1 - p_g)).sum(axis=(-2, -1)) / (total - games)
        size = (total - (n ** 2 / n.sum(axis=-1, keepdims=True)).sum(axis=(-2, -1))) / freedom
    icc, cautious, high = _icc(between, within, size, np.full(total.shape, float(freedom)), total - games)
    return icc, np.full(total.shape, float(freedom)), high, cautious


def icc_anova(valid_g, n_g, group) -> float:
    """The ICC estimate of `between_games`, 0 where it cannot be measured."""
    icc = between_games(valid_g, n_g, group).icc
    return 0.0 if math.isnan(icc) else icc


def design_effect(size, icc):
    """1 + (m - 1) ICC, with m the size-weighted mean game size sum n_g^2 / n; an
    unknown (NaN) ICC is taken as 1 (each game one observation). Arrays welcome."""
    size, icc = np.asarray(size, dtype=float), np.asarray(icc, dtype=float)
    return 1 + (np.maximum(size, 1) - 1) * np.where(np.isnan(icc), 1.0, icc)


def freedoms(effect, freedom):
    """Satterthwaite's degrees of freedom of p (1 - p) / n * effect, whose part above 1
    (effect - 1) is estimated with `freedom` degrees of freedom, each counted as
    FREEDOM_SHARE of one: FREEDOM_SHARE freedom (effect / (effect - 1))^2, infinite at
    effect 1."""
    effect, freedom = np.asarray(effect, dtype=float), FREEDOM_SHARE * np.asarray(freedom, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(effect > 1, freedom * (effect / (effect - 1)) ** 2, np.inf)


def quantile(freedom, level=LEVEL):
    """The two-sided quantile of Student's t with `freedom` degrees of freedom, at least
    one (the normal one where infinite; NaN where there are none)."""
    freedom, level = np.asarray(freedom, dtype=float), np.asarray(level, dtype=float)
    tail = 1 - (1 - level) / 2
    # never below one degree of freedom: t's quantile at fewer is past any use
    safe = np.where(np.isfinite(freedom) & (freedom > 0), np.maximum(freedom, 1.0), 1.0)
    q = np.where(np.isinf(freedom), ndtri(tail), stdtrit(safe, tail))
    return np.where(freedom > 0, q, np.nan)


def intervals(valid, n, effect, freedom, level=LEVEL):
    """Wilson at the effective counts valid / effect, n / effect, with the t quantile at
    `freedom` degrees of freedom. Arrays welcome."""
    effect = np.asarray(effect, dtype=float)
    return wilson(np.asarray(valid, dtype=float) / effect, np.asarray(n, dtype=float) / effect,
                  quantile(freedom, level))


@dataclass(frozen=True)
class Clustered:
    """A share of valid decisions seen in `games` games, and what clustering does to it:
    its design effect and the degrees of freedom of its variance (NaN: no interval)."""

    valid: int
    n: int
    games: int
    design_effect: float = 1.0
    freedom: float = math.inf

    @property
    def validity(self) -> float:
        return self.valid / self.n if self.n else math.nan

    @property
    def clustered(self) -> bool:
        return self.design_effect > 1

    def interval_at(self, level):
        return intervals(self.valid, self.n, self.design_effect, self.freedom, level)

    @cached_property
    def interval(self) -> tuple[float, float]:
        return self.interval_at(LEVEL)


def effects(size, games, icc, freedom, high):
    """Per share (arrays welcome): the design effect at the size-weighted mean game size
    `size` and the format's ICC, and the degrees of freedom of its variance
    (Satterthwaite's at the ICC's upper bound `high`, on the format's `freedom`, or the
    share's own games - 1 where more). A share with nothing to measure the ICC with (one
    game, and no other game in its format beside its model's first) takes ICC 1: its
    game is one observation."""
    size, games = np.asarray(size, dtype=float), np.asarray(games, dtype=float)
    icc, freedom, high = (np.asarray(x, dtype=float) for x in (icc, freedom, high))
    freedom = np.maximum(freedom, games - 1)
    nothing = ~(freedom >= 1)
    # nothing to measure the ICC with (one game each): each game one observation, the
    # normal quantile (no variance is estimated)
    effect = design_effect(size, np.where(nothing, np.nan, icc))
    dof = np.where(nothing, np.inf, freedoms(design_effect(size, high), freedom))
    return effect, dof


def share_arrays(valid_g, n_g, icc, freedom, high):
    """Per share (leading axes; games along the last): valid, n, the design effect and
    the degrees of freedom of its variance, given the format's ICC (NaN: unknown), the
    ICC's degrees of freedom and its upper bound. The degrees of freedom are
    Satterthwaite's at the upper bound's design effect: where the ICC is estimated at 0
    from few games, the variance is not taken as known. A share of one game in a format
    with nothing to borrow has neither (NaN: no interval)."""
    valid_g, n_g = np.asarray(valid_g, dtype=float), np.asarray(n_g, dtype=float)
    valid, n, games = valid_g.sum(axis=-1), n_g.sum(axis=-1), (n_g > 0).sum(axis=-1)
    size = np.divide((n_g ** 2).sum(axis=-1), n, out=np.ones_like(n), where=n > 0)
    return (valid, n, *effects(size, games, icc, freedom, high))


def share(valid_g, n_g, between: Between) -> Clustered:
    """The share of valid decisions over the games given, with the format's `between`."""
    valid, n, effect, freedom = share_arrays(valid_g, n_g, between.cautious, between.freedom, between.high)
    return Clustered(int(valid), int(n), int((np.asarray(n_g) > 0).sum()), float(effect), float(freedom))


def clustered(valid_by_game, n_by_game, between: Between | None = None) -> Clustered:
    """The share of valid decisions over the games given (valid and decided per game),
    its ICC estimated from these games unless `between` gives the format's."""
    return share(valid_by_game, n_by_game, between_games(valid_by_game, n_by_game) if between is None else between)


# --- a test and its interval, one the inversion of the other -----------------------------


def inverted(bounds, difference, lowest: float = 1e-12, steps: int = 60):
    """The two-sided p-value of the interval family `bounds(level) -> (low, high)`: the
    level 1 - p at which the interval's nearer end is at 0 (by bisection on log p), so
    that p < alpha exactly when the 1 - alpha interval excludes 0. 1 where the difference
    is 0 or the interval unknown. Arrays welcome."""
    difference = np.asarray(difference, dtype=float)
    low_p = np.full(difference.shape, math.log(lowest))
    high_p = np.zeros(difference.shape)
    for _ in range(steps):
        middle = (low_p + high_p) / 2
        low, high = bounds(1 - np.exp(middle))
        excludes = np.where(difference > 0, np.asarray(low) > 0, np.asarray(high) < 0)
        # excluding 0 at level 1 - p: the p-value is at most p
        high_p, low_p = np.where(excludes, middle, high_p), np.where(excludes, low_p, middle)
    low, high = bounds(1 - lowest)
    never = np.isnan(np.asarray(low, dtype=float)) | (difference == 0)
    p = np.where(never, 1.0, np.exp(high_p))
    return float(p) if p.ndim == 0 else p


def newcombe_at(a: Clustered, b: Clustered, level=LEVEL):
    """The difference a - b and its interval at `level` by Newcombe's hybrid score method
    (method 10 of Newcombe 1998, Stat Med 17:873), from each share's clustered interval."""
    return newcombe_arrays(a.validity, *a.interval_at(level), b.validity, *b.interval_at(level))


def newcombe_arrays(p_a, low_a, high_a, p_b, low_b, high_b):
    """Newcombe's hybrid interval of p_a - p_b from the two shares' intervals."""
    difference = p_a - p_b
    low = difference - np.sqrt((p_a - low_a) ** 2 + (high_b - p_b) ** 2)
    high = difference + np.sqrt((high_a - p_a) ** 2 + (p_b - low_b) ** 2)
    return difference, low, high


def newcombe(a: Clustered, b: Clustered) -> tuple[float, float, float]:
    """The difference of the shares a - b and its 95% interval (`newcombe_at`)."""
    difference, low, high = newcombe_at(a, b)
    return float(difference), float(low), float(high)


def unpaired_test(a: Clustered, b: Clustered) -> tuple[float, str]:
    """Two-sided p-value that the two shares differ, the inversion of Newcombe's
    interval (`newcombe_at`), and the test's name."""
    if not (a.n and b.n):
        return 1.0, "no test (no decisions)"
    p = inverted(lambda level: newcombe_at(a, b, level)[1:], a.validity - b.validity)
    return float(p), "Newcombe score, inverted"


def fisher(table) -> float:
    """Fisher's exact test, two-sided: the probability, given the margins, of a table at
    most as likely as this one (exact in whole numbers)."""
    (a, not_a), (b, not_b) = table
    n_a, n_b, valid = a + not_a, b + not_b, a + b

    def weight(k: int) -> int:  # the number of ways to draw a table with k valid in the first row
        return math.comb(n_a, k) * math.comb(n_b, valid - k)

    weights = [weight(k) for k in range(max(0, valid - n_b), min(valid, n_a) + 1)]
    seen = weight(a)
    return sum(w for w in weights if w <= seen) / sum(weights)


def expected_counts(table) -> list[float]:
    """The four expected counts of a 2x2 table under independence."""
    rows = [sum(row) for row in table]
    columns = [table[0][j] + table[1][j] for j in range(2)]
    total = sum(rows)
    return [rows[i] * columns[j] / total for i in range(2) for j in range(2)]


def two_proportion_p(valid_a, n_a, valid_b, n_b) -> float:
    """Two-sided p-value of the pooled two-proportion score (z) test."""
    pooled = (valid_a + valid_b) / (n_a + n_b)
    spread = math.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
    if spread == 0:
        return 1.0
    return float(2 * ndtr(-abs(valid_a / n_a - valid_b / n_b) / spread))


# --- two shares over the same turns ----------------------------------------------------


@dataclass(frozen=True)
class Paired:
    """Shared turns of two models, per game: both valid, only a, only b, neither; and
    how games of their format differ (`between`, from every game of the format)."""

    both: np.ndarray
    only_a: np.ndarray
    only_b: np.ndarray
    neither: np.ndarray
    between: Between | None = None

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

    @cached_property
    def _effect(self) -> tuple[float, float]:
        between = self.between if self.between is not None else NOTHING
        effect, freedom = paired_effects(self.both, self.only_a, self.only_b, self.neither, between.cautious,
                                         between.freedom, between.high)
        return float(effect), float(freedom)

    @property
    def design_effect(self) -> float:
        return self._effect[0]

    @property
    def freedom(self) -> float:
        return self._effect[1]

    def interval_at(self, level=LEVEL):
        effect = self.design_effect
        _, low, high = newcombe_paired(*(float(x.sum()) / effect for x in (self.both, self.only_a, self.only_b,
                                                                             self.neither)),
                                       quantile=quantile(self.freedom, level))
        return low, high


def paired_effects(both, only_a, only_b, neither, icc, freedom, high):
    """The design effect of a mean paired difference and its degrees of freedom (games
    along the last axis): the format's, 1 + (m - 1) ICC at these games' sizes, on the
    ICC's degrees of freedom (Satterthwaite's at its upper bound). That is the design
    effect of a difference of two models whose games vary independently; where a game
    lifts or sinks both models alike, the difference varies less, and the interval is
    cautious. (The pairs' own cluster-robust variance, G - 1 degrees of freedom from
    the same games, was tried beside it and let 6.4-7.3% of equal models through with 3
    to 5 games.) With nothing to borrow, ICC 1: each game one observation."""
    both, only_a, only_b, neither = (np.asarray(x, dtype=float) for x in (both, only_a, only_b, neither))
    icc, freedom, high = (np.asarray(x, dtype=float) for x in (icc, freedom, high))
    sizes = both + only_a + only_b + neither
    n = sizes.sum(axis=-1)
    size = np.divide((sizes ** 2).sum(axis=-1), n, out=np.ones_like(n), where=n > 0)
    nothing = ~(freedom >= 1)
    effect, cautious = design_effect(size, np.where(nothing, np.nan, icc)), design_effect(size, high)
    return effect, np.where(nothing, np.inf, freedoms(cautious, freedom))


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """McNemar's exact test: a binomial test at 1/2 of the discordant pairs."""
    if only_a + only_b == 0:
        return 1.0
    return min(1.0, 2 * float(bdtr(min(only_a, only_b), only_a + only_b, 0.5)))


def newcombe_paired(both, only_a, only_b, neither, quantile=Z):
    """The paired difference (a - b) and its interval by Newcombe's square-and-add method
    for paired data (Newcombe 1998, Stat Med 17:2635, method 10), which corrects the two
    Wilson intervals for the correlation of the pairs. Counts may be effective (not
    whole) counts; `quantile` may be an array (one interval per quantile)."""
    n = both + only_a + only_b + neither
    p_a, p_b = (both + only_a) / n, (both + only_b) / n
    (low_a, high_a), (low_b, high_b) = wilson(both + only_a, n, quantile), wilson(both + only_b, n, quantile)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    cross = both * neither - only_a * only_b
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = np.where((margins == 0) | ((cross >= 0) & (cross <= n / 2)), 0.0,
                       np.where(cross > n / 2, cross - n / 2, cross) / np.sqrt(np.where(margins > 0, margins, 1)))
    difference = p_a - p_b
    low = difference - np.sqrt(np.maximum((p_a - low_a) ** 2 + (high_b - p_b) ** 2
                                          - 2 * phi * (p_a - low_a) * (high_b - p_b), 0))
    high = difference + np.sqrt(np.maximum((p_b - low_b) ** 2 + (high_a - p_a) ** 2
                                           - 2 * phi * (p_b - low_b) * (high_a - p_a), 0))
    if np.ndim(low) == 0:
        return float(difference), float(low), float(high)
    return difference, low, high


def paired_interval(pairs: Paired) -> tuple[float, float, float]:
    """The paired difference over the shared turns and its 95% interval: Newcombe's
    paired interval at the effective counts."""
    low, high = pairs.interval_at(LEVEL)
    return pairs.difference, float(low), float(high)


def paired_test(pairs: Paired) -> float:
    """The two-sided p-value of the paired difference: the inversion of its interval."""
    return float(inverted(pairs.interval_at, pairs.difference))


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
                     freedom: float = math.inf) -> float:
    """Decisions per model for a two-sided test at `level` to find p_a != p_b with the
    given power, were decisions independent: the two-proportion formula (Fleiss, Levin &
    Paik, Statistical Methods for Rates and Proportions, 3rd ed., 2003, eq. 4.14), without
    the continuity correction, with Student's t quantiles at `freedom` degrees of freedom
    (normal ones where infinite)."""
    z_level = float(quantile(freedom, level))
    z_power = float(quantile(freedom, 1 - 2 * (1 - power)))
    mean = (p_a + p_b) / 2
    root = z_level * math.sqrt(2 * mean * (1 - mean)) + z_power * math.sqrt(p_a * (1 - p_a) + p_b * (1 - p_b))
    gap = (p_a - p_b) ** 2
    return float(root) ** 2 / gap if gap > 0 else math.inf  # inf: no number of decisions tells them apart


def expected_freedom(games: int, decisions_per_game: float, icc: float, models: int = 2) -> float:
    """The degrees of freedom the test will have with `models` models of `games` games of
    m decisions at this ICC: Satterthwaite's (`freedoms`) at the upper bound of the ICC
    its games will typically show, Searle's bound at the F ratio expected, 1 + m ICC /
    (1 - ICC) (Donner & Klar 2000, ch. 2), on models (games - 1) and models games (m - 1)
    degrees of freedom."""
    between, within = models * (games - 1), models * games * (decisions_per_game - 1)
    if between < 1 or within < 1:
        return math.inf
    return float(freedoms(design_effect(decisions_per_game, expected_bound(games, decisions_per_game, icc,
                                                                          PLAN_ICC_LEVEL, models)), between))


def expected_bound(games: int, decisions_per_game: float, icc: float, level: float, models: int = 2) -> float:
    """The upper bound of the ICC at `level` that `models` models of `games` games of m
    decisions typically show: Searle's bound at the median F ratio, (1 + m ICC /
    (1 - ICC)) times the median of F (Searle 1971, 9.8)."""
    between, within = models * (games - 1), models * games * (decisions_per_game - 1)
    if between < 1 or within < 1 or icc >= 1:
        return 1.0
    ratio = ((1 + decisions_per_game * icc / (1 - icc)) * float(fdtri(between, within, 0.5))
             / float(fdtri(between, within, 1 - level)))
    return min(max((ratio - 1) / (ratio + decisions_per_game - 1), icc), 1.0)


# Past this many games per model a plan is no plan: the difference is too small to show.
MAX_GAMES = 2 ** 53  # past what a float counts exactly


def games_needed(difference: float, validity: float, decisions_per_game: float, icc: float,
                 power: float = 0.8, level: float = LEVEL) -> int:
    """Games per model to tell a model at `validity` from one `difference` below it
    (above, where below would be under 0), by the test itself: the fewest games g for
    which the 95% interval the comparison will draw (Newcombe's, from two Wilson
    intervals at g m / design effect effective decisions, with Student's t at the
    degrees of freedom those games will give it, `expected_freedom`), drawn at the
    expected counts, keeps a margin to 0 of t(power) standard deviations of the
    difference: the two-proportion power calculation (Fleiss, Levin & Paik 2003, eq.
    4.14) with the test's own interval in place of the normal approximation, and the
    design effect 1 + (m - 1) ICC (Donner & Klar 2000, ch. 5). Never fewer than
    MIN_GAMES: a verdict needs them."""
    difference = abs(difference)
    other = validity - difference if validity - difference >= 0 else validity + difference
    high_p, low_p = max(validity, other), min(validity, other)

    def width(n: float, q: float) -> float:  # the lower half of Newcombe's interval at the expected counts
        low_a, _ = wilson(high_p * n, n, q)
        _, high_b = wilson(low_p * n, n, q)
        return math.sqrt((high_p - low_a) ** 2 + (high_b - low_p) ** 2)

    def holds(games: int) -> bool:
        freedom = expected_freedom(games, decisions_per_game, icc)
        # the interval is drawn at the design effect of the ICC's bound its games will show;
        # the difference itself varies with the ICC as it is
        drawn = games * decisions_per_game / design_effect(decisions_per_game, expected_bound(
            games, decisions_per_game, icc, EFFECT_ICC_LEVEL))
        actual = games * decisions_per_game / design_effect(decisions_per_game, icc)
        # the difference's standard deviation, in the interval's own measure (its half at one unit)
        return difference - width(drawn, float(quantile(freedom, level))) >= float(
            quantile(freedom, 1 - 2 * (1 - power))) * width(actual, 1.0)

    low, high = 1, 1
    while not holds(high):
        if high > MAX_GAMES:  # a difference no number of games shows
            raise WorkbenchError(f"a difference of {difference:g} is too small to plan for at a validity of "
                                 f"{validity:g}: no number of games shows it")
        low, high = high, high * 2
    while high - low > 1:  # the fewest games that hold: more games never hold less
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle, high)
    return max(high if not holds(low) else low, MIN_GAMES)


# --- can I stop now? a test that may be checked after every game ---------------------------


def e_process(differences, alpha: float = ALPHA, cap: float = 0.9):
    """The evidence against "no difference" after each game, as an e-process: a bet on
    each game's difference d (a - b) at a stake fixed before the game is seen. The
    payoff is d over a scale set before the game (twice the spread of the differences
    seen so far, at least 0.05), clipped to [-1, 1]: an odd function of d, whose mean is
    0 when the two models' results in a game are exchangeable (equally valid, in the
    same games or in games alike). The stake is the aGRAPA plug-in of Waudby-Smith &
    Ramdas (2024, JRSS B 86:1, "Estimating means of bounded random variables by
    betting"), the running mean of the payoffs over their running second moment, within
    [-cap, cap], so the capital K_t = prod (1 + s_i x_i) stays positive. Under no
    difference K is a nonnegative martingale, so by Ville's inequality the chance that
    it ever reaches 1 / alpha, however often it is looked at, is at most alpha (Shafer
    & Vovk 2019; Shekhar & Ramdas 2023, IEEE Trans Inf Theory 70:2, for two-sample tests
    by betting). Rows are independent sequences (games along the last axis); a NaN game
    (not played) bets nothing."""
    d = np.atleast_2d(np.asarray(differences, dtype=float))
    played = ~np.isnan(d)
    d = np.where(played, d, 0.0)
    seen = np.cumsum(played, axis=-1) - played  # games before this one
    squares = np.cumsum(d * d, axis=-1) - d * d
    scale = np.maximum(2 * np.sqrt((0.01 + squares) / (seen + 1)), 0.05)
    payoff = np.where(played, np.clip(d / scale, -1, 1), 0.0)
    total = np.cumsum(payoff, axis=-1) - payoff
    moment = np.cumsum(payoff * payoff, axis=-1) - payoff * payoff
    # the running mean and second moment of the payoffs, from a prior of two games whose
    # payoffs average 0 with a second moment of 1/2 (a cautious first stake)
    mean, second = total / (seen + 2), (1 + moment) / (seen + 2)
    stake = np.where(played, np.clip(mean / second, -cap, cap), 0.0)
    return np.cumprod(1 + stake * payoff, axis=-1)


@dataclass(frozen=True)
class Sequential:
    """A sequential comparison: the e-value after each game, and the game after which it
    first reached 1 / alpha (the comparison decided then; None: not yet)."""

    e_values: np.ndarray
    decided_after: int | None
    alpha: float = ALPHA

    @property
    def e_value(self) -> float:
        return float(self.e_values[-1]) if len(self.e_values) else 1.0

    @property
    def decided(self) -> bool:
        return self.decided_after is not None

    @property
    def p_value(self) -> float:
        """The anytime-valid p-value: 1 / the largest e-value seen, at most 1."""
        return float(min(1.0, 1 / max(float(np.max(self.e_values, initial=1.0)), 1.0)))


def sequential(differences, alpha: float = ALPHA) -> Sequential:
    """`e_process` over one sequence of per-game differences, and when it decided."""
    e = e_process(differences, alpha)[0] if len(differences) else np.array([])
    crossed = np.flatnonzero(e >= 1 / alpha)
    return Sequential(e, int(crossed[0]) + 1 if crossed.size else None, alpha)
