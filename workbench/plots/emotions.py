"""Emotion trajectories of a Damage game, with the attacks each player received."""

from __future__ import annotations

import altair as alt

from workbench.catalog import query_frame
from workbench.errors import WorkbenchError

EMOTIONS = ("fear", "anger", "shame", "confidence", "tilt")
# Above this many points per player, vectors are averaged over buckets of lines so the
# spec stays small (Altair refuses more than 5,000 rows a panel) and the lines readable.
MAX_POINTS_PER_PLAYER = 600


def largest_game(con) -> str:
    row = con.execute(
        "SELECT game_id FROM damage_emotions GROUP BY game_id ORDER BY count(*) DESC, game_id LIMIT 1"
    ).fetchall()
    if not row:
        raise WorkbenchError("no Damage emotions in this database; ingest a replay log first")
    return row[0][0]


def emotion_trajectories(con, game_id: str | None = None, players=None, emotions=None, x: str = "seq"):
    """One line per player for each emotion over the event sequence (`x="seq"`) or
    turn (`x="turn"`), one panel per emotion, with a marker where a player was attacked
    on that emotion (tooltip: attacker, intended and applied change)."""
    game_id = game_id or largest_game(con)
    emotions = list(emotions or EMOTIONS)
    unknown = set(emotions) - set(EMOTIONS)
    if unknown or x not in ("seq", "turn"):
        raise WorkbenchError(f"unknown emotion {sorted(unknown)} or axis {x!r}; emotions: {', '.join(EMOTIONS)}")
    vectors = _vectors(con, game_id, players, emotions, x)
    if vectors.is_empty():
        raise WorkbenchError(f"no emotion vectors for game {game_id!r}")
    attacks = _attacks(con, game_id, players, emotions, x)
    color = alt.Color("player_id:N", title="player")
    panels = []
    for emotion in emotions:
        lines = alt.Chart(vectors.filter(vectors["emotion"] == emotion)).mark_line(interpolate="step-after").encode(
            x=alt.X(f"{x}:Q", title="event" if x == "seq" else "turn"),
            y=alt.Y("value:Q", title=emotion, scale=alt.Scale(domain=[-1, 1])),
            color=color,
            tooltip=["player_id:N", f"{x}:Q", alt.Tooltip("value:Q", format=".3f")],
        )
        hits = alt.Chart(attacks.filter(attacks["emotion"] == emotion)).mark_point(
            shape="triangle-down", filled=True, size=70
        ).encode(
            x=f"{x}:Q", y="value:Q", color=color,
            tooltip=["player_id:N", "attacker:N", f"{x}:Q",
                     alt.Tooltip("raw_delta:Q", format=".3f", title="intended"),
                     alt.Tooltip("applied_delta:Q", format=".3f", title="applied")],
        )
        panels.append((lines + hits).properties(width=720, height=110))
    return alt.vconcat(*panels, title=f"Emotions in {game_id} (▼ attack received)").resolve_scale(color="shared")


def _vectors(con, game_id, players, emotions, x):
    bucket = max(1, -(-_seq_span(con, game_id) // MAX_POINTS_PER_PLAYER))
    return query_frame(
        con,
        f"""
        SELECT player_id, emotion, min({x}) AS {x}, avg(value) AS value
        FROM (SELECT player_id, seq, turn, seq // $bucket AS bucket, fear, anger, shame, confidence, tilt
              FROM damage_emotions WHERE game_id = $game
                AND ($players IS NULL OR list_contains($players, player_id)))
        UNPIVOT (value FOR emotion IN (fear, anger, shame, confidence, tilt))
        WHERE list_contains($emotions, emotion) AND {x} IS NOT NULL
        GROUP BY player_id, emotion, bucket ORDER BY player_id, emotion, {x}
        """,
        {"game": game_id, "bucket": bucket, "players": players, "emotions": emotions},
    )


def _seq_span(con, game_id) -> int:
    """How many lines the game's vectors spread over: buckets of lines cut it into at
    most MAX_POINTS_PER_PLAYER points per player."""
    return con.execute(
        "SELECT coalesce(max(seq) - min(seq) + 1, 0) FROM damage_emotions WHERE game_id = ?", [game_id]
    ).fetchall()[0][0]


def _attacks(con, game_id, players, emotions, x):
    return query_frame(
        con,
        f"""
        SELECT e.payload->>'target_player_id' AS player_id, e.payload->>'emotion' AS emotion,
               coalesce(e.payload->>'lead_player_id', e.payload->>'player_id') AS attacker,
               e.{x} AS {x}, TRY_CAST(e.payload->>'raw_delta' AS DOUBLE) AS raw_delta,
               TRY_CAST(e.payload->>'applied_delta' AS DOUBLE) AS applied_delta,
               TRY_CAST(e.payload->'target_emotions'->>(e.payload->>'emotion') AS DOUBLE) AS value
        FROM damage_events e
        WHERE e.game_id = $game AND e.type = 'affect_resolved' AND e.payload->>'mode' = 'attack_team'
          AND list_contains($emotions, e.payload->>'emotion')
          AND ($players IS NULL OR list_contains($players, e.payload->>'target_player_id'))
          AND value IS NOT NULL
        ORDER BY {x}
        """,
        {"game": game_id, "players": players, "emotions": emotions},
    )
