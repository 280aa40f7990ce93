"""Who attacks whom in a Damage game, and what the attacks do to the aimed-at emotion.

Both charts are drawn from the frames of `damage.queries` (`attack_matrix`,
`event_study`): the aggregation is done there, only the small result goes into the spec.
"""

from __future__ import annotations

import polars as pl

from workbench.errors import WorkbenchError
from workbench.plots.kinds import figure_kind
from workbench.plots.labels import picking
from workbench.plots.vega import Datasets, altair_figure, field, mark, top_level

COLOR_BY = {
    "actual_mean": ("mean actual change", {"scheme": "redblue", "domainMid": 0, "reverse": True}),
    "attacks": ("attacks", {"scheme": "oranges"}),
}


@figure_kind("attacks", order=6, takes_game=True)
@altair_figure
def attack_heatmap(con, game_id: str | None = None, color: str = "actual_mean"):
    """Attacker (rows) x target (columns): one cell per pair that attacked or assisted,
    coloured by the target's mean actual change in the aimed-at emotion (`actual_mean`,
    diverging at 0) or by the number of attacks (`attacks`), labelled with the count;
    the tooltip lists the pair's numbers. Default game: the largest.

    A click on a cell selects its attacker and target (the selection `pick`), for a
    notebook to show the attacks behind it.

    Args:
        con: a connection to a workbench database holding Damage games.
        game_id: the game; None: the one with most events.
        color: what colours a cell: `actual_mean` or `attacks`.

    Returns:
        An Altair layered chart: the cells and their count labels.

    Raises:
        WorkbenchError: an unknown `color`, or no Damage game in the database.
    """
    from workbench.damage import queries

    if color not in COLOR_BY:
        raise WorkbenchError(f"cannot colour the attack heatmap by {color!r}; choose one of: {', '.join(COLOR_BY)}")
    game_id = game_id or queries.largest_game(con)
    matrix = queries.attack_matrix(con, game_id)
    return attack_heatmap_spec(game_id, matrix, color)


def attack_heatmap_spec(game_id: str, matrix: pl.DataFrame, color: str = "actual_mean") -> dict:
    """The spec of the heatmap of an `attack_matrix` frame."""
    datasets = Datasets()
    title, scale = COLOR_BY[color]
    players = sorted(set(matrix["attacker"].drop_nulls()) | set(matrix["target"].drop_nulls()))
    axes = {
        "x": field("target:N", title="target", scale={"domain": players}),
        "y": field("attacker:N", title="attacker", scale={"domain": players}),
    }
    # a click on a cell selects its attacker and target: the attacks behind it (widgets.attack_filters)
    cells = {
        "mark": mark("rect", stroke="white"),
        "name": "cells",
        "encoding": {
            **axes,
            "color": field(f"{color}:Q", title=title, scale=scale),
            "tooltip": [
                *(field(f"{name}:N") for name in ("attacker", "target")),
                *(field(f"{name}:Q") for name in ("attacks", "team_attacks", "raises", "assisted", "assists")),
                field("intended_mean:Q", format=".3f", title="mean intended"),
                field("applied_mean:Q", format=".3f", title="mean applied"),
                field("applied_total:Q", format=".3f", title="total applied"),
                field("actual_mean:Q", format=".3f", title="mean actual"),
                field("actual_total:Q", format=".3f", title="total actual"),
            ],
        },
    }
    labels = {"mark": mark("text", fontSize=11), "encoding": {**axes, "text": field("attacks:Q")}}
    side = max(160, 36 * len(players))
    return top_level(
        {
            "data": datasets.add("attacks", matrix),
            "layer": [cells, labels],
            "params": [picking("cells", "attacker", "target")],
            "width": side,
            "height": side,
            "title": f"Who attacks whom in {game_id} (number: attacks; colour: {title})",
        },
        datasets,
    )


@figure_kind("attack-study", order=7, takes_game=True)
@altair_figure
def event_study_chart(con, game_id: str | None = None, k: int = 5):
    """Per kind of attack and aimed-at emotion: the mean change over the `k` emotion
    vectors after an attack and the targets' baseline drift over `k` vectors (left), and
    their difference with its 95% interval (right, error bars; a rule at 0).

    The interval is Student's t over the per-attack differences (each attack compared
    with its own target's drift); only attacks with a measured change are shown.

    Args:
        con: a connection to a workbench database holding Damage games.
        game_id: the game; None: the one with most events.
        k: the window, in emotion vectors of the target after each attack.

    Returns:
        An Altair chart of two panels side by side.

    Raises:
        WorkbenchError: no Damage game in the database, or no attack in the game followed
            by `k` emotion vectors of its target.
    """
    from workbench.damage import queries

    game_id = game_id or queries.largest_game(con)
    study = queries.event_study(con, game_id, k).filter(pl.col("n") > 0)
    if study.is_empty():
        raise WorkbenchError(f"no attack in {game_id!r} is followed by {k} emotion vectors of its target")
    return event_study_spec(game_id, study, k)


def event_study_spec(game_id: str, study: pl.DataFrame, k: int) -> dict:
    """The spec of the chart of an `event_study` frame (grouped by kind and emotion)."""
    datasets = Datasets()
    study = study.with_columns(attack=pl.concat_str("kind", "emotion", separator=" · "))
    data = datasets.add("study", study)
    y = field("attack:N", title="attack · aimed-at emotion", sort=study["attack"].to_list())
    tooltip = [
        field("attack:N"),
        field("n:Q"),
        *(
            field(f"{name}:Q", format=".3f")
            for name in ("mean_change", "baseline_mean", "difference", "ci_low", "ci_high")
        ),
    ]
    means = {
        "data": data,
        "transform": [{"fold": ["mean_change", "baseline_mean"], "as": ["series", "change"]}],
        "mark": mark("point", filled=True, size=70),
        "width": 300,
        "title": "after attacks vs baseline",
        "encoding": {
            "x": field("change:Q", title=f"change over {k} vectors"),
            "y": y,
            "tooltip": tooltip,
            "color": field(
                "series:N",
                title="",
                scale={"domain": ["mean_change", "baseline_mean"], "range": ["#d62728", "#7f7f7f"]},
                legend={"labelExpr": "datum.label == 'mean_change' ? 'after attacks' : 'baseline drift'"},
            ),
        },
    }
    zero = {
        "data": datasets.add("zero", [{}]),
        "mark": mark("rule", strokeDash=[4, 3], color="gray"),
        "encoding": {"x": {"datum": 0, "type": "quantitative"}},
    }
    bars = {
        "data": data,
        "mark": mark("errorbar", ticks=True),
        "encoding": {
            "x": field("ci_low:Q", title="difference (95% t interval)"),
            "x2": {"field": "ci_high"},
            "y": y,
            "tooltip": tooltip,
        },
    }
    points = {
        "data": data,
        "mark": mark("point", filled=True, size=70, color="black"),
        "encoding": {"x": field("difference:Q"), "y": y, "tooltip": tooltip},
    }
    difference = {"layer": [zero, bars, points], "width": 300, "title": "difference from baseline"}
    return top_level(
        {
            "hconcat": [means, difference],
            "title": f"Change in the aimed-at emotion after attacks in {game_id} ({k} vectors)",
        },
        datasets,
    )
