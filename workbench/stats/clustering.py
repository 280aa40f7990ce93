"""How the decisions of one game hang together: the intra-class correlation (ICC) of
validity within games, estimated once per format with games nested in their model
(`Between`), and the design effect 1 + (m - 1) ICC it gives a share of decisions from
games of mean size m, with the degrees of freedom of the variance it adds
(Satterthwaite's). Where the ICC cannot be measured it is unknown, not 0: a share then
takes ICC 1, each game one observation."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import fdtri

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
    between, within, size, freedom, within_freedom = (
        np.asarray(x, dtype=float) for x in (between, within, size, freedom, within_freedom)
    )
    measured = (freedom >= 1) & (within_freedom >= 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        icc = np.clip((between - within) / (between + (size - 1) * within), 0.0, 1.0)

        def bound(level):
            ratio = (
                between
                / within
                / fdtri(np.where(measured, freedom, 1), np.where(measured, within_freedom, 1), 1 - level)
            )
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
    size = (n - float((n_g**2 / n_group[index]).sum())) / (games - models)
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
        size = (total - (n**2 / n.sum(axis=-1, keepdims=True)).sum(axis=(-2, -1))) / freedom
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
