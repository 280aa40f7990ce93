"""EC4X command families per model: which families each model tried, how often, and how
often validly (`ec4x.queries.family_matrix` aggregates; only the matrix goes into the spec)."""

from __future__ import annotations

import altair as alt
import polars as pl

from workbench.ec4x.families import FAMILIES
from workbench.ec4x.queries import family_matrix
from workbench.errors import WorkbenchError
from workbench.plots.labels import displayed, note_chart, picking

FAMILY_MATRIX_TITLE = "EC4X command families: validity (colour) and uses (count) per model"
UNTRIED_COLOUR = "#d9d9d9"


def family_matrix_chart(con, strict: bool = False) -> alt.LayerChart:
    """EC4X command family (columns) x model and source (rows): each cell coloured by the
    family's validity for that model, labelled with how often it was tried; a family the
    model never tried is a grey cell labelled 0, so the coverage gap shows. The tooltip
    adds valid uses and the rule broken most. With no EC4X data: a chart saying so, or
    (`strict`, as `workbench plot` asks) a WorkbenchError.

    A click on a tried cell selects its family, model and source (the selection `pick`).

    Args:
        con: a connection to a workbench database.
        strict: raise instead of drawing a note when there is no EC4X data.

    Returns:
        An Altair layered chart: the cells and their counts (or a note chart).

    Raises:
        WorkbenchError: with `strict`, no EC4X order drafts or bot traces in the database.
    """
    frame = family_matrix(con)
    if frame.is_empty():
        if strict:
            raise WorkbenchError("no EC4X order drafts or bot traces in this database; ingest *.orders.jsonl or "
                                 "bot_trace_*.jsonl first")
        return note_chart("No EC4X order drafts or bot traces", FAMILY_MATRIX_TITLE)
    return family_matrix_heatmap(frame)


def family_matrix_heatmap(frame: pl.DataFrame) -> alt.LayerChart:
    """The heatmap of a `family_matrix` frame."""
    frame = frame.with_columns(row=pl.format("{} · {}", "source", displayed("model")), top_rule=displayed("top_rule"))
    base = alt.Chart(frame).encode(
        x=alt.X("family:N", title="command family", sort=list(FAMILIES), axis=alt.Axis(labelAngle=-40)),
        y=alt.Y("row:N", title="source · model", sort=frame["row"].unique(maintain_order=True).to_list()),
    )
    tried = alt.datum.tried > 0
    tooltip = [alt.Tooltip("source:N"), alt.Tooltip("model:N"), alt.Tooltip("family:N"), alt.Tooltip("tried:Q"),
               alt.Tooltip("valid:Q"), alt.Tooltip("validity:Q", format=".1%"), alt.Tooltip("top_rule:N"),
               alt.Tooltip("top_rule_count:Q")]
    # Untried cells are a layer of their own: a rect with no validity would not be drawn.
    untried = base.transform_filter(~tried).mark_rect(stroke="white", color=UNTRIED_COLOUR).encode(tooltip=tooltip)
    # a click on a tried cell selects it: the drafts behind it (widgets.family_filters)
    cells = base.transform_filter(tried).mark_rect(stroke="white").add_params(
        picking("family", "model", "source")).encode(
        color=alt.Color("validity:Q", title="validity", scale=alt.Scale(scheme="redyellowgreen", domain=[0, 1]),
                        legend=alt.Legend(format="%")),
        tooltip=tooltip,
    )
    counts = base.mark_text(fontSize=11).encode(
        text=alt.Text("tried:Q"),
        color=alt.Color(condition={"test": tried, "value": "black"}, value="#777777"),
    )
    return (untried + cells + counts).properties(
        title=FAMILY_MATRIX_TITLE, width=44 * len(FAMILIES), height=max(40, 26 * frame["row"].n_unique()))
