"""Emotion trajectories of a Damage game, with the attacks each player received and the
point where each eliminated player left the game.

Channels are written as objects (`alt.Tooltip("value:Q")`), not as strings: Altair
spends several milliseconds parsing each string."""

from __future__ import annotations

import altair as alt
import polars as pl

from workbench.damage import queries
from workbench.damage.models import EMOTIONS
from workbench.errors import WorkbenchError
from workbench.plots.labels import PICK, picking

# Above this many points per player, vectors are averaged over buckets of lines so the
# spec stays small (Altair refuses more than 5,000 rows a panel) and the lines readable.
MAX_POINTS_PER_PLAYER = 600
# The x axis of every panel but the last: its grid, no labels, ticks or title.
UNLABELLED = alt.Axis(labels=False, ticks=False, title=None)


def emotion_trajectories(con, game_id: str | None = None, players=None, emotions=None, x: str = "seq",
                         overlay: alt.Chart | None = None):
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
        overlay: an Altair chart layered over every panel; None: none.

    Returns:
        An Altair chart of one panel per emotion, stacked over one x axis.

    Raises:
        WorkbenchError: an unknown emotion or axis, no Damage game in the database, or no
            emotion vectors for the game.
    """
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
    return emotion_chart(game_id, vectors, attacks, emotions, x, overlay, eliminated)


def emotion_chart(game_id: str, vectors: pl.DataFrame, attacks: pl.DataFrame, emotions, x: str = "seq",
                  overlay: alt.Chart | None = None, eliminated: pl.DataFrame | None = None) -> alt.VConcatChart:
    """The trajectories of `queries.emotion_series`, the markers of
    `queries.attacks_received` and, for the players of `queries.eliminations`, a cross
    ending their lines; one panel per emotion."""
    color = alt.Color("player_id:N", title="player")
    axis = "event" if x == "seq" else "turn"
    vectors, ends = ended_lines(vectors, eliminated, x)
    panels = []
    for emotion in emotions:
        # The panels share one x scale, labelled under the last: a panel's tick labels are
        # most of the text vl-convert lays out, and text is most of a PNG's render time.
        x_channel = alt.X(f"{x}:Q", title=axis) if emotion == emotions[-1] else alt.X(f"{x}:Q", axis=UNLABELLED)
        lines = alt.Chart(vectors.filter(vectors["emotion"] == emotion)).mark_line(interpolate="step-after").encode(
            x=x_channel,
            y=alt.Y("value:Q", title=emotion, scale=alt.Scale(domain=[-1, 1])),
            color=color,
            tooltip=[alt.Tooltip("player_id:N"), alt.Tooltip(f"{x}:Q"), alt.Tooltip("value:Q", format=".3f")],
        )
        # a click on an attack received selects its line: the attack (widgets.emotion_filters);
        # one selection per panel, each named for its emotion
        hits = alt.Chart(attacks.filter(attacks["emotion"] == emotion)).mark_point(
            shape="triangle-down", filled=True, size=70
        ).add_params(picking("seq", name=f"{PICK}_{emotion}")).encode(
            x=x_channel, y=alt.Y("value:Q"), color=color,
            tooltip=[alt.Tooltip("player_id:N"), alt.Tooltip("attacker:N"), alt.Tooltip(f"{x}:Q"),
                     alt.Tooltip("intended_delta:Q", format=".3f", title="intended"),
                     alt.Tooltip("applied_delta:Q", format=".3f", title="applied")],
        )
        # A cross (a plus turned 45 degrees) in the player's colour, outlined to stand out on the line.
        out = alt.Chart(ends.filter(ends["emotion"] == emotion)).mark_point(
            shape="cross", angle=45, filled=True, size=140, stroke="black", strokeWidth=0.6, opacity=1
        ).encode(
            x=x_channel, y=alt.Y("value:Q"), color=color,
            tooltip=[alt.Tooltip("player_id:N"), alt.Tooltip("eliminated_at:Q", title=f"eliminated at {axis}"),
                     alt.Tooltip("value:Q", format=".3f", title="last value")],
        )
        panel = alt.layer(lines, hits, out) if overlay is None else alt.layer(lines, hits, out, overlay)
        panels.append(panel.properties(width=720, height=110))
    title = f"Emotions in {game_id} (▼ attack received, ✕ eliminated: the line ends)"
    return alt.vconcat(*panels, title=title, spacing=10).resolve_scale(color="shared", x="shared")


def ended_lines(vectors: pl.DataFrame, eliminated: pl.DataFrame | None,
                x: str = "seq") -> tuple[pl.DataFrame, pl.DataFrame]:
    """The vectors with each eliminated player's lines held at their last value up to
    the line or turn it left the game at, and the ends of those lines: (player_id,
    emotion, `x`, value, eliminated_at)."""
    if eliminated is None:
        eliminated = pl.DataFrame(schema={"player_id": pl.String, x: pl.Int64})
    last = vectors.group_by("player_id", "emotion", maintain_order=True).last()  # vectors come in the log's order
    ends = last.drop(x).join(eliminated.select("player_id", pl.col(x).alias("eliminated_at")), on="player_id",
                             maintain_order="left")
    ends = ends.with_columns(pl.col("eliminated_at").cast(vectors.schema[x]).alias(x))
    return pl.concat([vectors, ends.select(vectors.columns)]), ends.select("player_id", "emotion", x, "value",
                                                                          "eliminated_at")


def cursor_rule(param: str) -> alt.Chart:
    """A vertical rule at the line (`seq`) the Vega parameter `param` holds: an overlay
    for `emotion_trajectories`; the chart that shows it adds the parameter."""
    return alt.Chart().mark_rule(color="black", strokeWidth=1.5, clip=True).encode(
        x=alt.X(datum=alt.expr(param), type="quantitative"))
