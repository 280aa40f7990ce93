"""Altair figures over a workbench database. Each function takes a DuckDB connection
(or the frames a format's queries return), aggregates in DuckDB, and returns a chart
that composes with `+`, `|` and `&`; `save` writes it by file suffix."""

from __future__ import annotations

from workbench.plots.attacks import attack_heatmap, event_study_chart
from workbench.plots.budget import budget_breakdown
from workbench.plots.decisions import decision_quality, family_matrix_chart
from workbench.plots.economy import economy_nets
from workbench.plots.emotions import emotion_trajectories
from workbench.plots.export import save
from workbench.plots.scorecard import scorecard
from workbench.plots.traces import step_times_chart

__all__ = [
    "emotion_trajectories", "economy_nets", "budget_breakdown", "attack_heatmap", "event_study_chart", "scorecard", "decision_quality", "family_matrix_chart", "step_times_chart", "save", "FIGURES", "figure",
]

# The figures `workbench plot KIND` and the demo know, by kind. Each takes the
# connection, an optional game id and aliases (each ignored where it does not apply:
# aliases name models in the charts that compare them).
FIGURES = {
    "emotions": lambda con, game_id=None, aliases=None: emotion_trajectories(con, game_id),
    "economy": lambda con, game_id=None, aliases=None: economy_nets(con),
    "budget": lambda con, game_id=None, aliases=None: budget_breakdown(con),
    "scorecard": lambda con, game_id=None, aliases=None: scorecard(con, aliases=aliases),
    "decisions": lambda con, game_id=None, aliases=None: decision_quality(con, aliases=aliases),
    "attacks": lambda con, game_id=None, aliases=None: attack_heatmap(con, game_id),
    "attack-study": lambda con, game_id=None, aliases=None: event_study_chart(con, game_id),
    "families": lambda con, game_id=None, aliases=None: family_matrix_chart(con, strict=True),
    "trace-steps": lambda con, game_id=None, aliases=None: step_times_chart(con, strict=True),
}


def figure(kind: str, con, game_id: str | None = None, aliases=None):
    from workbench.errors import WorkbenchError

    if kind not in FIGURES:
        raise WorkbenchError(f"unknown figure {kind!r}; choose one of: {', '.join(FIGURES)}")
    return FIGURES[kind](con, game_id, aliases)
