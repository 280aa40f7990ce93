"""Stellaris budget: where one country's resources come from and where they go, at one
snapshot. One panel per resource; in each, an income bar stacked up by category and an
expenses bar stacked down, the largest categories by name and the rest as `other`, and
a line at the resource's net. The legend names at most LEGEND_MOST categories, the
largest over all the panels; the others join `other`."""

from __future__ import annotations

from typing import cast

import duckdb
import polars as pl

from workbench.errors import WorkbenchError
from workbench.plots.economy import ALL, KEY_RESOURCES, NO_STELLARIS, panel_columns, resource_order, zero_rule
from workbench.plots.kinds import figure_kind
from workbench.plots.vega import Datasets, altair_figure, field, mark, top_level

# Categories named per resource and side; a budget has 40+ categories, most small.
TOP_CATEGORIES = 5
# Categories named in the whole chart: more colours than this are not told apart at a glance.
LEGEND_MOST = 12
OTHER_COLOR = "#bbbbbb"
NET_COLOR = "#222222"


@figure_kind("budget", order=3)
@altair_figure
def budget_breakdown(con, country=None, resources=None, date=None):
    """Income (up) and expenses (down) per budget category, one panel per resource,
    for one country at one snapshot, with a black line at each resource's net.

    In each panel the 5 largest categories per side are named and the rest stacked as
    `other`; of those, the 12 largest over all the panels keep their names (and
    colours) and the others join `other`. Budget lines come from saves only.

    Args:
        con: a connection to a workbench database holding Stellaris saves.
        country: a name or id; None: the player's empire.
        resources: a name or names to show, or "all"; None: the key resources, energy to trade.
        date: a game date "YYYY.MM.DD"; None: the latest snapshot holding the country.

    Returns:
        An Altair chart faceted by resource, amounts per month.

    Raises:
        WorkbenchError: no Stellaris tables, no snapshot of the country (on `date`), a name
            several countries share on that date, or no budget line for the resources.
    """
    from workbench.stellaris import queries

    if resources is None:  # a first look: the resources the player watches first
        resources = list(KEY_RESOURCES)
    elif resources == ALL:
        resources = None
    else:
        resources = [resources] if isinstance(resources, str) else list(resources)
    try:
        snapshot, bars = queries.breakdown_bars(con, country, resources, date, top=TOP_CATEGORIES)
    except duckdb.CatalogException:
        raise WorkbenchError(NO_STELLARIS) from None
    if bars.is_empty():
        raise WorkbenchError(
            f"nothing to plot: {snapshot['country_name']} has no budget line for "
            f"{', '.join(resources or [])} on {snapshot['game_date']}"
        )
    order = sorted(bars["resource"].unique().to_list(), key=resource_order)
    return _spec(_within_legend(bars), order, snapshot)


def _within_legend(bars: pl.DataFrame) -> pl.DataFrame:
    """The bars with at most LEGEND_MOST categories named: the largest by their amounts
    (income and expenses alike) summed over every panel, ties by name; the others are
    summed into their panel's `other`, stacked last."""
    totals = (
        bars.filter(pl.col("category") != "other")
        .group_by("category")
        .agg(size=pl.col("amount").abs().sum())
        .sort(["size", "category"], descending=[True, False])
    )
    if totals.height <= LEGEND_MOST:
        return bars
    kept = totals["category"].head(LEGEND_MOST)
    category = pl.when(pl.col("category").is_in(kept.implode())).then(pl.col("category")).otherwise(pl.lit("other"))
    last = cast("int", bars["rank"].max()) + 1
    return (
        bars.with_columns(category=category)
        .group_by(["resource", "side", "category"], maintain_order=True)
        .agg(pl.col("amount").sum(), pl.col("lines").sum(), pl.col("rank").min(), pl.col("net").first())
        .with_columns(rank=pl.when(pl.col("category") == "other").then(pl.lit(last)).otherwise(pl.col("rank")))
    )


def _spec(bars, order: list[str], snapshot: dict) -> dict:
    datasets = Datasets()
    named = sorted(set(bars["category"].to_list()) - {"other"})
    categories = named + (["other"] if "other" in set(bars["category"].to_list()) else [])
    palette = {
        "domain": categories,
        "range": TABLEAU_WITHOUT_GREYS[: len(named)] + [OTHER_COLOR] * (len(categories) - len(named)),
    }
    stacked = {
        "mark": mark("bar"),
        "encoding": {
            "x": field("side:N", title=None, sort=["income", "expenses"], axis={"labelAngle": 0}),
            "y": field("amount:Q", title="per month"),
            "color": field(
                "category:N", title="category", scale=palette, legend={"orient": "top", "columns": 5, "symbolLimit": 80}
            ),
            "order": field("rank:Q"),
            "tooltip": [
                *(field(f"{name}:N") for name in ("resource", "side", "category")),
                field("amount:Q", format=",.2f"),
                field("lines:Q", title="categories summed"),
            ],
        },
    }
    net = {
        "transform": [{"aggregate": [{"op": "max", "field": "net", "as": "net"}], "groupby": ["resource"]}],
        "mark": mark("rule", color=NET_COLOR, strokeWidth=2),
        "encoding": {
            "y": field("net:Q"),
            "tooltip": [field("resource:N"), field("net:Q", format=",.2f", title="net / month")],
        },
    }
    zero = zero_rule()
    return top_level(
        {
            "data": datasets.add("budget", bars),
            "spec": {"layer": [stacked, zero, net], "width": 110, "height": 150},
            "facet": field("resource:N", sort=order, title=None, header={"labelFontWeight": "bold"}),
            "columns": panel_columns(len(order)),
            "resolve": {"scale": {"y": "independent"}},
            "title": {
                "text": f"Where {snapshot['country_name']}'s resources come from and go, {snapshot['game_date']}",
                "subtitle": f"the {TOP_CATEGORIES} largest categories per side (the {LEGEND_MOST} largest of all), the "
                f"rest as `other`; black line: net; series {snapshot['series']}",
            },
        },
        datasets,
    )


# The named categories' colours, in the legend's order: tableau20 without its greys
# (which `other` has), 18 of them, more than LEGEND_MOST.
TABLEAU_WITHOUT_GREYS = [
    "#4e79a7",
    "#a0cbe8",
    "#f28e2b",
    "#ffbe7d",
    "#59a14f",
    "#8cd17d",
    "#b6992d",
    "#f1ce63",
    "#499894",
    "#86bcb6",
    "#e15759",
    "#ff9d9a",
    "#d37295",
    "#fabfd2",
    "#b07aa1",
    "#d4a6c8",
    "#9d7660",
    "#d7b5a6",
]
