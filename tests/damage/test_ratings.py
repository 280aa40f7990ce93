"""Placements and ratings of Damage games, checked against games whose order is known and
against the real simulator's tournament log, which ranks each table itself."""

import json
from pathlib import Path

import pytest

import workbench
from tests.conftest import SHARED, write_lines
from tests.damage.events import PAYLOADS, PLAYER, event
from workbench import connection
from workbench.damage.ratings import placements, ratings
from workbench.errors import WorkbenchError

CORPUS = SHARED / "corpus" / "damage"


def player(pid: str, lives: int, bankroll: int, tempo: int = 1) -> dict:
    return {**PLAYER, "player_id": pid, "lives": lives, "bankroll": bankroll, "tempo": tempo}


def game_lines(game_id: str, hour: int, seats: dict[str, str], final: list[dict], ended: bool = True) -> list[str]:
    """A game: seats (player -> model, each with one betting call and action), final states."""
    stamp = {"game_id": game_id, "ts": f"2026-02-06T{hour:02d}:00:00+00:00"}
    lines = [
        event(
            "game_started", {**PAYLOADS["game_started"], "players": len(seats), "primary_model": "m-primary"}, **stamp
        )
    ]
    for pid, model in seats.items():
        lines.append(
            event(
                "provider_call",
                {**PAYLOADS["provider_call"], "player_id": pid, "requested_model": model, "resolved_model": model},
                **stamp,
            )
        )
        action = {**PAYLOADS["action_submitted"]["action"], "player_id": pid, "kind": "call", "payload": {}}
        action.pop("attack_plan")
        lines.append(event("action_submitted", {"turn": 1, "player_id": pid, "action": action}, **stamp))
    if ended:
        lines.append(event("game_ended", {**PAYLOADS["game_ended"], "final_state": final}, **stamp))
    return [json.dumps(line) for line in lines]


def ingest(tmp_path, games) -> Path:
    db = tmp_path / "w.duckdb"
    tmp_path.mkdir(exist_ok=True)
    paths = [write_lines(tmp_path / f"{json.loads(lines[0])['game_id']}.events.jsonl", lines) for lines in games]
    report = workbench.ingest(paths, db=db)
    assert not report.failed
    return db


def ordered_tournament(games: int) -> list[list[str]]:
    """Four models, one seat each: A always first, then B, C, D (seats rotate)."""
    models = ["A", "B", "C", "D"]
    out = []
    for number in range(games):
        seats = {f"P{(i + number) % 4 + 1}": model for i, model in enumerate(models)}
        final = [player(pid, lives=4 - models.index(model), bankroll=100) for pid, model in seats.items()]
        out.append(game_lines(f"game_{number:02d}", number % 24, seats, final))
    return out


@pytest.fixture
def connect():
    opened = []

    def run(db):
        con = connection.connect(db, read_only=True)
        opened.append(con)
        return con

    yield run
    for con in opened:
        con.close()


def test_a_known_order_is_ranked_in_that_order_with_intervals(tmp_path, connect):
    con = connect(ingest(tmp_path, ordered_tournament(12)))
    table = ratings(con, bootstrap=200, seed=1)
    assert table["model"].to_list() == ["A", "B", "C", "D"] and table["rank"].to_list() == [1, 2, 3, 4]
    assert table["games"].to_list() == [12] * 4 and table["wins"].to_list() == [12, 0, 0, 0]
    assert table["mean_place"].to_list() == [1.0, 2.0, 3.0, 4.0]
    assert table["placements"].to_list() == [[place] * 12 for place in (1, 2, 3, 4)]
    for row in table.iter_rows(named=True):
        assert row["mu_low"] <= row["mu"] <= row["mu_high"] and row["ordinal"] == pytest.approx(
            row["mu"] - 3 * row["sigma"]
        )
    assert table["mu"].is_sorted(descending=True)
    # the same seed gives the same interval; more games narrow the ratings' sigma
    assert ratings(con, bootstrap=200, seed=1).equals(table)
    fewer = ratings(connect(ingest(tmp_path / "few", ordered_tournament(3))), bootstrap=50)
    assert (fewer["sigma"] > table["sigma"]).all()


def test_placements_follow_the_simulators_key_and_ties_share_a_place(tmp_path, connect):
    # lives first, then bankroll, then tempo (damage-game simulator.run); P3 and P4 tie on all three
    final = [
        player("P1", 2, 50),
        player("P2", 2, 80),
        player("P3", 1, 500, tempo=3),
        player("P4", 1, 500, tempo=3),
        player("P5", 1, 500, tempo=1),
    ]
    seats = {f"P{i}": "m" for i in range(1, 6)}
    con = connect(ingest(tmp_path, [game_lines("g1", 1, seats, final)]))
    placed = {row["player_id"]: row["place"] for row in placements(con).iter_rows(named=True)}
    assert placed == {"P2": 1, "P1": 2, "P3": 3, "P4": 3, "P5": 5}
    assert placements(con).filter("won")["player_id"].to_list() == ["P2"]


def test_an_unfinished_game_has_no_places_and_a_one_model_game_is_not_rated(tmp_path, connect):
    seats = {"P1": "A", "P2": "B"}
    final = [player("P1", 2, 100), player("P2", 1, 100)]
    games = [
        game_lines("g1", 1, seats, final),
        game_lines("g2", 2, seats, final, ended=False),
        game_lines("g3", 3, {"P1": "A", "P2": "A"}, final),
    ]
    con = connect(ingest(tmp_path, games))
    assert set(placements(con)["game_id"].to_list()) == {"g1", "g3"}
    table = {row["model"]: row for row in ratings(con, bootstrap=20).iter_rows(named=True)}
    assert (table["A"]["games"], table["A"]["rated_games"], table["A"]["wins"]) == (2, 1, 2)
    assert (table["B"]["games"], table["B"]["rated_games"]) == (1, 1)
    assert table["A"]["mu"] > table["B"]["mu"]


def test_ratings_by_seat_and_player_and_clear_errors(tmp_path, connect):
    con = connect(ingest(tmp_path, ordered_tournament(4)))
    seats = ratings(con, by="seat", bootstrap=10)
    assert sorted(seats["seat"].to_list()) == ["seat 1", "seat 2", "seat 3", "seat 4"]
    players = ratings(con, by="player", bootstrap=10)
    assert sorted(players["player"].to_list()) == ["P1", "P2", "P3", "P4"]
    with pytest.raises(WorkbenchError, match="cannot rate by 'table'"):
        ratings(con, by="table")
    empty = connect(ingest(tmp_path / "empty", [game_lines("g1", 1, {"P1": "A"}, [], ended=False)]))
    with pytest.raises(WorkbenchError, match="no finished Damage game"):
        ratings(empty)


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the real Damage corpus is not at {CORPUS}")
def test_the_real_tournament_tables_are_placed_as_the_simulator_ranked_them(tmp_path, connect):
    db = tmp_path / "corpus.duckdb"
    assert not workbench.ingest([CORPUS], db=db).failed
    placed = placements(connect(db))
    # The tournament log's own table results, read with plain json.
    [log] = (CORPUS / "tournament").glob("tournament_*.events.jsonl")
    results = [
        json.loads(line)["payload"]
        for line in log.read_text().splitlines()
        if json.loads(line)["type"] == "table_result"
    ]
    assert results
    for result in results:
        mine = placed.filter(placed["game_id"] == result["game_id"]).sort("place", "seat")
        assert mine["player_id"].to_list() == result["ranking"]  # the simulator's sort is stable by seat
        assert set(mine["tournament_id"].to_list()) == {result["tournament_id"]}
        assert mine.filter("won")["player_id"].to_list()[:1] == result["advanced"][:1]
    # every finished game of the corpus, and only those, is placed
    ended = {
        json.loads(line)["game_id"]
        for path in CORPUS.rglob("game_*.events.jsonl")
        for line in path.read_text().splitlines()
        if line.strip() and json.loads(line)["type"] == "game_ended"
    }
    assert set(placed["game_id"].to_list()) == ended


def test_a_model_rated_in_fewer_than_three_games_gets_no_interval(tmp_path, connect):
    # A, B and C play 3 games; D joins the last two only, E the last one only.
    games = []
    for number in range(3):
        seats = {
            "P1": "A",
            "P2": "B",
            "P3": "C",
            **({"P4": "D"} if number >= 1 else {}),
            **({"P5": "E"} if number == 2 else {}),
        }
        final = [player(pid, lives=5 - i, bankroll=100) for i, pid in enumerate(seats)]
        games.append(game_lines(f"game_{number}", number, seats, final))
    table = {
        row["model"]: row for row in ratings(connect(ingest(tmp_path, games)), bootstrap=100).iter_rows(named=True)
    }
    for model, rated in (("A", 3), ("B", 3), ("C", 3)):  # three rated games: an interval
        row = table[model]
        assert row["rated_games"] == rated and row["note"] is None
        assert row["mu_low"] < row["mu"] < row["mu_high"]
    for model, rated in (("D", 2), ("E", 1)):  # fewer: none, and a note that says why
        row = table[model]
        assert row["rated_games"] == rated and row["mu_low"] is None and row["mu_high"] is None
        assert row["note"] == f"too few games ({rated} rated; an interval needs 3)"


def test_the_interval_is_a_bootstrap_over_games_rated_in_the_order_they_ended(tmp_path, connect):
    # mu +- t(6) sqrt(7/6) standard deviations of mu over resamples of the games, each kept in
    # the order the games ended and rated by openskill itself (the reference). The rating's
    # own sigma is not added: that counted the same uncertainty twice.
    import numpy as np

    from tests.damage.test_plackett_luce import openskill_ratings

    winners = ["A", "A", "B", "A", "B", "B", "A"]
    games = [
        game_lines(
            f"game_{number:02d}",
            number,
            {"P1": "A", "P2": "B"},
            [player("P1", 2 if w == "A" else 1, 100), player("P2", 1 if w == "A" else 2, 100)],
        )
        for number, w in enumerate(winners)
    ]
    table = {
        row["model"]: row
        for row in ratings(connect(ingest(tmp_path, games)), bootstrap=40, seed=3).iter_rows(named=True)
    }
    played = [{"A": 1.0, "B": 2.0} if w == "A" else {"A": 2.0, "B": 1.0} for w in winners]
    orders = np.sort(np.random.default_rng(3).integers(0, len(played), size=(40, len(played))), axis=1)
    mus = np.array([openskill_ratings([played[i] for i in order], ["A", "B"])[0] for order in orders])
    from scipy.stats import t as student_t

    factor = student_t.ppf(0.975, 6) * (7 / 6) ** 0.5  # 7 games
    for column, model in enumerate(["A", "B"]):
        spread = mus[:, column].std(ddof=1)
        row = table[model]
        assert row["mu_low"] == pytest.approx(row["mu"] - factor * spread, rel=1e-6)
        assert row["mu_high"] == pytest.approx(row["mu"] + factor * spread, rel=1e-6)
        ranks = 1 + (mus[:, 1 - column] > mus[:, column])
        assert (row["rank_low"], row["rank_high"]) == (
            min(int(np.quantile(ranks, 0.025, method="lower")), row["rank"]),
            max(int(np.quantile(ranks, 0.975, method="higher")), row["rank"]),
        )
    # neither can be told from the other: one group, labelled by the better rank
    assert table["A"]["tied"] == table["B"]["tied"] == 1


def test_rank_intervals_and_groups_of_models_that_cannot_be_told_apart():
    from workbench.damage.ratings import tied_groups

    # ranks 1-4: 1 [1, 2], 2 [1, 2], 3 [3, 4], 4 [3, 4]: two groups
    assert tied_groups([1, 2, 3, 4], [1, 1, 3, 3], [2, 2, 4, 4]) == [1, 1, 3, 3]
    # a chain does not merge: 3 reaches 2's interval but not 1's
    assert tied_groups([1, 2, 3], [1, 1, 3], [2, 3, 3]) == [1, 1, 3]
    # no interval (too few games): a group of its own
    assert tied_groups([1, 2], [1, None], [2, None]) == [1, 2]


def test_a_known_order_is_told_apart_rank_by_rank(tmp_path, connect):
    table = ratings(connect(ingest(tmp_path, ordered_tournament(12))), bootstrap=100, seed=1)
    assert table["rank_low"].to_list() == table["rank_high"].to_list() == [1, 2, 3, 4]
    assert table["tied"].to_list() == [1, 2, 3, 4]


def test_a_models_place_in_a_game_is_the_mean_of_its_seats(tmp_path, connect):
    # A holds seats placed 1st and 3rd, B the 2nd: means 2 and 2, a tie (the best seat
    # would put A first).
    games = [
        game_lines(
            f"game_{n}",
            n,
            {"P1": "A", "P2": "B", "P3": "A"},
            [player("P1", 3, 100), player("P2", 2, 100), player("P3", 1, 100)],
        )
        for n in range(3)
    ]
    table = {row["model"]: row for row in ratings(connect(ingest(tmp_path, games)), bootstrap=10).iter_rows(named=True)}
    assert table["A"]["mean_place"] == pytest.approx(2.0) and table["A"]["mu"] == pytest.approx(table["B"]["mu"])


def test_aliases_rate_two_names_as_one_model(tmp_path, connect):
    seats = [{"P1": "A", "P2": "B"}, {"P1": "A-2026", "P2": "B"}]
    final = [player("P1", 2, 100), player("P2", 1, 100)]
    db = ingest(tmp_path, [game_lines(f"game_{i}", i, s, final) for i, s in enumerate(seats)])
    table = ratings(connect(db), bootstrap=10, aliases={"A-2026": "A"})
    assert sorted(table["model"].to_list()) == ["A", "B"]
    assert table.filter(table["model"] == "A")["games"].to_list() == [2]


def test_errors_word_for_word_an_interval_column_without_intervals_and_ties_ranked_by_name(tmp_path, connect):
    # one model in every seat: nothing to rank it against
    alone = connect(
        ingest(
            tmp_path / "alone",
            [game_lines("g1", 1, {"P1": "A", "P2": "A"}, [player("P1", 2, 100), player("P2", 1, 100)])],
        )
    )
    with pytest.raises(WorkbenchError) as raised:
        ratings(alone)
    assert str(raised.value) == "no finished Damage game has two models to rank against each other"
    empty = connect(ingest(tmp_path / "empty", [game_lines("g1", 1, {"P1": "A"}, [], ended=False)]))
    with pytest.raises(WorkbenchError) as raised:
        ratings(empty)
    assert str(raised.value) == "no finished Damage game in this database (none has a game_ended event)"
    # one game, B and A tied (same lives, same bankroll): equal ratings; no interval (below 3 games),
    # still a column of floats
    games = [game_lines("g1", 1, {"P1": "B", "P2": "A"}, [player("P1", 2, 100), player("P2", 2, 100)])]
    table = ratings(connect(ingest(tmp_path / "tie", games)), bootstrap=10)
    assert table["mu"][0] == pytest.approx(table["mu"][1])
    assert table["model"].to_list() == ["A", "B"] and table["rank"].to_list() == [1, 2]  # a tie: by name
    assert table.schema["mu_low"] == table.schema["mu_high"] == __import__("polars").Float64
    assert table["mu_low"].null_count() == 2


def test_games_are_rated_in_the_order_they_ended_as_openskill_rates_them(tmp_path, connect):
    from tests.damage.test_plackett_luce import openskill_ratings

    # "g-b" ended first (B won), "g-a" later (A won): by name the order would be the other way
    games = [
        game_lines("g-a", 9, {"P1": "A", "P2": "B"}, [player("P1", 2, 100), player("P2", 1, 100)]),
        game_lines("g-b", 3, {"P1": "B", "P2": "A"}, [player("P1", 2, 100), player("P2", 1, 100)]),
    ]
    table = ratings(connect(ingest(tmp_path, games)), bootstrap=10)
    expected, _ = openskill_ratings([{"B": 1.0, "A": 2.0}, {"A": 1.0, "B": 2.0}], ["A", "B"])
    assert {row["model"]: row["mu"] for row in table.iter_rows(named=True)} == pytest.approx(
        dict(zip(["A", "B"], expected))
    )
    assert expected[0] > expected[1]  # the later win counts more: A, rated last, ends ahead


def test_the_ratings_command_shows_ranks_and_the_groups_that_cannot_be_told_apart(tmp_path, capsys):
    from workbench.cli import main

    # A first and B second in every game, C and D trading third place: A and B told apart,
    # C and D one group
    games = []
    for number in range(12):
        order = ["A", "B", "C", "D"] if number % 2 else ["A", "B", "D", "C"]
        seats = {f"P{i + 1}": model for i, model in enumerate(order)}
        final = [player(pid, lives=4 - order.index(model), bankroll=100) for pid, model in seats.items()]
        games.append(game_lines(f"game_{number:02d}", number, seats, final))
    db = ingest(tmp_path, games)
    assert main(["ratings", "--db", str(db), "--bootstrap", "100"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Damage models by Plackett-Luce rating")
    said = [line.split(":")[0].strip() for line in lines[1:]]
    assert said[:3] == ["1. A", "2. B", "tied, ranks 3-4"] and sorted(said[3:]) in (["3. C", "4. D"], ["3. D", "4. C"])
    assert "12 games, 12 won, mean place 1.00" in lines[1] and "rank 1-1 possible" in lines[1]
    assert lines[3].startswith("  tied") and lines[4].startswith("    3. ") and "rank 3-4 possible" in lines[4]

    assert main(["ratings", "--db", str(db), "--bootstrap", "100", "--csv"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].split(",")[:4] == ["model", "games", "rated_games", "placements"]
    assert rows[1].split(",")[:5] == ["A", "12", "12", ";".join(["1"] * 12), "12"]
    assert main(["ratings", "--db", str(db), "--bootstrap", "100", "--json"]) == 0
    [best, *_] = json.loads(capsys.readouterr().out)
    assert (best["model"], best["rank"], best["rank_low"], best["rank_high"], best["tied"]) == ("A", 1, 1, 1, 1)


def test_the_ratings_command_says_what_it_cannot_rate_in_one_line(tmp_path, capsys):
    from workbench.cli import main

    db = ingest(tmp_path, [game_lines("g1", 1, {"P1": "A", "P2": "B"}, [player("P1", 2, 100), player("P2", 1, 100)])])
    assert main(["ratings", "--db", str(db), "--bootstrap", "0"]) == 2
    assert capsys.readouterr().err == "workbench: --bootstrap must be from 1 to 100,000 resamples, not 0\n"
    assert main(["ratings", "--db", str(db)]) == 0  # one game: ranked, with no interval, and says so
    out = capsys.readouterr().out
    assert "1. A: mu" in out and "(no interval: too few games" in out


def test_one_resample_gives_no_interval_and_says_so(tmp_path, connect):
    from workbench.damage.ratings import ratings_in_words

    # a standard deviation over resamples needs two of them: with one, every model is
    # rated with no interval, and no note (it has games enough)
    table = ratings(connect(ingest(tmp_path, ordered_tournament(3))), bootstrap=1)
    assert table["mu_low"].null_count() == table["mu_high"].null_count() == 4
    assert table["note"].null_count() == 4
    lines = ratings_in_words(table)
    assert lines[1].startswith("  1. A: mu ") and lines[1].endswith(" (no interval), 3 games, 3 won, mean place 1.00")


def test_a_model_seen_only_alone_is_listed_but_not_rated(tmp_path, connect):
    # C plays only games against itself: in the table, in no rated game and in no
    # resample, so it has neither a rank interval nor an interval of its rating
    games = ordered_tournament(3) + [
        game_lines("game_c", 20, {"P1": "C", "P2": "C"}, [player("P1", 2, 100), player("P2", 1, 100)])
    ]
    for number, lines in enumerate(games[:3]):  # C's seat in the tournament goes to E
        games[number] = [line.replace('"C"', '"E"') for line in lines]
    table = {row["model"]: row for row in ratings(connect(ingest(tmp_path, games)), bootstrap=20).iter_rows(named=True)}
    assert (table["C"]["games"], table["C"]["rated_games"]) == (1, 0)
    assert table["C"]["rank_low"] is None and table["C"]["mu_low"] is None
    assert table["C"]["note"] == "too few games (0 rated; an interval needs 3)"


def test_the_rank_interval_holds_the_rank_by_ordinal(tmp_path, connect):
    # A and C trade wins over 40 games (A wins 21), B beats D three times: B's mu is the
    # highest, but from three games its sigma is large, so by ordinal (mu - 3 sigma) A
    # ranks first and B third, while by mu the resamples put A second or third and B
    # first or second. The rank interval still holds the rank each model is given.
    games = [
        game_lines(
            f"game_{i:02d}",
            1,
            {"P1": "A", "P2": "C"} if (i * 21) % 40 < 21 else {"P1": "C", "P2": "A"},
            [player("P1", 2, 100), player("P2", 1, 100)],
        )
        for i in range(40)
    ]
    games += [
        game_lines(f"game_{i:02d}", 1, {"P1": "B", "P2": "D"}, [player("P1", 2, 100), player("P2", 1, 100)])
        for i in range(40, 43)
    ]
    # one file of every game: 43 files would take seconds to ingest
    db = tmp_path / "w.duckdb"
    assert not workbench.ingest([write_lines(tmp_path / "games.events.jsonl", sum(games, []))], db=db).failed
    table = ratings(connect(db), bootstrap=100)
    assert table["model"].to_list()[0] == "A" and table["model"].to_list()[2] == "B"
    for row in table.iter_rows(named=True):
        assert row["rank_low"] <= row["rank"] <= row["rank_high"]


def test_a_final_state_without_a_player_id_leaves_that_seat_unrated(tmp_path, connect):
    games = [
        game_lines(
            f"game_{n}",
            n,
            {"P1": "A", "P2": "B", "P3": "C"},
            [player("P1", 3, 100), player("P2", 2, 100), {**player("P3", 1, 100), "player_id": None}],
        )
        for n in range(3)
    ]
    table = ratings(connect(ingest(tmp_path, games)), by="player", bootstrap=20)
    assert table["player"].to_list() == ["P1", "P2"]


def test_a_game_of_more_seats_than_any_table_is_refused_in_one_line(tmp_path, connect):
    from workbench.damage.ratings import MOST_SEATS

    def table(size, name):
        seats = {f"P{i}": "A" if i % 2 else "B" for i in range(1, size + 1)}
        return game_lines(name, 1, seats, [player(pid, 1 + i % 3, 100) for i, pid in enumerate(seats)])

    ratings(connect(ingest(tmp_path / "most", [table(MOST_SEATS, "game_most")])), bootstrap=5)  # rated
    with pytest.raises(WorkbenchError) as raised:
        ratings(connect(ingest(tmp_path / "wider", [table(MOST_SEATS + 1, "game_wide")])), bootstrap=5)
    assert str(raised.value) == (
        f"game game_wide ended with {MOST_SEATS + 1} players in its final state; ratings "
        f"take games of at most {MOST_SEATS} (a Damage table seats 2 to 10)"
    )
