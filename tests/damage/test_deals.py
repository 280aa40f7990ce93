"""Many Damage situations dealt at once rank hands as eval7 does, one by one, and give
each situation the estimate it gets alone."""

import random

import eval7
import numpy as np
import pytest

from workbench.damage import cards, deals


@pytest.mark.parametrize("size", [5, 7])
def test_the_looked_up_values_are_eval7s_own(size):
    rng = np.random.default_rng(size)
    hands = np.array([rng.choice(52, size, replace=False) for _ in range(100_000)])
    one_by_one = [eval7.evaluate([cards.card(cards.DECK[c]) for c in hand]) for hand in hands]
    assert deals.strengths(hands).tolist() == one_by_one
    # flushes are among them (about 3% of seven cards, 0.2% of five)
    suits = np.stack([(deals.SUIT[hands] == s).sum(axis=1) for s in range(4)]).max(axis=0)
    assert (suits >= 5).sum() > 100


def test_a_situation_gets_the_same_estimate_alone_or_among_others():
    rng = random.Random(3)
    hands, boards = [], []
    for _ in range(40):
        dealt = rng.sample(range(52), 5)
        hands.append(dealt[:2])
        boards.append(dealt[2:])
    together = deals.win_probabilities(hands, boards, [2] * 40, "holdem", 200, list(range(40)))
    alone = [
        deals.win_probabilities([h], [b], [2], "holdem", 200, [seed]) for seed, (h, b) in enumerate(zip(hands, boards))
    ]
    assert together[0].tolist() == [p[0] for p, _ in alone]
    assert together[1].tolist() == [se[0] for _, se in alone]


def test_the_deals_are_uniform_and_without_replacement():
    uniform = deals._uniform(np.arange(200, dtype=np.uint64), 5_000)
    assert uniform.min() >= 0 and uniform.max() < 1
    assert uniform.mean() == pytest.approx(0.5, abs=0.002) and uniform.var() == pytest.approx(1 / 12, abs=0.002)
    left = np.array([list(range(47))] * 3)
    dealt = deals._deal(left, 47, 50, [1, 2, 3])
    assert all(sorted(deal) == list(range(47)) for deal in dealt.reshape(-1, 47).tolist())  # every card once
    # each card is as likely in the first place as any other
    first = deals._deal(np.array([list(range(47))] * 200), 1, 470, list(range(200)))[..., 0].ravel()
    counts = np.bincount(first, minlength=47)
    assert counts.min() > 0.7 * counts.mean() and counts.max() < 1.3 * counts.mean()
    with pytest.raises(ValueError, match="48 cards cannot be dealt from the 47 left"):
        deals._deal(left, 48, 2, [1, 2, 3])


def test_the_mixing_is_splitmix64s():
    # SplitMix64 (Steele, Lea & Flood 2014) from state 0: its first outputs, as the
    # reference implementation (and Java's SplittableRandom) gives them
    golden = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        states = np.arange(1, 4, dtype=np.uint64) * golden
    assert deals._mix(states).tolist() == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
