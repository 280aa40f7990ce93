"""Emotion trajectories of a Damage game, with the attacks each player received and the
point where each eliminated player left the game."""

from __future__ import annotations

import polars as pl

from workbench.errors import WorkbenchError
from workbench.plots.kinds import figure_kind
from workbench.plots.labels import PICK, picking
from workbench.plots.vega import Datasets, altair_figure, field, mark, spec_of, top_level

# Above this many points per player, vectors are averaged over buckets of lines so the
# spec stays small and the lines readable.
MAX_POINTS_PER_PLAYER = 600
# The x axis of every panel but the last: its grid, no labels, ticks or title.
UNLABELLED = {"labels": False, "ticks": False, "title": None}
CURSOR_DATA = "cursor"  # the one empty row an overlay without data of its own is drawn from


@figure_kind("emotions", order=1, takes_game=True)
@altair_figure
def emotion_trajectories(con, game_id: str | None = None, players=None, emotions=None, x: str = "seq", overlay=None):
    """One line per player for each emotion over the event sequence (`x="seq"`) or
    turn (`x="turn"`), one panel per emotion, with a marker where a player was attacked
    on that emotion (tooltip: attacker, intended and applied change). The line of a
    player who was eliminated ends where the player left the game, at a cross: the
    vectors a log restates after that (`hand_ended`, `game_ended`) are not drawn.
    `overlay` is layered over every panel (see `cursor_rule`).

    Beyond 600 points per player, vectors are averaged over buckets of lines.

    Args:
        con: a connection to a workbench database holding Damage games.
        game_id: the game; None: the one with most events.
        players: the players to draw; None: all.
        emotions: the emotions to draw, one panel each; None: all five.
        x: the x axis: `seq` (the event's line) or `turn`.
        overlay: a chart layered over every panel (an Altair chart, or a Vega-Lite
            view as a dict, such as `cursor_rule`); None: none.

    Returns:
        An Altair chart of one panel per emotion, stacked over one x axis.

    Raises:
        WorkbenchError: an unknown emotion or axis, no Damage game in the database, or no
            emotion vectors for the game.
    """
    from workbench.damage import queries
    from workbench.damage.models import EMOTIONS

    game_id = game_id or queries.largest_game(con)
    emotions = list(emotions or EMOTIONS)
    unknown = set(emotions) - set(EMOTIONS)
    if unknown or x not in ("seq", "turn"):
        raise WorkbenchError(f"unknown emotion {sorted(unknown)} or axis {x!r}; emotions: {', '.join(EMOTIONS)}")
    vectors = queries.emotion_series(con, game_id, players, emotions, x, max_points=MAX_POINTS_PER_PLAYER)
    if vectors.is_empty():
        raise WorkbenchError(f"no emotion vectors for game {game_id!r}")
    attacks = queries.attacks_received(con, game_id, players, emotions, x)
    eliminated = queries.eliminations(con, game_id, players)
    return emotion_spec(game_id, vectors, attacks, emotions, x, overlay, eliminated)


def emotion_spec(
    game_id: str,
    vectors: pl.DataFrame,
    attacks: pl.DataFrame,
    emotions,
    x: str = "seq",
    overlay=None,
    eliminated: pl.DataFrame | None = None,
) -> dict:
    """The spec of the trajectories of `queries.emotion_series`, the markers of
    `queries.attacks_received` and, for the players of `queries.eliminations`, a cross
    ending their lines; one panel per emotion."""
    datasets = Datasets()
    color = field("player_id:N", title="player")
    axis = "event" if x == "seq" else "turn"
    vectors, ends = ended_lines(vectors, eliminated, x)
    over, params = _overlay(overlay, datasets) if overlay is not None else (None, [])
    panels = []
    for panel, emotion in enumerate(emotions):
        # Altair names a named view of the n-th panel of a concatenation `<name>_<n>`:
        # named so here, its selection's views still name it in the Altair chart.
        view = f"attacks-{emotion}_{panel}"
        # The panels share one x scale, labelled under the last: a panel's tick labels are
        # most of the text vl-convert lays out, and text is most of a PNG's render time.
        x_channel = field(f"{x}:Q", title=axis) if emotion == emotions[-1] else field(f"{x}:Q", axis=UNLABELLED)
        lines = {
            "data": datasets.add(f"lines-{emotion}", vectors.filter(vectors["emotion"] == emotion)),
            "mark": mark("line", interpolate="step-after"),
            "encoding": {
                "x": x_channel,
                "y": field("value:Q", title=emotion, scale={"domain": [-1, 1]}),
                "color": color,
                "tooltip": [field("player_id:N"), field(f"{x}:Q"), field("value:Q", format=".3f")],
            },
        }
        # a click on an attack received selects its line: the attack (widgets.emotion_filters);
        # one selection per panel, each named for its emotion
        hits = {
            "data": datasets.add(f"attacks-{emotion}", attacks.filter(attacks["emotion"] == emotion)),
            "mark": mark("point", shape="triangle-down", filled=True, size=70),
            "name": view,
            "encoding": {
                "x": x_channel,
                "y": field("value:Q"),
                "color": color,
                "tooltip": [
                    field("player_id:N"),
                    field("attacker:N"),
                    field(f"{x}:Q"),
                    field("intended_delta:Q", format=".3f", title="intended"),
                    field("applied_delta:Q", format=".3f", title="applied"),
                ],
            },
        }
        params.append(picking(view, "seq", name=f"{PICK}_{emotion}"))
        # A cross (a plus turned 45 degrees) in the player's colour, outlined to stand out on the line.
        out = {
            "data": datasets.add(f"ends-{emotion}", ends.filter(ends["emotion"] == emotion)),
            "mark": mark(
                "point", shape="cross", angle=45, filled=True, size=140, stroke="black", strokeWidth=0.6, opacity=1
            ),
            "encoding": {
                "x": x_channel,
                "y": field("value:Q"),
                "color": color,
                "tooltip": [
                    field("player_id:N"),
                    field("eliminated_at:Q", title=f"eliminated at {axis}"),
                    field("value:Q", format=".3f", title="last value"),
                ],
            },
        }
        panels.append({"layer": [lines, hits, out] + ([over] if over else []), "width": 720, "height": 110})
    title = f"Emotions in {game_id} (▼ attack received, ✕ eliminated: the line ends)"
    return top_level(
        {
            "vconcat": panels,
            "params": params,
            "title": title,
            "spacing": 10,
            "resolve": {"scale": {"color": "shared", "x": "shared"}},
        },
        datasets,
    )


def _overlay(overlay, datasets: Datasets) -> tuple[dict, list[dict]]:
    """The view of `overlay` for a panel's layer, its datasets among the figure's (with no
    data of its own, it is drawn once, from one empty row), and its variable parameters,
    which are the figure's, once: a view in a layer holds none."""
    spec = spec_of(overlay)
    for name, values in spec.get("datasets", {}).items():
        datasets.add(name, values)
    view = {key: value for key, value in spec.items() if key not in ("$schema", "config", "datasets", "params")}
    if "data" not in view:
        view["data"] = datasets.add(CURSOR_DATA, [{}])
    params = spec.get("params", [])
    if any("select" in param for param in params):
        view["params"] = [param for param in params if "select" in param]
    return view, [param for param in params if "select" not in param]


def ended_lines(
    vectors: pl.DataFrame, eliminated: pl.DataFrame | None, x: str = "seq"
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The vectors with each eliminated player's lines held at their last value up to
    the line or turn it left the game at, and the ends of those lines: (player_id,
    emotion, `x`, value, eliminated_at)."""
    if eliminated is None:
        eliminated = pl.DataFrame(schema={"player_id": pl.String, x: pl.Int64})
    last = vectors.group_by("player_id", "emotion", maintain_order=True).last()  # vectors come in the log's order
    ends = last.drop(x).join(
        eliminated.select("player_id", pl.col(x).alias("eliminated_at")), on="player_id", maintain_order="left"
    )
    ends = ends.with_columns(pl.col("eliminated_at").cast(vectors.schema[x]).alias(x))
    return pl.concat([vectors, ends.select(vectors.columns)]), ends.select(
        "player_id", "emotion", x, "value", "eliminated_at"
    )


def cursor_rule(param: str) -> dict:
    """A vertical rule at the line (`seq`) the Vega parameter `param` holds: an overlay
    for `emotion_trajectories`; the chart that shows it adds the parameter."""
    return {
        "mark": mark("rule", color="black", strokeWidth=1.5, clip=True),
        "encoding": {"x": {"datum": {"expr": param}, "type": "quantitative"}},
    }
