"""Two shares compared, each comparison one test: Newcombe's hybrid score interval of
two clustered shares (unpaired) or his paired interval at the effective counts (the same
turns), with the p-value the interval's inversion, so p < 0.05 exactly when the 95%
interval excludes 0; the exact tests (Fisher, McNemar) and the two-proportion score test
beside them; Holm's correction over many comparisons."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

# The tails as ufuncs: scipy.special loads in a tenth of scipy.stats' time (a second), so
# the exact tests are written out here rather than taken from it.
from scipy.special import bdtr, ndtr

from workbench.stats.clustering import NOTHING, Between, design_effect, freedoms
from workbench.stats.shares import LEVEL, Clustered, Z, quantile, wilson

# Cochran's rule: the score test's normal approximation wants every expected count of the
# 2x2 table at 5 or more; below, the exact test.
MIN_EXPECTED = 5
# A difference between models is claimed only from decisions of at least this many games
# on each side: from one game, how a model did cannot be told from how that game went.
MIN_GAMES = 2


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
    (low_a, high_a), (low_b, high_b) = a.interval_at(level), b.interval_at(level)
    return newcombe_arrays(a.validity, low_a, high_a, b.validity, low_b, high_b)


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
        effect, freedom = paired_effects(
            self.both, self.only_a, self.only_b, self.neither, between.cautious, between.freedom, between.high
        )
        return float(effect), float(freedom)

    @property
    def design_effect(self) -> float:
        return self._effect[0]

    @property
    def freedom(self) -> float:
        return self._effect[1]

    def interval_at(self, level=LEVEL):
        effect = self.design_effect
        _, low, high = newcombe_paired(
            *(float(x.sum()) / effect for x in (self.both, self.only_a, self.only_b, self.neither)),
            quantile=quantile(self.freedom, level),
        )
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
    size = np.divide((sizes**2).sum(axis=-1), n, out=np.ones_like(n), where=n > 0)
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
        phi = np.where(
            (margins == 0) | ((cross >= 0) & (cross <= n / 2)),
            0.0,
            np.where(cross > n / 2, cross - n / 2, cross) / np.sqrt(np.where(margins > 0, margins, 1)),
        )
    difference = p_a - p_b
    low = difference - np.sqrt(
        np.maximum((p_a - low_a) ** 2 + (high_b - p_b) ** 2 - 2 * phi * (p_a - low_a) * (high_b - p_b), 0)
    )
    high = difference + np.sqrt(
        np.maximum((p_b - low_b) ** 2 + (high_a - p_a) ** 2 - 2 * phi * (p_b - low_b) * (high_a - p_a), 0)
    )
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
