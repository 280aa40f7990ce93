"""How many games a question needs: the fewest games per model for which the
comparison's own test keeps a difference at the power asked for (`games_needed`), and
the degrees of freedom and ICC bound those games will typically give it."""

from __future__ import annotations

import math

from scipy.special import fdtri

from workbench.errors import WorkbenchError
from workbench.stats.clustering import EFFECT_ICC_LEVEL, PLAN_ICC_LEVEL, design_effect, freedoms
from workbench.stats.differences import MIN_GAMES
from workbench.stats.shares import LEVEL, quantile, wilson


def decisions_needed(
    p_a: float, p_b: float, power: float = 0.8, level: float = LEVEL, freedom: float = math.inf
) -> float:
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
    return float(
        freedoms(
            design_effect(decisions_per_game, expected_bound(games, decisions_per_game, icc, PLAN_ICC_LEVEL, models)),
            between,
        )
    )


def expected_bound(games: int, decisions_per_game: float, icc: float, level: float, models: int = 2) -> float:
    """The upper bound of the ICC at `level` that `models` models of `games` games of m
    decisions typically show: Searle's bound at the median F ratio, (1 + m ICC /
    (1 - ICC)) times the median of F (Searle 1971, 9.8)."""
    between, within = models * (games - 1), models * games * (decisions_per_game - 1)
    if between < 1 or within < 1 or icc >= 1:
        return 1.0
    ratio = (
        (1 + decisions_per_game * icc / (1 - icc))
        * float(fdtri(between, within, 0.5))
        / float(fdtri(between, within, 1 - level))
    )
    return min(max((ratio - 1) / (ratio + decisions_per_game - 1), icc), 1.0)


# Past this many games per model a plan is no plan: the difference is too small to show.
MAX_GAMES = 2**53  # past what a float counts exactly


def games_needed(
    difference: float, validity: float, decisions_per_game: float, icc: float, power: float = 0.8, level: float = LEVEL
) -> int:
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
        drawn = (
            games
            * decisions_per_game
            / design_effect(decisions_per_game, expected_bound(games, decisions_per_game, icc, EFFECT_ICC_LEVEL))
        )
        actual = games * decisions_per_game / design_effect(decisions_per_game, icc)
        # the difference's standard deviation, in the interval's own measure (its half at one unit)
        return difference - width(drawn, float(quantile(freedom, level))) >= float(
            quantile(freedom, 1 - 2 * (1 - power))
        ) * width(actual, 1.0)

    low, high = 1, 1
    while not holds(high):
        if high > MAX_GAMES:  # a difference no number of games shows
            raise WorkbenchError(
                f"a difference of {difference:g} is too small to plan for at a validity of "
                f"{validity:g}: no number of games shows it"
            )
        low, high = high, high * 2
    while high - low > 1:  # the fewest games that hold: more games never hold less
        middle = (low + high) // 2
        low, high = (low, middle) if holds(middle) else (middle, high)
    return max(high if not holds(low) else low, MIN_GAMES)
