"""Emotion trajectories of a Damage game, with the attacks each player received.

Channels are written as objects (`alt.Tooltip("value:Q")`), not as strings: Altair
spends several milliseconds parsing each string."""

from __future__ import annotations

import altair as alt
import polars as pl

from workbench.damage import queries
from workbench.damage.models import EMOTIONS
from workbench.errors import WorkbenchError

# Above this many points per player, vectors are averaged over buckets of lines so the
# spec stays small (Altair refuses more than 5,000 rows a panel) and the lines readable.
MAX_POINTS_PER_PLAYER = 600


def emotion_trajectories(con, game_id: str | None = None, players=None, emotions=None, x: str = "seq",
                         overlay: alt.Chart | None = None):
    """One line per player for each emotion over the event sequence (`x="seq"`) or
    turn (`x="turn"`), one panel per emotion, with a marker where a player was attacked
    on that emotion (tooltip: attacker, intended and applied change). `overlay` is
    layered over every panel (see `cursor_rule`)."""
    game_id = game_id or queries.largest_game(con)
    emotions = list(emotions or EMOTIONS)
    unknown = set(emotions) - set(EMOTIONS)
    if unknown or x not in ("seq", "turn"):
        raise WorkbenchError(f"unknown emotion {sorted(unknown)} or axis {x!r}; emotions: {', '.join(EMOTIONS)}")
    vectors = queries.emotion_series(con, game_id, players, emotions, x, max_points=MAX_POINTS_PER_PLAYER)
    if vectors.is_empty():
        raise WorkbenchError(f"no emotion vectors for game {game_id!r}")
    attacks = queries.attacks_received(con, game_id, players, emotions, x)
    return emotion_chart(game_id, vectors, attacks, emotions, x, overlay)


def emotion_chart(game_id: str, vectors: pl.DataFrame, attacks: pl.DataFrame, emotions, x: str = "seq",
                  overlay: alt.Chart | None = None) -> alt.VConcatChart:
    """The trajectories of `queries.emotion_series` and the markers of
    `queries.attacks_received`, one panel per emotion."""
    color = alt.Color("player_id:N", title="player")
    panels = []
    for emotion in emotions:
        lines = alt.Chart(vectors.filter(vectors["emotion"] == emotion)).mark_line(interpolate="step-after").encode(
            x=alt.X(f"{x}:Q", title="event" if x == "seq" else "turn"),
            y=alt.Y("value:Q", title=emotion, scale=alt.Scale(domain=[-1, 1])),
            color=color,
            tooltip=[alt.Tooltip("player_id:N"), alt.Tooltip(f"{x}:Q"), alt.Tooltip("value:Q", format=".3f")],
        )
        hits = alt.Chart(attacks.filter(attacks["emotion"] == emotion)).mark_point(
            shape="triangle-down", filled=True, size=70
        ).encode(
            x=alt.X(f"{x}:Q"), y=alt.Y("value:Q"), color=color,
            tooltip=[alt.Tooltip("player_id:N"), alt.Tooltip("attacker:N"), alt.Tooltip(f"{x}:Q"),
                     alt.Tooltip("intended_delta:Q", format=".3f", title="intended"),
                     alt.Tooltip("applied_delta:Q", format=".3f", title="applied")],
        )
        panel = lines + hits if overlay is None else lines + hits + overlay
        panels.append(panel.properties(width=720, height=110))
    return alt.vconcat(*panels, title=f"Emotions in {game_id} (▼ attack received)").resolve_scale(color="shared")


def cursor_rule(param: str) -> alt.Chart:
    """A vertical rule at the line (`seq`) the Vega parameter `param` holds: an overlay
    for `emotion_trajectories`; the chart that shows it adds the parameter."""
    return alt.Chart().mark_rule(color="black", strokeWidth=1.5, clip=True).encode(
        x=alt.X(datum=alt.expr(param), type="quantitative"))
