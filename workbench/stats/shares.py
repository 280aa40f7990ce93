"""One share of valid decisions and its interval: Wilson's score interval at the
effective sample size n / design effect, with the quantile of Student's t at the degrees
of freedom of the share's variance (`stats.clustering`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

# The quantiles as ufuncs: scipy.special loads in a tenth of scipy.stats' time (a second).
from scipy.special import ndtri, stdtrit

from workbench.stats.clustering import Between, between_games, effects

LEVEL = 0.95
ALPHA = 1 - LEVEL
Z = float(ndtri(1 - ALPHA / 2))


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
    return wilson(
        np.asarray(valid, dtype=float) / effect, np.asarray(n, dtype=float) / effect, quantile(freedom, level)
    )


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


def share_arrays(valid_g, n_g, icc, freedom, high):
    """Per share (leading axes; games along the last): valid, n, the design effect and
    the degrees of freedom of its variance, given the format's ICC (NaN: unknown), the
    ICC's degrees of freedom and its upper bound. The degrees of freedom are
    Satterthwaite's at the upper bound's design effect: where the ICC is estimated at 0
    from few games, the variance is not taken as known. A share of one game in a format
    with nothing to borrow has neither (NaN: no interval)."""
    valid_g, n_g = np.asarray(valid_g, dtype=float), np.asarray(n_g, dtype=float)
    valid, n, games = valid_g.sum(axis=-1), n_g.sum(axis=-1), (n_g > 0).sum(axis=-1)
    size = np.divide((n_g**2).sum(axis=-1), n, out=np.ones_like(n), where=n > 0)
    return (valid, n, *effects(size, games, icc, freedom, high))


def share(valid_g, n_g, between: Between) -> Clustered:
    """The share of valid decisions over the games given, with the format's `between`."""
    valid, n, effect, freedom = share_arrays(valid_g, n_g, between.cautious, between.freedom, between.high)
    return Clustered(int(valid), int(n), int((np.asarray(n_g) > 0).sum()), float(effect), float(freedom))


def clustered(valid_by_game, n_by_game, between: Between | None = None) -> Clustered:
    """The share of valid decisions over the games given (valid and decided per game),
    its ICC estimated from these games unless `between` gives the format's."""
    return share(valid_by_game, n_by_game, between_games(valid_by_game, n_by_game) if between is None else between)
