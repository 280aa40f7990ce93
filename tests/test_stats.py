"""The statistics behind every conclusion, each against a value from outside the code: a
closed form computed here by hand, a published worked example, a hypergeometric or
binomial sum, or a classic table value."""

import math
from math import comb

import numpy as np
import pytest
from scipy.stats import t as student_t

from workbench import stats
from workbench.stats import (Clustered, Paired, clustered, design_effects, fisher, games_needed, holm, icc_anova,
                             mcnemar_exact, newcombe, newcombe_paired, paired_interval, paired_test,
                             two_proportion_p, unpaired_test, wilson)

from tests.intervals import Z, clustered_by_hand, wilson_by_hand


def independent(valid: int, n: int) -> Clustered:
    """A share from one game: no clustering to account for."""
    return Clustered(valid, n, 1, 1.0)


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


def test_half_the_games_all_valid_and_half_at_70_percent_widen_the_interval_by_hand():
    # 16 episodes of 30 decisions: 8 all valid, 8 with 21 valid (the example).
    valid_g, n_g = [30] * 8 + [21] * 8, [30] * 16
    share = clustered(valid_g, n_g)
    effect, (low, high) = clustered_by_hand(valid_g, n_g)
    assert (share.valid, share.n, share.games) == (408, 480, 16)
    # sum of squares: 16 games off by 4.5 -> 324; CR1: 16/15 * 324 / 480^2; p(1-p)/n = 0.1275/480
    assert share.design_effect == pytest.approx((16 / 15 * 324 / 480 ** 2) / (0.85 * 0.15 / 480)) == effect
    assert share.interval == pytest.approx((low, high))
    plain_low, plain_high = wilson_by_hand(408, 480)
    # as independent decisions, the interval is more than twice too narrow
    assert (high - low) / (plain_high - plain_low) > 2.2


def test_one_game_games_alike_and_all_valid_fall_back_to_wilson():
    assert clustered([7], [10]).interval == pytest.approx(wilson_by_hand(7, 10))
    # two games at exactly the same rate: less spread than independent decisions show
    alike = clustered([5, 5], [10, 10])
    assert alike.design_effect == 1 and alike.interval == pytest.approx(wilson_by_hand(10, 20))
    everything = clustered([10, 20, 5], [10, 20, 5])
    assert everything.design_effect == 1 and everything.interval == pytest.approx(wilson_by_hand(35, 35))


def test_the_design_effect_floor_on_both_sides_of_one():
    # Two games of 100 decisions. 50 and 57 valid: p = 0.535, squares 2 * 3.5^2 = 24.5,
    # CR1 2 * 24.5 / 200^2 = 0.001225 < p(1-p)/200 = 0.00124: no more spread than chance.
    # 50 and 58: p = 0.54, squares 2 * 4^2 = 32, CR1 0.0016 > 0.001242: clustered.
    below, above = clustered([50, 57], [100, 100]), clustered([50, 58], [100, 100])
    assert below.design_effect == 1 and below.interval == pytest.approx(wilson_by_hand(107, 200))
    effect, interval = clustered_by_hand([50, 58], [100, 100])
    assert effect == pytest.approx(0.0016 / (0.54 * 0.46 / 200))
    assert above.design_effect == pytest.approx(effect) and above.interval == pytest.approx(interval)
    assert above.interval[1] - above.interval[0] > wilson_by_hand(108, 200)[1] - wilson_by_hand(108, 200)[0]


def test_design_effects_take_arrays():
    effects = design_effects(np.array([480, 10]), np.array([408, 7]), np.array([16, 1]), np.array([324.0, 0.0]))
    assert effects[0] == pytest.approx(clustered([30] * 8 + [21] * 8, [30] * 16).design_effect) and effects[1] == 1


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


@pytest.mark.parametrize(("a", "n_a", "b", "n_b", "expected"), [(2, 2, 0, 2, 1 / 3), (3, 3, 0, 3, 0.1),
                                                                  (9, 10, 3, 10, None), (1, 8, 6, 9, None)])
def test_fisher_is_the_hypergeometric_sum(a, n_a, b, n_b, expected):
    p = fisher([[a, n_a - a], [b, n_b - b]])
    assert p == pytest.approx(hypergeometric_fisher(a, n_a, b, n_b))
    if expected is not None:
        assert p == pytest.approx(expected)


def test_small_counts_take_fishers_test_and_large_ones_the_score_test():
    # 2/2 against 0/2: the score test would say p = 0.0455; Fisher says 1/3.
    assert unpaired_test(independent(2, 2), independent(0, 2)) == (pytest.approx(1 / 3), "Fisher exact")
    assert unpaired_test(independent(3, 3), independent(0, 3)) == (pytest.approx(0.1), "Fisher exact")
    # Cochran's bound: 10/20 vs 0/20 has expected counts of 5 -> the score test;
    # 9/20 vs 0/20 has 4.5 -> Fisher.
    p, test = unpaired_test(independent(10, 20), independent(0, 20))
    pooled = 10 / 40
    z = 0.5 / math.sqrt(pooled * (1 - pooled) * (2 / 20))
    assert test == "score test" and p == pytest.approx(math.erfc(z / math.sqrt(2)))
    assert unpaired_test(independent(9, 20), independent(0, 20)) == (
        pytest.approx(hypergeometric_fisher(9, 20, 0, 20)), "Fisher exact")


def test_the_unpaired_test_of_clustered_shares_uses_the_effective_counts():
    a = clustered([30] * 8 + [21] * 8, [30] * 16)
    effective_n = 480 * a.shrink
    # n rounded down, never more evidence than there is; valid to the nearest
    assert stats.effective_counts(a) == (math.floor(408 * a.shrink + 0.5), math.floor(effective_n))
    p, _ = unpaired_test(a, independent(300, 480))
    k, m = stats.effective_counts(a)
    assert p == pytest.approx(two_proportion_p(k, m, 300, 480)
                              if min(stats.expected_counts([[k, m - k], [300, 180]])) >= 5
                              else hypergeometric_fisher(k, m, 300, 480))


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


def test_pairs_in_one_game_are_mcnemar_and_newcombe_themselves():
    pairs = Paired(np.array([12]), np.array([7]), np.array([1]), np.array([0]))
    assert (pairs.turns, pairs.games, pairs.design_effect) == (20, 1, 1)
    assert paired_test(pairs) == pytest.approx(mcnemar_exact(7, 1)) == pytest.approx(2 * (1 + 8) / 256)
    assert paired_interval(pairs) == pytest.approx(newcombe_paired(12, 7, 1, 0))
    assert (pairs.validity_a, pairs.validity_b, pairs.difference) == pytest.approx((19 / 20, 13 / 20, 0.3))


def test_pairs_from_games_that_differ_carry_their_design_effect():
    # Game 1: a wins all 10 discordant turns; game 2: none of 10 turns differ. By hand:
    # D = +1 on 10 turns, 0 on 10; mean 0.5. Independent variance ((10)/20 - 0.25)/20 = 0.0125.
    # CR1: 2/1 * ((10 - 0.5*10)^2 + (0 - 0.5*10)^2) / 20^2 = 2 * 50 / 400 = 0.25.
    pairs = Paired(np.array([0, 10]), np.array([10, 0]), np.array([0, 0]), np.array([0, 0]))
    assert pairs.design_effect == pytest.approx(0.25 / 0.0125)
    effect = 20.0
    shrink = (Z / student_t.ppf(0.975, 1)) ** 2 / effect  # 2 games: 1 degree of freedom
    assert pairs.shrink == pytest.approx(shrink)
    assert paired_test(pairs) == pytest.approx(mcnemar_exact(math.floor(10 * shrink + 0.5), 0))
    assert paired_interval(pairs)[1:] == pytest.approx(newcombe_paired(10 * shrink, 10 * shrink, 0, 0)[1:])
    assert paired_interval(pairs)[0] == 0.5


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
    # with independent decisions, games of 20: 199 / 20 -> 10 games
    assert games_needed(0.1, 0.9, 20, 0.0) == 10


def test_games_needed_is_the_formula_times_the_design_effect_by_hand():
    z_a, z_b = 1.959963984540054, 0.8416212335729143
    by_hand = lambda p1, p2: (z_a * math.sqrt(2 * ((p1 + p2) / 2) * (1 - (p1 + p2) / 2))  # noqa: E731
                              + z_b * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))) ** 2 / (p1 - p2) ** 2
    decisions = by_hand(0.95, 0.90)
    effect = 1 + (40 - 1) * 0.02
    games = math.ceil(decisions * effect / 40)
    # then Student's t with 2(g - 1) degrees of freedom, until it holds
    while True:
        freedom = 2 * (games - 1)
        t_a, t_b = student_t.ppf(0.975, freedom), student_t.ppf(0.8, freedom)
        again = math.ceil((t_a * math.sqrt(2 * 0.925 * 0.075) + t_b * math.sqrt(0.95 * 0.05 + 0.9 * 0.1)) ** 2
                          / 0.05 ** 2 * effect / 40)
        if again <= games:
            break
        games = again
    assert games_needed(0.05, 0.95, 40, 0.02) == games
    # a difference that does not fit below the validity is taken above it
    assert games_needed(0.1, 0.05, 10, 0.0) == math.ceil(by_hand(0.05, 0.15) / 10)
    # more power, more games; a larger ICC, more games
    assert games_needed(0.05, 0.95, 40, 0.02, power=0.9) > games < games_needed(0.05, 0.95, 40, 0.1)


def test_icc_by_the_anova_estimator_by_hand():
    # One model, three games of 10: 10, 5 and 0 valid. p = 0.5.
    # MSB = 10 * (0.25 + 0 + 0.25) / 2 = 2.5; MSW = 10 * (0 + 0.25 + 0) / 27 = 2.5/27; size = 10.
    between, within = 2.5, 2.5 / 27
    assert icc_anova([10, 5, 0], [10, 10, 10], ["m"] * 3) == pytest.approx((between - within) /
                                                                            (between + 9 * within))
    # games alike: no correlation (truncated at 0); each game all or nothing: 1
    assert icc_anova([5, 5, 5], [10, 10, 10], ["m"] * 3) == 0
    assert icc_anova([10, 0, 10, 0], [10, 10, 10, 10], ["m"] * 4) == pytest.approx(1)
    # a difference between models is not a difference between games
    assert icc_anova([10, 10, 0, 0], [10, 10, 10, 10], ["a", "a", "b", "b"]) == 0
    assert icc_anova([3], [10], ["m"]) == 0


def test_edge_shares_give_no_warnings_and_say_what_they_are():
    # No decisions, one decision, one game, all valid: no division by zero or NaN comes
    # out as a warning; each is what it is (NaN interval for nothing, effect 1, z).
    import warnings

    n, valid, games = np.array([0.0, 1.0, 5.0, 40.0]), np.array([0.0, 1.0, 5.0, 30.0]), np.array([0, 1, 1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        effects = design_effects(n, valid, games, np.zeros(4))
        z = stats.quantiles(games, effects)
        low, high = wilson(valid, n)
        shrink = stats.shrinks(games, effects)
    assert effects.tolist() == [1.0, 1.0, 1.0, 1.0] and z.tolist() == [Z] * 4 and shrink.tolist() == [1.0] * 4
    assert np.isnan(low[0]) and np.isnan(high[0]) and low[1:] == pytest.approx([wilson_by_hand(v, m)[0]
                                                                                for v, m in zip(valid[1:], n[1:])])


def test_two_games_of_one_decision_each_are_clustered_with_one_degree_of_freedom():
    # 1 of 1 and 0 of 1: p = 1/2, squares 2 * (1/2)^2 = 1/2, CR1 2/1 * 1/2 / 4 = 1/4 over
    # 1/8: design effect 2; 2 games: t with 1 degree of freedom.
    share = clustered([1, 0], [1, 1])
    assert share.design_effect == pytest.approx(2.0)
    assert float(stats.quantiles(2, 2.0)) == pytest.approx(student_t.ppf(0.975, 1))
    assert share.interval == pytest.approx(wilson_by_hand(0.5, 1.0, student_t.ppf(0.975, 1)))
