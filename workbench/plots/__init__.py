"""Altair figures over a workbench database. Each function takes a DuckDB connection,
aggregates in DuckDB, and returns a chart that composes with `+`, `|` and `&`; `save`
writes it by file suffix.

Each figure is written as a Vega-Lite spec (`workbench.plots.vega`): its function's
`.spec` returns that spec, which `save` writes with no Altair, and the function itself
the Altair chart of it. A figure's module is imported when the figure is first asked
for, so `workbench plot emotions` loads no other figure's format, and neither it nor
`workbench report` nor a command that draws nothing loads Altair."""

from __future__ import annotations

import importlib

# The module of `workbench.plots` each public function lives in.
HOMES = {
    "emotion_trajectories": "emotions", "economy_nets": "economy", "budget_breakdown": "budget",
    "attack_heatmap": "attacks", "event_study_chart": "attacks", "scorecard": "validity",
    "decision_quality": "decisions", "family_matrix_chart": "families", "step_times_chart": "traces",
    "play_quality_chart": "play",
    "save": "files",
}

__all__ = [*HOMES, "FIGURES", "figure", "figure_spec"]


def __getattr__(name: str):
    if name not in HOMES:
        raise AttributeError(f"module 'workbench.plots' has no attribute {name!r}")
    return getattr(importlib.import_module(f"workbench.plots.{HOMES[name]}"), name)


def _spec(name: str):
    return __getattr__(name).spec


# The figures `workbench plot KIND`, the demo and the report draw, by kind: each writes
# its spec from the connection, an optional game id and aliases (each ignored where it
# does not apply: aliases name models in the charts that compare them).
FIGURES = {
    "emotions": lambda con, game_id=None, aliases=None: _spec("emotion_trajectories")(con, game_id),
    "economy": lambda con, game_id=None, aliases=None: _spec("economy_nets")(con),
    "budget": lambda con, game_id=None, aliases=None: _spec("budget_breakdown")(con),
    "scorecard": lambda con, game_id=None, aliases=None: _spec("scorecard")(con, aliases=aliases),
    "decisions": lambda con, game_id=None, aliases=None: _spec("decision_quality")(con, aliases=aliases),
    "attacks": lambda con, game_id=None, aliases=None: _spec("attack_heatmap")(con, game_id),
    "attack-study": lambda con, game_id=None, aliases=None: _spec("event_study_chart")(con, game_id),
    "families": lambda con, game_id=None, aliases=None: _spec("family_matrix_chart")(con, strict=True),
    "trace-steps": lambda con, game_id=None, aliases=None: _spec("step_times_chart")(con, strict=True),
    "play": lambda con, game_id=None, aliases=None: _spec("play_quality_chart")(con, aliases=aliases),
}


def figure(kind: str, con, game_id: str | None = None, aliases=None):
    """A figure by its kind, as `workbench plot KIND` and the demo draw it.

    The EC4X family matrix and the trace step times are drawn strict: with no data they
    raise rather than draw a note.

    Args:
        kind: one of `FIGURES`: `emotions`, `economy`, `budget`, `scorecard`, `decisions`,
            `attacks`, `attack-study`, `families`, `trace-steps`, `play`.
        con: a connection to a workbench database.
        game_id: the game of `emotions`, `attacks` and `attack-study` (None: the one with
            most events); ignored by the others.
        aliases: a dict, or a JSON or CSV file, mapping names to one model, for the charts
            that compare models (`scorecard`, `decisions`); ignored by the others.

    Returns:
        The Altair chart of that kind's function (`emotion_trajectories`, `economy_nets`,
        `budget_breakdown`, `scorecard`, `decision_quality`, `attack_heatmap`,
        `event_study_chart`, `family_matrix_chart`, `step_times_chart`, `play_quality_chart`).

    Raises:
        WorkbenchError: an unknown `kind`, or what that figure's function raises.
    """
    from workbench.plots.vega import as_altair

    return as_altair(figure_spec(kind, con, game_id, aliases))


def figure_spec(kind: str, con, game_id: str | None = None, aliases=None) -> dict:
    """The Vega-Lite spec of `figure(kind, ...)`, as a dict, written with no Altair:
    what `save` writes and `workbench plot` renders.

    Raises:
        WorkbenchError: an unknown `kind`, or what that figure's function raises.
    """
    from workbench.errors import WorkbenchError

    if kind not in FIGURES:
        raise WorkbenchError(f"unknown figure {kind!r}; choose one of: {', '.join(FIGURES)}")
    return FIGURES[kind](con, game_id, aliases)
