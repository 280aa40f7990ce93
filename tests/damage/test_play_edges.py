"""The state a Damage decision is judged in, on what the other hand-made games leave out:
blinds already in when the first player decides, a showdown that lists more of the board
than the log revealed, a player who folded before it, seats that are not players, an
action line the decisions table does not count as answered; and the bound past which a
number of chips is no game's."""

import json
import shutil

import duckdb
import polars as pl
import pytest

import workbench
from tests.conftest import write_lines
from tests.damage.test_quality import GAME, Log, seat
from workbench.damage import cards, play

# Hold'em, P1 on the button, P2 the small blind (5), P3 the big blind (10), antes of 2.
HANDS = {"P1": ["AS", "AH"], "P2": ["KC", "KD"], "P3": ["7C", "8D"]}
FLOP = ["2C", "7D", "9H"]
BOARD = [*FLOP, "KS", "3D"]  # the king on the turn gives P2 three kings over P1's aces
SEATS = GAME + "_seats"


def blinds_hand() -> list[str]:
    log = Log()
    log.turn, log.pot, log.high = 1, 21, 10  # antes 3 x 2 and the blinds 5 + 10
    log.state = {
        "P1": seat("P1", HANDS["P1"], bet=0, contribution=2),
        "P2": seat("P2", HANDS["P2"], bet=5, contribution=7),
        "P3": seat("P3", HANDS["P3"], bet=10, contribution=12),
    }
    log.add(
        "hand_started",
        {
            "turn": 1,
            "pot": 21,
            "ante": 2,
            "card_style": "holdem",
            "community_cards": [],
            "players": list(log.state.values()),
        },
    )
    log.act("P1", "call")  # 10 to call into 21
    log.act("P2", "call")  # the small blind completes: 5 into 31
    log.act("P3", "check")  # the big blind's option: nothing to call, pot 36
    log.street("flop", FLOP)
    log.act("P2", "check")
    log.act("P3", "check")
    log.act("P1", "raise", 10)  # pot 46
    log.act("P2", "call")  # 10 into 46
    log.act("P3", "fold")  # 10 into 56
    # the turn and river are not revealed in the log; the showdown lists the whole board
    log.showdown(
        {"P2": {"category": "three_kind", "score": [3, 13]}, "P1": {"category": "pair", "score": [1, 14]}},
        {"P1": 0, "P2": 56},
        BOARD,
    )
    return [json.dumps(line) for line in log.lines]


def odd_seats_hand() -> list[str]:
    """A draw5 hand whose list of players holds a null, a bare name and a seat with no id
    beside the two real players."""
    log = Log()
    log.turn, log.pot, log.high = 1, 4, 0
    log.state = {"P1": seat("P1", ["2S", "3S", "4S", "5S", "7D"]), "P2": seat("P2", ["9C", "9H", "JD", "QD", "AC"])}
    nameless = {key: value for key, value in seat("P3", ["TC", "TD", "TH", "6C", "6D"]).items() if key != "player_id"}
    log.add(
        "hand_started",
        {
            "turn": 1,
            "pot": 4,
            "ante": 2,
            "card_style": "draw5",
            "community_cards": [],
            "players": [None, "P3", nameless, *log.state.values()],
        },
    )
    log.act("P1", "check")
    log.act("P2", "check")
    log.showdown(
        {"P2": {"category": "pair", "score": [1, 9]}, "P1": {"category": "high_card", "score": [0, 7]}},
        {"P1": 0, "P2": 4},
        [],
    )
    return [json.dumps(line).replace(GAME, SEATS) for line in log.lines]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("blinds")
    path = folder / "w.duckdb"
    lines = blinds_hand() + odd_seats_hand()
    assert not workbench.ingest([write_lines(folder / f"{GAME}.events.jsonl", lines)], db=path).failed
    return path


@pytest.fixture
def blinds(db):
    """The first game's decisions, judged anew for each test."""
    with workbench.connect(db, read_only=True) as con:
        return play.judged(con, game_id=GAME)


def test_blinds_posted_before_the_first_decision_count_in_what_is_to_call(blinds):
    rows = [
        (r["street"], r["player_id"], r["action"], r["to_call"], r["pot"], r["opponents"])
        for r in blinds.iter_rows(named=True)
    ]
    assert rows == [
        ("preflop", "P1", "call", 10, 21, ["P2", "P3"]),  # the big blind to match
        ("preflop", "P2", "call", 5, 31, ["P1", "P3"]),  # its small blind counted
        ("preflop", "P3", "check", 0, 36, ["P1", "P2"]),  # the big blind is already in
        ("flop", "P2", "check", 0, 36, ["P1", "P3"]),
        ("flop", "P3", "check", 0, 36, ["P1", "P2"]),
        ("flop", "P1", "raise", 0, 36, ["P2", "P3"]),
        ("flop", "P2", "call", 10, 46, ["P1", "P3"]),
        ("flop", "P3", "fold", 10, 56, ["P1", "P2"]),
    ]
    assert blinds["pot_odds"].to_list()[:2] == [pytest.approx(10 / 31), pytest.approx(5 / 36)]


def test_hindsight_reads_the_board_the_showdown_lists(blinds):
    # on the flop P1's aces lead; the whole board gives P2 three kings, which beat them
    assert cards.showdown_winners(HANDS, FLOP) == {"P1"} and cards.showdown_winners(HANDS, BOARD) == {"P2"}
    won = {(r["player_id"], r["won_at_showdown"]) for r in blinds.iter_rows(named=True)}
    assert won == {("P1", False), ("P2", True), ("P3", False)}


def test_a_life_is_lost_only_by_a_hand_that_lost_the_showdown(blinds):
    # P1 showed down and was paid nothing; P2 won; P3 folded on the flop: out of the
    # showdown, it keeps its Life though it too was paid nothing
    by_player = {r["player_id"]: (r["showdown"], r["hand_won"], r["life_lost"]) for r in blinds.iter_rows(named=True)}
    assert by_player == {"P1": (True, False, True), "P2": (True, True, False), "P3": (False, False, False)}


def test_what_each_player_put_in_counts_its_blind(blinds):
    # P1: ante 2, the call of 10, the raise of 10; P2: ante 2, blind 5, 5 to complete, the
    # call of 10, paid the pot of 56; P3: ante 2 and the big blind of 10
    last = blinds.filter(pl.col("last_choice"))
    assert sorted(last.select("player_id", "hand_contribution", "hand_chips", "final_pot").rows()) == [
        ("P1", 22, -22, 56),
        ("P2", 22, 34, 56),
        ("P3", 12, -12, 56),
    ]


def test_a_seat_that_is_not_a_player_is_passed_over(db):
    with workbench.connect(db, read_only=True) as con:
        judged = play.judged(con, game_id=SEATS)
    assert judged.select("player_id", "action", "opponents", "won_at_showdown").rows() == [
        ("P1", "check", ["P2"], False),
        ("P2", "check", ["P1"], True),
    ]  # a pair of nines over seven high


def test_an_action_line_not_counted_as_answered_is_no_choice(db, blinds, tmp_path):
    # the decisions table says which action lines were answered: one it marks a failed
    # call is not judged, and the line's resolution still moves the hand on
    copy = tmp_path / "w.duckdb"
    shutil.copy(db, copy)
    p3_check = blinds.row(2, named=True)["line"]
    with duckdb.connect(str(copy)) as con:
        con.execute(
            "UPDATE decisions SET outcome = 'failed', failure = 'provider HTTP error 500' "
            "WHERE format = 'damage' AND locator = $locator",
            {"locator": f"line {p3_check}"},
        )
    with workbench.connect(copy, read_only=True) as con:
        judged = play.judged(con, game_id=GAME)
    assert judged["line"].to_list() == [line for line in blinds["line"].to_list() if line != p3_check]
    assert judged.select("player_id", "to_call", "pot").rows()[2:] == [
        ("P2", 0, 36),
        ("P3", 0, 36),
        ("P1", 0, 36),
        ("P2", 10, 46),
        ("P3", 10, 56),
    ]


@pytest.mark.parametrize(
    "written, read",
    [
        (2**53, 2**53),
        (-(2**53), -(2**53)),  # the bound itself, either way, is a count
        (2**53 + 1, None),
        (-(2**53) - 1, None),  # one past it is no game's
        (-300, -300),
        (12.0, 12),
        (True, None),
        ("12", None),
        (None, None),
    ],
)
def test_chips_are_read_as_written_up_to_2_to_the_53_either_way(written, read):
    assert play._number(written, default=None) == read
