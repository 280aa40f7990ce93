"""Our Plackett-Luce ratings equal the `openskill` package's (its PlackettLuce model with
its defaults), game by game, on games of two to six teams with ties, and over many
orders at once as the bootstrap rates them."""

import numpy as np
import pytest
from openskill.models import PlackettLuce

from workbench.damage.plackett_luce import MU, SIGMA, games_as_arrays, rate


def random_games(seed: int, teams: list[str], count: int) -> list[dict[str, float]]:
    rng = np.random.default_rng(seed)
    games = []
    for _ in range(count):
        chosen = rng.choice(len(teams), size=int(rng.integers(2, min(6, len(teams)) + 1)), replace=False)
        games.append({teams[i]: float(rng.integers(1, 4)) / 2 for i in chosen})  # places 0.5-1.5: ties often
    return games


def openskill_ratings(games: list[dict[str, float]], teams: list[str]) -> tuple[list[float], list[float]]:
    """The oracle: openskill, one game per call, each game's places as ranks 0, 1, ..."""
    model = PlackettLuce()
    current = {team: model.rating(name=team) for team in teams}
    for game in games:
        names, places = list(game), sorted(set(game.values()))
        rated = model.rate([[current[name]] for name in names], ranks=[places.index(game[name]) for name in names])
        current.update({name: rating for name, [rating] in zip(names, rated)})
    return [current[t].mu for t in teams], [current[t].sigma for t in teams]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_ratings_equal_openskills_game_by_game(seed):
    teams = [f"model-{i}" for i in range(8)]
    games = random_games(seed, teams, 60)
    mu, sigma = rate(games, teams, np.arange(len(games))[None, :])
    expected_mu, expected_sigma = openskill_ratings(games, teams)
    assert mu[0] == pytest.approx(expected_mu, abs=1e-9) and sigma[0] == pytest.approx(expected_sigma, abs=1e-9)


def test_many_orders_at_once_equal_each_order_rated_alone():
    teams = ["a", "b", "c", "d", "e"]
    games = random_games(7, teams, 25)
    orders = np.sort(np.random.default_rng(5).integers(0, len(games), size=(6, len(games))), axis=1)
    mu, sigma = rate(games, teams, orders)
    for row, order in enumerate(orders):
        expected_mu, expected_sigma = openskill_ratings([games[i] for i in order], teams)
        assert mu[row] == pytest.approx(expected_mu, abs=1e-9)
        assert sigma[row] == pytest.approx(expected_sigma, abs=1e-9)


def test_a_team_in_no_game_keeps_the_prior_and_a_win_moves_both_teams():
    mu, sigma = rate([{"a": 1.0, "b": 2.0}], ["a", "b", "idle"], np.array([[0]]))
    assert (mu[0, 2], sigma[0, 2]) == (MU, SIGMA)
    assert mu[0, 0] > MU > mu[0, 1] and mu[0, 0] - MU == pytest.approx(MU - mu[0, 1])
    assert sigma[0, 0] < SIGMA and sigma[0, 1] < SIGMA


def test_places_become_dense_ranks_with_ties_shared():
    index, ranks, seated = games_as_arrays([{"a": 2.5, "b": 1.0, "c": 2.5}, {"c": 1.0, "a": 1.5}], ["a", "b", "c"])
    assert index.tolist() == [[0, 1, 2], [2, 0, 3]]
    assert ranks[0].tolist() == [1, 0, 1] and ranks[1, :2].tolist() == [0, 1]
    assert seated.tolist() == [[True, True, True], [True, True, False]]
