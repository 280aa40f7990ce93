"""Win probabilities of many Damage decisions at once: eval7's hand ranking, looked up in
numpy arrays so that thousands of deals are ranked in one step.

A hand of 5 to 7 cards that holds no five cards of one suit is worth what its ranks are
worth; one that does is worth its flush (with at most seven cards, five of one suit leave
no room for four of a kind or a full house). So two tables hold every value: one per
multiset of ranks (74,000 of 5 to 7 ranks, each card given a suit so that no suit holds
five), one per set of five to seven ranks of one suit (4,719). Each entry is
`eval7.evaluate` of such a hand, so the ranking is eval7's own; the tests hold the two
equal on 200,000 random hands.

Each situation (cards, board, number of opponents) deals from its own seed, so its
estimate does not depend on which other decisions were judged beside it.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import eval7
import numpy as np

from workbench.damage.cards import DECK, SAMPLES, check

# A card's number: its place in DECK (rank-major, suits C D H S).
RANK = np.arange(52) // 4
SUIT = np.arange(52) % 4
# A hand is looked up by one sum over its cards of PACKED: the multiset of its low ranks
# (2-8) in base 5 (bits 0-16), of its high ranks (9-A) in base 5 (bits 17-30) and the
# number of its cards of each suit (a nibble each, from bit 32).
LOW_RANKS, LOW_BITS, HIGH_BITS = 7, 17, 14
PACKED = (
    np.where(RANK < LOW_RANKS, 5 ** np.minimum(RANK, LOW_RANKS - 1), 0).astype(np.int64)
    | (np.where(RANK >= LOW_RANKS, 5 ** np.maximum(RANK - LOW_RANKS, 0), 0).astype(np.int64) << LOW_BITS)
    | (np.int64(1) << (32 + 4 * SUIT).astype(np.int64))
)
SIZES = (5, 7)  # draw5 hands; hold'em hole cards with a full board
# Situations dealt in one step: their deals take CHUNK x samples x cards left (1 byte each).
CHUNK = 256


NUMBERS = {name: number for number, name in enumerate(DECK)}


def numbers(cards: Sequence[str]) -> list[int]:
    """Cards as the logs write them (`TD`, any case), as their numbers; cards that
    `cards.check` took."""
    return [NUMBERS[name.upper()] for name in cards]


class Tables:
    """Every hand's value by its packed sum, from eval7: `index[n][high] + low_index[low]`
    places a hand of n cards with no five of one suit in `values[n]`; `flushes` holds the
    value of five to seven cards of one suit by the mask of their ranks."""

    def __init__(self):
        deck = [[eval7.Card(DECK[rank * 4][0] + "cdhs"[suit]) for suit in range(4)] for rank in range(13)]
        low = _multisets(range(LOW_RANKS))
        high = _multisets(range(LOW_RANKS, 13))
        self.low_index = np.zeros(5**LOW_RANKS, dtype=np.int64)
        for sets in low.values():
            for place, ranks in enumerate(sets):
                self.low_index[_key(ranks, 0)] = place
        self.index, self.values = {}, {}
        for n in SIZES:
            index = np.zeros(5 ** (13 - LOW_RANKS), dtype=np.int64)
            values = []
            for size, sets in high.items():
                for ranks in sets:
                    if size > n:
                        continue
                    index[_key(ranks, LOW_RANKS)] = len(values)
                    values.extend(eval7.evaluate(_unsuited(sorted(ranks + rest), deck)) for rest in low[n - size])
            self.index[n], self.values[n] = index, np.asarray(values, dtype=np.int64)
        self.flushes = np.zeros(1 << 13, dtype=np.int64)
        for size in (5, 6, 7):
            for ranks in itertools.combinations(range(13), size):
                self.flushes[sum(1 << rank for rank in ranks)] = eval7.evaluate([deck[rank][3] for rank in ranks])

    def look_up(self, total: np.ndarray, n: int, cards_at) -> np.ndarray:
        """The values of hands of n cards by their packed sums `total`; `cards_at(where)`
        gives the cards (m, n) of the hands at `where` (an index of `total`) that hold five
        of one suit."""
        low = total & ((1 << LOW_BITS) - 1)
        high = (total >> LOW_BITS) & ((1 << HIGH_BITS) - 1)
        value = self.values[n][self.index[n][high] + self.low_index[low]]
        suits = total >> 32
        flush = ((suits + 0x3333) & 0x8888) != 0
        if flush.any():
            where = np.nonzero(flush)
            held = cards_at(where)
            counts = (suits[where][:, None] >> (4 * np.arange(4))) & 15
            suited = SUIT[held] == counts.argmax(axis=1)[:, None]
            value[where] = self.flushes[(suited.astype(np.int64) << RANK[held]).sum(axis=1)]
        return value


def _multisets(ranks: range) -> dict[int, list[tuple]]:
    """The multisets of these ranks (each at most four times) by size, 0 to 7."""
    return {
        size: [m for m in itertools.combinations_with_replacement(ranks, size) if all(m.count(r) <= 4 for r in set(m))]
        for size in range(8)
    }


def _key(ranks: tuple, first: int) -> int:
    return sum(5 ** (rank - first) for rank in ranks)


def _unsuited(ranks: list, deck: list) -> list:
    """Cards of these ranks (sorted, each at most four times) with no five of one suit:
    dealt to the suits in turn, so a rank's copies (one after another) take different
    suits and no suit takes more than two of seven."""
    return [deck[rank][turn % 4] for turn, rank in enumerate(ranks)]


@functools.cache
def tables() -> Tables:
    return Tables()


def strengths(cards: np.ndarray) -> np.ndarray:
    """eval7's value of each hand: `cards` of shape (..., n), n 5 or 7 card numbers."""
    cards = np.asarray(cards)
    return tables().look_up(PACKED[cards].sum(axis=-1), cards.shape[-1], lambda where: cards[where])


def win_probability(
    hand: Sequence[str], board: Sequence[str], opponents: int, style: str, samples: int = SAMPLES, seed: int = 0
) -> tuple[float, float]:
    """The share of the pot `hand` takes on average against `opponents` hands of unknown
    cards, with the rest of a hold'em board to come: (probability, standard error), the
    error 0 where every case was counted (the river, heads-up). Many at once:
    `win_probabilities`.

    Raises:
        CardError: a card that is not one, a card dealt twice, a hand or board of a size
            the style does not deal, or more opponents than the deck can deal.
    """
    check(hand, board, opponents, style)
    if samples < 2:
        raise ValueError(f"samples must be at least 2 deals (an error needs two), not {samples}")
    p, se = win_probabilities([numbers(hand)], [numbers(board)], [opponents], style, samples, [seed])
    return float(p[0]), float(se[0])


def win_probabilities(
    hands: list[list[int]], boards: list[list[int]], opponents: list[int], style: str, samples: int, seeds: list[int]
) -> tuple[np.ndarray, np.ndarray]:
    """Per situation (its hand, board, opponents still in and seed; all of one card
    style): the share of the pot its hand takes on average and the standard error (0
    where every case was counted: the river, heads-up)."""
    p = np.empty(len(hands))
    se = np.empty(len(hands))
    shapes: dict[tuple, list[int]] = {}
    for index, (hand, board, k) in enumerate(zip(hands, boards, opponents)):
        shapes.setdefault((len(hand), len(board), k), []).append(index)
    chunks = [
        (k, rows[start : start + CHUNK]) for (_, _, k), rows in shapes.items() for start in range(0, len(rows), CHUNK)
    ]

    def judge(chunk):
        k, part = chunk
        mine = np.asarray([hands[i] for i in part], dtype=np.int64).reshape(len(part), -1)
        table = np.asarray([boards[i] for i in part], dtype=np.int64).reshape(len(part), len(boards[part[0]]))
        if k == 0:
            p[part], se[part] = 1.0, 0.0
        elif style == "holdem" and table.shape[1] == 5 and k == 1:
            p[part], se[part] = _counted(mine, table), 0.0
        else:
            to_come, each = (5 - table.shape[1], 2) if style == "holdem" else (0, 5)
            p[part], se[part] = _sampled(mine, table, k, to_come, each, samples, [seeds[i] for i in part])

    tables()  # built once, before the threads ask for it
    # numpy lets go of the interpreter while it works on whole arrays: threads use every core
    with ThreadPoolExecutor(max_workers=min(os.cpu_count() or 1, max(len(chunks), 1))) as pool:
        list(pool.map(judge, chunks))
    return p, se


def _left(mine: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Per situation, the numbers of the cards it has not seen, in order."""
    seen = np.zeros((len(mine), 52), dtype=bool)
    np.put_along_axis(seen, np.concatenate([mine, table], axis=1), True, axis=1)
    return np.nonzero(~seen)[1].reshape(len(mine), -1)


def _shares(mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """The pot share of hands `mine` (...) against `theirs` (..., k): 1 ahead of all, 1/t
    tied with t - 1 at the top, else 0."""
    best = theirs.max(axis=-1)
    tied = 1 + (theirs == mine[..., None]).sum(axis=-1)
    return np.where(mine > best, 1.0, np.where(mine == best, 1.0 / tied, 0.0))


def _counted(mine: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Heads-up on the river: against every holding of two unseen cards."""
    left = _left(mine, table)
    pairs = np.asarray(list(itertools.combinations(range(left.shape[1]), 2)))
    holdings = left[:, pairs]  # (situations, holdings, 2)
    board = np.broadcast_to(table[:, None, :], (*holdings.shape[:2], 5))
    theirs = strengths(np.concatenate([holdings, board], axis=-1))
    own = strengths(np.concatenate([mine, table], axis=1))
    return _shares(own[:, None], theirs[..., None]).mean(axis=1)


def _sampled(mine, table, k, to_come, each, samples, seeds) -> tuple[np.ndarray, np.ndarray]:
    """Each situation's share over `samples` deals of the board to come and k opponents'
    hands, and its standard error."""
    dealt = _deal(_left(mine, table), to_come + each * k, samples, seeds)  # (situations, samples, need)
    board = PACKED[table].sum(axis=1)[:, None] + PACKED[dealt[..., :to_come]].sum(axis=-1)
    holes = dealt[..., to_come:].reshape(*dealt.shape[:2], k, each)
    n = mine.shape[1] + table.shape[1] + to_come

    def with_board(held, where):
        situation = where[0]
        return np.concatenate([held, table[situation], dealt[where[:2]][:, :to_come]], axis=1)

    look_up = tables().look_up
    own = look_up(board + PACKED[mine].sum(axis=1)[:, None], n, lambda where: with_board(mine[where[0]], where))
    theirs = look_up(board[..., None] + PACKED[holes].sum(axis=-1), n, lambda where: with_board(holes[where], where))
    share = _shares(own, theirs)
    spread = share.std(axis=1, ddof=1) / math.sqrt(samples)
    # every deal alike (all lost, all won): the error of a share not yet seen to vary
    shrunk = (share.sum(axis=1) + 0.5) / (samples + 1)
    return share.mean(axis=1), np.where(spread > 0, spread, np.sqrt(shrunk * (1 - shrunk) / samples))


def _deal(left: np.ndarray, need: int, samples: int, seeds: list[int]) -> np.ndarray:
    """`need` of each situation's unseen cards, `samples` times, drawn without
    replacement from the situation's own seed: each draw takes a random card of those
    left and puts the last one in its place."""
    count = left.shape[1]
    if need > count:
        raise ValueError(f"{need} cards cannot be dealt from the {count} left")
    draws = _uniform(np.asarray(seeds, dtype=np.uint64), samples * need).reshape(len(left), samples, need)
    deck = np.broadcast_to(left.astype(np.int8)[:, None, :], (len(left), samples, count)).copy()
    dealt = np.empty((len(left), samples, need), dtype=np.int64)
    for step in range(need):
        pick = (draws[..., step] * (count - step)).astype(np.int64)[..., None]
        dealt[..., step] = np.take_along_axis(deck, pick, axis=-1)[..., 0]
        np.put_along_axis(deck, pick, deck[..., count - 1 - step : count - step], axis=-1)
    return dealt


def _uniform(seeds: np.ndarray, count: int) -> np.ndarray:
    """`count` uniform numbers in [0, 1) per seed: SplitMix64 (Steele, Lea & Flood 2014)
    of the seed's own stream, so a situation's deals depend on its seed alone."""
    with np.errstate(over="ignore"):
        state = _mix(seeds)[:, None] + np.arange(1, count + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        return (_mix(state) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def _mix(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))
