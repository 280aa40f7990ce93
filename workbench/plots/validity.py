"""The scorecard as a chart: per format, each model's (or agent's) share of valid
decisions as a point with its 95% interval (clustered by game), models sorted by
validity, the number of decisions and games beside each. A model with few decisions, or
few games that differ, shows as a long bar: its validity could be anywhere along it."""

from __future__ import annotations

import polars as pl

from workbench.connection import holder
from workbench.errors import WorkbenchError
from workbench.outcomes import INGEST_DECISIONS
from workbench.plots.kinds import figure_kind
from workbench.plots.labels import displayed, picking
from workbench.plots.vega import Datasets, altair_figure, field, mark, top_level

TITLE = "Valid decisions per model, with 95% intervals clustered by game"


@figure_kind("scorecard", order=4, takes_aliases=True, across_games=True)
@altair_figure
def scorecard(con, formats: list[str] | None = None, aliases=None):
    """One panel per format; in it one row per model or agent, sorted by validity:
    the 95% interval as a bar, the validity as a point, `n=` the decisions and games.
    `aliases` maps names to one model.

    The intervals are clustered by game. A click on a model's point selects its format
    and name (the selection `pick`), for a notebook to show the records behind it.

    Args:
        con: a connection to a workbench database.
        formats: only these formats; None: every format with decisions.
        aliases: a dict, or a JSON or CSV file, mapping names to one model.

    Returns:
        An Altair chart of one panel per format, one above the next.

    Raises:
        WorkbenchError: no decisions (in `formats`) in the database.
    """
    from workbench.comparison import scorecard as scorecard_frame

    frame = scorecard_frame(con, aliases=aliases)
    if formats:
        frame = frame.filter(pl.col("format").is_in(list(formats)))
    if frame.is_empty():
        raise WorkbenchError(f"no decisions in {holder(con)}; {INGEST_DECISIONS}")
    return scorecard_spec(frame)


def scorecard_spec(frame: pl.DataFrame) -> dict:
    """The spec of the chart of a `comparison.scorecard` frame (format, model, decisions,
    valid, validity, ci_low, ci_high, games, ci_method): a panel per format, one above
    the next (a concatenation, not a facet: a facet's rows of independent scales joined
    the domains of its layers' data, with a warning in the reader's console)."""
    datasets = Datasets()
    frame = (
        frame.filter(pl.col("validity").is_not_null())
        .select(  # a group whose every call failed: nothing to draw
            "format", "model", "decisions", "valid", "validity", "ci_low", "ci_high", "games", "ci_method"
        )
        .with_columns(
            model_name=pl.col("model"),  # as the log wrote it: what a click on the model's bar selects
            model=displayed("model"),
            label=pl.format("n={}, {} game", "decisions", "games")
            + pl.when(pl.col("games") == 1).then(pl.lit("")).otherwise(pl.lit("s")),
        )
    )
    formats = sorted(frame["format"].unique().to_list())
    # each panel's points named as Altair names them (`<name>_<i>` for the i-th panel),
    # so that Altair writes the chart back as it is
    panels = [_panel(fmt, f"points_{number}", last=number == len(formats) - 1) for number, fmt in enumerate(formats)]
    # A click on a model's point selects it (`PICK`: its format and name), for a notebook
    # to show the records behind it (widgets.DrillDown).
    pick = picking([panel["layer"][1]["name"] for panel in panels], "format", "model_name")
    return top_level(
        {"data": datasets.add("scorecard", frame), "vconcat": panels, "params": [pick], "title": TITLE}, datasets
    )


def _panel(fmt: str, points: str, last: bool) -> dict:
    """One format's rows: the interval as a bar, the validity as a point, `n=` beside."""
    whole = {"domain": [0, 1]}
    shared = {
        "y": field("model:N", title=None, sort={"field": "validity", "order": "descending"}),
        "tooltip": [
            *(field(name) for name in ("format:N", "model:N", "decisions:Q", "valid:Q", "games:Q")),
            field("validity:Q", format=".1%"),
            field("ci_low:Q", format=".1%", title="95% low"),
            field("ci_high:Q", format=".1%", title="95% high"),
            field("ci_method:N", title="interval"),
        ],
    }
    interval = {
        "mark": mark("bar", height=8, opacity=0.35),
        "encoding": {
            **shared,
            "x": field("ci_low:Q", scale=whole),
            "x2": {"field": "ci_high"},
            "color": field("format:N", legend=None),
        },
    }
    axis = {"format": "%", "tickCount": 5}
    point = {
        "mark": mark("point", filled=True, size=50, color="black"),
        "name": points,
        "encoding": {
            **shared,
            "x": field("validity:Q", title="valid decisions" if last else None, axis=axis, scale=whole),
        },
    }
    label = {
        "mark": mark("text", align="left", dx=6, fontSize=10, color="#555"),
        "encoding": {**shared, "x": field("ci_high:Q"), "text": field("label:N")},
    }
    return {
        "transform": [{"filter": {"field": "format", "equal": fmt}}],
        "layer": [interval, point, label],
        "width": 360,
        "title": {"text": fmt, "anchor": "start", "fontSize": 11, "fontWeight": "bold"},
    }
