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
(a tie with t hands counts 1/t): counted exactly on the river heads-up (990 holdings),
else Monte Carlo from a seed fixed by the situation, with its standard error
(`deals.win_probability`; `deals.win_probabilities` deals many situations at once).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import eval7

# eval7's category (its value >> 24) -> the simulator's name (`evaluate_hand`)
CATEGORIES = (
    "high_card",
    "pair",
    "two_pair",
    "three_kind",
    "straight",
    "flush",
    "full_house",
    "four_kind",
    "straight_flush",
)
RANKS = "23456789TJQKA"
SUITS = "CDHS"
DECK = tuple(rank + suit for rank in RANKS for suit in SUITS)
STYLES = ("holdem", "draw5")

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


def check(hand: Sequence[str], board: Sequence[str], opponents: int, style: str) -> None:
    """A situation the simulator could deal, or CardError saying why not: cards that are
    cards, none twice, hold'em two cards and a board of 0, 3, 4 or 5, draw5 five cards and
    no board, and opponents the deck can deal to."""
    if style not in STYLES:
        raise CardError(f"unknown card style {style!r}: {' or '.join(STYLES)}")
    held = _dealt(hand, board)
    if style == "holdem" and (len(hand) != 2 or len(board) not in (0, 3, 4, 5)):
        raise CardError(f"a hold'em hand is 2 cards and a board 0, 3, 4 or 5, not {len(hand)} and {len(board)}")
    if style == "draw5" and (len(hand) != 5 or board):
        raise CardError(f"a draw5 hand is 5 cards and no board, not {len(hand)} and {len(board)}")
    needed = (5 - len(board) if style == "holdem" else 0) + (2 if style == "holdem" else 5) * max(opponents, 0)
    if needed > len(DECK) - len(held):
        raise CardError(f"{opponents} opponents cannot be dealt from the {len(DECK) - len(held)} cards left")


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
