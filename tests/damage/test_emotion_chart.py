"""The emotion figure of a game where a player is eliminated: the player's lines end
where it left the game, at a cross, and the vectors the log restates after that are not
drawn. Expected values are read off the lines written here (seed 003, section 5.11:
`player_eliminated` takes the player out)."""

import pytest

import workbench
from tests.conftest import write_lines
from tests.damage.events import EMOTIONS, PLAYER, event
from workbench.plots import emotion_trajectories


def player(player_id: str, fear: float) -> dict:
    return {**PLAYER, "player_id": player_id, "emotions": {**EMOTIONS, "fear": fear}}


# line: what it says (the line number is the event's `seq`)
GAME = [
    event("game_started"),  # 1
    event("hand_started", {"turn": 1, "pot": 4, "ante": 2, "players": [player("P1", 0.1), player("P2", 0.2)]}),  # 2
    event(
        "action_resolved",
        {
            "turn": 1,
            "player_id": "P2",
            "kind": "fold",
            "pot": 4,
            "current_high_bet": 0,
            "player_state": player("P2", 0.35),
            "attack_plan": None,
        },
    ),  # 3
    event("player_eliminated", {"turn": 1, "player_id": "P2", "remaining_lives": 0}),  # 4
    event("hand_ended", {"turn": 1, "players": [player("P1", 0.15), player("P2", 0.9)]}),  # 5
    event("hand_started", {"turn": 2, "pot": 4, "ante": 2, "players": [player("P1", 0.5)]}),  # 6
    event(
        "game_ended",
        {"final_state": [player("P1", 0.6), player("P2", 0.9)], "token_stats": {}, "token_stats_by_model": {}},
    ),  # 7
]
ELIMINATED_AT = {"seq": 4, "turn": 1}
LAST_FEAR_OF_P2 = 0.35  # line 3, its last vector before line 4


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    folder = tmp_path_factory.mktemp("eliminated")
    log = write_lines(folder / "game.events.jsonl", GAME)
    (report,) = workbench.ingest([log], db=folder / "w.duckdb").files
    assert report.status == "ingested" and report.rejected == 0, report.message
    connection = workbench.connect(folder / "w.duckdb", read_only=True)
    yield connection
    connection.close()


def layers(spec: dict, panel: dict) -> dict[str, list[dict]]:
    """A panel's rows by the shape of their marks: `line`, `triangle-down` (attacks), `cross`."""
    return {
        layer["mark"].get("shape", layer["mark"]["type"]): spec["datasets"][layer["data"]["name"]]
        for layer in panel["layer"]
    }


def fear_panel(con, x: str) -> dict[str, list[dict]]:
    spec = emotion_trajectories(con, "game_20260206T093854Z", emotions=["fear"], x=x).to_dict()
    (panel,) = spec["vconcat"]
    return layers(spec, panel)


@pytest.mark.parametrize("x", ["seq", "turn"])
def test_an_eliminated_players_line_ends_at_a_cross_where_it_left(con, x):
    drawn = fear_panel(con, x)
    lines, crosses = drawn["line"], drawn["cross"]
    assert sorted(drawn) == ["cross", "line", "triangle-down"] and drawn["triangle-down"] == []
    assert crosses == [
        {
            "player_id": "P2",
            "emotion": "fear",
            x: ELIMINATED_AT[x],
            "value": LAST_FEAR_OF_P2,
            "eliminated_at": ELIMINATED_AT[x],
        }
    ]
    p2 = [(row[x], row["value"]) for row in lines if row["player_id"] == "P2"]
    # lines 2 and 3, then held at 0.35 up to the elimination; lines 5 and 7 restate a player who is out
    if x == "seq":
        assert p2 == [(2, 0.2), (3, 0.35), (4, 0.35)]
    else:
        assert p2 == [(1, 0.2), (1, 0.35), (1, 0.35)]
    assert 0.9 not in [value for _, value in p2]


def test_a_player_still_in_keeps_its_whole_line_and_no_cross(con):
    drawn = fear_panel(con, "seq")
    p1 = [(row["seq"], row["value"]) for row in drawn["line"] if row["player_id"] == "P1"]
    assert p1 == [(2, 0.1), (5, 0.15), (6, 0.5), (7, 0.6)]
    assert "P1" not in {row["player_id"] for row in drawn["cross"]}


def test_a_game_nobody_left_has_no_cross(con):
    spec = emotion_trajectories(con, "game_20260206T093854Z", players=["P1"]).to_dict()
    crosses = [layers(spec, panel)["cross"] for panel in spec["vconcat"]]
    assert len(crosses) == 5 and all(rows == [] for rows in crosses)  # a cross layer per emotion, empty


def test_the_real_draw5_game_ends_the_eliminated_players_line_at_its_line(tmp_path):
    # The real simulator's log (../shared/corpus/damage): found by reading the file's own
    # lines, the first `player_eliminated` and its player.
    from tests.damage.test_real_corpus import DRAW5, corpus, lines_of

    lines = lines_of(DRAW5)
    [(seq, player)] = [
        (number, line["payload"]["player_id"])
        for number, line in enumerate(lines, 1)
        if line["type"] in ("player_eliminated", "bankroll_eliminated")
    ]
    workbench.ingest([corpus() / DRAW5], db=tmp_path / "w.duckdb")
    con = workbench.connect(tmp_path / "w.duckdb", read_only=True)
    spec = emotion_trajectories(con, lines[0]["game_id"]).to_dict()
    con.close()
    for panel in spec["vconcat"]:
        drawn = layers(spec, panel)
        assert [(row["player_id"], row["seq"]) for row in drawn["cross"]] == [(player, seq)]
        assert max(row["seq"] for row in drawn["line"] if row["player_id"] == player) == seq
        assert max(row["seq"] for row in drawn["line"]) > seq  # the others play on


@pytest.mark.parametrize("x, title", [("seq", "event"), ("turn", "turn")])
def test_the_panels_share_one_x_axis_labelled_under_the_last(con, x, title):
    spec = emotion_trajectories(con, "game_20260206T093854Z", emotions=["fear", "tilt"], x=x).to_dict()
    assert spec["resolve"]["scale"]["x"] == "shared"
    upper, last = spec["vconcat"]
    # every layer of the upper panel: its grid, but no labels, ticks or title (else a layer brings them back)
    assert [layer["encoding"]["x"]["axis"] for layer in upper["layer"]] == [
        {"labels": False, "ticks": False, "title": None}
    ] * 3
    assert [layer["encoding"]["x"].get("axis") for layer in last["layer"]] == [None] * 3
    assert last["layer"][0]["encoding"]["x"]["title"] == title
