"""Hostile Damage lines in front of play quality (the second red team's findings): a field
of the wrong kind, a number past any game's chips, a pot of chips taken out, cards that
are not cards. `workbench quality` answers (exit 0) or says why not in one line (exit 2),
never an internal error, and its numbers count only decisions it could judge."""

import json

import pytest

import workbench
from tests.conftest import write_lines
from tests.damage.test_quality import GAME, the_game
from workbench.cli import main
from workbench.damage import quality


def changed(kind: str, edit) -> list[str]:
    """The hand-made game with its first line of `kind` edited."""
    lines = [json.loads(line) for line in the_game()]
    first = next(line for line in lines if line["type"] == kind)
    edit(first["payload"])
    return [json.dumps(line) for line in lines]


def first_player(key, value):
    return lambda payload: payload["players"][0].__setitem__(key, value)


CASES = {
    "hand a number": ("hand_started", first_player("hand", 5)),
    "players a number": ("hand_started", lambda p: p.__setitem__("players", 5)),
    "player id a list": ("hand_started", first_player("player_id", ["P1"])),
    "board a number": ("community_revealed", lambda p: p.__setitem__("community_cards", 7)),
    "showdown board a number": ("showdown", lambda p: p.__setitem__("community_cards", 7)),
    "actor a dict": ("action_submitted", lambda p: p.__setitem__("player_id", {"id": "P1"})),
    "actor a number": ("action_resolved", lambda p: p.__setitem__("player_id", 7)),
    "pot past 2^63": ("action_resolved", lambda p: p.__setitem__("pot", 2**63)),
    "pot 1e308": ("hand_started", lambda p: p.__setitem__("pot", 1e308)),
    "a pot of chips taken out": ("hand_started", lambda p: p.__setitem__("pot", -300)),
    "payout past 2^63": ("showdown", lambda p: p["payouts"].__setitem__("P1", 2**70)),
    "the folding player's cards are not cards": (
        "hand_started",
        lambda p: p["players"][1].__setitem__("hand", ["XX", "YY"]),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_quality_answers_or_says_why_in_one_line(case, tmp_path, capsys):
    kind, edit = CASES[case]
    db = tmp_path / "w.duckdb"
    assert not workbench.ingest([write_lines(tmp_path / f"{GAME}.events.jsonl", changed(kind, edit))], db=db).failed
    quality._CACHE.clear()
    for argv in (
        ["quality", "--db", str(db)],
        ["quality", "--db", str(db), "--json"],
        ["quality", "--db", str(db), "--mistake", "fold_free"],
        ["quality", "--db", str(db), "--mistake", "continue_behind"],
    ):
        code = main(argv)
        err = capsys.readouterr().err
        assert code in (0, 2), (argv, err)
        assert code == 0 or err.count("\n") == 1


def test_rates_count_only_the_decisions_judged(tmp_path, capsys):
    # P2's cards are not cards: its decisions get no win probability and no rate counts them
    db = tmp_path / "w.duckdb"
    edit = CASES["the folding player's cards are not cards"][1]
    workbench.ingest([write_lines(tmp_path / f"{GAME}.events.jsonl", changed("hand_started", edit))], db=db)
    quality._CACHE.clear()
    assert main(["quality", "--db", str(db), "--json"]) == 0
    rows = {row["model"]: row for row in json.loads(capsys.readouterr().out)}
    # P2 decided 2 times in the first hand (unjudged) and 2 in the second
    assert rows["m-loose"]["decisions"] == 2 and rows["m-loose"]["fold_free_n"] == 2


def test_the_cache_knows_a_database_rebuilt_from_the_same_bytes_elsewhere(tmp_path):
    lines = the_game()
    db = tmp_path / "w.duckdb"
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        if db.exists():
            db.unlink()
        workbench.ingest([write_lines(tmp_path / folder / f"{GAME}.events.jsonl", lines)], db=db)
        with workbench.connect(db, read_only=True) as con:
            paths = set(workbench.analysis.play_quality(con)["path"].to_list())
        assert paths == {str((tmp_path / folder / f"{GAME}.events.jsonl").resolve())} or all(
            f"/{folder}/" in path for path in paths
        )


def test_a_control_character_in_a_model_name_draws_as_a_replacement(tmp_path):
    from workbench.plots.labels import display_name

    assert display_name("m\x01loose\x1b[31m") == "m\ufffdloose\ufffd[31m"
    lines = [line.replace("m-loose", "m\\u0001loose") for line in the_game()]
    db = tmp_path / "w.duckdb"
    workbench.ingest([write_lines(tmp_path / f"{GAME}.events.jsonl", lines)], db=db)
    quality._CACHE.clear()
    for kind in ("play", "scorecard"):
        assert main(["plot", kind, "--db", str(db), "-o", str(tmp_path / f"{kind}.png")]) == 0
        assert (tmp_path / f"{kind}.png").stat().st_size > 1000
