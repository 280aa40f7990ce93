"""Who wins Damage games: placements per game and player, and multiplayer ratings of
models (or seats, or players) with bootstrap intervals over games.

A game's places are the simulator's own ranking: at the end of a game it sorts the
players by lives, then bankroll, then tempo, highest first, and calls every player
equal to the first on all three a winner (damage-game `simulator.py`, `run`); a
tournament's `table_result.ranking` is that order. Here the same key ranks the
`game_ended.final_state`, and players equal on it share a place. A game with no
`game_ended` (still running, or cut off) has no places and is left out.

Ratings are Plackett-Luce (Weng-Lin), the model and defaults of the `openskill` package
(`plackett_luce.py`, held equal to it by the tests): each game, in the order the games
ended, updates the ratings of the teams in it. With `by="model"` a team is a model,
ranked by the mean place of its seats in that game (equal means share a rank); a game
with fewer than two teams says nothing about them and is not rated.

The 95% interval of `mu` combines both uncertainties a rating has: how much it would
move with other games (the games are resampled with replacement and rated again), and
how sure the rating itself is after those games (its `sigma`: each resample's mu is
drawn from N(mu, sigma^2)). Resampling games alone cannot show the uncertainty of a
model seen in one game (every resample holds that game), so a model with fewer than
MIN_RATED_GAMES rated games gets no interval and says so.

Only Damage logs record who placed where. EC4X traces, Arena decision logs and GM
responses record no placement or outcome per model, and a Stellaris save has one player:
there is nothing to rate there.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workbench.catalog import query_frame
from workbench.damage import plackett_luce
from workbench.errors import WorkbenchError
from workbench.naming import read_aliases
from workbench.outcomes import answered

BY = ("model", "seat", "player")
BOOTSTRAP = 500
MIN_RATED_GAMES = 3
LEVEL = 0.95

PLACEMENTS = """
WITH ended AS (
    SELECT game_id, ts, json_extract(payload, '$.final_state') AS states
    FROM damage_events WHERE type = 'game_ended' AND game_id IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY game_id ORDER BY seq DESC) = 1
),
seats AS (
    SELECT game_id, ts, unnest(range(1, CAST(json_array_length(states) AS BIGINT) + 1)) AS seat, states FROM ended
),
final AS (
    SELECT game_id, ts, seat, json_extract(states, '$[' || (seat - 1) || ']') AS state FROM seats
),
players AS (
    SELECT game_id, ts, seat, state ->> 'player_id' AS player_id,
           TRY_CAST(state ->> 'lives' AS BIGINT) AS lives, TRY_CAST(state ->> 'bankroll' AS DOUBLE) AS bankroll,
           TRY_CAST(state ->> 'tempo' AS DOUBLE) AS tempo
    FROM final
),
models AS (  -- a player's model: the one most of its decisions (answered, or all) name (a tie: the first
            -- by name), else the game's primary model
    SELECT game_id, player_id, model FROM (
        SELECT game_id, agent_id AS player_id, model,
               row_number() OVER (PARTITION BY game_id, agent_id ORDER BY count(*) DESC, model) AS rank
        FROM decisions WHERE format = 'damage' AND model IS NOT NULL AND {answered}
        GROUP BY game_id, agent_id, model)
    WHERE rank = 1
),
primary_models AS (
    SELECT game_id, any_value(payload ->> 'primary_model') AS model FROM damage_events
    WHERE type = 'game_started' GROUP BY game_id
),
tables AS (
    SELECT payload ->> 'game_id' AS game_id, any_value(payload ->> 'tournament_id') AS tournament_id
    FROM damage_events WHERE type = 'table_result' GROUP BY ALL
)
SELECT p.game_id, t.tournament_id, p.ts AS ended_at, p.seat, p.player_id,
       coalesce(m.model, g.model, '(unknown)') AS model,
       CAST(rank() OVER (PARTITION BY p.game_id ORDER BY p.lives DESC NULLS LAST, p.bankroll DESC NULLS LAST,
                    p.tempo DESC NULLS LAST) AS BIGINT) AS place,
       p.lives, p.bankroll, p.tempo
FROM players p
LEFT JOIN models m USING (game_id, player_id)
LEFT JOIN primary_models g USING (game_id)
LEFT JOIN tables t USING (game_id)
ORDER BY p.ts, p.game_id, p.seat
"""


def placements(con, failures: str = "exclude") -> pl.DataFrame:
    """One row per finished game and player: game_id, tournament_id (when a
    tournament's table), ended_at, seat (1-based, as the final state lists them),
    player_id, model (the one most of its answered decisions name; `failures="invalid"`:
    of all its calls), place (1 = won; equal players share a place), won, lives,
    bankroll, tempo."""
    frame = query_frame(con, PLACEMENTS.replace("{answered}", answered(failures)))
    return frame.with_columns(won=pl.col("place") == 1)


def ratings(con, by: str = "model", bootstrap: int = BOOTSTRAP, seed: int = 0, aliases=None,
            failures: str = "exclude") -> pl.DataFrame:
    """Per model (or `by="seat"`, `by="player"`): games played, games rated (with at
    least one other team), placements (every place its seats took, game by game in the
    order they ended), wins, mean place, the Plackett-Luce rating (mu, sigma,
    ordinal = mu - 3 sigma), its 95% interval (mu_low, mu_high: `bootstrap` resamples
    of the games, each rating drawn with its own sigma; reproducible with `seed`), the
    rank by ordinal, and `note` ("too few games" below MIN_RATED_GAMES rated games,
    which get no interval). `aliases` maps names to one model (by="model"); a player's
    model is read from its answered decisions (`failures="invalid"`: from all its calls)."""
    if by not in BY:
        raise WorkbenchError(f"cannot rate by {by!r}; use one of: {', '.join(BY)}")
    placed = placements(con, failures)
    if placed.is_empty():
        raise WorkbenchError("no finished Damage game in this database (none has a game_ended event)")
    names = read_aliases(aliases)
    if names:
        placed = placed.with_columns(model=pl.col("model").replace(names))
    placed = placed.with_columns(team=_team(by))
    games = _games(placed)
    if not games:
        raise WorkbenchError(f"no finished Damage game has two {by}s to rank against each other")
    teams = sorted(placed["team"].unique().to_list())
    mu, sigma = _rate(games, teams)
    rated_games = [sum(team in g for g in games) for team in teams]
    low, high = _bootstrap(games, teams, bootstrap, seed)
    few = [count < MIN_RATED_GAMES for count in rated_games]
    frame = placed.group_by("team").agg(
        games=pl.col("game_id").n_unique(), placements=pl.col("place"), wins=pl.col("won").sum(),
        mean_place=pl.col("place").mean())
    rated = pl.DataFrame({
        "team": teams, "rated_games": rated_games, "mu": mu, "sigma": sigma,
        "mu_low": [None if f else x for f, x in zip(few, low)], "mu_high": [None if f else x for f, x in zip(few, high)],
        "note": [f"too few games ({count} rated; an interval needs {MIN_RATED_GAMES})" if f else None
                 for f, count in zip(few, rated_games)],
    }, schema_overrides={"mu_low": pl.Float64, "mu_high": pl.Float64, "note": pl.String})
    frame = frame.join(rated, on="team").with_columns(ordinal=pl.col("mu") - 3 * pl.col("sigma"))
    frame = frame.sort(["ordinal", "team"], descending=[True, False]).with_row_index("rank", offset=1)
    return frame.rename({"team": by}).select(
        by, "games", "rated_games", "placements", "wins", "mean_place", "mu", "sigma", "ordinal", "mu_low", "mu_high",
        "rank", "note")


def _team(by: str) -> pl.Expr:
    return {"model": pl.col("model"), "player": pl.col("player_id"),
            "seat": pl.format("seat {}", pl.col("seat"))}[by]


def _games(placed: pl.DataFrame) -> list[dict[str, float]]:
    """Per game, in the order they ended: team -> its mean place (games with one team left out)."""
    per_game = placed.group_by("game_id", "team", maintain_order=True).agg(
        ended_at=pl.col("ended_at").first(), place=pl.col("place").mean())
    games = []
    for _, game in per_game.sort("ended_at", "game_id", maintain_order=True).group_by("game_id", maintain_order=True):
        if game.height >= 2:
            games.append(dict(zip(game["team"].to_list(), game["place"].to_list())))
    return games


def _rate(games: list[dict[str, float]], teams: list[str]) -> tuple[list[float], list[float]]:
    mu, sigma = plackett_luce.rate(games, teams, np.arange(len(games))[None, :])
    return mu[0].tolist(), sigma[0].tolist()


def _bootstrap(games, teams, rounds: int, seed: int) -> tuple[list, list]:
    """The 95% interval of each team's mu: games resampled with replacement (kept in the
    order they ended) and rated again, each resample's mu drawn from N(mu, sigma^2) of
    that rating; the percentiles of those draws. A team absent from a resample keeps no
    value there."""
    if rounds < 1:
        return [None] * len(teams), [None] * len(teams)
    rng = np.random.default_rng(seed)
    orders = np.sort(rng.integers(0, len(games), size=(rounds, len(games))), axis=1)
    mu, sigma = plackett_luce.rate(games, teams, orders)
    index, _, seated = plackett_luce.games_as_arrays(games, teams)
    present = np.zeros((rounds, len(teams) + 1), dtype=bool)
    np.put_along_axis(present, np.where(seated[orders], index[orders], len(teams)).reshape(rounds, -1), True, axis=1)
    draws = np.where(present[:, :-1], mu + sigma * rng.standard_normal(mu.shape), np.nan)
    tail = (1 - LEVEL) / 2
    low, high = [], []
    for column in draws.T:
        seen = column[~np.isnan(column)]
        bounds = np.quantile(seen, [tail, 1 - tail]).tolist() if seen.size else [None, None]
        low.append(bounds[0])
        high.append(bounds[1])
    return low, high
