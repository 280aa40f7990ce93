"""EC4X command families per model: which families each model tried, how often, and how
often validly (`ec4x.queries.family_matrix` aggregates; only the matrix goes into the spec)."""

from __future__ import annotations

import polars as pl

from workbench.errors import WorkbenchError
from workbench.plots.kinds import figure_kind
from workbench.plots.labels import displayed, note_view, picking
from workbench.plots.vega import Datasets, altair_figure, field, mark, top_level

FAMILY_MATRIX_TITLE = "EC4X command families: validity (colour) and uses (count) per model"
UNTRIED_COLOUR = "#d9d9d9"


@figure_kind("families", order=8, strict=True)
@altair_figure
def family_matrix_chart(con, strict: bool = False):
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
    from workbench.ec4x.queries import family_matrix

    frame = family_matrix(con)
    if frame.is_empty():
        if strict:
            raise WorkbenchError(
                "no EC4X order drafts or bot traces in this database; ingest *.orders.jsonl or bot_trace_*.jsonl first"
            )
        datasets = Datasets()
        return top_level(
            note_view(datasets, "note", "No EC4X order drafts or bot traces", FAMILY_MATRIX_TITLE), datasets
        )
    return family_matrix_spec(frame)


def family_matrix_spec(frame: pl.DataFrame) -> dict:
    """The spec of the heatmap of a `family_matrix` frame."""
    from workbench.ec4x.families import FAMILIES

    datasets = Datasets()
    frame = frame.with_columns(row=pl.format("{} · {}", "source", displayed("model")), top_rule=displayed("top_rule"))
    axes = {
        "x": field("family:N", title="command family", sort=list(FAMILIES), axis={"labelAngle": -40}),
        "y": field("row:N", title="source · model", sort=frame["row"].unique(maintain_order=True).to_list()),
    }
    tried = "(datum.tried > 0)"
    tooltip = [
        field("source:N"),
        field("model:N"),
        field("family:N"),
        field("tried:Q"),
        field("valid:Q"),
        field("validity:Q", format=".1%"),
        field("top_rule:N"),
        field("top_rule_count:Q"),
    ]
    # Untried cells are a layer of their own: a rect with no validity would not be drawn.
    untried = {
        "transform": [{"filter": f"(!{tried})"}],
        "mark": mark("rect", stroke="white", color=UNTRIED_COLOUR),
        "encoding": {**axes, "tooltip": tooltip},
    }
    # a click on a tried cell selects it: the drafts behind it (widgets.family_filters)
    cells = {
        "transform": [{"filter": tried}],
        "mark": mark("rect", stroke="white"),
        "name": "cells",
        "encoding": {
            **axes,
            "tooltip": tooltip,
            "color": field(
                "validity:Q",
                title="validity",
                scale={"scheme": "redyellowgreen", "domain": [0, 1]},
                legend={"format": "%"},
            ),
        },
    }
    counts = {
        "mark": mark("text", fontSize=11),
        "encoding": {
            **axes,
            "text": field("tried:Q"),
            "color": {"condition": {"test": tried, "value": "black"}, "value": "#777777"},
        },
    }
    return top_level(
        {
            "data": datasets.add("families", frame),
            "layer": [untried, cells, counts],
            "params": [picking("cells", "family", "model", "source")],
            "title": FAMILY_MATRIX_TITLE,
            "width": 44 * len(FAMILIES),
            "height": max(40, 26 * frame["row"].n_unique()),
        },
        datasets,
    )
