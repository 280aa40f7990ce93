"""Damage's cards (workbench.damage.cards) held to truths from outside the code: every
showdown the real simulator ranked, hands whose category anyone can name, win
probabilities counted by the test itself or reasoned out by hand, and published preflop
equities."""

import itertools
import json

import pytest

from tests.conftest import SHARED
from workbench.damage import cards
from workbench.damage.cards import CardError, category, showdown_winners, strength
from workbench.damage.deals import win_probability

CORPUS = SHARED / "corpus" / "damage"


def ranked_showdowns():
    """Every `showdown` line of the real logs that ranked more than one hand (a walk ranks
    one), read straight from the JSON."""
    for path in sorted(CORPUS.rglob("game_*.events.jsonl")):
        for line in path.read_text().splitlines():
            event = json.loads(line)
            if event["type"] == "showdown" and len(event["payload"]["rankings"]) > 1:
                yield event["payload"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the real Damage corpus is not at {CORPUS}")
def test_every_real_showdown_is_ranked_and_won_as_the_simulator_ranked_and_won_it():
    checked = 0
    for showdown in ranked_showdowns():
        rankings = showdown["rankings"]
        board = showdown["community_cards"] if showdown["card_style"] == "holdem" else []
        for ranked in rankings.values():
            assert category([*ranked["hole_cards"], *board]) == ranked["category"], ranked
        # the simulator's own comparison: (category, *score) compared as lists
        best = max(ranked["score"] for ranked in rankings.values())
        hands = {player: ranked["hole_cards"] for player, ranked in rankings.items()}
        assert showdown_winners(hands, board) == {p for p, r in rankings.items() if r["score"] == best}, showdown
        checked += 1
    assert checked > 0


@pytest.mark.parametrize(
    "hand, name",
    [
        (["2C", "5D", "9H", "JS", "KC"], "high_card"),
        (["2C", "2D", "9H", "JS", "KC"], "pair"),
        (["2C", "2D", "9H", "9S", "KC"], "two_pair"),
        (["2C", "2D", "2H", "9S", "KC"], "three_kind"),
        (["5C", "6D", "7H", "8S", "9C"], "straight"),
        (["AC", "2D", "3H", "4S", "5C"], "straight"),  # the wheel: the ace plays low
        (["TC", "JD", "QH", "KS", "AC"], "straight"),
        (["2H", "5H", "9H", "JH", "KH"], "flush"),
        (["2C", "2D", "2H", "9S", "9C"], "full_house"),
        (["2C", "2D", "2H", "2S", "KC"], "four_kind"),
        (["5D", "6D", "7D", "8D", "9D"], "straight_flush"),
        (["AS", "2S", "3S", "4S", "5S"], "straight_flush"),  # the wheel in one suit
        (["TH", "JH", "QH", "KH", "AH"], "straight_flush"),
        # seven cards: the best five
        (["2C", "7D", "9H", "JS", "KC", "4D", "3S"], "high_card"),
        (["KD", "KC", "9H", "9S", "4C", "4D", "2H"], "two_pair"),
        (["AC", "KD", "2H", "3S", "4C", "5D", "9H"], "straight"),
        (["2H", "5H", "9H", "JH", "KH", "KD", "KC"], "flush"),
        (["9C", "9D", "9H", "KS", "KC", "KD", "2H"], "full_house"),
        (["AD", "2D", "3D", "4D", "5D", "6C", "KC"], "straight_flush"),
    ],
)
def test_each_category_is_named_as_the_simulator_names_it(hand, name):
    assert category(hand) == name


def test_the_wheel_is_the_lowest_straight_and_the_lowest_straight_flush():
    wheel, six_high = ["AC", "2D", "3H", "4S", "5C"], ["2D", "3H", "4S", "5C", "6D"]
    assert strength(wheel) < strength(six_high) < strength(["TC", "JD", "QH", "KS", "AC"])
    assert strength(["2C", "2D", "2H", "KS", "KC"]) > strength(wheel) > strength(["AC", "AD", "AH", "KS", "QC"])
    assert (
        strength(["KH", "KD", "KC", "KS", "AH"])
        < strength(["AS", "2S", "3S", "4S", "5S"])
        < strength(["2S", "3S", "4S", "5S", "6S"])
    )
    # hold'em: A-2-3-4-5 and 6 makes the six-high straight, not the wheel
    assert strength(["AC", "6D", "2H", "3S", "4C", "5D", "9H"]) == strength(["2H", "3S", "4C", "5D", "6D"])


def counted_share(hand, board):
    """Heads-up on the river: the share of the pot `hand` takes over every two cards the
    opponent can hold (a win 1, a tie 1/2), counted here; `strength` only orders hands."""
    mine = strength([*hand, *board])
    left = [c for c in cards.DECK if c not in {*hand, *board}]
    shares = []
    for theirs in itertools.combinations(left, 2):
        other = strength([*theirs, *board])
        shares.append(1.0 if mine > other else 0.5 if mine == other else 0.0)
    assert len(shares) == 990  # 45 cards left: C(45, 2)
    return sum(shares) / len(shares)


@pytest.mark.parametrize(
    "hand, board, expected",
    [
        # the royal flush is in the hand: nothing beats or ties it
        (["AS", "KS"], ["QS", "JS", "TS", "2D", "3C"], 1.0),
        # the royal flush is the board: every hand plays it, every deal a tie
        (["2D", "3C"], ["AS", "KS", "QS", "JS", "TS"], 0.5),
        # the board's 9-high straight flush ties all but the 44 holdings with TH, which win
        (["2C", "3D"], ["5H", "6H", "7H", "8H", "9H"], 0.5 * (990 - 44) / 990),
        # four kings and the ace kicker: the 129 holdings with one of the three aces left tie
        # (990 - C(42, 2) = 129), the 861 others lose
        (["AH", "3C"], ["KH", "KD", "KC", "KS", "2D"], (861 + 0.5 * 129) / 990),
    ],
)
def test_river_heads_up_is_exact_and_equals_cases_reasoned_out(hand, board, expected):
    assert counted_share(hand, board) == pytest.approx(expected, abs=1e-12)
    p, se = win_probability(hand, board, 1, "holdem")
    assert se == 0.0
    assert p == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    "hand, board",
    [
        (["QH", "JH"], ["TH", "9C", "2H", "KD", "3S"]),  # a made straight
        (["7C", "7D"], ["AS", "KD", "8H", "3C", "2S"]),  # a small pair under two overs
        (["AC", "5D"], ["AH", "5S", "5C", "KD", "KH"]),  # a full house
    ],
)
def test_river_heads_up_equals_an_independent_count(hand, board):
    p, se = win_probability(hand, board, 1, "holdem")
    assert se == 0.0
    assert p == pytest.approx(counted_share(hand, board), abs=1e-12)


# Heads-up preflop equity against one random hand, ties counted 1/2, from the published
# exact tables: AA 0.8520 and 72o 0.346 (http://jazbo.com/poker/huholdem.html, the
# PokerStove values); AA against three random hands about 64%.
@pytest.mark.parametrize(
    "hand, opponents, published",
    [
        (["AS", "AH"], 1, 0.852),
        (["7C", "2D"], 1, 0.346),
        (["AS", "AH"], 3, 0.64),
    ],
)
def test_preflop_equity_matches_published_values(hand, opponents, published):
    seed = cards.situation_seed(hand, [], opponents, "holdem")
    p, se = win_probability(hand, [], opponents, "holdem", samples=20_000, seed=seed)
    assert 0 < se < 0.005
    assert abs(p - published) < 3 * se, (p, se)


def test_monte_carlo_just_past_the_exact_bound_agrees_with_a_full_count():
    # heads-up on the turn: 46 rivers x 990 holdings, past the exact bound, so sampled
    hand, board = ["AH", "QH"], ["KH", "7H", "2C", "9D"]
    exact = sum(counted_share(hand, [*board, river]) * 45 for river in cards.DECK if river not in {*hand, *board}) / (
        46 * 45
    )
    p, se = win_probability(hand, board, 1, "holdem", samples=2_000, seed=11)
    assert se > 0
    assert abs(p - exact) < 4 * se, (p, se, exact)
    assert win_probability(hand, board, 1, "holdem", samples=2_000, seed=11) == (p, se)
    assert win_probability(hand, board, 1, "holdem", samples=2_000, seed=12) != (p, se)


def test_the_situation_seed_ignores_card_order_and_nothing_else():
    seed = cards.situation_seed(["AH", "QH"], ["KH", "7H", "2C"], 2, "holdem")
    assert cards.situation_seed(["QH", "AH"], ["2C", "KH", "7H"], 2, "holdem") == seed
    assert cards.situation_seed(["AH", "QH"], ["KH", "7H", "2C"], 3, "holdem") != seed
    assert cards.situation_seed(["AH", "QH"], ["KH", "7H", "2C"], 2, "holdem", seed=1) != seed
    assert cards.situation_seed(["AH", "QD"], ["KH", "7H", "2C"], 2, "holdem") != seed


@pytest.mark.parametrize("bad", ["1H", "AX", "A", "", "ASS", None])
def test_a_card_that_is_not_one_is_refused_by_name(bad):
    with pytest.raises(CardError, match="not a card"):
        win_probability(["AS", bad], [], 1, "holdem")
    with pytest.raises(CardError, match="not a card"):
        strength(["AS", "KS", "QS", "JS", bad])


def test_cards_in_any_case_are_the_same_cards():
    assert strength(["as", "kS", "qs", "js", "ts"]) == strength(["AS", "KS", "QS", "JS", "TS"])
    assert win_probability(["ah", "qh"], ["kh", "7h", "2c", "9d", "3s"], 1, "holdem") == win_probability(
        ["AH", "QH"], ["KH", "7H", "2C", "9D", "3S"], 1, "holdem"
    )


@pytest.mark.parametrize(
    "hand, board",
    [
        (["AS", "AS"], []),
        (["AS", "KD"], ["KD", "2C", "3C"]),
        (["AS", "KD"], ["2C", "3C", "2c"]),  # the same card written in another case
    ],
)
def test_a_card_dealt_twice_is_refused_by_name(hand, board):
    with pytest.raises(CardError, match="dealt twice"):
        win_probability(hand, board, 1, "holdem")


@pytest.mark.parametrize(
    "style, hand, board, most",
    [
        # 50 cards left: 5 for the board and 2 each for 22 opponents (49); 23 would need 51
        ("holdem", ["AS", "KD"], [], 22),
        # 45 left on the river: 2 each for 22 opponents (44); 23 would need 46
        ("holdem", ["AS", "KD"], ["2C", "3C", "4C", "5C", "6C"], 22),
        # draw5: 47 left, 5 each for 9 opponents (45); 10 would need 50
        ("draw5", ["AS", "KD", "2C", "3C", "4C"], [], 9),
    ],
)
def test_the_most_opponents_the_deck_can_deal_and_one_more(style, hand, board, most):
    p, se = win_probability(hand, board, most, style, samples=20)
    assert 0.0 <= p <= 1.0 and se >= 0.0
    with pytest.raises(CardError, match=f"{most + 1} opponents cannot be dealt"):
        win_probability(hand, board, most + 1, style, samples=20)


def test_a_board_of_five_is_the_most_and_a_sixth_card_is_refused():
    hand, board = ["AS", "KD"], ["2C", "3C", "4C", "5C", "6C"]
    assert win_probability(hand, board, 1, "holdem")[1] == 0.0
    with pytest.raises(CardError):
        win_probability(hand, [*board, "7C"], 1, "holdem")


def test_no_opponent_wins_it_all_and_an_unknown_style_is_refused():
    assert win_probability(["7C", "2D"], [], 0, "holdem") == (1.0, 0.0)
    assert win_probability(["7C", "2D", "3H", "4S", "9C"], [], 0, "draw5") == (1.0, 0.0)
    with pytest.raises(CardError, match="unknown card style 'omaha'"):
        win_probability(["7C", "2D"], [], 1, "omaha")


def test_what_could_not_have_been_dealt_is_said_exactly():
    from workbench.damage.cards import check

    with pytest.raises(CardError) as raised:
        check(["AS", "KD"], ["AS", "KD", "2C"], 1, "holdem")
    assert str(raised.value) == "a card dealt twice: AS, KD"
    with pytest.raises(CardError) as raised:
        check(["AS", "KD"], ["QS", "JD", "2C"], 23, "holdem")
    assert str(raised.value) == "23 opponents cannot be dealt from the 47 cards left"
    check(["AS", "KD"], ["QS", "JD", "2C"], 22, "holdem")  # 2 to come and 44 in hands: 46 of 47
    with pytest.raises(CardError) as raised:
        check(["AS", "KD", "QS", "JD"], [], 1, "draw5")
    assert str(raised.value) == "a draw5 hand is 5 cards and no board, not 4 and 0"
    with pytest.raises(CardError) as raised:
        check(["AS", "KD", "QS", "JD", "TC"], ["2C", "3C", "4C"], 1, "draw5")
    assert str(raised.value) == "a draw5 hand is 5 cards and no board, not 5 and 3"
    with pytest.raises(CardError) as raised:
        check(["AS"], [], 1, "holdem")
    assert str(raised.value) == "a hold'em hand is 2 cards and a board 0, 3, 4 or 5, not 1 and 0"
