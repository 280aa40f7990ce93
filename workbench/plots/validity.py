"""The scorecard as a chart: per format, each model's (or agent's) share of valid
decisions as a point with its 95% interval (clustered by game), models sorted by
validity, the number of decisions and games beside each. A model with few decisions, or
few games that differ, shows as a long bar: its validity could be anywhere along it."""

from __future__ import annotations

import altair as alt
import polars as pl

from workbench.comparison import scorecard as scorecard_frame
from workbench.errors import WorkbenchError
from workbench.plots.labels import displayed, picking

TITLE = "Valid decisions per model, with 95% intervals clustered by game"


def scorecard(con, formats: list[str] | None = None, aliases=None) -> alt.FacetChart:
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
        An Altair chart faceted by format (rows).

    Raises:
        WorkbenchError: no decisions (in `formats`) in the database.
    """
    frame = scorecard_frame(con, aliases=aliases)
    if formats:
        frame = frame.filter(pl.col("format").is_in(list(formats)))
    if frame.is_empty():
        raise WorkbenchError("no decisions in this database; ingest a damage, ec4x, arena or gm log first")
    return scorecard_chart(frame)


def scorecard_chart(frame: pl.DataFrame) -> alt.FacetChart:
    """The chart of a `comparison.scorecard` frame (format, model, decisions, valid,
    validity, ci_low, ci_high, games, ci_method)."""
    frame = frame.select("format", "model", "decisions", "valid", "validity", "ci_low", "ci_high", "games",
                         "ci_method").with_columns(
        model_name=pl.col("model"),  # as the log wrote it: what a click on the model's bar selects
        model=displayed("model"),
        label=pl.format("n={}, {} game", "decisions", "games") + pl.when(pl.col("games") == 1).then(pl.lit(""))
        .otherwise(pl.lit("s")),
    )
    x = alt.X("validity:Q", title="valid decisions", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1]))
    y = alt.Y("model:N", title=None, sort=alt.EncodingSortField("validity", order="descending"))
    tooltip = [*(alt.Tooltip(name) for name in ("format:N", "model:N", "decisions:Q", "valid:Q", "games:Q")),
               alt.Tooltip("validity:Q", format=".1%"),
               alt.Tooltip("ci_low:Q", format=".1%", title="95% low"),
               alt.Tooltip("ci_high:Q", format=".1%", title="95% high"), alt.Tooltip("ci_method:N", title="interval")]
    base = alt.Chart().encode(y=y, tooltip=tooltip)
    # A click on a model's bar or point selects it (`PICK`: its format and name), for a
    # notebook to show the records behind it (widgets.DrillDown).
    pick = picking("format", "model_name")
    interval = base.mark_bar(height=8, opacity=0.35).encode(x=alt.X("ci_low:Q", scale=alt.Scale(domain=[0, 1])),
                                                            x2=alt.X2("ci_high"),
                                                            color=alt.Color("format:N", legend=None))
    point = base.mark_point(filled=True, size=50, color="black").encode(x=x).add_params(pick)
    label = base.mark_text(align="left", dx=6, fontSize=10, color="#555").encode(x=alt.X("ci_high:Q"),
                                                                                 text=alt.Text("label:N"))
    return alt.layer(interval, point, label, data=frame).properties(width=360).facet(
        row=alt.Row("format:N", title=None, header=alt.Header(labelFontWeight="bold", labelAngle=0,
                                                               labelAlign="left")),
        title=TITLE,
    ).resolve_scale(y="independent")

