"""Plackett-Luce ratings (Weng & Lin 2011, JMLR 12:267, Algorithm 4), the model and
defaults of the `openskill` package, computed over many orders of the same games at once.

A rating bootstrap rates hundreds of resamples of the games, each game after game. The
`openskill` package rates one game per call and copies every rating it touches (and
draws a fresh id for each), which is slow over hundreds of resamples. Here the resamples
advance together, one game each per step, as numpy arrays: every step gathers the
ratings of the teams of each resample's game, updates them, and writes them back.
`tests/damage/test_plackett_luce.py` holds the results equal to openskill's, game by
game, ties included.

As in openskill 6 with one player per team: before a game each sigma grows by tau
(sigma^2 + tau^2); c^2 is the sum over the game's teams of sigma^2 + beta^2; a team's
mu moves by sigma^2 / c times the sum, over the teams placed no better than it, of
(1 if it is that team else 0) minus its share exp(mu / c) of those teams' total, each
divided by the number of teams tied there; sigma shrinks by the square root of
1 - delta (at least kappa), with gamma = sigma / c. openskill averages the move of tied
teams over them, but applies it to ratings it has already moved, which leaves each
team's own move; so does this.
"""

from __future__ import annotations

import numpy as np

MU = 25.0
SIGMA = MU / 3
BETA = MU / 6
KAPPA = 0.0001
TAU = MU / 300


def games_as_arrays(games: list[dict[str, float]], teams: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per game (rows) and seat in it (columns, padded): the team's index into `teams`
    (len(teams) where padded), its rank (dense, 0 first; equal places share one), and
    whether the seat is a team."""
    width = max(len(game) for game in games)
    index = np.full((len(games), width), len(teams), dtype=np.int64)
    ranks = np.zeros((len(games), width), dtype=np.int64)
    seated = np.zeros((len(games), width), dtype=bool)
    position = {team: i for i, team in enumerate(teams)}
    for row, game in enumerate(games):
        places = sorted(set(game.values()))
        for column, (team, place) in enumerate(game.items()):
            index[row, column], ranks[row, column] = position[team], places.index(place)
            seated[row, column] = True
    return index, ranks, seated


def rate(games: list[dict[str, float]], teams: list[str], orders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """mu and sigma of every team (columns) after rating the games in each order given
    (rows of `orders`: indexes into `games`, rated left to right); a team in no game of
    an order keeps the prior."""
    index, ranks, seated = games_as_arrays(games, teams)
    rounds = orders.shape[0]
    mu = np.full((rounds, len(teams) + 1), MU)
    sigma = np.full((rounds, len(teams) + 1), SIGMA)
    rows = np.arange(rounds)[:, None]
    for step in range(orders.shape[1]):
        game = orders[:, step]
        at, rank, seat = index[game], ranks[game], seated[game]
        new_mu, new_sigma = _update(mu[rows, at], sigma[rows, at], rank, seat)
        picked = np.broadcast_to(rows, at.shape)[seat]
        mu[picked, at[seat]] = new_mu[seat]
        sigma[picked, at[seat]] = new_sigma[seat]
    return mu[:, :-1], sigma[:, :-1]


def _update(mu: np.ndarray, sigma: np.ndarray, rank: np.ndarray, seat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One game per row: the teams' (columns) new mu and sigma."""
    variance = sigma**2 + TAU**2
    sigma = np.sqrt(variance)
    c = np.sqrt(np.where(seat, variance + BETA**2, 0).sum(axis=1))[:, None]
    strength = np.where(seat, np.exp(mu / c), 0)
    # [row, i, q]: team i placed at or behind team q (rank_i >= rank_q). q's normaliser sums
    # the strength of every team at or behind q; team i's update runs over every q it is
    # at or behind, each divided by the number of teams tied with q.
    behind = (rank[:, :, None] >= rank[:, None, :]) & seat[:, :, None] & seat[:, None, :]
    sum_q = np.where(seat, np.einsum("ri,riq->rq", strength, behind.astype(float)), 1.0)
    tied = ((rank[:, :, None] == rank[:, None, :]) & seat[:, None, :]).sum(axis=2)
    counts = behind / np.where(seat, tied, 1)[:, None, :]
    share = strength[:, :, None] / sum_q[:, None, :]
    own = np.eye(rank.shape[1], dtype=bool)[None, :, :]
    omega = ((own - share) * counts).sum(axis=2) * variance / c
    delta = (share * (1 - share) * counts).sum(axis=2) * variance / c**2 * (sigma / c)
    return mu + omega, sigma * np.sqrt(np.maximum(1 - delta, KAPPA))
