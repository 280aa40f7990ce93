"""Altair figures over a workbench database. Each function takes a DuckDB connection
(or the frames a format's queries return), aggregates in DuckDB, and returns a chart
that composes with `+`, `|` and `&`; `save` writes it by file suffix.

A figure's module, and Altair with it, is imported when the figure is first asked for:
`workbench plot emotions` loads no other figure's format, and a command that draws
nothing loads no Altair."""

from __future__ import annotations

import importlib

# The module of `workbench.plots` each public function lives in.
HOMES = {
    "emotion_trajectories": "emotions", "economy_nets": "economy", "budget_breakdown": "budget",
    "attack_heatmap": "attacks", "event_study_chart": "attacks", "scorecard": "validity",
    "decision_quality": "decisions", "family_matrix_chart": "families", "step_times_chart": "traces",
    "save": "export",
}

__all__ = [*HOMES, "FIGURES", "figure"]


def __getattr__(name: str):
    if name not in HOMES:
        raise AttributeError(f"module 'workbench.plots' has no attribute {name!r}")
    return getattr(importlib.import_module(f"workbench.plots.{HOMES[name]}"), name)


# The figures `workbench plot KIND` and the demo know, by kind. Each takes the
# connection, an optional game id and aliases (each ignored where it does not apply:
# aliases name models in the charts that compare them).
FIGURES = {
    "emotions": lambda con, game_id=None, aliases=None: __getattr__("emotion_trajectories")(con, game_id),
    "economy": lambda con, game_id=None, aliases=None: __getattr__("economy_nets")(con),
    "budget": lambda con, game_id=None, aliases=None: __getattr__("budget_breakdown")(con),
    "scorecard": lambda con, game_id=None, aliases=None: __getattr__("scorecard")(con, aliases=aliases),
    "decisions": lambda con, game_id=None, aliases=None: __getattr__("decision_quality")(con, aliases=aliases),
    "attacks": lambda con, game_id=None, aliases=None: __getattr__("attack_heatmap")(con, game_id),
    "attack-study": lambda con, game_id=None, aliases=None: __getattr__("event_study_chart")(con, game_id),
    "families": lambda con, game_id=None, aliases=None: __getattr__("family_matrix_chart")(con, strict=True),
    "trace-steps": lambda con, game_id=None, aliases=None: __getattr__("step_times_chart")(con, strict=True),
}


def figure(kind: str, con, game_id: str | None = None, aliases=None):
    """A figure by its kind, as `workbench plot KIND` and the demo draw it.

    The EC4X family matrix and the trace step times are drawn strict: with no data they
    raise rather than draw a note.

    Args:
        kind: one of `FIGURES`: `emotions`, `economy`, `budget`, `scorecard`, `decisions`,
            `attacks`, `attack-study`, `families`, `trace-steps`.
        con: a connection to a workbench database.
        game_id: the game of `emotions`, `attacks` and `attack-study` (None: the one with
            most events); ignored by the others.
        aliases: a dict, or a JSON or CSV file, mapping names to one model, for the charts
            that compare models (`scorecard`, `decisions`); ignored by the others.

    Returns:
        The Altair chart of that kind's function (`emotion_trajectories`, `economy_nets`,
        `budget_breakdown`, `scorecard`, `decision_quality`, `attack_heatmap`,
        `event_study_chart`, `family_matrix_chart`, `step_times_chart`).

    Raises:
        WorkbenchError: an unknown `kind`, or what that figure's function raises.
    """
    from workbench.errors import WorkbenchError

    if kind not in FIGURES:
        raise WorkbenchError(f"unknown figure {kind!r}; choose one of: {', '.join(FIGURES)}")
    return FIGURES[kind](con, game_id, aliases)
