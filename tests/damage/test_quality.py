"""Play quality on a hand-made hold'em game whose every number is counted by hand: two
hands, AA against 32o and then KK against 34o, written as the simulator writes them."""

import itertools
import json

import polars as pl
import pytest

import workbench
from tests.conftest import write_lines
from tests.damage.events import ATTACK_PLAN, PAYLOADS, PLAYER, event
from workbench.cli import main
from workbench.damage import cards
from workbench.damage.play import LONG_SHOT, MARGIN

GAME = "game_20260301T100000Z_quality"
MODELS = {"P1": "m-steady", "P2": "m-loose", "P3": "m-third"}


def seat(pid: str, hand: list[str], bet: int = 0, contribution: int = 2, still_in: bool = True) -> dict:
    return {
        **PLAYER,
        "player_id": pid,
        "hand": hand,
        "current_bet": bet,
        "hand_contribution": contribution,
        "in_hand": still_in,
    }


class Log:
    """A game's lines as the simulator writes them, a hand at a time."""

    def __init__(self):
        self.lines = [event("game_started", {**PAYLOADS["game_started"], "card_style": "holdem"}, game_id=GAME)]
        self.state = {}

    def add(self, kind: str, payload: dict) -> None:
        self.lines.append(event(kind, payload, game_id=GAME))

    def start(self, turn: int, hands: dict) -> None:
        self.turn, self.pot, self.high = turn, 4, 0
        self.state = {pid: seat(pid, hand) for pid, hand in hands.items()}
        self.add(
            "hand_started",
            {
                "turn": turn,
                "pot": 4,
                "ante": 2,
                "card_style": "holdem",
                "community_cards": [],
                "players": list(self.state.values()),
            },
        )

    def act(self, pid: str, kind: str, amount: int = 0, plan: dict | None = None) -> None:
        self.add(
            "provider_call",
            {
                **PAYLOADS["provider_call"],
                "turn": self.turn,
                "player_id": pid,
                "requested_model": MODELS[pid],
                "resolved_model": MODELS[pid],
            },
        )
        action = {
            "player_id": pid,
            "kind": kind,
            "payload": {"amount": amount} if kind == "raise" else {},
            "reasoning_summary": "x",
            "attack_plan": plan,
        }
        self.add("action_submitted", {"turn": self.turn, "player_id": pid, "action": action})
        player = self.state[pid]
        to_call = self.high - player["current_bet"]
        commit = {"call": to_call, "raise": to_call + amount}.get(kind, 0)
        player["current_bet"] += commit
        player["hand_contribution"] += commit
        self.pot += commit
        self.high = max(self.high, player["current_bet"])
        player["in_hand"] = kind != "fold"
        if plan:
            self.add(
                "direct_emoter_attack_resolved",
                {
                    "turn": self.turn,
                    "attacker_id": pid,
                    "target_player_id": plan["target_player_id"],
                    "emotion": plan["emotional_intent"],
                    "before": {},
                    "after": {},
                },
            )
        self.add(
            "action_resolved",
            {
                "turn": self.turn,
                "player_id": pid,
                "kind": kind,
                "pot": self.pot,
                "current_high_bet": self.high,
                "player_state": dict(player),
            },
        )

    def street(self, name: str, board: list[str]) -> None:
        self.add(
            "community_revealed",
            {"turn": self.turn, "street": name, "community_cards": board, "revealed_cards": board[-1:]},
        )
        if name != "auto_showdown":
            self.high = 0
            for player in self.state.values():
                player["current_bet"] = 0

    def showdown(self, rankings: dict, payouts: dict, board: list[str]) -> None:
        self.add(
            "showdown",
            {
                "turn": self.turn,
                "pot": self.pot,
                "winners": [p for p, v in payouts.items() if v],
                "life_losses": 0,
                "payouts": payouts,
                "rankings": rankings,
                "card_style": "holdem",
                "community_cards": board,
            },
        )


def the_game() -> list[str]:
    log = Log()
    board = ["KD", "9S", "4C", "2H", "JC"]
    log.start(1, {"P1": ["AS", "AH"], "P2": ["3C", "2D"]})
    log.act("P1", "raise", 200, plan={**ATTACK_PLAN, "target_player_id": "P2"})  # 204 in the pot, 200 to P2
    log.act("P2", "call")  # 200 to call into 204: pot odds 200/404, with 32o
    log.street("flop", board[:3])
    log.act("P1", "check")
    log.act("P2", "fold")  # nothing to call: checking was free
    log.street("auto_showdown", board)
    log.showdown({"P1": {"category": "walk", "score": [99]}}, {"P1": 404, "P2": 0}, board)

    river = ["2C", "7D", "JH", "QS", "AD"]
    log.start(2, {"P1": ["KC", "KH"], "P2": ["3S", "4H"]})
    log.act("P1", "check")
    log.act("P2", "raise", 10)  # nothing to call: a raise is no call behind
    log.act("P1", "call")  # KK, 10 to call into 14
    log.street("flop", river[:3])
    log.street("turn", river[:4])
    log.street("river", river)
    log.act("P1", "raise", 10)  # 24 in the pot
    log.act("P2", "call")  # 10 to call into 34 with ace-high and nothing
    log.showdown(
        {"P1": {"category": "pair", "score": [1, 13]}, "P2": {"category": "high_card", "score": [0, 14]}},
        {"P1": 44, "P2": 0},
        river,
    )
    log.add("life_lost", {"turn": 2, "player_id": "P2", "remaining_lives": 2})
    return [json.dumps(line) for line in log.lines]


@pytest.fixture
def db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("quality")
    path = folder / "w.duckdb"
    report = workbench.ingest([write_lines(folder / f"{GAME}.events.jsonl", the_game())], db=path)
    assert not report.failed
    return path


def exact_share(hand: list[str], board: list[str]) -> float:
    """Heads-up on the river, counted here: every holding of the 45 unseen cards, a tie
    worth half."""
    seen = set(hand) | set(board)
    unseen = [c for c in cards.DECK if c not in seen]
    mine = cards.strength([*hand, *board])
    total = 0.0
    holdings = list(itertools.combinations(unseen, 2))
    for theirs in holdings:
        other = cards.strength([*theirs, *board])
        total += 1.0 if mine > other else 0.5 if mine == other else 0.0
    return total / len(holdings)


def test_each_decision_is_judged_on_what_its_player_could_know(db):
    con = workbench.connect(db, read_only=True)
    judged = workbench.analysis.play_quality(con).sort("line")
    got = [
        (r["player_id"], r["action"], r["street"], r["to_call"], r["pot"], r["mistake"])
        for r in judged.iter_rows(named=True)
    ]
    assert got == [
        ("P1", "raise", "preflop", 0, 4, None),
        ("P2", "call", "preflop", 200, 204, "continue_behind"),  # 32o: far below 200/404
        ("P1", "check", "flop", 0, 404, None),
        ("P2", "fold", "flop", 0, 404, "fold_free"),
        ("P1", "check", "preflop", 0, 4, None),
        ("P2", "raise", "preflop", 0, 4, None),
        ("P1", "call", "preflop", 10, 14, None),
        ("P1", "raise", "river", 0, 24, None),
        ("P2", "call", "river", 10, 34, "showdown_long_shot"),  # the Life lost, graver than the call
    ]
    assert judged["pot_odds"].to_list()[1] == pytest.approx(200 / 404)
    assert judged["model"].to_list()[:2] == ["m-steady", "m-loose"]
    # hindsight: none in the first hand (a walk), P1's kings beat P2 in the second
    assert judged["won_at_showdown"].to_list() == [None] * 4 + [True, False, True, True, False]
    # the river call: counted exactly, and here by hand
    river = judged.row(8, named=True)
    assert river["win_probability_se"] == 0
    assert river["win_probability"] == pytest.approx(exact_share(["3S", "4H"], ["2C", "7D", "JH", "QS", "AD"]))
    assert river["win_probability"] < LONG_SHOT
    # the preflop call: 32o against one unknown hand wins about 0.32 of the pot (the
    # weakest hand; published preflop tables), well under 200/404 - MARGIN = 0.395
    call = judged.row(1, named=True)
    assert call["win_probability"] == pytest.approx(0.323, abs=3 * call["win_probability_se"])
    assert call["win_probability"] < 200 / 404 - MARGIN
    assert judged["path"].str.ends_with(f"{GAME}.events.jsonl").all()


def test_the_play_statistics_count_what_each_model_did(db):
    con = workbench.connect(db, read_only=True)
    summary = {r["model"]: r for r in workbench.analysis.play_summary(con).iter_rows(named=True)}
    steady, loose = summary["m-steady"], summary["m-loose"]
    assert (steady["decisions"], loose["decisions"]) == (5, 4)
    # VPIP: both put chips in by choice in both hands; PFR: one hand each raised first
    assert (steady["vpip"], steady["vpip_n"], loose["vpip"]) == (1.0, 2, 1.0)
    assert (steady["pfr"], loose["pfr"]) == (0.5, 0.5)
    # raises of calls and raises: P1 raise, call, raise; P2 call, raise, call
    assert steady["aggression"] == pytest.approx(2 / 3) and loose["aggression"] == pytest.approx(1 / 3)
    # facing a raise: P1 once (called), P2 twice (called both)
    assert (steady["fold_to_raise"], steady["fold_to_raise_n"], loose["fold_to_raise_n"]) == (0.0, 1, 2)
    # one showdown each (the first hand was a walk)
    assert (steady["showdown_win_rate"], loose["showdown_win_rate"], loose["showdowns"]) == (1.0, 0.0, 1)
    assert (loose["fold_free"], loose["continue_behind"], loose["showdown_long_shot"]) == (0.25, 0.25, 0.25)
    assert (steady["fold_free"], steady["fold_ahead"]) == (0.0, 0.0)
    # luck apart: P2 put 22 in (ante 2, raise 10, call 10), won nothing, lost the Life it
    # was expected to lose nearly surely
    assert (loose["chips_won"], loose["lives_lost"]) == (-22, 1)
    assert loose["lives_expected"] == pytest.approx(1 - exact_share(["3S", "4H"], ["2C", "7D", "JH", "QS", "AD"]))
    for row in (steady, loose):
        for name in ("vpip", "aggression", "showdown_win_rate"):
            assert row[f"{name}_low"] is None or row[f"{name}_low"] <= row[name] <= row[f"{name}_high"]


def test_an_attack_is_set_beside_what_its_target_did_next(db):
    con = workbench.connect(db, read_only=True)
    [attack] = workbench.analysis.attack_outcomes(con).iter_rows(named=True)
    assert (attack["attacker"], attack["target"], attack["plan"], attack["intent"], attack["expected_shift"]) == (
        "P1",
        "P2",
        "bait",
        "tilt",
        "P2 calls wide",
    )
    # P2's next three: call (a mistake), fold (a mistake), raise
    assert (attack["n_before"], attack["n_after"]) == (0, 3)
    assert attack["fold_rate_after"] == pytest.approx(1 / 3)
    assert attack["aggression_after"] == pytest.approx(1 / 2)
    assert attack["mistake_rate_after"] == pytest.approx(2 / 3)


def test_an_attack_is_set_beside_its_targets_play_in_its_own_game(tmp_path):
    # two games in one file: the second game's attack looks at P2's decisions there only
    second = [line.replace(GAME, GAME + "_again") for line in the_game()]
    db = tmp_path / "w.duckdb"
    assert not workbench.ingest([write_lines(tmp_path / f"{GAME}.events.jsonl", the_game() + second)], db=db).failed
    con = workbench.connect(db, read_only=True)
    attacks = workbench.analysis.attack_outcomes(con)
    assert attacks.select("game_id", "n_before", "n_after").rows() == [(GAME, 0, 3), (GAME + "_again", 0, 3)]


def test_the_quality_command_says_it_and_lists_a_mistakes_decisions(db, capsys):
    assert main(["quality", "--db", str(db), "--model", "m-loose"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "m-loose: 4 betting decisions in 1 game"
    assert "fold_free 25.0%" in out[1] and "n=4" in out[1]
    assert "VPIP 100.0%" in out[2] and "showdowns won 0.0%" in out[2]
    assert out[3].startswith("  luck apart: at 1 showdown won -22 chips")
    assert main(["quality", "--db", str(db), "--mistake", "fold_free"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert line.endswith(
        "P2 (m-loose) fold holding 3C 2D on KD 9S 4C: 0 to call into 404 (pot odds 0%), "
        "win probability " + line.rsplit(" ", 1)[1]
    )
    assert f"{GAME}.events.jsonl:" in line
    assert main(["quality", "--db", str(db), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["model"] for row in rows] == ["m-loose", "m-steady"]
    assert main(["quality", "--db", str(db), "--model", "nobody"]) == 2
    assert capsys.readouterr().err == (
        "workbench: no answered Damage betting decision of nobody in this database; "
        "ingest Damage logs (*.events.jsonl) first\n"
    )
    assert main(["quality", "--db", str(db), "--game", "nowhere"]) == 2
    assert capsys.readouterr().err.startswith("workbench: no answered Damage betting decision in game nowhere in")
    assert pl.DataFrame(rows)["decisions"].sum() == 9


def test_mistakes_by_the_players_tilt_and_the_raw_lines_behind_a_mistake(db):
    from workbench.damage.quality import mistaken, mistakes_by_emotion
    from workbench.errors import WorkbenchError

    con = workbench.connect(db, read_only=True)
    # every vector these players carry has tilt 0.05: the low bin (under 0.15) only
    table = mistakes_by_emotion(con, "tilt")
    assert [(r["model"], r["state"], r["mistake_rate"], r["mistake_rate_n"]) for r in table.iter_rows(named=True)] == [
        ("m-loose", "low", 0.75, 4),
        ("m-steady", "low", 0.0, 5),
    ]
    assert table["emotion"].unique().to_list() == ["tilt"]
    with pytest.raises(WorkbenchError, match="unknown emotion 'calm': one of fear, anger, shame, confidence, tilt"):
        mistakes_by_emotion(con, "calm")
    [row] = mistaken(con, "fold_free").iter_rows(named=True)
    assert json.loads(row["raw"])["payload"]["action"]["kind"] == "fold" and row["player_id"] == "P2"
    assert mistaken(con, "fold_free", model="m-steady").is_empty()


@pytest.mark.parametrize(
    ("value", "state"),
    [(0.1499, "low"), (0.15, "moderate"), (0.3999, "moderate"), (0.4, "high"), (-1.0, "low"), (1.0, "high")],
)
def test_the_emotion_bins_on_both_sides_of_their_bounds(value, state):
    from workbench.damage.quality import _binned

    assert pl.DataFrame({"tilt": [value]}).select(_binned(pl.col("tilt"))).item() == state


def test_the_command_lines_mistake_names_are_the_rules_own():
    # the command line keeps its own copy, so that `--help` loads no poker library
    from workbench.cli import MISTAKE_NAMES
    from workbench.damage.play import MISTAKES

    assert MISTAKE_NAMES == MISTAKES
