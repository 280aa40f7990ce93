"""The state a Damage decision is judged in, rebuilt line by line as the simulator keeps
it: bets within a round, who is still in, what a line leaves out, the board in hindsight,
the bounds of the mistakes' rules, and the seed each situation is dealt from."""

import json

import polars as pl
import pytest

import workbench
from tests.conftest import write_lines
from tests.damage.test_quality import GAME, Log
from workbench.damage import cards, deals
from workbench.damage.play import LONG_SHOT, MARGIN, _mistake


@pytest.fixture
def judged(tmp_path_factory):
    log = Log()
    board = ["KH", "KS", "2C", "3D", "4H"]
    log.start(1, {"P1": ["AS", "AH"], "P2": ["KC", "KD"], "P3": ["7C", "8D"]})
    log.act("P1", "raise", 10)  # 14 in the pot, high bet 10
    log.act("P2", "raise", 10)  # 10 to call and 10 more: bet 20, pot 34
    log.act("P3", "fold")
    log.act("P1", "call")  # 20 - its 10 = 10 to call into 34; P3 is out
    log.street("flop", board[:3])
    log.act("P1", "check")
    # a line that leaves out the pot, the high bet and the player's state keeps them
    log.add(
        "provider_call",
        {"turn": 1, "player_id": "P2", "requested_model": "m-loose", "resolved_model": "m-loose", "latency_ms": 5.0},
    )
    log.add(
        "action_submitted",
        {
            "turn": 1,
            "player_id": "P2",
            "action": {
                "player_id": "P2",
                "kind": "check",
                "payload": {},
                "reasoning_summary": "x",
                "attack_plan": None,
            },
        },
    )
    log.add("action_resolved", {"turn": 1, "player_id": "P2", "kind": "check"})
    log.street("turn", board[:4])
    log.act("P1", "raise", 0)  # an amount the specification refuses: an invalid decision, still judged
    log.act("P2", "call")
    log.street("river", board)
    log.showdown(
        {"P2": {"category": "four_kind", "score": [7, 13, 4]}, "P1": {"category": "two_pair", "score": [2]}},
        {"P1": 0, "P2": 100},
        board,
    )
    # a draw5 hand, P3 sitting out (not in the hand as it starts)
    log.lines.append(json.loads(json.dumps(log.lines[0])))
    log.turn, log.pot, log.high = 2, 4, 0
    log.state = {
        "P1": {**log.state["P1"], "hand": ["2S", "3S", "4S", "5S", "7D"], "current_bet": 0},
        "P2": {**log.state["P2"], "hand": ["9C", "9H", "JD", "QD", "AC"], "current_bet": 0},
        "P3": {**log.state["P3"], "hand": ["TC", "TD", "TH", "6C", "6D"], "current_bet": 0, "in_hand": False},
    }
    log.add(
        "hand_started",
        {
            "turn": 2,
            "pot": 4,
            "ante": 2,
            "card_style": "draw5",
            "community_cards": [],
            "players": list(log.state.values()),
        },
    )
    log.act("P1", "check")
    log.act("P2", "check")
    log.showdown(
        {"P1": {"category": "high_card", "score": [0]}, "P2": {"category": "pair", "score": [1]}},
        {"P1": 0, "P2": 4},
        [],
    )
    folder = tmp_path_factory.mktemp("state")
    db = folder / "w.duckdb"
    assert not workbench.ingest(
        [write_lines(folder / f"{GAME}.events.jsonl", [json.dumps(line) for line in log.lines])], db=db
    ).failed
    with workbench.connect(db, read_only=True) as con:
        return workbench.analysis.play_quality(con).sort("line")


def test_bets_within_a_round_and_the_players_still_in(judged):
    rows = [
        (r["turn"], r["street"], r["player_id"], r["action"], r["to_call"], r["pot"], r["opponents"])
        for r in judged.iter_rows(named=True)
    ]
    assert rows == [
        (1, "preflop", "P1", "raise", 0, 4, ["P2", "P3"]),
        (1, "preflop", "P2", "raise", 10, 14, ["P1", "P3"]),
        (1, "preflop", "P3", "fold", 20, 34, ["P1", "P2"]),
        (1, "preflop", "P1", "call", 10, 34, ["P2"]),  # its own 10 counted; P3 gone
        (1, "flop", "P1", "check", 0, 44, ["P2"]),
        (1, "flop", "P2", "check", 0, 44, ["P1"]),
        (1, "turn", "P1", "raise", 0, 44, ["P2"]),  # the pot the silent line left as it was
        (1, "turn", "P2", "call", 0, 44, ["P1"]),  # the raise of 0 added nothing: nothing to call
        (2, "draw", "P1", "check", 0, 4, ["P2"]),  # draw5 has one round; P3 sat out
        (2, "draw", "P2", "check", 0, 4, ["P1"]),
    ]
    # a raise needs an attack plan (the specification), and an amount above 0: judged all the same
    assert judged["valid"].to_list() == [False, False, True, True, True, True, False, True, True, True]


def test_hindsight_reads_the_final_board(judged):
    # AA against KK, but the board's two kings give KK four of a kind
    by_player = {(r["turn"], r["player_id"], r["action"]): r["won_at_showdown"] for r in judged.iter_rows(named=True)}
    assert by_player[(1, "P2", "raise")] is True and by_player[(1, "P1", "raise")] is False
    assert by_player[(1, "P3", "fold")] is False
    assert by_player[(2, "P2", "check")] is True  # a pair of nines over nothing


def test_each_situation_is_dealt_from_its_own_seed(judged):
    flop = judged.row(4, named=True)
    expected = deals.win_probability(
        flop["hand"], flop["board"], 1, "holdem", seed=cards.situation_seed(flop["hand"], flop["board"], 1, "holdem", 0)
    )
    assert (flop["win_probability"], flop["win_probability_se"]) == expected


@pytest.mark.parametrize(
    ("action", "to_call", "p", "odds", "last", "lost", "named"),
    [
        ("call", 10, LONG_SHOT - 1e-9, 0.0, True, True, "showdown_long_shot"),
        ("call", 10, LONG_SHOT, 0.0, True, True, None),  # at the floor: not a long shot
        ("call", 10, 0.05, 0.0, False, True, None),  # not its last choice
        ("call", 10, 0.05, 0.0, True, False, None),  # won (no Life lost)
        ("fold", 0, 0.0, 0.0, True, False, "fold_free"),
        ("fold", 10, 0.3 + MARGIN + 1e-9, 0.3, True, False, "fold_ahead"),
        ("fold", 10, 0.3 + MARGIN, 0.3, True, False, None),  # at the margin: not named
        ("call", 10, 0.5 - MARGIN - 1e-9, 0.5, False, False, "continue_behind"),
        ("raise", 10, 0.5 - MARGIN - 1e-9, 0.5, False, False, "continue_behind"),
        ("call", 10, 0.5 - MARGIN, 0.5, False, False, None),  # at the margin: not named
        ("check", 0, 0.0, 0.0, False, False, None),
        ("raise", 0, 0.0, 0.0, False, False, None),  # nothing to call: no call to be behind on
    ],
)
def test_the_mistakes_bounds_on_both_sides(action, to_call, p, odds, last, lost, named):
    frame = pl.DataFrame(
        {
            "action": [action],
            "to_call": [to_call],
            "win_probability": [p],
            "pot_odds": [odds],
            "last_choice": [last],
            "life_lost": [lost],
        }
    )
    assert frame.select(_mistake()).item() == named


def test_a_raise_is_faced_where_chips_are_left_to_call_after_it(judged):
    from workbench.damage.quality import _play_statistics

    [*_, to_raise, _] = _play_statistics(judged)
    # facing a raise with chips to call: P2's re-raise, P3's fold, P1's call; P2's call of
    # a raise of nothing (0 to call) is not one
    assert sorted(to_raise.select("model", "fold_to_raise", "fold_to_raise_n").rows()) == [
        ("m-loose", 0.0, 1),
        ("m-steady", 0.0, 1),
        ("m-third", 1.0, 1),
    ]
