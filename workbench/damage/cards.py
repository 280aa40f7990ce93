"""Damage's cards: hands ranked as the simulator ranks them, and the chance a hand wins
against opponents whose cards are unknown.

The simulator deals five-card draw (`draw5`: five cards each, no board, no draw) or
hold'em (two hole cards, a board of five revealed as flop, turn and river). At showdown
it ranks each hand by the standard categories (high card to straight flush, an ace-low
straight the lowest), hold'em by the best five of the seven cards, and splits a pot
between equal hands (damage-game `simulator.py`, `evaluate_hand`). eval7, a C evaluator
of 5- to 7-card hands, ranks the same way; the tests hold it equal to every showdown of
the real logs.

A hand's win probability at a decision is what the player could know: its own cards and
the board, against each opponent still in the hand holding unknown cards (the folded
players' cards are unknown too). It is the share of the pot the hand takes on average
(a tie with t hands counts 1/t): exact where the cases to count are few (the river,
heads-up), else Monte Carlo from a seed fixed by the situation, with its standard error.
"""

from __future__ import annotations

import itertools
import math
import random
import zlib
from collections.abc import Iterable, Sequence

import eval7

# eval7's category (its value >> 24) -> the simulator's name (`evaluate_hand`)
CATEGORIES = ("high_card", "pair", "two_pair", "three_kind", "straight", "flush", "full_house", "four_kind",
              "straight_flush")
RANKS = "23456789TJQKA"
SUITS = "CDHS"
DECK = tuple(rank + suit for rank in RANKS for suit in SUITS)
STYLES = ("holdem", "draw5")

# Counting every case is exact, and costs one evaluation per hand per case: done where the
# cases are at most this many (the river heads-up in hold'em: 990).
MOST_EXACT_CASES = 2_000
# Monte Carlo deals: the standard error is at most 0.5 / sqrt(SAMPLES) = 0.025.
SAMPLES = 400

_CARDS = {name: eval7.Card(name[0] + name[1].lower()) for name in DECK}


class CardError(ValueError):
    """Cards the simulator could not have dealt: an unknown card, one dealt twice, or too
    many for the deck."""


def card(name: str) -> eval7.Card:
    """A card as the logs write it (`TD`: rank then suit, any case) as eval7's."""
    try:
        return _CARDS[name.upper()]
    except (KeyError, AttributeError):
        raise CardError(f"not a card: {name!r} (a rank of {RANKS} and a suit of {SUITS})") from None


def strength(cards: Sequence[str]) -> int:
    """The hand's strength (higher wins; equal ties): the best five of 5 to 7 cards."""
    return eval7.evaluate([card(name) for name in cards])


def category(cards: Sequence[str]) -> str:
    """The hand's category as the simulator names it (`pair`, `full_house`, ...)."""
    return CATEGORIES[strength(cards) >> 24]


def showdown_winners(hands: dict[str, Sequence[str]], board: Sequence[str] = ()) -> set[str]:
    """The players whose hand (with the board) is strongest: all of them where equal."""
    if not hands:
        return set()
    strengths = {player: strength([*cards, *board]) for player, cards in hands.items()}
    best = max(strengths.values())
    return {player for player, value in strengths.items() if value == best}


def win_probability(hand: Sequence[str], board: Sequence[str], opponents: int, style: str,
                    samples: int = SAMPLES, seed: int = 0) -> tuple[float, float]:
    """The share of the pot `hand` takes on average against `opponents` hands of unknown
    cards, with the rest of a hold'em board to come: (probability, standard error), the
    error 0 where every case was counted.

    Raises:
        CardError: a card that is not one, a card dealt twice, or more cards than the deck.
    """
    if samples < 2:
        raise ValueError(f"samples must be at least 2 deals (an error needs two), not {samples}")
    if style not in STYLES:
        raise CardError(f"unknown card style {style!r}: {' or '.join(STYLES)}")
    held = _dealt(hand, board)
    _check_sizes(hand, board, style)
    if opponents <= 0:
        return 1.0, 0.0
    per_opponent = 2 if style == "holdem" else 5
    to_come = 5 - len(board) if style == "holdem" else 0
    unknown = [_CARDS[name] for name in DECK if name not in held]
    if to_come + per_opponent * opponents > len(unknown):
        raise CardError(f"{opponents} opponents cannot be dealt from the {len(unknown)} cards left")
    mine = [card(name) for name in hand]
    table = [card(name) for name in board]
    if _cases(len(unknown), to_come, per_opponent, opponents) <= MOST_EXACT_CASES:
        return _counted(mine, table, unknown, to_come, per_opponent, opponents), 0.0
    return _sampled(mine, table, unknown, to_come, per_opponent, opponents, samples, seed)


def situation_seed(hand: Sequence[str], board: Sequence[str], opponents: int, style: str, seed: int = 0) -> int:
    """A seed fixed by the situation (cards in any order) and `seed`: the same situation
    gets the same estimate wherever it occurs."""
    key = f"{style}|{','.join(sorted(hand))}|{','.join(sorted(board))}|{opponents}|{seed}"
    return zlib.crc32(key.encode())


def _dealt(hand: Sequence[str], board: Sequence[str]) -> set[str]:
    names = [str(name).upper() for name in (*hand, *board)]
    for name in names:
        card(name)
    if len(set(names)) != len(names):
        raise CardError(f"a card dealt twice: {', '.join(sorted(n for n in set(names) if names.count(n) > 1))}")
    return set(names)


def _check_sizes(hand: Sequence[str], board: Sequence[str], style: str) -> None:
    """Hands and boards the simulator deals: hold'em two cards and a board of 0, 3, 4 or
    5 revealed; draw5 five cards and no board."""
    if style == "holdem" and (len(hand) != 2 or len(board) not in (0, 3, 4, 5)):
        raise CardError(f"a hold'em hand is 2 cards and a board 0, 3, 4 or 5, not {len(hand)} and {len(board)}")
    if style == "draw5" and (len(hand) != 5 or board):
        raise CardError(f"a draw5 hand is 5 cards and no board, not {len(hand)} and {len(board)}")


def _cases(left: int, to_come: int, per_opponent: int, opponents: int) -> int:
    """How many deals of the board to come and the opponents' hands (opponents unordered
    among themselves only where one; counted as dealt in seat order otherwise)."""
    cases = math.comb(left, to_come)
    left -= to_come
    for _ in range(opponents):
        cases *= math.comb(left, per_opponent)
        left -= per_opponent
    return cases


def _share(mine: list, table: list, opponents: Iterable[list]) -> float:
    """The share of the pot `mine` takes against these opponents' hands on this board."""
    best = eval7.evaluate(mine + table)
    tied = 1
    for theirs in opponents:
        value = eval7.evaluate(theirs + table)
        if value > best:
            return 0.0
        tied += value == best
    return 1.0 / tied


def _counted(mine, table, unknown, to_come, per_opponent, opponents) -> float:
    total = count = 0.0
    for rest in itertools.combinations(unknown, to_come):
        board = table + list(rest)
        left = [c for c in unknown if c not in rest]
        for hands in _seatings(left, per_opponent, opponents):
            total += _share(mine, board, hands)
            count += 1
    return total / count


def _seatings(left: list, per_opponent: int, opponents: int):
    if opponents == 0:
        yield []
        return
    for first in itertools.combinations(left, per_opponent):
        rest = [c for c in left if c not in first]
        for others in _seatings(rest, per_opponent, opponents - 1):
            yield [list(first), *others]


def _sampled(mine, table, unknown, to_come, per_opponent, opponents, samples, seed) -> tuple[float, float]:
    rng = random.Random(seed)
    need = to_come + per_opponent * opponents
    total = squares = 0.0
    for _ in range(samples):
        dealt = rng.sample(unknown, need)
        board = table + dealt[:to_come]
        hands = (dealt[to_come + i * per_opponent: to_come + (i + 1) * per_opponent] for i in range(opponents))
        share = _share(mine, board, hands)
        total += share
        squares += share * share
    mean = total / samples
    variance = max(0.0, squares / samples - mean * mean)
    if variance == 0:  # every deal alike (all lost, all won): the error of a share not yet seen to vary
        shrunk = (total + 0.5) / (samples + 1)
        return mean, math.sqrt(shrunk * (1 - shrunk) / samples)
    return mean, math.sqrt(variance / (samples - 1))
