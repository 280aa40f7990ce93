"""Stellaris economy: monthly net per resource over game time, one line per series (a
folder of autosaves, a companion history, an extractor folder), one panel per resource,
a zero line in each panel and every deficit marked. Given countries, one line per
country instead: the player's beside the chosen ones, from every country's budget lines
(which only saves hold)."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from workbench.errors import WorkbenchError
from workbench.plots.kinds import figure_kind
from workbench.plots.labels import picking
from workbench.plots.vega import Datasets, altair_figure, field, mark, point_selection, top_level

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
# Four panels and their axes fit a notebook's output area; the legends go above them
# rather than beside, where they would be cut off.
PANEL_WIDTH = 170
LEGEND = {"orient": "top", "direction": "horizontal", "columns": 4}
LEGEND_PICK = "legend_pick"  # the selection a click on a legend entry makes: the lines it names


@figure_kind("economy", order=2)
@altair_figure
def economy_nets(con, resources=None, source=None, countries=None):
    """Monthly net per resource over game time (x: game year on the 360-day calendar,
    tooltip: the game date), one line per series, one panel per resource (15+
    resources stay readable), a zero line, deficits marked with red triangles. Click a
    series in the legend to pick it out.

    Beyond 400 snapshots in a series, nets are averaged over buckets of days.

    Args:
        con: a connection to a workbench database holding a Stellaris economy.
        resources: a name or names to show, or "all". None: the key resources and every
            resource that ran a deficit somewhere; the subtitle names the others.
        source: a series name, a source id, or a file or folder path as ingested; None: every series.
        countries: names or ids of countries to compare with the player's empire, one colour
            per country (their nets summed from the budget lines of saves, `stellaris_budget`);
            an unknown name is an error.

    Returns:
        An Altair chart of one panel per resource.

    Raises:
        WorkbenchError: no Stellaris tables or economy, an unknown resource, source or
            country, or nothing to plot for them.
    """
    source = None if source is None else str(source)
    hidden = []
    if resources == ALL:
        resources = None
    elif resources is None and countries is None:
        resources, hidden = _first_look(con)
    else:
        resources = [resources] if isinstance(resources, str) else (list(resources) if resources else None)
    if countries is not None:
        return _countries(con, resources, source, countries)
    frame = _nets(con, resources, source)
    if frame.is_empty():
        raise WorkbenchError(_nothing_to_plot(con, resources, source))
    order = sorted(frame["resource"].unique().to_list(), key=resource_order)
    return _spec(frame, order, hidden)


ALL = "all"
NO_STELLARIS = "this database has no Stellaris tables; ingest Stellaris files first"


def _first_look(con) -> tuple[list[str] | None, list[str]]:
    """The resources a first look shows (the key ones and every one that ran a deficit)
    and the ones it leaves out: a save holds 18 or more, most of them small and steady.
    None: every resource (there is nothing to choose from)."""
    from workbench.stellaris import queries

    try:
        known, in_deficit = queries.resource_names(con), set(queries.resources_in_deficit(con))
    except duckdb.CatalogException:
        return None, []
    shown = [r for r in known if r in KEY_RESOURCES or r in in_deficit]
    return (shown or None), [r for r in known if r not in shown]


def _countries(con, resources, source, countries):
    from workbench.stellaris import queries

    try:
        frame = queries.country_nets(
            con, countries, resources, source, with_player=True, max_points=MAX_POINTS_PER_LINE
        )
    except duckdb.CatalogException:
        raise WorkbenchError(NO_STELLARIS) from None
    if frame.is_empty():
        raise WorkbenchError(_no_country_nets(con, resources, source))
    order = sorted(frame["resource"].unique().to_list(), key=resource_order)
    return _country_spec(frame, order)


def _no_country_nets(con, resources, source) -> str:
    known = [r for (r,) in con.execute("SELECT DISTINCT resource FROM stellaris_budget ORDER BY 1").fetchall()]
    return _why_nothing(
        resources,
        known,
        none=(
            "no country budgets in this database; ingest Stellaris saves (*.sav): extractor outputs and "
            "histories hold the player's totals only"
        ),
        among=" in the countries' budgets",
        elsewhere=f"no country budgets for source {source!r}; give a save folder's series name, a source id or a path",
    )


def _nets(con, resources, source):
    from workbench.stellaris import queries

    try:
        return queries.nets_over_time(con, resources, source, max_points=MAX_POINTS_PER_LINE)
    except duckdb.CatalogException:
        raise WorkbenchError(NO_STELLARIS) from None


def _nothing_to_plot(con, resources, source) -> str:
    from workbench.stellaris import queries

    return _why_nothing(
        resources,
        queries.resource_names(con),
        none=(
            "no Stellaris economy in this database; ingest autosaves (*.sav), extractor bundles "
            "(*.briefing.json) or a companion history (*.db) first"
        ),
        among="",
        elsewhere=f"no Stellaris economy for source {source!r}; give a series name, a source id or an ingested path",
    )


def _why_nothing(resources, known: list[str], none: str, among: str, elsewhere: str) -> str:
    """Why a chart of `resources` found nothing: no resource is `known` at all (`none`),
    some asked for are not (`among` says where they were looked for), or the source has
    none (`elsewhere`)."""
    if not known:
        return none
    unknown = sorted(set(resources or []) - set(known))
    if unknown:
        return f"no resource named {', '.join(unknown)}{among}; known: {', '.join(known)}"
    return elsewhere


def zero_rule() -> dict:
    """The layer of a panel per resource that marks 0: a dashed rule (one per panel, not
    one per point)."""
    return {
        "mark": mark("rule", color="#555", strokeDash=[4, 3]),
        "encoding": {"y": {"datum": 0}},
        "transform": [{"aggregate": [{"op": "count", "as": "points"}], "groupby": ["resource"]}],
    }


def resource_order(resource: str):
    """The panels' order: the resources the player watches first, then the others by name."""
    return (KEY_RESOURCES.index(resource), "") if resource in KEY_RESOURCES else (len(KEY_RESOURCES), resource)


def _spec(frame, order: list[str], hidden: Sequence[str] = ()) -> dict:
    present = set(frame["origin"].unique().to_list())
    origins = [o for o in ORIGIN_DASHES if o in present] + sorted(present - set(ORIGIN_DASHES))
    encoding = {
        "color": field("series:N", title="series (click to pick)", legend=LEGEND),
        "strokeDash": field(
            "origin:N",
            title="read from",
            legend=LEGEND,
            scale={"domain": origins, "range": [ORIGIN_DASHES.get(o, [1, 0]) for o in origins]},
        ),
    }
    tooltip = [
        field("series:N"),
        field("origin:N"),
        field("resource:N"),
        field("game_date:N", title="date"),
        field("net:Q", format=",.2f", title="net / month"),
    ]
    subtitle = [DEFICIT_NOTE] + (
        _wrapped(f"{len(hidden)} more resources, never in deficit, are not drawn: {', '.join(hidden)}")
        if hidden
        else []
    )
    return _panels(frame, order, "series", encoding, tooltip, "Monthly net per resource", subtitle)


def _country_spec(frame, order: list[str]) -> dict:
    """One line per country (the player's first in the legend) and series."""
    labels = frame["country"].unique(maintain_order=True).to_list()
    encoding = {
        "color": field("country:N", title="country (click to pick)", sort=labels, legend=LEGEND),
        "detail": field("series:N"),
    }
    tooltip = [
        *(field(f"{name}:N") for name in ("country", "country_id", "series", "resource")),
        field("game_date:N", title="date"),
        field("income:Q", format=",.2f"),
        field("expenses:Q", format=",.2f"),
        field("net:Q", format=",.2f", title="net / month"),
    ]
    title = "Monthly net per resource, the player beside other countries"
    return _panels(frame, order, "country", encoding, tooltip, title)


DEFICIT_NOTE = "▼ red: deficit (net below zero); dashed: zero"
SUBTITLE_CHARACTERS = 100  # a line of the subtitle, at most: narrower than the figure


def _wrapped(text: str, width: int = SUBTITLE_CHARACTERS) -> list[str]:
    """`text` as subtitle lines of at most `width` characters, broken between words: one
    long line was cut off at the figure's edge."""
    import textwrap

    return textwrap.wrap(text, width) or [""]


def panel_columns(panels: int) -> int:
    """Panels per row: all in one row up to PANEL_COLUMNS, else the number of columns
    (PANEL_COLUMNS, one less, or one more) that leaves the fewest empty cells in the grid."""
    if panels <= PANEL_COLUMNS:
        return max(panels, 1)
    return min((PANEL_COLUMNS, PANEL_COLUMNS - 1, PANEL_COLUMNS + 1), key=lambda columns: -panels % columns)


def _panels(
    frame, order: list[str], picked_by: str, encoding: dict, tooltip: list, title: str, subtitle=DEFICIT_NOTE
) -> dict:
    datasets = Datasets()
    axes = {
        "x": field(
            "year:Q",
            title="game year (360-day calendar)",
            axis={"format": "d", "tickMinStep": 1},
            scale={"zero": False},
        ),
        "y": field("net:Q", title="net / month"),
    }
    opacity = {"condition": {"param": LEGEND_PICK, "value": 1.0}, "value": 0.15}  # faint unless picked
    lines = {
        "mark": mark("line", point={"size": 18}),
        "name": "lines",
        "encoding": {**axes, **encoding, "opacity": opacity, "tooltip": tooltip},
    }
    # a click on a month in deficit selects its date: the saves of that date (widgets.economy_filters)
    deficits = {
        "mark": mark("point", shape="triangle-down", filled=True, size=55, color=DEFICIT_COLOR),
        "name": "deficits",
        "transform": [{"filter": "datum.deficit"}],
        "encoding": {**axes, "opacity": opacity, "tooltip": tooltip},
    }
    zero = zero_rule()
    return top_level(
        {
            "data": datasets.add("nets", frame),
            "spec": {"layer": [zero, lines, deficits], "width": PANEL_WIDTH, "height": 120},
            "facet": field("resource:N", sort=order, title=None, header={"labelFontWeight": "bold"}),
            "columns": panel_columns(len(order)),
            "params": [
                point_selection(LEGEND_PICK, [picked_by], ["lines"], bind="legend"),
                picking("deficits", "game_date"),
            ],
            "title": {"text": title, "subtitle": subtitle},
            "resolve": {"scale": {"y": "independent"}},
        },
        datasets,
    )
