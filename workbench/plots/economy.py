"""Stellaris economy: monthly net per resource over game time, one line per series (a
folder of autosaves, a companion history, an extractor folder), one panel per resource,
a zero line in each panel and every deficit marked."""

from __future__ import annotations

import altair as alt
import duckdb

from workbench.errors import WorkbenchError
from workbench.stellaris import queries

# Resources the player watches first; the others follow alphabetically.
KEY_RESOURCES = ("energy", "minerals", "food", "alloys", "consumer_goods", "unity", "influence", "trade")
# Above this many snapshots in a series, nets are averaged over buckets of days so the
# spec stays small.
MAX_POINTS_PER_LINE = 400
DEFICIT_COLOR = "#d62728"
# Saves solid, the companion's history dashed, extractor outputs dotted: a history that
# mirrors its saves stays visible on top of them.
ORIGIN_DASHES = {"save": [1, 0], "history": [6, 3], "extractor": [2, 2]}
PANEL_COLUMNS = 4


def economy_nets(con, resources=None, source=None):
    """Monthly net per resource over game time (x: game year on the 360-day calendar,
    tooltip: the game date), one line per series, one panel per resource (15+
    resources stay readable), a zero line, deficits marked with red triangles. Click a
    series in the legend to pick it out.

    `resources`: names to show (default: all); `source`: a series name, a source id, or
    a file or folder path as ingested.
    """
    resources = [resources] if isinstance(resources, str) else (list(resources) if resources else None)
    frame = _nets(con, resources, None if source is None else str(source))
    if frame.is_empty():
        raise WorkbenchError(_nothing_to_plot(con, resources, source))
    order = sorted(frame["resource"].unique().to_list(), key=_resource_order)
    return _chart(frame, order)


def _nets(con, resources, source):
    try:
        return queries.nets_over_time(con, resources, source, max_points=MAX_POINTS_PER_LINE)
    except duckdb.CatalogException:
        raise WorkbenchError("this database has no Stellaris tables; ingest Stellaris files first") from None


def _nothing_to_plot(con, resources, source) -> str:
    known = queries.resource_names(con)
    if not known:
        return ("no Stellaris economy in this database; ingest autosaves (*.sav), extractor bundles "
                "(*.briefing.json) or a companion history (*.db) first")
    unknown = sorted(set(resources or []) - set(known))
    if unknown:
        return f"no resource named {', '.join(unknown)}; known: {', '.join(known)}"
    return f"no Stellaris economy for source {source!r}; give a series name, a source id or an ingested path"


def _resource_order(resource: str):
    return (KEY_RESOURCES.index(resource), "") if resource in KEY_RESOURCES else (len(KEY_RESOURCES), resource)


def _chart(frame, order: list[str]):
    present = set(frame["origin"].unique().to_list())
    origins = [o for o in ORIGIN_DASHES if o in present] + sorted(present - set(ORIGIN_DASHES))
    picked = alt.selection_point(fields=["series"], bind="legend")
    x = alt.X("year:Q", title="game year (360-day calendar)", axis=alt.Axis(format="d", tickMinStep=1),
              scale=alt.Scale(zero=False))
    y = alt.Y("net:Q", title="net / month")
    tooltip = ["series:N", "origin:N", "resource:N", alt.Tooltip("game_date:N", title="date"),
               alt.Tooltip("net:Q", format=",.2f", title="net / month")]
    lines = alt.Chart().mark_line(point=alt.OverlayMarkDef(size=18)).encode(
        x=x, y=y, color=alt.Color("series:N", title="series (click to pick)"),
        strokeDash=alt.StrokeDash("origin:N", title="read from", scale=alt.Scale(
            domain=origins, range=[ORIGIN_DASHES.get(o, [1, 0]) for o in origins])),
        opacity=alt.condition(picked, alt.value(1.0), alt.value(0.15)), tooltip=tooltip,
    ).add_params(picked)
    deficits = alt.Chart().mark_point(shape="triangle-down", filled=True, size=55, color=DEFICIT_COLOR).encode(
        x=x, y=y, opacity=alt.condition(picked, alt.value(1.0), alt.value(0.15)), tooltip=tooltip,
    ).transform_filter("datum.deficit")
    zero = alt.Chart().mark_rule(color="#555", strokeDash=[4, 3]).encode(y=alt.datum(0)).transform_aggregate(
        points="count()", groupby=["resource"]
    )
    panel = alt.layer(zero, lines, deficits, data=frame).properties(width=200, height=120)
    return panel.facet(
        facet=alt.Facet("resource:N", sort=order, title=None, header=alt.Header(labelFontWeight="bold")),
        columns=PANEL_COLUMNS,
        title=alt.Title("Monthly net per resource", subtitle="▼ red: deficit (net below zero); dashed: zero"),
    ).resolve_scale(y="independent")
