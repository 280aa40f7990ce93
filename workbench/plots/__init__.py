"""Altair figures over a workbench database. Each function takes a DuckDB connection,
aggregates in DuckDB, and returns a chart that composes with `+`, `|` and `&`; `save`
writes it by file suffix.

Each figure is written as a Vega-Lite spec (`workbench.plots.vega`): its function's
`.spec` returns that spec, which `save` writes with no Altair, and the function itself
the Altair chart of it. Each figure's module marks its function with its kind
(`workbench.plots.kinds`); the modules are imported when a figure is first asked for,
and import their formats only as they draw, so `workbench plot emotions` loads no other
figure's format, and neither it nor `workbench report` nor a command that draws nothing
loads Altair."""

from __future__ import annotations


def __getattr__(name: str):
    """`save`, `FIGURES` (every figure by its kind, in order: `kinds.figures`), each
    figure's function by its name (`emotion_trajectories`, `scorecard`, ...), and
    `__all__`, which names them."""
    if name == "save":
        from workbench.plots.files import save

        return save
    if name.startswith("__") and name != "__all__":  # asked of any module (`__wrapped__`): none here
        raise AttributeError(f"module 'workbench.plots' has no attribute {name!r}")
    from workbench.plots.kinds import figures

    if name == "FIGURES":
        return figures()
    functions = {figure.function.__name__: figure.function for figure in figures().values()}
    if name == "__all__":
        return [*functions, "save", "FIGURES", "figure", "figure_spec"]
    if name not in functions:
        raise AttributeError(f"module 'workbench.plots' has no attribute {name!r}")
    return functions[name]


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
    from workbench.plots.kinds import figures

    found = figures()
    if kind not in found:
        raise WorkbenchError(f"unknown figure {kind!r}; choose one of: {', '.join(found)}")
    return found[kind](con, game_id, aliases)
