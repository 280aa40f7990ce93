"""Who attacks whom in a Damage game, and what the attacks do to the aimed-at emotion.

Both charts are drawn from the frames of `damage.queries` (`attack_matrix`,
`event_study`): the aggregation is done there, only the small result goes into the spec.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from workbench.damage import queries
from workbench.errors import WorkbenchError
from workbench.plots.labels import picking

COLOR_BY = {
    "actual_mean": ("mean actual change", alt.Scale(scheme="redblue", domainMid=0, reverse=True)),
    "attacks": ("attacks", alt.Scale(scheme="oranges")),
}


def attack_heatmap(con, game_id: str | None = None, color: str = "actual_mean") -> alt.LayerChart:
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
    if color not in COLOR_BY:
        raise WorkbenchError(f"cannot colour the attack heatmap by {color!r}; choose one of: {', '.join(COLOR_BY)}")
    game_id = game_id or queries.largest_game(con)
    matrix = queries.attack_matrix(con, game_id)
    return attack_heatmap_chart(game_id, matrix, color)


def attack_heatmap_chart(game_id: str, matrix: pl.DataFrame, color: str = "actual_mean") -> alt.LayerChart:
    """The heatmap of an `attack_matrix` frame."""
    title, scale = COLOR_BY[color]
    players = sorted(set(matrix["attacker"].drop_nulls()) | set(matrix["target"].drop_nulls()))
    axis = alt.Scale(domain=players)
    base = alt.Chart(matrix).encode(
        x=alt.X("target:N", title="target", scale=axis),
        y=alt.Y("attacker:N", title="attacker", scale=axis),
    )
    # a click on a cell selects its attacker and target: the attacks behind it (widgets.attack_filters)
    cells = base.mark_rect(stroke="white").add_params(picking("attacker", "target")).encode(
        color=alt.Color(f"{color}:Q", title=title, scale=scale),
        tooltip=[*(alt.Tooltip(f"{name}:N") for name in ("attacker", "target")),
                 *(alt.Tooltip(f"{name}:Q") for name in ("attacks", "team_attacks", "raises", "assisted", "assists")),
                 alt.Tooltip("intended_mean:Q", format=".3f", title="mean intended"),
                 alt.Tooltip("applied_mean:Q", format=".3f", title="mean applied"),
                 alt.Tooltip("applied_total:Q", format=".3f", title="total applied"),
                 alt.Tooltip("actual_mean:Q", format=".3f", title="mean actual"),
                 alt.Tooltip("actual_total:Q", format=".3f", title="total actual")],
    )
    labels = base.mark_text(fontSize=11).encode(text=alt.Text("attacks:Q"))
    side = max(160, 36 * len(players))
    return (cells + labels).properties(
        width=side, height=side,
        title=f"Who attacks whom in {game_id} (number: attacks; colour: {title})")


def event_study_chart(con, game_id: str | None = None, k: int = 5) -> alt.HConcatChart:
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
    game_id = game_id or queries.largest_game(con)
    study = queries.event_study(con, game_id, k).filter(pl.col("n") > 0)
    if study.is_empty():
        raise WorkbenchError(f"no attack in {game_id!r} is followed by {k} emotion vectors of its target")
    return event_study_plot(game_id, study, k)


def event_study_plot(game_id: str, study: pl.DataFrame, k: int) -> alt.HConcatChart:
    """The chart of an `event_study` frame (grouped by kind and emotion)."""
    study = study.with_columns(attack=pl.concat_str("kind", "emotion", separator=" · "))
    order = study["attack"].to_list()
    y = alt.Y("attack:N", title="attack · aimed-at emotion", sort=order)
    tooltip = [alt.Tooltip("attack:N"), alt.Tooltip("n:Q"), alt.Tooltip("mean_change:Q", format=".3f"),
               alt.Tooltip("baseline_mean:Q", format=".3f"), alt.Tooltip("difference:Q", format=".3f"),
               alt.Tooltip("ci_low:Q", format=".3f"), alt.Tooltip("ci_high:Q", format=".3f")]
    means = alt.Chart(study).transform_fold(
        ["mean_change", "baseline_mean"], as_=["series", "change"]
    ).mark_point(filled=True, size=70).encode(
        x=alt.X("change:Q", title=f"change over {k} vectors"), y=y,
        color=alt.Color("series:N", title="", scale=alt.Scale(
            domain=["mean_change", "baseline_mean"], range=["#d62728", "#7f7f7f"]),
            legend=alt.Legend(labelExpr="datum.label == 'mean_change' ? 'after attacks' : 'baseline drift'")),
        tooltip=tooltip,
    ).properties(width=300, title="after attacks vs baseline")
    bars = alt.Chart(study).mark_errorbar(ticks=True).encode(
        x=alt.X("ci_low:Q", title="difference (95% t interval)"), x2=alt.X2("ci_high"), y=y, tooltip=tooltip)
    points = alt.Chart(study).mark_point(filled=True, size=70, color="black").encode(
        x=alt.X("difference:Q"), y=y, tooltip=tooltip)
    zero = alt.Chart().mark_rule(strokeDash=[4, 3], color="gray").encode(x=alt.X(datum=0, type="quantitative"))
    difference = (zero + bars + points).properties(width=300, title="difference from baseline")
    return alt.hconcat(means, difference, title=f"Change in the aimed-at emotion after attacks in {game_id} "
                                                f"({k} vectors)")
