"""The statistics behind every conclusion, each against a value from outside the code: a
closed form computed here by hand, a published worked example, a hypergeometric or
binomial sum, or a classic table value."""

import math
from math import comb

import numpy as np
import pytest
from scipy.stats import f as f_dist
from scipy.stats import t as student_t

from tests.intervals import Z, wilson_by_hand
from workbench import stats
from workbench.stats import (
    Clustered,
    Paired,
    clustered,
    fisher,
    games_needed,
    holm,
    icc_anova,
    mcnemar_exact,
    newcombe,
    newcombe_paired,
    paired_interval,
    paired_test,
    two_proportion_p,
    unpaired_test,
    wilson,
)


def independent(valid: int, n: int) -> Clustered:
    """A share of independent decisions: design effect 1, the normal quantile."""
    return Clustered(valid, n, 1, 1.0, math.inf)


# --- Wilson ------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (1, 1), (0, 1), (7, 15), (192, 196)])
def test_wilson_matches_its_closed_form_at_the_edges(k, n):
    assert wilson(k, n) == pytest.approx(wilson_by_hand(k, n), abs=1e-9)


def test_wilson_at_zero_and_all_valid_and_with_no_decisions():
    assert wilson(0, 10)[0] == pytest.approx(0, abs=1e-12) and wilson(0, 10)[1] == pytest.approx(Z * Z / (10 + Z * Z))
    assert wilson(10, 10)[1] == pytest.approx(1) and wilson(10, 10)[0] == pytest.approx(10 / (10 + Z * Z))
    assert all(math.isnan(x) for x in wilson(0, 0))
    low, high = wilson(np.array([3, 0]), np.array([4, 0]))
    assert low[0] == pytest.approx(wilson_by_hand(3, 4)[0]) and math.isnan(high[1])


# --- the clustered interval ----------------------------------------------------------------


def anova_by_hand(valid_g, n_g, group):
    """MSB, MSW, the size n0 and both degrees of freedom of the one-way ANOVA with games
    nested in groups (Fleiss, Levin & Paik 2003, ch. 15), written out with loops."""
    groups = sorted(set(group))
    total = {g: sum(n for n, x in zip(n_g, group) if x == g) for g in groups}
    share = {g: sum(v for v, x in zip(valid_g, group) if x == g) / total[g] for g in groups}
    games, models, n = len(n_g), len(groups), sum(n_g)
    msb = sum(m * (v / m - share[x]) ** 2 for v, m, x in zip(valid_g, n_g, group)) / (games - models)
    msw = sum(m * (v / m) * (1 - v / m) for v, m in zip(valid_g, n_g)) / (n - games)
    size = (n - sum(m * m / total[x] for m, x in zip(n_g, group))) / (games - models)
    return msb, msw, size, games - models, n - games


def searle_high(msb, msw, size, d1, d2, level):
    ratio = msb / msw / f_dist.ppf(1 - level, d1, d2)
    return (ratio - 1) / (ratio + size - 1)


def share_by_hand(valid_g, n_g, icc_cautious, freedom, icc_high, quantile_level=0.975):
    n, valid = sum(n_g), sum(valid_g)
    size = sum(m * m for m in n_g) / n
    effect = 1 + (size - 1) * icc_cautious
    high_effect = 1 + (size - 1) * icc_high
    dof = 0.5 * max(freedom, len(n_g) - 1) * (high_effect / (high_effect - 1)) ** 2
    return effect, dof, wilson_by_hand(valid / effect, n / effect, student_t.ppf(quantile_level, dof))


def test_the_icc_and_its_upper_bounds_by_the_anova_estimator_by_hand():
    valid_g, n_g, group = [30, 21, 27, 12, 20, 18], [30, 30, 30, 20, 25, 25], ["a", "a", "a", "b", "b", "b"]
    msb, msw, size, d1, d2 = anova_by_hand(valid_g, n_g, group)
    between = stats.between_games(valid_g, n_g, group)
    assert between.icc == pytest.approx((msb - msw) / (msb + (size - 1) * msw))
    assert between.freedom == d1 == 4
    assert between.high == pytest.approx(searle_high(msb, msw, size, d1, d2, 0.9))
    assert between.cautious == pytest.approx(searle_high(msb, msw, size, d1, d2, 0.7))
    assert between.icc < between.cautious < between.high


def test_the_icc_is_centred_on_each_models_weighted_share_not_its_mean_game_rate():
    # Games of 10 and 90 decisions: 10 and 45 valid. The weighted share is 55/100; the mean
    # game rate (1 + 0.5)/2 = 0.75 would give MSB 10*0.0625 + 90*0.0625 = 6.25 instead of
    # 10*0.2025 + 90*0.0025 = 2.25.
    between = stats.between_games([10, 45], [10, 90], ["m", "m"])
    msw = (10 * 0 + 90 * 0.25) / 98
    size = (100 - (100 + 8100) / 100) / 1
    assert between.icc == pytest.approx((2.25 - msw) / (2.25 + (size - 1) * msw))


def test_the_icc_where_nothing_measures_it_is_unknown_not_zero():
    assert math.isnan(stats.between_games([40] * 5, [40] * 5).icc)  # every game all valid
    assert math.isnan(stats.between_games([3], [10]).icc)  # one game
    assert stats.between_games([10, 0], [10, 10]).icc == 1  # all or nothing, and games differ
    assert icc_anova([40] * 5, [40] * 5, ["m"] * 5) == 0  # the planner's estimate: 0


def test_all_valid_in_five_games_is_not_certain():
    # The audit: [40]*5 of [40]*5 gave 0.981-1.0, as if 200 independent decisions. The ICC
    # cannot be measured from games that all agree: each game is one observation (ICC 1,
    # design effect 40), Wilson at 5 of 5 with t at 0.5 * 4 degrees of freedom.
    share = clustered([40] * 5, [40] * 5)
    assert share.design_effect == pytest.approx(40)
    assert share.freedom == pytest.approx(2.0 * (40 / 39) ** 2)
    assert share.interval == pytest.approx(wilson_by_hand(5, 5, student_t.ppf(0.975, 2.0 * (40 / 39) ** 2)))
    assert share.interval[0] < 0.6


def test_one_game_borrows_the_formats_icc_and_alone_gets_no_interval():
    # One game of 1,000 decisions, 800 valid, in a format whose other model's games say ICC:
    between = stats.between_games([30, 21, 27, 12], [30, 30, 30, 30], ["b"] * 4)
    share = stats.share([800], [1000], between)
    effect, dof, interval = share_by_hand([800], [1000], between.cautious, between.freedom, between.high)
    assert share.design_effect == pytest.approx(effect) and share.freedom == pytest.approx(dof)
    assert share.interval == pytest.approx(interval)
    assert share.interval[1] - share.interval[0] > 0.3  # not the +-2.5 points of 1,000 independent decisions
    # alone, the game is one observation: Wilson at 0.7 of 1, the normal quantile
    alone = clustered([7], [10])
    assert alone.design_effect == 10 and alone.interval == pytest.approx(wilson_by_hand(0.7, 1.0))


def test_the_interval_by_hand_from_the_formats_icc():
    valid_g, n_g = [30] * 8 + [21] * 8, [30] * 16
    msb, msw, size, d1, d2 = anova_by_hand(valid_g, n_g, ["m"] * 16)
    share = clustered(valid_g, n_g)
    cautious, high = searle_high(msb, msw, size, d1, d2, 0.7), searle_high(msb, msw, size, d1, d2, 0.9)
    effect, dof, interval = share_by_hand(valid_g, n_g, cautious, d1, high)
    assert (share.valid, share.n, share.games) == (408, 480, 16)
    assert share.design_effect == pytest.approx(effect) and share.interval == pytest.approx(interval)
    plain_low, plain_high = wilson_by_hand(408, 480)
    assert (interval[1] - interval[0]) / (plain_high - plain_low) > 2.2


def test_one_decision_moves_the_interval_a_little_not_five_times():
    # The audit's cliff: [50, 57] of [100, 100] gave 0.466-0.603 and [50, 58] 0.163-0.876.
    below, above = clustered([50, 57], [100, 100]).interval, clustered([50, 58], [100, 100]).interval
    assert 0.9 < (above[1] - above[0]) / (below[1] - below[0]) < 1.2
    # the further apart the two games, the wider, decision by decision: no switch (two
    # games exactly alike say nothing of how games differ: each is one observation)
    assert np.diff(clustered([50, 50], [100, 100]).interval)[0] > 0.99
    widths = [np.diff(clustered([50, k], [100, 100]).interval)[0] for k in range(51, 66)]
    assert all(b >= a - 1e-12 for a, b in zip(widths, widths[1:]))


def test_intervals_take_arrays_and_edges_give_no_warnings():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        effect, dof = stats.effects(
            np.array([1.0, 40.0, 40.0]),
            np.array([1, 1, 5]),
            np.array([np.nan, 0.0, 0.2]),
            np.array([0.0, 0.0, 8.0]),
            np.array([np.nan, 0.0, 0.3]),
        )
        low, high = stats.intervals(np.array([1.0, 30, 150]), np.array([1.0, 40, 200]), effect, dof)
    # one game, nothing to borrow (the ICC unknown, or the format without freedom): one observation
    assert effect[0] == 1 and effect[1] == 40 and dof[0] == dof[1] == np.inf
    assert (low[1], high[1]) == pytest.approx(wilson_by_hand(30 / 40, 1.0))
    assert effect[2] == pytest.approx(1 + 39 * 0.2)
    assert dof[2] == pytest.approx(0.5 * 8 * ((1 + 39 * 0.3) / (39 * 0.3)) ** 2)
    assert (low[2], high[2]) == pytest.approx(
        wilson_by_hand(150 / effect[2], 200 / effect[2], student_t.ppf(0.975, dof[2]))
    )
    assert stats.quantile(np.inf) == pytest.approx(Z) and np.isnan(stats.quantile(0.0))
    assert stats.quantile(0.5) == pytest.approx(student_t.ppf(0.975, 1))


# --- two shares ----------------------------------------------------------------------------


def test_newcombe_reproduces_the_published_worked_example():
    # Newcombe (1998), Statistics in Medicine 17:873-890, Table II, example (a): 56/70 - 48/80,
    # hybrid score interval (method 10): 0.0524 to 0.3339.
    difference, low, high = newcombe(independent(56, 70), independent(48, 80))
    assert difference == pytest.approx(0.2)
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)
    assert newcombe(independent(48, 80), independent(56, 70)) == pytest.approx((-0.2, -high, -low))


def test_newcombe_of_clustered_shares_uses_their_clustered_intervals():
    a, b = clustered([30] * 8 + [21] * 8, [30] * 16), independent(300, 480)
    (low_a, high_a), (low_b, high_b) = a.interval, b.interval
    difference, low, high = newcombe(a, b)
    assert difference == pytest.approx(0.85 - 0.625)
    assert low == pytest.approx(difference - math.hypot(0.85 - low_a, high_b - 0.625))
    assert high == pytest.approx(difference + math.hypot(high_a - 0.85, 0.625 - low_b))


def hypergeometric_fisher(a: int, n_a: int, b: int, n_b: int) -> float:
    """Two-sided Fisher: the sum of the probabilities of every table with the same margins
    that is at most as probable as the one seen."""
    valid, total = a + b, n_a + n_b
    chance = lambda k: comb(n_a, k) * comb(n_b, valid - k) / comb(total, valid)  # noqa: E731
    seen = chance(a)
    return sum(chance(k) for k in range(max(0, valid - n_b), min(valid, n_a) + 1) if chance(k) <= seen * (1 + 1e-7))


@pytest.mark.parametrize(
    ("a", "n_a", "b", "n_b", "expected"),
    [(2, 2, 0, 2, 1 / 3), (3, 3, 0, 3, 0.1), (9, 10, 3, 10, None), (1, 8, 6, 9, None)],
)
def test_fisher_is_the_hypergeometric_sum(a, n_a, b, n_b, expected):
    p = fisher([[a, n_a - a], [b, n_b - b]])
    assert p == pytest.approx(hypergeometric_fisher(a, n_a, b, n_b))
    if expected is not None:
        assert p == pytest.approx(expected)


def newcombe_p_by_hand(a, n_a, b, n_b):
    """The level at which Newcombe's interval of independent shares touches 0, by scipy's
    root finder on the interval written out by hand."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    def low(p):
        z = norm.ppf(1 - p / 2)
        (la, _), (_, hb) = wilson_by_hand(a, n_a, z), wilson_by_hand(b, n_b, z)
        return a / n_a - b / n_b - math.hypot(a / n_a - la, hb - b / n_b)

    return brentq(low, 1e-12, 1 - 1e-12, xtol=1e-14)


def test_the_p_value_is_the_level_at_which_the_interval_touches_zero():
    p, test = unpaired_test(independent(56, 70), independent(48, 80))
    assert test == "Newcombe score, inverted"
    assert p == pytest.approx(newcombe_p_by_hand(56, 70, 48, 80), rel=1e-6)
    # near the score test's (0.0144), not equal to it
    assert 0.005 < p < 0.03
    assert unpaired_test(independent(48, 80), independent(56, 70))[0] == pytest.approx(p)
    assert unpaired_test(independent(5, 10), independent(5, 10))[0] == 1.0


def test_200_of_200_against_180_of_200_in_five_games_does_not_contradict_itself():
    # The audit: +0.8 to +56 points beside p = 1.0 (effective counts rounded to 4/4).
    between = stats.between_games([40] * 5 + [36, 38, 34, 37, 35], [40] * 10, ["a"] * 5 + ["b"] * 5)
    a, b = stats.share([40] * 5, [40] * 5, between), stats.share([36, 38, 34, 37, 35], [40] * 5, between)
    difference, low, high = newcombe(a, b)
    p, _ = unpaired_test(a, b)
    assert difference == pytest.approx(0.1)
    assert (p < 0.05) == (low > 0)
    # at the level 1 - p, the interval's lower end is 0
    assert stats.newcombe_at(a, b, 1 - p)[1] == pytest.approx(0, abs=1e-6)


def test_the_score_test_and_mcnemar_against_hand_sums():
    pooled = 104 / 150
    z = 0.2 / math.sqrt(pooled * (1 - pooled) * (1 / 70 + 1 / 80))
    assert two_proportion_p(56, 70, 48, 80) == pytest.approx(math.erfc(z / math.sqrt(2)))
    # 1 pair valid for a only, 9 for b only: 2 * P(X <= 1), X ~ Binomial(10, 1/2)
    assert mcnemar_exact(1, 9) == pytest.approx(2 * (1 + 10) / 1024)
    assert mcnemar_exact(5, 5) == pytest.approx(1.0) and mcnemar_exact(0, 0) == 1.0


# --- paired ----------------------------------------------------------------------------------


def test_newcombe_paired_reproduces_the_published_example():
    # Cavo et al. (2012), as worked in Fagerland, Lydersen & Laake, Statistical Analysis of
    # Contingency Tables (2017), ch. 8: the table [[59, 6], [16, 80]], Newcombe's square-and-add
    # interval: -0.0621 (95% CI -0.1186 to -0.0046).
    difference, low, high = newcombe_paired(59, 6, 16, 80)
    assert (round(difference, 4), round(low, 4), round(high, 4)) == (-0.0621, -0.1186, -0.0046)


def paired_p_by_hand(both, only_a, only_b, neither, dof):
    from scipy.optimize import brentq

    def low(p):
        return newcombe_paired_by_hand(both, only_a, only_b, neither, student_t.ppf(1 - p / 2, dof))[1]

    return brentq(low, 1e-12, 1 - 1e-9, xtol=1e-14)


def newcombe_paired_by_hand(both, only_a, only_b, neither, z):
    n = both + only_a + only_b + neither
    p_a, p_b = (both + only_a) / n, (both + only_b) / n
    (la, ha), (lb, hb) = wilson_by_hand(both + only_a, n, z), wilson_by_hand(both + only_b, n, z)
    cross = both * neither - only_a * only_b
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    phi = (
        0.0 if margins == 0 or 0 <= cross <= n / 2 else (cross - n / 2 if cross > n / 2 else cross) / math.sqrt(margins)
    )
    d = p_a - p_b
    return (
        d,
        d - math.sqrt((p_a - la) ** 2 + (hb - p_b) ** 2 - 2 * phi * (p_a - la) * (hb - p_b)),
        d + math.sqrt((p_b - lb) ** 2 + (ha - p_a) ** 2 - 2 * phi * (p_b - lb) * (ha - p_a)),
    )


def test_two_identical_paired_games_are_judged_on_the_formats_icc():
    # The audit: 18 both valid, 12 only A, 4 only B, 6 neither, in each of two games, gave
    # +20.0 points (6.3 to 32.6), p = .007 from the design-effect floor. Here the format's
    # other games (two models, four games each) say how games differ.
    between = stats.between_games([30, 22, 35, 25, 28, 20, 33, 24], [40] * 8, ["a"] * 4 + ["b"] * 4)
    pairs = Paired(np.array([18, 18]), np.array([12, 12]), np.array([4, 4]), np.array([6, 6]), between)
    effect = 1 + (40 - 1) * between.cautious
    high = 1 + (40 - 1) * between.high
    dof = 0.5 * between.freedom * (high / (high - 1)) ** 2
    assert pairs.design_effect == pytest.approx(effect) and pairs.freedom == pytest.approx(dof)
    expected = newcombe_paired_by_hand(36 / effect, 24 / effect, 8 / effect, 12 / effect, student_t.ppf(0.975, dof))
    assert paired_interval(pairs) == pytest.approx(expected)
    assert paired_test(pairs) == pytest.approx(
        paired_p_by_hand(36 / effect, 24 / effect, 8 / effect, 12 / effect, dof), rel=1e-6
    )
    assert paired_interval(pairs)[1] < 0.063  # wider than the floor's +6.3
    assert (paired_test(pairs) < 0.05) == (paired_interval(pairs)[1] > 0)


def test_pairs_in_one_game_with_nothing_to_borrow_are_one_observation():
    pairs = Paired(np.array([12]), np.array([7]), np.array([1]), np.array([0]))
    assert (pairs.turns, pairs.games, pairs.design_effect, pairs.freedom) == (20, 1, 20, math.inf)
    assert paired_interval(pairs) == pytest.approx(newcombe_paired_by_hand(0.6, 0.35, 0.05, 0.0, Z))
    assert paired_test(pairs) > 0.05
    assert (pairs.validity_a, pairs.validity_b, pairs.difference) == pytest.approx((19 / 20, 13 / 20, 0.3))


def test_the_paired_design_effect_uses_the_shared_games_sizes():
    between = stats.Between(0.1, 6.0, 0.3, 0.2)
    pairs = Paired(np.array([5, 40]), np.array([3, 10]), np.array([2, 0]), np.array([0, 0]), between)
    size = (10**2 + 50**2) / 60
    assert pairs.design_effect == pytest.approx(1 + (size - 1) * 0.2)
    high = 1 + (size - 1) * 0.3
    assert pairs.freedom == pytest.approx(0.5 * 6 * (high / (high - 1)) ** 2)


# --- Holm ----------------------------------------------------------------------------------


def test_holm_steps_down_by_hand():
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> kept monotone: 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([0.001, 0.9]) == pytest.approx([0.002, 0.9])


# --- sample size ----------------------------------------------------------------------------


def test_the_two_proportion_formula_gives_the_classic_199():
    # 90% against 80% at 5% two-sided and 80% power: 199 per group (Fleiss, Levin & Paik's
    # formula without continuity correction; the textbook value).
    assert math.ceil(stats.decisions_needed(0.9, 0.8)) == 199


def holds_by_hand(games, difference, p, m, icc, power=0.8):
    """The planner's criterion written out: Newcombe's lower half-width at the expected
    counts, t quantiles at the degrees of freedom the games will give."""
    from scipy.stats import f as f_dist

    def bound(level):
        d1, d2 = 2 * (games - 1), 2 * games * (m - 1)
        ratio = (1 + m * icc / (1 - icc)) * f_dist.ppf(0.5, d1, d2) / f_dist.ppf(1 - level, d1, d2)
        return min(max((ratio - 1) / (ratio + m - 1), icc), 1.0)

    high = 1 + (m - 1) * bound(0.9)
    dof = 0.5 * 2 * (games - 1) * (high / (high - 1)) ** 2
    drawn = games * m / (1 + (m - 1) * bound(0.7))  # the interval's effective decisions
    actual = games * m / (1 + (m - 1) * icc)  # how much the difference itself varies
    q, q_power = student_t.ppf(0.975, dof), student_t.ppf(power, dof)
    lo_p, hi_p = p - difference, p

    def width(n, z):
        return math.hypot(hi_p - wilson_by_hand(hi_p * n, n, z)[0], wilson_by_hand(lo_p * n, n, z)[1] - lo_p)

    return difference - width(drawn, q) >= q_power * width(actual, 1.0)


@pytest.mark.parametrize(
    ("difference", "p", "m", "icc"),
    [(0.1, 0.97, 40, 0.0), (0.1, 0.9, 40, 0.1), (0.05, 0.95, 40, 0.02), (0.1, 0.85, 40, 0.2)],
)
def test_games_needed_is_the_fewest_games_the_test_keeps_its_power_with(difference, p, m, icc):
    games = games_needed(difference, p, m, icc)
    assert holds_by_hand(games, difference, p, m, icc)
    assert games == 2 or not holds_by_hand(games - 1, difference, p, m, icc)


def test_the_planner_at_icc_zero_uses_the_tests_quantiles():
    # The audit: sample_size(0.10, 0.97, 40, 0) said 3 games, which have 27% power. The
    # test estimates the ICC from its games even at ICC 0, so its quantile is t, not z.
    assert games_needed(0.1, 0.97, 40, 0.0) > 3
    # a difference that does not fit below the validity is taken above it
    assert games_needed(0.1, 0.05, 10, 0.0) == games_needed(0.1, 0.15, 10, 0.0)
    # more power, more games; a larger ICC, more games
    base = games_needed(0.05, 0.95, 40, 0.02)
    assert games_needed(0.05, 0.95, 40, 0.02, power=0.9) > base < games_needed(0.05, 0.95, 40, 0.1)


def test_icc_by_the_anova_estimator_by_hand():
    # One model, three games of 10: 10, 5 and 0 valid. p = 0.5.
    # MSB = 10 * (0.25 + 0 + 0.25) / 2 = 2.5; MSW = 10 * (0 + 0.25 + 0) / 27 = 2.5/27; size = 10.
    between, within = 2.5, 2.5 / 27
    assert icc_anova([10, 5, 0], [10, 10, 10], ["m"] * 3) == pytest.approx((between - within) / (between + 9 * within))
    # games alike: no correlation (truncated at 0); each game all or nothing: 1
    assert icc_anova([5, 5, 5], [10, 10, 10], ["m"] * 3) == 0
    assert icc_anova([10, 0, 10, 0], [10, 10, 10, 10], ["m"] * 4) == pytest.approx(1)
    # a difference between models is not a difference between games
    assert icc_anova([10, 10, 0, 0], [10, 10, 10, 10], ["a", "a", "b", "b"]) == 0
    assert icc_anova([3], [10], ["m"]) == 0


# --- the sequential test ---------------------------------------------------------------------


def test_the_e_process_is_the_product_of_its_bets_by_hand():
    d = [0.2, -0.1, 0.3]
    e = stats.e_process(d)[0]
    capital, squares, payoffs = 1.0, 0.0, []
    for t, x in enumerate(d):
        scale = max(2 * math.sqrt((0.01 + squares) / (t + 1)), 0.05)
        mean = sum(payoffs) / (t + 2)
        second = (1 + sum(y * y for y in payoffs)) / (t + 2)
        stake = min(max(mean / second, -0.9), 0.9)
        payoff = min(max(x / scale, -1), 1)
        capital *= 1 + stake * payoff
        assert e[t] == pytest.approx(capital)
        squares += x * x
        payoffs.append(payoff)


def test_the_sequential_test_checked_after_every_game_rarely_decides_for_equal_models():
    rng = np.random.default_rng(0)
    rates = rng.beta(0.6 * 9, 0.4 * 9, size=(2, 3000, 60))
    d = (rng.binomial(40, rates[0]) - rng.binomial(40, rates[1])) / 40
    ever = (stats.e_process(d) >= 20).any(axis=1).mean()
    assert ever <= 0.05
    found = stats.sequential(list(0.15 + 0.1 * rng.standard_normal(60)))
    assert found.decided and found.decided_after <= 30 and found.p_value <= 0.05
    assert not stats.sequential([]).decided and stats.sequential([]).p_value == 1.0


# --- edges and array forms the tests above leave open ---------------------------------------


def test_games_that_differ_only_between_have_every_bound_at_one():
    # 10 of 10 and 0 of 10: no variation within a game (MSW 0), all between: the ICC and
    # both of its upper bounds are 1, not the 0/0 of the F ratio.
    between = stats.between_games([10, 0], [10, 10])
    assert (between.icc, between.cautious, between.high, between.freedom) == (1.0, 1.0, 1.0, 1.0)


def test_between_arrays_gives_each_formats_anova_by_hand():
    # three formats at once, each two models of three games: one measured, one with games
    # that differ only between (ICC 1), one where every game is at its model's share (unknown)
    valid = np.array([[[30, 21, 27], [12, 20, 18]], [[10, 0, 10], [0, 10, 10]], [[5, 5, 5], [8, 8, 8]]], dtype=float)
    n = np.array([[[30, 30, 30], [20, 25, 25]], [[10] * 3] * 2, [[10] * 3] * 2])  # whole counts
    icc, freedom, high, cautious = stats.between_arrays(valid, n)
    assert freedom.tolist() == [4.0, 4.0, 4.0]
    msb, msw, size, d1, d2 = anova_by_hand([30, 21, 27, 12, 20, 18], [30, 30, 30, 20, 25, 25], list("aaabbb"))
    assert (d1, d2) == (4, 154)
    assert icc[0] == pytest.approx((msb - msw) / (msb + (size - 1) * msw))
    assert high[0] == pytest.approx(searle_high(msb, msw, size, d1, d2, 0.9))
    assert cautious[0] == pytest.approx(searle_high(msb, msw, size, d1, d2, 0.7))
    assert (icc[1], cautious[1], high[1]) == (1.0, 1.0, 1.0)
    assert all(math.isnan(x) for x in (icc[2], cautious[2], high[2]))


def test_expected_counts_of_a_two_by_two_table_by_hand():
    # rows 5 and 15, columns 7 and 13, of 20: row total * column total / 20
    assert stats.expected_counts([[1, 4], [6, 9]]) == pytest.approx([35 / 20, 65 / 20, 105 / 20, 195 / 20])


def test_two_equal_shares_need_infinitely_many_decisions():
    assert stats.decisions_needed(0.7, 0.7) == math.inf


@pytest.mark.parametrize("table", [(10, 5, 3, 2), (10, 3, 4, 2), (3, 6, 1, 0), (5, 0, 0, 0)])
def test_newcombe_paired_zeroes_the_correlation_only_where_newcombe_says(table):
    # (10, 5, 3, 2): cross 5 of n/2 10; (10, 3, 4, 2): cross 8 between n/3 and n/2, so the
    # correlation is 0; (3, 6, 1, 0): cross -6, negative, kept; (5, 0, 0, 5): margins 0.
    assert newcombe_paired(*table) == pytest.approx(newcombe_paired_by_hand(*table, Z))


def test_newcombe_paired_takes_an_array_of_quantiles():
    quantiles = np.array([Z, student_t.ppf(0.975, 3)])
    difference, low, high = newcombe_paired(59, 6, 16, 80, quantile=quantiles)
    for i, z in enumerate(quantiles):
        assert (difference, low[i], high[i]) == pytest.approx(newcombe_paired_by_hand(59, 6, 16, 80, z))


def test_paired_effects_take_many_pairs_along_the_leading_axis():
    # two pairs of models, games along the last axis: each row's own sizes
    both, only_a = np.array([[5, 40], [10, 10]]), np.array([[3, 10], [0, 0]])
    only_b, neither = np.array([[2, 0], [0, 0]]), np.array([[0, 0], [0, 0]])
    effect, freedom = stats.paired_effects(both, only_a, only_b, neither, 0.2, 6.0, 0.3)
    for row, size in enumerate([(10**2 + 50**2) / 60, (10**2 + 10**2) / 20]):
        assert effect[row] == pytest.approx(1 + (size - 1) * 0.2)
        high = 1 + (size - 1) * 0.3
        assert freedom[row] == pytest.approx(0.5 * 6 * (high / (high - 1)) ** 2)


def expected_bound_by_hand(games, m, icc, level, models=2):
    # Searle's bound at the median F ratio, on models (games - 1) and models games (m - 1)
    d1, d2 = models * (games - 1), models * games * (m - 1)
    ratio = (1 + m * icc / (1 - icc)) * f_dist.ppf(0.5, d1, d2) / f_dist.ppf(1 - level, d1, d2)
    return min(max((ratio - 1) / (ratio + m - 1), icc), 1.0)


@pytest.mark.parametrize(
    ("games", "m", "icc", "level", "models"), [(5, 10, 0.1, 0.9, 2), (3, 4, 0.05, 0.7, 3), (2, 1.25, 0.1, 0.9, 2)]
)
def test_the_planners_expected_bound_and_freedom_by_hand(games, m, icc, level, models):
    bound = expected_bound_by_hand(games, m, icc, level, models)
    assert stats.expected_bound(games, m, icc, level, models) == pytest.approx(bound)
    high = 1 + (m - 1) * expected_bound_by_hand(games, m, icc, 0.9, models)
    assert stats.expected_freedom(games, m, icc, models) == pytest.approx(
        0.5 * models * (games - 1) * (high / (high - 1)) ** 2
    )


def test_the_planners_bound_with_nothing_to_measure_is_one():
    # one game each, or one decision a game, or an ICC of 1: no F ratio, the bound is 1
    # and the degrees of freedom infinite
    assert stats.expected_bound(1, 10, 0.1, 0.9) == stats.expected_bound(5, 1, 0.1, 0.9) == 1.0
    assert stats.expected_bound(5, 10, 1.0, 0.9) == 1.0
    assert stats.expected_freedom(1, 10, 0.1) == stats.expected_freedom(5, 1, 0.1) == math.inf


def test_satterthwaites_freedom_is_infinite_at_a_design_effect_of_one():
    # FREEDOM_SHARE freedom (effect / (effect - 1))^2: at effect 2 on 4 degrees, 0.5 * 4 * 4;
    # at effect 1 (nothing estimated) infinite, whatever the freedom
    freedom = stats.freedoms(np.array([1.0, 1.0, 2.0]), np.array([0.0, 4.0, 4.0]))
    assert freedom.tolist() == [math.inf, math.inf, 8.0]
