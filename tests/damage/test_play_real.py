"""How Damage players played (workbench.damage.play.judged) over the real simulator's logs,
held to a reading of the raw JSON lines written here, to decisions checked by hand in the
logs, and to the stated bounds of the mistake rules."""

import json
from collections import Counter

import polars as pl
import pytest

import workbench
from tests.conftest import SHARED
from workbench.damage import play
from workbench.damage.cards import strength

CORPUS = SHARED / "corpus" / "damage"
HOLDEM = "game_20261123T135537354772Z_ab3780"
DRAW5 = "game_20261123T135533274249Z_d74231"

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the real Damage corpus is not at {CORPUS}")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The corpus ingested once: (connection, judged frame)."""
    db = tmp_path_factory.mktemp("play") / "x.duckdb"
    assert not workbench.ingest([CORPUS], db=db).failed
    con = workbench.connect(db, read_only=True)
    yield con, play.judged(con)
    con.close()


def decisions_read_by_hand(path):
    """Each answered betting decision of one log (its `action_submitted` lines), read from
    the JSON as the simulator keeps the state: the amount it faced, the pot, the players
    still in and everyone's cards; and each hand's showdown, by turn."""
    decisions, showdowns = [], {}
    bet = high = pot = None
    in_hand, dealt = {}, {}
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        event = json.loads(text)
        kind, data = event["type"], event["payload"]
        if kind == "hand_started":
            pot = data["pot"]
            bet = {p["player_id"]: p["current_bet"] for p in data["players"]}
            in_hand = {p["player_id"]: p["in_hand"] for p in data["players"]}
            dealt = {p["player_id"]: p["hand"] for p in data["players"]}
            high = max(bet.values())
        elif kind == "community_revealed" and data["street"] != "auto_showdown":
            high, bet = 0, dict.fromkeys(bet, 0)  # `_start_street`
        elif kind == "action_submitted" and data["action"]["kind"] in ("fold", "check", "call", "raise"):
            player = data["player_id"]
            decisions.append(
                {
                    "line": number,
                    "turn": data["turn"],
                    "player": player,
                    "kind": data["action"]["kind"],
                    "to_call": max(0, high - bet[player]),
                    "pot": pot,
                    "dealt": dealt,
                    "still_in": [p for p, inn in in_hand.items() if inn and p != player],
                }
            )
        elif kind == "action_resolved":
            player, state = data["player_id"], data["player_state"]
            last = decisions[-1] if decisions else {}
            if last.get("player") == player and "resolved" not in last:
                last["resolved"] = number
                if last["kind"] == "call":  # a call puts in what it faced, or all the player has
                    assert state["current_bet"] - bet[player] == data["pot"] - pot
                    assert data["pot"] - pot == last["to_call"] or state["bankroll"] == 0, last
            pot, high = data["pot"], data["current_high_bet"]
            bet[player], in_hand[player] = state["current_bet"], state["in_hand"]
        elif kind == "showdown":
            showdowns[data["turn"]] = data
    assert all("resolved" in decision for decision in decisions)  # each answered, then resolved
    return decisions, showdowns


def counted_by_hand(path):
    """(folds with nothing to call, folds whose hand would have won or tied at the showdown
    against every hand still in when it folded) in one log; `strength` only orders hands."""
    decisions, showdowns = decisions_read_by_hand(path)
    free = winners = 0
    for decision in decisions:
        if decision["kind"] != "fold":
            continue
        free += decision["to_call"] == 0
        showdown = showdowns[decision["turn"]]
        if len(showdown["rankings"]) < 2:
            continue  # a walk: no showdown
        board = showdown["community_cards"] if showdown["card_style"] == "holdem" else []
        mine = strength([*decision["dealt"][decision["player"]], *board])
        winners += all(mine >= strength([*decision["dealt"][p], *board]) for p in decision["still_in"])
    return free, winners


# The counts of the reading above (folds with nothing to call, hindsight winners that
# folded), the winners checked by eye against each showdown: draw5 line 141, P5's pair of
# jacks (with an ace) over P1's fives, P4's king high and P6's deuces; tournament table
# 3eb85a line 230, E1's pair of kings over E4's queens and the high cards of E3, E5, E6.
# The hold'em game ab3780 never reached a showdown (every hand a walk).
COUNTED = {
    DRAW5: (5, 1),
    HOLDEM: (13, 0),
    "game_20261123T135540946924Z_3eb85a": (0, 1),
    "game_20261123T135541065800Z_f9d1f5": (4, 0),
    "game_20261123T135541183644Z_e8d16f": (1, 0),
}


def test_folds_with_nothing_to_call_and_hindsight_winners_that_folded_match_a_count_by_hand(corpus):
    _, frame = corpus
    folds = frame.filter(pl.col("action") == "fold")
    found = {}
    for path in sorted(CORPUS.rglob("game_*.events.jsonl")):
        game = path.name.removesuffix(".events.jsonl")
        mine = folds.filter(pl.col("game_id") == game)
        judged = (
            mine.filter(pl.col("mistake") == "fold_free").height,
            mine.filter(pl.col("won_at_showdown").fill_null(False)).height,
        )
        found[game] = counted_by_hand(path)
        assert judged == found[game], game
    assert found == COUNTED


def test_every_answered_decision_is_judged_once_at_its_line(corpus):
    con, frame = corpus
    answered = con.execute(
        "SELECT source_id, locator FROM decisions WHERE format = 'damage' AND outcome <> 'failed'"
    ).fetchall()
    assert frame.height == len(answered) > 0
    judged = Counter((source, f"line {line}") for source, line in frame.select("source_id", "line").iter_rows())
    assert judged == Counter(answered)
    # and those lines are exactly the betting actions the logs submitted
    submitted = Counter()
    for path in sorted(CORPUS.rglob("game_*.events.jsonl")):
        for number, text in enumerate(path.read_text().splitlines(), start=1):
            if json.loads(text)["type"] == "action_submitted":
                submitted[(path.name.removesuffix(".events.jsonl"), number)] += 1
    assert Counter(frame.select("game_id", "line").iter_rows()) == submitted


# Read in game_20261123T135537354772Z_ab3780 (hold'em, turn 1, P2 small blind 5, P3 big
# blind 10, antes 4 x 10: pot 55 at line 31):
# - line 89: P1 raised to 20 (line 79: pot 75); P2, with 5 in, calls 15 into 75;
# - line 138: P4 raised to 50 (line 122: pot 170); P1, with 20 in, folds facing 30;
# - line 184: on the flop (line 175, bets reset) P3 bet 20 (line 181: pot 200); P4 calls 20.
@pytest.mark.parametrize(
    "line, player, action, to_call, pot",
    [
        (89, "P2", "call", 15, 75),
        (138, "P1", "fold", 30, 170),
        (184, "P4", "call", 20, 200),
    ],
)
def test_amounts_of_decisions_read_in_the_log(corpus, line, player, action, to_call, pot):
    _, frame = corpus
    [row] = frame.filter((pl.col("game_id") == HOLDEM) & (pl.col("line") == line)).to_dicts()
    assert (row["player_id"], row["action"], row["to_call"], row["pot"]) == (player, action, to_call, pot)
    assert row["pot_odds"] == pytest.approx(to_call / (pot + to_call))


def test_mistakes_are_named_exactly_past_their_bounds(corpus):
    _, frame = corpus
    p, odds, mistake = pl.col("win_probability"), pl.col("pot_odds"), pl.col("mistake")
    ahead = frame.filter(mistake == "fold_ahead")
    assert ahead.height > 0
    assert (ahead["win_probability"] > ahead["pot_odds"] + play.MARGIN).all()
    behind = frame.filter(mistake == "continue_behind")
    assert behind.height > 0
    assert (behind["win_probability"] < behind["pot_odds"] - play.MARGIN).all()
    assert behind["action"].is_in(["call", "raise"]).all() and (behind["to_call"] > 0).all()
    # the converse: past a bound and not a graver mistake, it is named
    faced = pl.col("to_call") > 0
    folds = frame.filter((pl.col("action") == "fold") & faced)
    assert folds.filter((p > odds + play.MARGIN) & (mistake != "fold_ahead")).height == 0
    kept = frame.filter(pl.col("action").is_in(["call", "raise"]) & faced & (p < odds - play.MARGIN))
    assert kept["mistake"].is_in(["continue_behind", "showdown_long_shot"]).all()
    # a fold that faced a bet at or under its bound is not named
    inside = folds.filter(p <= odds + play.MARGIN)
    assert inside.height > 0
    assert inside["mistake"].is_null().all()
    assert inside.filter(p > odds).height > 0  # folds between the odds and the bound too


def test_a_game_cut_into_two_files_is_judged_as_the_whole_log(corpus, tmp_path):
    """The hold'em log cut at line 100, inside turn 1 (between P2's call at line 89 and
    P1's fold at line 138), its second part named to be ingested first: every decision is
    judged as in the whole log, at its line of its part."""
    _, frame = corpus
    lines = (CORPUS / f"{HOLDEM}.events.jsonl").read_text().splitlines(keepends=True)
    cut = 100
    assert json.loads(lines[cut - 1])["payload"]["turn"] == json.loads(lines[cut])["payload"]["turn"] == 1
    folder = tmp_path / "cut"
    folder.mkdir()
    (folder / "b-start.events.jsonl").write_text("".join(lines[:cut]))
    (folder / "a-rest.events.jsonl").write_text("".join(lines[cut:]))
    db = tmp_path / "cut.duckdb"
    assert not workbench.ingest([folder], db=db).failed
    with workbench.connect(db, read_only=True) as con:
        parts = play.judged(con)
    whole = frame.filter(pl.col("game_id") == HOLDEM)
    assert parts.height == whole.height > 0
    in_parts = parts.with_columns(
        line=pl.when(pl.col("path").str.ends_with("a-rest.events.jsonl"))
        .then(pl.col("line") + cut)
        .otherwise(pl.col("line"))
    )
    kept = [c for c in play.COLUMNS if c not in ("path", "source_id")]
    assert in_parts.select(kept).sort("line").to_dicts() == whole.select(kept).sort("line").to_dicts()
    assert parts.filter(pl.col("path").str.ends_with("a-rest.events.jsonl") & (pl.col("line") == 138 - cut)).select(
        "player_id", "action", "to_call"
    ).row(0) == ("P1", "fold", 30)
