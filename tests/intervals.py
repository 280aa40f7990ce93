"""Intervals written out by hand from their definitions, for tests to hold the code to."""

import math

from scipy.stats import t as student_t

Z = 1.959963984540054  # the 97.5% normal quantile


def wilson_by_hand(k: float, n: float, z: float = Z) -> tuple[float, float]:
    centre = (k + z * z / 2) / (n + z * z)
    half = z * math.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
    return centre - half, centre + half


def clustered_by_hand(valid_g, n_g, pool=None) -> tuple[float, tuple[float, float]]:
    """(design effect, 95% interval) of a share seen in games, its format's games in `pool`
    (a list of (model, valid, n), one per game; by default these games alone): the ANOVA
    ICC with games nested in their model and Searle's upper bounds at 70% and 90% (scipy's
    F quantiles), the design effect 1 + (m - 1) ICC_70 at m = sum n^2 / n, Wilson at n /
    design effect with Student's t at half Satterthwaite's degrees of freedom (at least
    one) for the 90% bound. Where nothing measures the ICC (one game a model, or every
    game exactly at its model's share), ICC 1."""
    from scipy.stats import f as f_dist
    from scipy.stats import norm

    pool = [("m", v, m) for v, m in zip(valid_g, n_g)] if pool is None else pool
    models = sorted({g for g, _, _ in pool})
    total = {g: sum(m for x, _, m in pool if x == g) for g in models}
    share = {g: sum(v for x, v, _ in pool if x == g) / total[g] for g in models}
    games, n_all = len(pool), sum(m for _, _, m in pool)
    d1, d2 = games - len(models), n_all - games
    n, valid = sum(n_g), sum(valid_g)
    size = sum(m * m for m in n_g) / n
    freedom = max(d1, len(n_g) - 1)
    if freedom < 1:
        return float(size), wilson_by_hand(valid / size, n / size)
    msb = sum(m * (v / m - share[g]) ** 2 for g, v, m in pool) / d1
    msw = sum(m * (v / m) * (1 - v / m) for _, v, m in pool) / d2
    n0 = (n_all - sum(m * m / total[g] for g, _, m in pool)) / d1
    if msw == 0 or msb == 0:  # games differ only between (ICC 1), or not at all (unknown: 1)
        icc_70 = icc_90 = 1.0
    else:
        icc = min(max((msb - msw) / (msb + (n0 - 1) * msw), 0.0), 1.0)

        def bound(level):
            ratio = msb / msw / f_dist.ppf(1 - level, d1, d2)
            return min(max((ratio - 1) / (ratio + n0 - 1), icc), 1.0)

        icc_70, icc_90 = bound(0.7), bound(0.9)
    effect, high = 1 + (size - 1) * icc_70, 1 + (size - 1) * icc_90
    if high <= 1:
        quantile = norm.ppf(0.975)
    else:
        quantile = student_t.ppf(0.975, max(0.5 * freedom * (high / (high - 1)) ** 2, 1.0))
    return effect, wilson_by_hand(valid / effect, n / effect, quantile)
