"""Intervals written out by hand from their definitions, for tests to hold the code to."""

import math

from scipy.stats import t as student_t

Z = 1.959963984540054  # the 97.5% normal quantile


def wilson_by_hand(k: float, n: float, z: float = Z) -> tuple[float, float]:
    centre = (k + z * z / 2) / (n + z * z)
    half = z * math.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
    return centre - half, centre + half


def clustered_by_hand(valid_g, n_g) -> tuple[float, tuple[float, float]]:
    """(design effect, 95% interval) of a share seen in games: CR1 variance over
    p(1-p)/n floored at 1, Wilson at n / design effect with Student's t at games - 1
    degrees of freedom; Wilson itself for one game or a share of 0 or 1."""
    n, valid, games = sum(n_g), sum(valid_g), len(n_g)
    p = valid / n
    if games < 2 or p in (0, 1):
        return 1.0, wilson_by_hand(valid, n)
    robust = games / (games - 1) * sum((v - p * m) ** 2 for v, m in zip(valid_g, n_g)) / n ** 2
    effect = max(robust / (p * (1 - p) / n), 1)
    if effect == 1:
        return 1.0, wilson_by_hand(valid, n)
    return effect, wilson_by_hand(p * n / effect, n / effect, student_t.ppf(0.975, games - 1))
