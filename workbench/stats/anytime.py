"""A comparison that may be checked after every game: an e-process betting on each
game's difference, whose chance of ever calling equal models different is at most
alpha however often it is looked at."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.stats.shares import ALPHA


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
