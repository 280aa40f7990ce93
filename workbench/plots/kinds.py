"""The figures by kind: what `workbench plot KIND`, the demo and the report draw.

A figure's module marks its public function with `@figure_kind("KIND", ...)`, which
records the kind, the function and what it takes; nothing else names the figure. The
kinds are found by importing every module of `workbench.plots` (`figures`), as a
gallery finds its charts, when a figure is first asked for: a figure's module imports
its format, and the analyses, inside the function that reads them, so importing them
all loads no format (`workbench plot emotions` loads only Damage's) and no Altair."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.plots.vega import FigureFunction


_MARKED: dict[str, Figure] = {}


@dataclass(frozen=True)
class Figure:
    """A figure as `workbench plot KIND` draws it: `function` (an `altair_figure`, whose
    `.spec` writes the spec) called with the connection and what it takes of the rest.

    Attributes:
        kind: the name `workbench plot` takes.
        function: the figure's public function.
        order: where the figure comes among the others (in `workbench plot --help`, the
            demo and the report): the lower first.
        takes_game: it draws one game: `game_id` (None: the one with most events).
        takes_aliases: it compares models: `aliases` names those that are one.
        strict: with no data it raises rather than draws a note.
        across_games: it compares across games, so it is drawn from a Parquet tree on
            Spark too (the others look into single games or one format's own tables).
    """

    kind: str
    function: FigureFunction
    order: int
    takes_game: bool = False
    takes_aliases: bool = False
    strict: bool = False
    across_games: bool = False

    def __call__(self, con, game_id: str | None = None, aliases=None) -> dict:
        """The figure's Vega-Lite spec; `game_id` and `aliases` are each ignored where
        the figure does not take them."""
        given: dict[str, Any] = {"game_id": game_id} if self.takes_game else {}
        given |= {"aliases": aliases} if self.takes_aliases else {}
        given |= {"strict": True} if self.strict else {}
        return self.function.spec(con, **given)


def figure_kind(
    kind: str,
    *,
    order: int,
    takes_game: bool = False,
    takes_aliases: bool = False,
    strict: bool = False,
    across_games: bool = False,
) -> Callable[[FigureFunction], FigureFunction]:
    """Marks a figure's public function (an `altair_figure`) as the figure `kind`; the
    function is returned as it is. The arguments are `Figure`'s."""

    def mark(function: FigureFunction) -> FigureFunction:
        found = _MARKED.get(kind)
        if found is not None and _named(found.function) != _named(function):
            raise ValueError(f"figure kind {kind!r} is marked twice: {_named(found.function)} and {_named(function)}")
        _MARKED[kind] = Figure(kind, function, order, takes_game, takes_aliases, strict, across_games)
        return function

    return mark


def _named(function: FigureFunction) -> str:
    return f"{function.__module__}.{function.__qualname__}"


@functools.cache
def figures() -> dict[str, Figure]:
    """Every figure by its kind, in their order: each module of `workbench.plots` is
    imported once, and marks its own."""
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        importlib.import_module(f"{__package__}.{module.name}")
    return dict(sorted(_MARKED.items(), key=lambda item: item[1].order))
