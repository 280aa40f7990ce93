"""Pick a Damage game in a notebook: `GamePicker(db)`, the game, its players and a
range of its log lines, kept in step."""

from __future__ import annotations

import polars as pl

from workbench.connection import reading
from workbench.damage import queries


class GamePicker:
    """A game (largest first), its players, and two lines of its log to compare, kept
    in step when the game changes. `.box` lays them out.

    `.game` is a Dropdown of the Damage games, `.players` a SelectMultiple of the game's
    players in seat order (all selected), `.lines` an IntRangeSlider over the game's log
    lines, set from the first hand's line to the last line; `.box` leaves `.lines` out,
    for the notebook to place where positions are compared.

    Args:
        db: a database path or a connection (only read).

    Raises:
        WorkbenchError: no Damage game in the database.
    """

    def __init__(self, db):
        import ipywidgets as widgets

        self._db = db
        with reading(db) as con:
            self._games = queries.existing_games(con)
        self.game = widgets.Dropdown(
            options=self._games["game_id"].to_list(), description="game", layout=widgets.Layout(width="420px")
        )
        self.players = widgets.SelectMultiple(description="players", rows=6)
        self.lines = widgets.IntRangeSlider(
            description="lines", continuous_update=False, layout=widgets.Layout(width="640px")
        )
        self.game.observe(lambda change: self._load(change["new"]), names="value")
        self._load(self.game.value)
        self.box = widgets.HBox([self.game, self.players])  # `lines` goes where positions are compared

    def _load(self, game_id: str) -> None:
        with reading(self._db) as con:
            players = queries.game_players(con, game_id)
        row = self._games.filter(pl.col("game_id") == game_id).row(0, named=True)
        self.players.options = players
        self.players.value = tuple(players)
        # Widen before narrowing so the slider never holds min > max in between.
        self.lines.max = max(self.lines.max, row["last_line"])
        self.lines.min = 1
        self.lines.value = (row["first_hand_line"] or 1, row["last_line"])
        self.lines.max = row["last_line"]
