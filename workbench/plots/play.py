"""Damage play quality as a chart: per model, each named mistake's rate with its 95%
interval clustered by game, beside the rate of any mistake by the player's tilt at the
decision (docs: "Play quality")."""

from __future__ import annotations

import polars as pl

from workbench.plots.kinds import figure_kind
from workbench.plots.labels import displayed, picking
from workbench.plots.vega import Datasets, altair_figure, field, mark, top_level

TITLE = "How each model plays its Damage hands: mistakes, with 95% intervals clustered by game"
# The points a click leads from to the decisions behind them (widgets.mistake_filters):
# a layer of the first panel of a concatenation, named as Altair names it (`<name>_<i>`
# for the i-th panel), so that Altair writes the chart back as it is.
MISTAKE_POINTS = "mistake_points_0"


@figure_kind("play", order=10, takes_aliases=True)
@altair_figure
def play_quality_chart(con, aliases=None):
    """Left: per model, the rate of each named mistake (`fold_free`, `fold_ahead`,
    `continue_behind`, `showdown_long_shot`) as a point on its 95% interval. Right: per
    model, the rate of any mistake by its tilt at the decision (low, moderate, high).

    Args:
        con: a connection to a workbench database.
        aliases: a dict, or a JSON or CSV file, mapping names to one model.

    Returns:
        An Altair chart of the two panels side by side.

    Raises:
        WorkbenchError: no answered Damage betting decision in the database.
    """
    from workbench.damage.play import MISTAKES
    from workbench.damage.quality import mistakes_by_emotion, play_summary

    summary = play_summary(con, aliases=aliases)
    rates = pl.concat(
        [
            summary.select(
                "model",
                pl.lit(name).alias("mistake"),
                pl.col(name).alias("rate"),
                pl.col(f"{name}_low").alias("low"),
                pl.col(f"{name}_high").alias("high"),
                pl.col(f"{name}_n").alias("n"),
            )
            for name in MISTAKES
        ]
    )
    by_tilt = mistakes_by_emotion(con, "tilt", aliases=aliases).rename(
        {"mistake_rate": "rate", "mistake_rate_low": "low", "mistake_rate_high": "high", "mistake_rate_n": "n"}
    )
    datasets = Datasets()
    return top_level(
        {
            "hconcat": [
                _panel(
                    datasets.add("mistakes", rates.with_columns(model_name=pl.col("model"), model=displayed("model"))),
                    "mistake:N",
                    list(MISTAKES),
                    "Mistakes per model (click: the decisions)",
                    picked=True,
                ),
                _panel(
                    datasets.add("by-tilt", by_tilt.with_columns(model=displayed("model"))),
                    "state:N",
                    ["low", "moderate", "high"],
                    "Any mistake, by tilt at the decision",
                ),
            ],
            "params": [picking(MISTAKE_POINTS, "model_name", "mistake")],
            "title": TITLE,
        },
        datasets,
    )


def _panel(data: dict, row: str, order: list[str], title: str, picked: bool = False) -> dict:
    """A panel of rates on their intervals; `picked`: a click on a point selects its
    model and mistake (`pick`, on the points themselves)."""
    shared = {
        "y": field(row, title=None, sort=order),
        "yOffset": field("model:N"),
        "color": field("model:N", title="model"),
        "tooltip": [
            field("model:N"),
            field(row),
            field("n:Q", title="decisions"),
            field("rate:Q", format=".1%"),
            field("low:Q", format=".1%", title="95% low"),
            field("high:Q", format=".1%", title="95% high"),
        ],
    }
    whole = {"domain": [0, 1]}
    return {
        "data": data,
        "title": title,
        "width": 260,
        "layer": [
            {
                "mark": mark("rule", opacity=0.5),
                "encoding": {**shared, "x": field("low:Q", scale=whole), "x2": {"field": "high"}},
            },
            {
                "mark": mark("point", filled=True, size=45, **({"cursor": "pointer"} if picked else {})),
                **({"name": MISTAKE_POINTS} if picked else {}),
                "encoding": {
                    **shared,
                    "x": field("rate:Q", title="share of decisions", axis={"format": "%"}, scale=whole),
                },
            },
        ],
    }
