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

The 95% interval of `mu` is a bootstrap over games alone: the games are resampled with
replacement and rated again, and the interval is mu plus and minus about two standard
deviations of a model's mu over the resamples (Student's t at games - 1). (Adding the rating's own `sigma` on top, each resample's mu drawn from
N(mu, sigma^2), counted the same uncertainty twice: in simulation those intervals held
99.5-100% and were 3.4-4.3 standard deviations of mu wide; `python -m bench.coverage`
shows the bootstrap alone.) The same resamples give each model's rank interval
(`rank_low`, `rank_high`: the middle 95% of its rank by mu) and `tied`: models whose
rank intervals reach the best of their group cannot be told apart and share its
label. Resampling games cannot show the uncertainty of a model seen in one game (every
resample holds that game), so a model with fewer than MIN_RATED_GAMES rated games gets
no interval and says so.

Only Damage logs record who placed where. EC4X traces, Arena decision logs and GM
responses record no placement or outcome per model, and a Stellaris save has one player:
there is nothing to rate there.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy.special import stdtrit

from workbench.connection import holder, query_frame
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


# A Damage table seats 2 to 10. Rating a game takes memory with the square of its seats
# (every seat against every other, in every resample): a final state listing thousands
# of players is refused in one line rather than take the machine's memory.
MOST_SEATS = 256
WIDEST_GAME = """
SELECT game_id, CAST(json_array_length(json_extract(payload, '$.final_state')) AS BIGINT) AS seats
FROM damage_events WHERE type = 'game_ended' ORDER BY seats DESC NULLS LAST, game_id LIMIT 1
"""


def _check_seats(con) -> None:
    widest = query_frame(con, WIDEST_GAME)
    if not widest.is_empty() and (widest["seats"][0] or 0) > MOST_SEATS:
        raise WorkbenchError(
            f"game {widest['game_id'][0]} ended with {widest['seats'][0]:,} players in its final "
            f"state; ratings take games of at most {MOST_SEATS} (a Damage table seats 2 to 10)"
        )


def ratings(
    con, by: str = "model", bootstrap: int = BOOTSTRAP, seed: int = 0, aliases=None, failures: str = "exclude"
) -> pl.DataFrame:
    """Damage placements as Plackett-Luce ratings per model (or seat, or player) with
    95% intervals from a bootstrap over games, rank intervals and tied groups; none below
    3 rated games.

    Args:
        con: a connection to a workbench database, or a Parquet tree open on Spark.
        by: who is rated: `model`, `seat` or `player`.
        bootstrap: how many resamples of the games the interval is drawn from.
        seed: the random seed of the resampling (the same seed, the same intervals).
        aliases: a dict, or a JSON or CSV file, mapping names to one model (`by="model"`).
        failures: `exclude`: a player's model is the one most of its answered decisions
            name; `invalid`: of all its calls, failed ones too.

    Returns:
        A polars DataFrame, one row per model (seat, player), by rank: the `by` column,
        `games`, `rated_games` (with at least one other team), `placements` (every place
        its seats took, in the order the games ended), `wins`, `mean_place`, `mu`, `sigma`,
        `ordinal` (mu - 3 sigma), `mu_low`, `mu_high` (the 95% interval; NULL below 3 rated
        games), `rank` (by ordinal), `rank_low`, `rank_high` (the ranks it could hold),
        `tied` (the rank of the best model it cannot be told apart from) and `note` ("too
        few games ...").

    Raises:
        WorkbenchError: an unknown `by`, no finished Damage game, or none with two of `by`
            to rank.
    """
    if by not in BY:
        raise WorkbenchError(f"cannot rate by {by!r}; use one of: {', '.join(BY)}")
    _check_seats(con)
    placed = placements(con, failures)
    if placed.is_empty():
        raise WorkbenchError(f"no finished Damage game in {holder(con)} (none has a game_ended event)")
    names = read_aliases(aliases)
    if names:
        placed = placed.with_columns(model=pl.col("model").replace(names))
    placed = placed.with_columns(team=_team(by)).filter(pl.col("team").is_not_null())  # no name: nobody to rate
    games = _games(placed)
    if not games:
        raise WorkbenchError(f"no finished Damage game has two {by}s to rank against each other")
    teams = sorted(placed["team"].unique().to_list())
    mu, sigma = _rate(games, teams)
    rated_games = [sum(team in g for g in games) for team in teams]
    low, high, rank_low, rank_high = _bootstrap(games, teams, bootstrap, seed)
    few = [count < MIN_RATED_GAMES for count in rated_games]
    frame = placed.group_by("team").agg(
        games=pl.col("game_id").n_unique(),
        placements=pl.col("place"),
        wins=pl.col("won").sum(),
        mean_place=pl.col("place").mean(),
    )
    rated = pl.DataFrame(
        {
            "team": teams,
            "rated_games": rated_games,
            "mu": mu,
            "sigma": sigma,
            "mu_low": [None if f else x for f, x in zip(few, low)],
            "mu_high": [None if f else x for f, x in zip(few, high)],
            "rank_low": [None if f else x for f, x in zip(few, rank_low)],
            "rank_high": [None if f else x for f, x in zip(few, rank_high)],
            "note": [
                f"too few games ({count} rated; an interval needs {MIN_RATED_GAMES})" if f else None
                for f, count in zip(few, rated_games)
            ],
        },
        schema_overrides={
            "mu_low": pl.Float64,
            "mu_high": pl.Float64,
            "rank_low": pl.Int64,
            "rank_high": pl.Int64,
            "note": pl.String,
        },
    )
    frame = frame.join(rated, on="team").with_columns(ordinal=pl.col("mu") - 3 * pl.col("sigma"))
    frame = frame.sort(["ordinal", "team"], descending=[True, False]).with_row_index("rank", offset=1)
    # the rank interval holds the rank itself (ranked by ordinal, the resamples by mu)
    frame = frame.with_columns(rank=pl.col("rank").cast(pl.Int64)).with_columns(
        rank_low=pl.min_horizontal("rank_low", "rank"), rank_high=pl.max_horizontal("rank_high", "rank")
    )
    frame = frame.with_columns(
        rank_low=pl.when(pl.col("note").is_null()).then("rank_low"),
        rank_high=pl.when(pl.col("note").is_null()).then("rank_high"),
    )
    frame = frame.with_columns(
        tied=pl.Series(
            tied_groups(frame["rank"].to_list(), frame["rank_low"].to_list(), frame["rank_high"].to_list()),
            dtype=pl.Int64,
        )
    )
    return frame.rename({"team": by}).select(
        by,
        "games",
        "rated_games",
        "placements",
        "wins",
        "mean_place",
        "mu",
        "sigma",
        "ordinal",
        "mu_low",
        "mu_high",
        "rank",
        "rank_low",
        "rank_high",
        "tied",
        "note",
    )


def _team(by: str) -> pl.Expr:
    return {"model": pl.col("model"), "player": pl.col("player_id"), "seat": pl.format("seat {}", pl.col("seat"))}[by]


def _games(placed: pl.DataFrame) -> list[dict[str, float]]:
    """Per game, in the order they ended: team -> its mean place (games with one team left out)."""
    per_game = placed.group_by("game_id", "team", maintain_order=True).agg(
        ended_at=pl.col("ended_at").first(), place=pl.col("place").mean()
    )
    games = []
    for _, game in per_game.sort("ended_at", "game_id", maintain_order=True).group_by("game_id", maintain_order=True):
        if game.height >= 2:
            games.append(dict(zip(game["team"].to_list(), game["place"].to_list())))
    return games


def _rate(games: list[dict[str, float]], teams: list[str]) -> tuple[list[float], list[float]]:
    mu, sigma = plackett_luce.rate(games, teams, np.arange(len(games))[None, :])
    return mu[0].tolist(), sigma[0].tolist()


def _bootstrap(games, teams, rounds: int, seed: int) -> tuple[list, list, list, list]:
    """The 95% interval of each team's mu and of its rank: games resampled with
    replacement (kept in the order they ended) and rated again; mu plus and minus t
    (games - 1 degrees of freedom) times sqrt(games / (games - 1)) standard deviations of
    the team's mu over the resamples (the bootstrap's standard error, Efron & Tibshirani
    1993, ch. 13; the percentiles themselves are off centre: a resample rated in order holds
    duplicates, which shift its ratings, so the percentiles themselves are off centre
    and held 92% in simulation), and the middle 95% of its rank among the teams (1 =
    the highest mu) in them. A team absent from a resample has no value there."""
    if rounds < 1:
        return [None] * len(teams), [None] * len(teams), [None] * len(teams), [None] * len(teams)
    rng = np.random.default_rng(seed)
    orders = np.sort(rng.integers(0, len(games), size=(rounds, len(games))), axis=1)
    mu, _ = plackett_luce.rate(games, teams, orders)
    index, _, seated = plackett_luce.games_as_arrays(games, teams)
    present = np.zeros((rounds, len(teams) + 1), dtype=bool)
    np.put_along_axis(present, np.where(seated[orders], index[orders], len(teams)).reshape(rounds, -1), True, axis=1)
    present = present[:, :-1]
    draws = np.where(present, mu, np.nan)
    # a team's rank in a resample: 1 + the teams present there with a higher mu
    ranks = 1 + (present[:, None, :] & (mu[:, None, :] > mu[:, :, None])).sum(axis=2)
    ranks = np.where(present, ranks, np.nan)
    tail = (1 - LEVEL) / 2
    # Student's t at games - 1 degrees of freedom and the small-sample factor games /
    # (games - 1) of a variance measured over that many games (as CR1's)
    z = float(stdtrit(max(len(games) - 1, 1), 1 - tail)) * np.sqrt(len(games) / max(len(games) - 1, 1))
    rated, _ = _rate(games, teams)
    low, high, rank_low, rank_high = [], [], [], []
    for centre, column, places in zip(rated, draws.T, ranks.T):
        seen, placed = column[~np.isnan(column)], places[~np.isnan(places)]
        spread = float(seen.std(ddof=1)) if seen.size > 1 else None
        low.append(None if spread is None else centre - z * spread)
        high.append(None if spread is None else centre + z * spread)
        rank_low.append(int(np.quantile(placed, tail, method="lower")) if placed.size else None)
        rank_high.append(int(np.quantile(placed, 1 - tail, method="higher")) if placed.size else None)
    return low, high, rank_low, rank_high


def tied_groups(ranks: list[int], lows: list, highs: list) -> list[int]:
    """Per team, in rank order: the group of teams that cannot be told apart. A group
    starts at the best team not yet in one and takes every team after it whose rank
    interval reaches the first's (rank_low at most the first's rank_high); its label is
    the first's rank. A team with no rank interval is a group of its own."""
    groups: list[int] = []
    first = None
    for rank, low, high in zip(ranks, lows, highs):
        if first is None or low is None or first[1] is None or low > first[1]:
            first = (rank, high)
        groups.append(first[0])
    return groups


def ratings_in_words(table: pl.DataFrame, by: str = "model") -> list[str]:
    """The ratings `table` (of `ratings`, rated by `by`) in lines: each model (seat,
    player) with its rank, the ranks it could hold and its rating's interval, the models
    that cannot be told apart indented under one line that says so."""
    lines = [
        f"Damage {by}s by Plackett-Luce rating (95% intervals from a bootstrap over games; "
        "a group cannot be told apart):"
    ]
    for group in table.partition_by("tied", maintain_order=True):
        if group.height > 1:
            lines.append(f"  tied, ranks {group['rank'].min()!s}-{group['rank'].max()!s}: cannot be told apart")
        indent = "    " if group.height > 1 else "  "
        lines.extend(indent + _rating_in_words(row, by) for row in group.iter_rows(named=True))
    return lines


def _rating_in_words(row: dict, by: str) -> str:
    games = f"{row['games']} game" + ("s" if row["games"] != 1 else "")
    said = f"{row['rank']}. {row[by]}: mu {row['mu']:.1f}"
    if row["mu_low"] is None:
        said += f" (no interval: {row['note']})" if row["note"] else " (no interval)"
    else:
        said += (
            f" (95% CI {row['mu_low']:.1f}-{row['mu_high']:.1f}), rank {row['rank_low']}-{row['rank_high']} possible"
        )
    return said + f", {games}, {row['wins']} won, mean place {row['mean_place']:.2f}"
