"""Damage play quality where a user meets it: the judged decisions with the player's
emotions at each (cached per database content), the play statistics and mistake rates per
model with intervals clustered by game, and what attacks did to their targets' play.

The play statistics (per model, each a share with its 95% interval clustered by game):
- `vpip`: hands in which the player put chips in voluntarily (a call or a raise; blinds
  and antes are not voluntary), of the hands it decided in;
- `pfr`: hands with a raise in the first betting round (hold'em: before the flop; draw5
  has one round), of the same hands;
- `aggression`: raises of all calls and raises (the aggression factor raises / calls is
  this share's odds, aggression / (1 - aggression));
- `fold_to_raise`: folds of the decisions that faced a raise (chips to call after a
  raise in that round);
- `showdown_win_rate`: showdowns won (a payout) of the showdowns reached.
Luck apart from skill: at each showdown a player reached, it expected its last win
probability times the final pot, and a Life lost with the rest; beside what it won.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import duckdb
import numpy as np
import polars as pl

from workbench import stats
from workbench.connection import query_frame
from workbench.damage import cards
from workbench.damage.play import MISTAKES, judged
from workbench.errors import WorkbenchError
from workbench.naming import read_aliases

EMOTIONS = ("fear", "anger", "shame", "confidence", "tilt")
# The bins of an emotion's value at a decision (the specification's range: -1 to 1).
EMOTION_BINS = (("low", -math.inf, 0.15), ("moderate", 0.15, 0.4), ("high", 0.4, math.inf))
# The decisions before and after an attack its outcome compares.
AFTER_ATTACK = 3

_CACHE: OrderedDict = OrderedDict()
_CACHED = 8


def decisions(con: duckdb.DuckDBPyConnection, samples: int = cards.SAMPLES, seed: int = 0) -> pl.DataFrame:
    """Every judged decision (`play.judged`) with its player's emotions just before it;
    computed once per database content (the Damage sources' checksums) and kept."""
    database = _database(con)
    if not database:  # an in-memory database: no name to know it again by
        return _with_emotions(con, judged(con, samples=samples, seed=seed))
    key = (database, _content(con), samples, seed)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    frame = _with_emotions(con, judged(con, samples=samples, seed=seed))
    _CACHE[key] = frame
    while len(_CACHE) > _CACHED:
        _CACHE.popitem(last=False)
    return frame


def _database(con: duckdb.DuckDBPyConnection) -> str:
    [(file,)] = con.execute("SELECT file FROM pragma_database_list WHERE name = current_database()").fetchall()
    return file or ""


def _content(con: duckdb.DuckDBPyConnection) -> tuple:
    return tuple(
        con.execute("SELECT source_id, sha256, path FROM sources WHERE format = 'damage' ORDER BY source_id").fetchall()
    )


def _with_emotions(con: duckdb.DuckDBPyConnection, frame: pl.DataFrame) -> pl.DataFrame:
    """Each decision with the last emotion vector its player had before its line."""
    vectors = query_frame(
        con,
        f"SELECT source_id, player_id, seq, {', '.join(EMOTIONS)} FROM damage_emotions "
        "WHERE player_id IS NOT NULL ORDER BY seq",
    )
    if vectors.is_empty():
        return frame.with_columns(pl.lit(None, dtype=pl.Float64).alias(e) for e in EMOTIONS)
    vectors = vectors.with_columns(pl.col("seq").cast(pl.Int64)).sort("seq")
    return (
        frame.sort("line")
        .join_asof(
            vectors,
            left_on="line",
            right_on="seq",
            by=["source_id", "player_id"],
            strategy="backward",
            allow_exact_matches=False,
            check_sortedness=False,
        )
        .drop("seq")
        .sort(["source_id", "line"])
    )


def play_quality(con: duckdb.DuckDBPyConnection, model: str | None = None, game_id: str | None = None) -> pl.DataFrame:
    """Every answered Damage betting decision judged on what its player could know
    (`damage.play`; docs: "Play quality"), computed once per database content.

    Args:
        con: a connection to a workbench database.
        model: only this model's decisions; None: every model's.
        game_id: only this game's; None: every game's.

    Returns:
        A polars DataFrame, one row per decision by file and line: `path`, `line`,
        `game_id`, `turn`, `street`, `player_id`, `model`, `action`, the `hand`, the
        `board`, the `opponents` still in, `to_call`, `pot`, `pot_odds`,
        `win_probability` and `win_probability_se` (0 where counted exactly),
        `won_at_showdown` (hindsight against the hands still in; NULL where the hand
        ended without a showdown), `showdown`, `hand_won`, `life_lost`, `hand_chips`,
        `mistake` (NULL, `fold_free`, `fold_ahead`, `continue_behind` or
        `showdown_long_shot`) and the player's emotions just before (`fear` ... `tilt`).
    """
    frame = decisions(con)
    if model is not None:
        frame = frame.filter(pl.col("model") == model)
    if game_id is not None:
        frame = frame.filter(pl.col("game_id") == game_id)
    return frame


def _shares(frame: pl.DataFrame, by: list[str], name: str, hit: pl.Expr, of: pl.Expr) -> pl.DataFrame:
    """Per group of `by`: the share `hit` of the rows `of`, with its 95% interval clustered
    by game (`name`, `name_low`, `name_high`, `name_n`)."""
    counts = (
        frame.filter(of)
        .group_by([*by, "game_id"], maintain_order=True)
        .agg(hits=hit.sum().cast(pl.Int64), n=pl.len().cast(pl.Int64))
    )
    # How alike one game's decisions are, pooled over every group's games (as the
    # scorecard pools a format's): a group seen in few games still gets a design effect.
    labels = (
        counts.select(pl.concat_str([pl.col(key).cast(pl.String).fill_null("") for key in by], separator="\x1f"))
        .to_series()
        .to_numpy()
    )
    between = stats.between_games(counts["hits"].to_numpy(), counts["n"].to_numpy(), labels)
    rows = []
    for keys, group in counts.group_by(by, maintain_order=True):
        share = stats.share(group["hits"].to_numpy(), group["n"].to_numpy(), between)
        low, high = share.interval if share.n else (math.nan, math.nan)
        rows.append(
            {
                **dict(zip(by, keys)),
                name: share.validity if share.n else None,
                f"{name}_low": _finite(low),
                f"{name}_high": _finite(high),
                f"{name}_n": share.n,
            }
        )
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        **{key: frame.schema[key] for key in by},
        name: pl.Float64,
        f"{name}_low": pl.Float64,
        f"{name}_high": pl.Float64,
        f"{name}_n": pl.Int64,
    }
    return pl.DataFrame(rows, schema=schema)


def _by_model(frame: pl.DataFrame, aliases) -> pl.DataFrame:
    """`frame` with each decision's model as `aliases` names it; where a log names no
    model, its player stands in."""
    names = read_aliases(aliases)
    return frame.with_columns(
        model=(pl.col("model").replace(names) if names else pl.col("model")).fill_null(pl.col("player_id"))
    )


def _finite(value) -> float | None:
    return float(value) if value is not None and np.isfinite(value) else None


def play_summary(
    con: duckdb.DuckDBPyConnection, aliases=None, model: str | None = None, game_id: str | None = None
) -> pl.DataFrame:
    """Per model: each mistake's rate, `vpip`, `pfr`, `aggression`, `fold_to_raise` and
    `showdown_win_rate`, each with `_low`/`_high` (95%, clustered by game) and `_n`, and
    the chips and Lives won at showdown beside those its win probabilities expected.

    Raises:
        WorkbenchError: no answered Damage betting decision (of `model`, in `game_id`).
    """
    frame = _by_model(play_quality(con, game_id=game_id).filter(pl.col("win_probability").is_not_null()), aliases)
    if model is not None:
        frame = frame.filter(pl.col("model") == model)
    if frame.is_empty():
        scope = "".join((f" of {model}" if model else "", f" in game {game_id}" if game_id else ""))
        raise WorkbenchError(
            f"no answered Damage betting decision{scope} in this database; ingest Damage logs (*.events.jsonl) first"
        )
    summary = frame.group_by("model", maintain_order=True).agg(decisions=pl.len(), games=pl.col("game_id").n_unique())
    for name in MISTAKES:
        summary = summary.join(
            _shares(frame, ["model"], name, pl.col("mistake") == name, pl.lit(True)), on="model", how="left"
        )
    for part in _play_statistics(frame):
        summary = summary.join(part, on="model", how="left")
    return summary.join(_luck(frame), on="model", how="left").sort("model")


def _play_statistics(frame: pl.DataFrame) -> list[pl.DataFrame]:
    # a hand is its game's (which may be in more than one file), or its file's
    hand_of = pl.coalesce(pl.col("game_id"), pl.lit("file ") + pl.col("source_id").cast(pl.String)).alias("hand_of")
    hands = frame.group_by(["model", "game_id", hand_of, "turn", "player_id"], maintain_order=True).agg(
        voluntary=pl.col("action").is_in(["call", "raise"]).any(),
        first_raise=(pl.col("action").eq("raise") & pl.col("street").is_in(["preflop", "draw"])).any(),
    )
    acted = pl.col("action").is_in(["call", "raise"])
    faced_raise = (pl.col("to_call") > 0) & pl.col("raised_before")
    showdowns = frame.filter(pl.col("last_choice") & pl.col("showdown"))
    return [
        _shares(hands, ["model"], "vpip", pl.col("voluntary"), pl.lit(True)),
        _shares(hands, ["model"], "pfr", pl.col("first_raise"), pl.lit(True)),
        _shares(frame, ["model"], "aggression", pl.col("action") == "raise", acted),
        _shares(frame, ["model"], "fold_to_raise", pl.col("action") == "fold", faced_raise),
        _shares(showdowns, ["model"], "showdown_win_rate", pl.col("hand_won"), pl.lit(True)),
    ]


def _luck(frame: pl.DataFrame) -> pl.DataFrame:
    """Per model, over the showdowns its players reached: chips won and expected (the last
    win probability times the final pot, less what it put in), Lives lost and expected."""
    shown = frame.filter(pl.col("last_choice") & pl.col("showdown"))
    return shown.group_by("model", maintain_order=True).agg(
        showdowns=pl.len(),
        chips_won=pl.col("hand_chips").cast(pl.Float64).sum(),  # no wrap past 2^63
        chips_expected=(pl.col("win_probability") * pl.col("final_pot") - pl.col("hand_contribution")).sum(),
        lives_lost=pl.col("life_lost").cast(pl.Int64).sum(),
        lives_expected=(1 - pl.col("win_probability")).sum(),
    )


def mistakes_by_emotion(con: duckdb.DuckDBPyConnection, emotion: str = "tilt", aliases=None) -> pl.DataFrame:
    """Per model and bin of `emotion` at the decision: the share of decisions that were
    mistakes, with its 95% interval clustered by game."""
    if emotion not in EMOTIONS:
        raise WorkbenchError(f"unknown emotion {emotion!r}: one of {', '.join(EMOTIONS)}")
    frame = decisions(con).filter(pl.col(emotion).is_not_null() & pl.col("win_probability").is_not_null())
    frame = _by_model(frame, aliases).with_columns(state=_binned(pl.col(emotion)))
    table = _shares(frame, ["model", "state"], "mistake_rate", pl.col("mistake").is_not_null(), pl.lit(True))
    order = {name: i for i, (name, _, _) in enumerate(EMOTION_BINS)}
    return table.with_columns(emotion=pl.lit(emotion)).sort(
        ["model", pl.col("state").replace_strict(order, return_dtype=pl.Int64)]
    )


def _binned(value: pl.Expr) -> pl.Expr:
    expr = pl.lit(None, dtype=pl.String)
    for name, low, high in reversed(EMOTION_BINS):
        expr = pl.when((value >= low) & (value < high)).then(pl.lit(name)).otherwise(expr)
    return expr


ATTACKS = """
WITH attacks AS (
    SELECT source_id, game_id, seq, turn, payload->>'attacker_id' AS attacker,
           payload->>'target_player_id' AS target, payload->>'emotion' AS emotion
    FROM damage_events WHERE type = 'direct_emoter_attack_resolved'
      AND ($game_id IS NULL OR game_id = $game_id)
),
plans AS (
    SELECT source_id, seq, payload->>'player_id' AS attacker,
           payload->'action'->'attack_plan' AS plan
    FROM damage_events WHERE type = 'action_submitted' AND payload->'action'->>'attack_plan' IS NOT NULL
)
SELECT a.source_id, s.path, a.seq AS line, a.game_id, a.turn, a.attacker, a.target, a.emotion,
       p.plan->>'manipulation_plan' AS plan, p.plan->>'emotional_intent' AS intent,
       p.plan->>'kinetic_intent' AS kinetic_intent, p.plan->>'expected_behavior_shift' AS expected_shift
FROM attacks a JOIN sources s USING (source_id)
ASOF LEFT JOIN plans p ON a.source_id = p.source_id AND a.attacker = p.attacker AND a.seq > p.seq
ORDER BY a.source_id, a.seq
"""


def attack_outcomes(con: duckdb.DuckDBPyConnection, game_id: str | None = None, k: int = AFTER_ATTACK) -> pl.DataFrame:
    """Per attack (a raise's attack plan the simulator resolved): where it is, attacker,
    target, `plan`, `intent`, `expected_shift`, and the target's `fold_rate`,
    `aggression` and `mistake_rate` in its `k` judged decisions before (`_before`) and
    after (`_after`) (`AFTER_ATTACK`: 3), with their counts (`n_before`, `n_after`)."""
    attacks = query_frame(con, ATTACKS, {"game_id": game_id})
    windows = _windows(play_quality(con, game_id=game_id), attacks, k)
    acted = pl.col("action").is_in(["call", "raise"]).sum()
    rates = windows.group_by("attack", "when").agg(
        n=pl.len().cast(pl.Int64),
        fold_rate=(pl.col("action") == "fold").mean(),
        aggression=pl.when(acted > 0).then((pl.col("action") == "raise").sum() / acted),
        mistake_rate=pl.col("mistake").is_not_null().mean(),
    )
    table = attacks.with_row_index("attack")
    for when in ("before", "after"):
        named = {name: f"{name}_{when}" for name in rates.columns if name not in ("attack", "when")}
        table = table.join(
            rates.filter(pl.col("when") == when).drop("when").rename(named),
            on="attack",
            how="left",
        )
    return table.with_columns(pl.col("n_before", "n_after").fill_null(0)).sort("attack").drop("attack")


def _windows(choices: pl.DataFrame, attacks: pl.DataFrame, k: int) -> pl.DataFrame:
    """The target's judged decisions in the game of each attack: the `k` before it and the
    `k` after (`when`), each with the attack's row number (`attack`) and its line
    (`attack_line`)."""
    aimed = attacks.with_row_index("attack").select(
        "attack",
        "source_id",
        "game_id",
        pl.col("target").alias("player_id"),
        pl.col("line").alias("attack_line"),
        *(name for name in ("plan", "intent") if name in attacks.columns),
    )
    joined = aimed.join(choices, on=["source_id", "game_id", "player_id"])
    before = joined.filter(pl.col("line") < pl.col("attack_line"))
    after = joined.filter(pl.col("line") > pl.col("attack_line"))
    return pl.concat(
        [
            before.filter(pl.col("line").rank("ordinal", descending=True).over("attack") <= k).with_columns(
                when=pl.lit("before")
            ),
            after.filter(pl.col("line").rank("ordinal").over("attack") <= k).with_columns(when=pl.lit("after")),
        ]
    ).sort("attack", "line")


MEASURES = {
    "fold_rate": (pl.col("action") == "fold", pl.lit(True)),
    "aggression": (pl.col("action") == "raise", pl.col("action").is_in(["call", "raise"])),
    "mistake_rate": (pl.col("mistake").is_not_null(), pl.lit(True)),
    # folds of hands that would have won at showdown, of those hands
    "winning_fold_rate": (pl.col("action") == "fold", pl.col("won_at_showdown").fill_null(False)),
}


def attack_effects(con: duckdb.DuckDBPyConnection, by: str = "plan", k: int = AFTER_ATTACK) -> pl.DataFrame:
    """The event study of play: per `by` (`plan`, `intent` or `all`) and measure, the
    targets' decisions in the `k` after an attack against the same players' decisions
    out of any attack's reach, each share with its interval clustered by game, their
    difference with its 95% interval (Newcombe's, from the clustered shares) and p. No
    rows where no attack has judged decisions after it."""
    if by not in ("plan", "intent", "all"):
        raise WorkbenchError(f"attack_effects by {by!r}: plan, intent or all")
    return event_study(play_quality(con), attack_outcomes(con, k=k), k, by)


def event_study(choices: pl.DataFrame, attacks: pl.DataFrame, k: int = AFTER_ATTACK, by: str = "all") -> pl.DataFrame:
    """`attack_effects` of judged decisions (`source_id`, `game_id`, `player_id`, `line`,
    `action`, `mistake`, `won_at_showdown`) and attacks (`source_id`, `game_id`, `line`,
    `target`, `plan`, `intent`)."""
    reached = _reached(choices, attacks, k, by)
    targets = attacks.select("source_id", "game_id", pl.col("target").alias("player_id")).unique()
    quiet = (
        choices.join(targets, on=["source_id", "game_id", "player_id"])
        .join(reached.select("source_id", "line").unique(), on=["source_id", "line"], how="anti")
        .sort("source_id", "line")
    )
    rows = []
    for (group,), after in reached.group_by(["group"], maintain_order=True):
        for measure, (hit, of) in MEASURES.items():
            a, b = _share(after, hit, of), _share(quiet, hit, of)
            difference, low, high = stats.newcombe(a, b) if a.n and b.n else (None, None, None)
            p = stats.unpaired_test(a, b)[0] if a.n and b.n else None
            rows.append(
                {
                    "group": group,
                    "measure": measure,
                    "after": _rate(a),
                    "after_n": a.n,
                    "after_games": a.games,
                    "unattacked": _rate(b),
                    "unattacked_n": b.n,
                    "difference": difference,
                    "ci_low": low,
                    "ci_high": high,
                    "p": p,
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "group": pl.String,
            "measure": pl.String,
            "after": pl.Float64,
            "after_n": pl.Int64,
            "after_games": pl.Int64,
            "unattacked": pl.Float64,
            "unattacked_n": pl.Int64,
            "difference": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "p": pl.Float64,
        },
    ).sort(["group", "measure"])


def _reached(choices: pl.DataFrame, attacks: pl.DataFrame, k: int, by: str) -> pl.DataFrame:
    """The targets' decisions among the `k` after each attack, with the attack's group."""
    group = pl.lit("all") if by == "all" else pl.col(by).fill_null("(no plan)")
    return (
        _windows(choices, attacks, k)
        .filter(pl.col("when") == "after")
        .with_columns(group=group)
        .unique(["source_id", "line", "group"], maintain_order=True)
    )


def _share(frame: pl.DataFrame, hit: pl.Expr, of: pl.Expr) -> stats.Clustered:
    counts = (
        frame.filter(of)
        .group_by("game_id", maintain_order=True)
        .agg(hits=hit.sum().cast(pl.Int64), n=pl.len().cast(pl.Int64))
    )
    if counts.is_empty():
        return stats.Clustered(0, 0, 0)
    return stats.clustered(counts["hits"].to_numpy(), counts["n"].to_numpy())


def _rate(share: stats.Clustered) -> float | None:
    return share.validity if share.n else None


def named_with(con: duckdb.DuckDBPyConnection, mistake: str, model: str | None = None, aliases=None) -> pl.DataFrame:
    """The judged decisions named `mistake` (of `model`, as `aliases` name it and as
    `play_summary` counts it: a log that names no model, its player)."""
    if mistake not in MISTAKES:
        raise WorkbenchError(f"unknown mistake {mistake!r}: one of {', '.join(MISTAKES)}")
    frame = _by_model(play_quality(con), aliases).filter(pl.col("mistake") == mistake)
    return frame if model is None else frame.filter(pl.col("model") == model)


def mistaken(con: duckdb.DuckDBPyConnection, mistake: str, model: str | None = None, aliases=None) -> pl.DataFrame:
    """`named_with`, each decision with its line's raw text as written in its file (read
    back while the file holds what was ingested)."""
    from workbench.raw_text import raw_texts

    frame = named_with(con, mistake, model, aliases)
    files = query_frame(con, "SELECT source_id, sha256, size FROM sources")
    located = frame.join(files, on="source_id", how="left").with_columns(raw=pl.lit(None, dtype=pl.String))
    return frame.with_columns(raw=pl.Series(raw_texts(located), dtype=pl.String))
