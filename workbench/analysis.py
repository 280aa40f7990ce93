"""Questions the notebooks ask, as short functions over a workbench database.

Each takes a DuckDB connection and returns a polars frame; the notebooks only wire
these to widgets and charts. Nothing here draws (that is `workbench.plots`) or keeps a
connection open.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from workbench import catalog
from workbench.catalog import query_frame
from workbench.errors import WorkbenchError
from workbench.plots.emotions import EMOTIONS
# An attack plan's `emotional_intent` names a feeling the emotion vector does not carry
# for two values; these are measured on the nearest carried emotion.
INTENT_MEASURED_ON = {"overconfidence": "confidence", "paranoia": "fear"}

# A game is read from the one file that holds most of its events (a game ingested from
# two copies is not doubled), including the lines of that file that lost their
# `game_id` key: they are still that game's events.
GAME_SOURCE = """(SELECT source_id FROM damage_events WHERE game_id = $game
                  GROUP BY source_id ORDER BY count(*) DESC, source_id DESC LIMIT 1)"""
GAME_FILTER = f"source_id = {GAME_SOURCE} AND (game_id = $game OR game_id IS NULL)"


# --- the database a notebook works on ----------------------------------------------


def notebook_database() -> Path:
    """`$WORKBENCH_DB`, else `data/workbench.duckdb` of the repository (also when the
    notebook runs from `notebooks/`); builds the demo database there when missing."""
    db = Path(os.environ.get("WORKBENCH_DB") or catalog.DEFAULT_DB)
    if not db.is_absolute() and Path.cwd().name == "notebooks" and not db.exists():
        db = Path.cwd().parent / db
    if not db.exists():
        from workbench.demo import run_demo

        run_demo(db.parent, progress=False)
        if not db.exists():
            raise WorkbenchError(f"{db} is missing and the demo writes {db.parent / 'workbench.duckdb'}; "
                                 "point WORKBENCH_DB at an existing database or at a workbench.duckdb")
    return db.resolve()


def figures_dir(db: Path) -> Path:
    """Where a notebook exports its figures: `figures/` beside the database."""
    return Path(db).parent / "figures"


@contextmanager
def read_only(db):
    """A short-lived read-only connection, so a notebook never holds the database
    while `workbench ingest` wants to write to it."""
    con = catalog.connect(db, read_only=True)
    try:
        yield con
    finally:
        con.close()


# --- Damage games --------------------------------------------------------------------


def games(con) -> pl.DataFrame:
    """Every Damage game (files with hands, not tournament logs), largest first."""
    return query_frame(con, """
        SELECT game_id, count(*) AS events, max(turn) AS turns,
               count(*) FILTER (WHERE type = 'hand_started') AS hands, min(ts) AS started,
               min(seq) FILTER (WHERE type = 'hand_started') AS first_hand_line, max(seq) AS last_line
        FROM damage_events WHERE game_id IS NOT NULL
        GROUP BY game_id HAVING count(*) FILTER (WHERE type = 'hand_started') > 0
        ORDER BY events DESC, game_id
    """)


def largest_game(con) -> str:
    found = games(con)
    if found.is_empty():
        raise WorkbenchError("no Damage game in this database; ingest a replay log (*.events.jsonl) first")
    return found["game_id"][0]


def game_players(con, game_id: str) -> list[str]:
    """The game's players in seat order (first appearance)."""
    frame = query_frame(con, f"""
        SELECT player_id FROM damage_emotions WHERE {GAME_FILTER}
        GROUP BY player_id ORDER BY min(seq), player_id
    """, {"game": game_id})
    return frame["player_id"].to_list()


def attack_effects(con, game_id: str) -> pl.DataFrame:
    """One row per attack on a player: affect-phase team attacks (`emotion`, intended
    `raw_delta`, `applied_delta`) and raises with an attack plan (`emotional_intent`).
    `actual` is the target's change in the aimed-at emotion between its last vector
    before the attack and its first vector at or after it; `d_<emotion>` the change
    in each emotion over the same span."""
    measured = " ".join(f"WHEN '{intent}' THEN '{emotion}'" for intent, emotion in INTENT_MEASURED_ON.items())
    deltas = ", ".join(f"after.{e} - before.{e} AS d_{e}" for e in EMOTIONS)
    actual = " ".join(f"WHEN '{e}' THEN d_{e}" for e in EMOTIONS)
    return query_frame(con, f"""
        WITH events AS (SELECT * FROM damage_events WHERE {GAME_FILTER}),
        -- A direct emoter attack's line (`direct_emoter_attack_resolved.before` / `.after`)
        -- comes just before the raise's `action_resolved`: the span is measured around the
        -- raise from the vectors of the other lines, as for affect attacks.
        emotions AS (SELECT * FROM damage_emotions WHERE {GAME_FILTER}
                     AND NOT starts_with(origin, 'direct_emoter_attack_resolved.')),
        attacks AS (
            SELECT seq, turn, 'affect' AS kind, coalesce(payload->>'lead_player_id', payload->>'player_id') AS attacker,
                   payload->>'target_player_id' AS target, payload->>'emotion' AS intent,
                   TRY_CAST(payload->>'raw_delta' AS DOUBLE) AS intended_delta,
                   TRY_CAST(payload->>'applied_delta' AS DOUBLE) AS applied_delta
            FROM events WHERE type = 'affect_resolved' AND payload->>'mode' = 'attack_team'
            UNION ALL
            SELECT seq, turn, 'raise', payload->>'player_id', payload->'attack_plan'->>'target_player_id',
                   payload->'attack_plan'->>'emotional_intent', NULL, NULL
            FROM events WHERE type = 'action_resolved' AND json_type(payload->'attack_plan') = 'OBJECT'
        ),
        spans AS (
            SELECT a.*, CASE a.intent {measured} ELSE a.intent END AS measured_on, {deltas}
            FROM attacks a
            ASOF LEFT JOIN emotions before ON before.player_id = a.target AND a.seq > before.seq
            ASOF LEFT JOIN emotions after ON after.player_id = a.target AND a.seq <= after.seq
        )
        SELECT seq, turn, kind, attacker, target, intent, measured_on, intended_delta, applied_delta,
               CASE measured_on {actual} END AS actual, d_{', d_'.join(EMOTIONS)}
        FROM spans ORDER BY seq
    """, {"game": game_id})


def attack_summary(effects: pl.DataFrame) -> pl.DataFrame:
    """Per kind of attack and aimed-at emotion: how many, the mean intended, applied and
    actual change, and how often the target moved the way the attack aimed."""
    return effects.group_by("kind", "intent").agg(
        attacks=pl.len(),
        mean_intended=pl.col("intended_delta").mean(),
        mean_applied=pl.col("applied_delta").mean(),
        mean_actual=pl.col("actual").mean(),
        moved_as_aimed=(pl.col("actual") > 0).mean(),
    ).sort("kind", "attacks", descending=[False, True])


def compare_positions(con, game_id: str, seq_a: int, seq_b: int) -> pl.DataFrame:
    """Every player's state at two lines of the game's log (the state after the last
    event at or before each line) and the change from the first to the second: one row
    per player; for each measure (`lives`, `bankroll`, `in_hand` as 0/1, the five
    emotions) the columns `<measure>_a`, `<measure>_b` and `<measure>_change`."""
    from workbench.widgets import GameReplay

    replay = GameReplay(con, game_id)
    state_a = replay.state_at(replay.position_of_seq(seq_a))
    state_b = replay.state_at(replay.position_of_seq(seq_b))
    rows = []
    for player in replay.players:
        row = {"player_id": player}
        for measure, a, b in zip(MEASURES, _measures(state_a[player]), _measures(state_b[player])):
            row |= {f"{measure}_a": a, f"{measure}_b": b,
                    f"{measure}_change": None if a is None or b is None else b - a}
        rows.append(row)
    schema = {"player_id": pl.String} | {f"{m}_{end}": pl.Float64 for m in MEASURES for end in ("a", "b", "change")}
    return pl.DataFrame(rows, schema=schema)


MEASURES = ("lives", "bankroll", "in_hand", *EMOTIONS)


def _measures(state: dict) -> list:
    emotions = state["emotions"] or {}
    in_hand = None if state["in_hand"] is None else float(state["in_hand"])
    return [state["lives"], state["bankroll"], in_hand, *(emotions.get(e) for e in EMOTIONS)]


# --- Stellaris economy ---------------------------------------------------------------

# Each snapshot's net is taken to hold until the series' next snapshot (a month for
# the last one), so yearly autosaves and monthly histories count months alike.
SERIES_NETS = """
WITH nets AS (
    SELECT s.series, s.game_date, s.day, r.resource, coalesce(r.net, r.income - r.expenses) AS net
    FROM stellaris_resources r JOIN stellaris_snapshots s USING (source_id, locator)
    WHERE ($series IS NULL OR list_contains($series, s.series))
      AND ($resources IS NULL OR list_contains($resources, r.resource))
)
SELECT *, greatest(1, coalesce(lead(day) OVER (PARTITION BY series, resource ORDER BY day) - day, 30) // 30)
          AS months_held
FROM nets WHERE net IS NOT NULL
"""


def series_names(con) -> list[str]:
    return [s for (s,) in con.execute("SELECT DISTINCT series FROM stellaris_snapshots ORDER BY 1").fetchall()]


def resource_names(con) -> list[str]:
    return [r for (r,) in con.execute("SELECT DISTINCT resource FROM stellaris_resources ORDER BY 1").fetchall()]


def resources_in_deficit(con, series=None) -> list[str]:
    """Resources that were in deficit at some snapshot (of `series`), by name."""
    deficits = months_in_deficit(con, series)
    return sorted(deficits.filter(pl.col("snapshots_in_deficit") > 0)["resource"].unique().to_list())


def months_in_deficit(con, series=None, resources=None) -> pl.DataFrame:
    """Per series and resource: snapshots, how many show a deficit (net below zero),
    the months those deficits cover, and the first and last date in deficit."""
    return query_frame(con, f"""
        SELECT series, resource, count(*) AS snapshots, count(*) FILTER (WHERE net < 0) AS snapshots_in_deficit,
               coalesce(sum(months_held) FILTER (WHERE net < 0), 0)::BIGINT AS months_in_deficit,
               sum(months_held)::BIGINT AS months_observed,
               arg_min(game_date, day) FILTER (WHERE net < 0) AS first_deficit,
               arg_max(game_date, day) FILTER (WHERE net < 0) AS last_deficit,
               min(net) AS worst_net
        FROM ({SERIES_NETS}) GROUP BY series, resource
        ORDER BY months_in_deficit DESC, series, resource
    """, _economy_params(series, resources))


def compare_series(con, series_a: str, series_b: str, resources=None) -> pl.DataFrame:
    """Two series side by side on the game dates both have: net per resource in each
    and the difference (b minus a)."""
    nets = query_frame(con, SERIES_NETS, _economy_params([series_a, series_b], resources))
    a = nets.filter(pl.col("series") == series_a).select("game_date", "day", "resource", net_a="net")
    b = nets.filter(pl.col("series") == series_b).select("day", "resource", net_b="net")
    return a.join(b, on=["day", "resource"]).with_columns(difference=pl.col("net_b") - pl.col("net_a")).sort(
        "resource", "day")


def _economy_params(series, resources) -> dict:
    as_list = lambda v: [v] if isinstance(v, str) else (list(v) if v else None)  # noqa: E731
    return {"series": as_list(series), "resources": as_list(resources)}


# --- decision quality --------------------------------------------------------------


def validity_by_format(con) -> pl.DataFrame:
    return query_frame(con, """
        SELECT format, count(*) AS decisions, count(*) FILTER (WHERE valid) AS valid, avg(valid::INT) AS valid_rate
        FROM decisions GROUP BY format ORDER BY format
    """)


def validity_by_agent(con) -> pl.DataFrame:
    """Per format and model (or agent, where a log names no model)."""
    return query_frame(con, """
        SELECT format, coalesce(model, agent_id, '(unknown)') AS model_or_agent, count(*) AS decisions,
               count(*) FILTER (WHERE valid) AS valid, avg(valid::INT) AS valid_rate
        FROM decisions GROUP BY ALL ORDER BY format, valid_rate, decisions DESC
    """)


def top_violation_rules(con, limit: int = 10, severities=("error", "warning")) -> pl.DataFrame:
    """The rules broken most often, with the formats and files they were found in."""
    return query_frame(con, """
        SELECT v.rule, string_agg(DISTINCT v.severity, '/' ORDER BY v.severity) AS severity,
               string_agg(DISTINCT s.format, ', ' ORDER BY s.format) AS formats,
               count(*) AS violations, count(DISTINCT v.source_id) AS files, any_value(v.message) AS example
        FROM violations v JOIN sources s USING (source_id)
        WHERE list_contains($severities, v.severity)
        GROUP BY v.rule ORDER BY violations DESC, v.rule LIMIT $limit
    """, {"limit": limit, "severities": list(severities)})


def violations_for_rule(con, rule: str, limit: int = 100) -> pl.DataFrame:
    """The records behind a rule, one row per violation: where (file, locator, field),
    the message, `raw` (the record as written: the rejected text, or the line read back
    from the file while it is still there) and `stored` (the rows the workbench keeps
    from that record, as a JSON object by table)."""
    hits = query_frame(con, f"""
        WITH hits AS (
            SELECT v.*, s.path, s.format, TRY_CAST(regexp_extract(v.locator, '^line (\\d+)$', 1) AS BIGINT) AS line
            FROM violations v JOIN sources s USING (source_id)
            WHERE v.rule = $rule
            ORDER BY s.path, line, v.locator LIMIT $limit
        ),
        stored AS (
            SELECT source_id, locator, table_name,
                   CASE WHEN count(*) = 1 THEN first(record) ELSE to_json(list(record)) END AS record
            FROM ({_stored_records(con)}) GROUP BY ALL
        )
        SELECT h.format, h.path, h.locator, h.line, h.severity, h.field, h.message, r.raw,
               CAST(st.stored AS VARCHAR) AS stored
        FROM hits h
        LEFT JOIN rejects r USING (source_id, locator)
        LEFT JOIN (SELECT source_id, locator, json_group_object(table_name, record) AS stored
                   FROM stored GROUP BY ALL) st USING (source_id, locator)
        ORDER BY h.path, h.line, h.locator
    """, {"rule": rule, "limit": limit})
    return hits.with_columns(raw=pl.Series(_raw_records(hits), dtype=pl.String)).drop("line")


def _raw_records(hits: pl.DataFrame) -> list[str | None]:
    """The rejected text where there is one, else the file's line for `line N` locators."""
    wanted: dict[str, set[int]] = {}
    for path, line, raw in hits.select("path", "line", "raw").iter_rows():
        if raw is None and line is not None:
            wanted.setdefault(path, set()).add(line)
    lines = {path: _read_lines(Path(path), numbers) for path, numbers in wanted.items()}
    return [raw if raw is not None else lines.get(path, {}).get(line)
            for path, line, raw in hits.select("path", "line", "raw").iter_rows()]


def _read_lines(path: Path, numbers: set[int]) -> dict[int, str]:
    if not path.is_file():
        return {}
    found, last = {}, max(numbers)
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, text in enumerate(handle, 1):
            if number in numbers:
                found[number] = text.rstrip("\n")
            if number >= last:
                break
    return found


def _stored_records(con) -> str:
    """The rows stored from the records in `hits`, from every table that keeps rows per
    record, found from the schema: keyed by `seq` (the line number: locator `line N`)
    or by its own `locator` column."""
    columns = con.execute("""
        SELECT table_name, list(column_name) FROM information_schema.columns
        WHERE table_schema = 'main' AND table_name NOT IN ('violations', 'rejects', 'sources')
        GROUP BY table_name ORDER BY table_name
    """).fetchall()
    selects = []
    for table, names in columns:
        key = "'line ' || t.seq" if "seq" in names else "t.locator" if "locator" in names else None
        if key is None or "source_id" not in names:
            continue
        selects.append(f"SELECT t.source_id, {key} AS locator, '{table}' AS table_name, to_json(t) AS record "
                       f"FROM {table} t SEMI JOIN hits h ON h.source_id = t.source_id AND h.locator = {key}")
    nothing = "SELECT NULL::BIGINT AS source_id, NULL AS locator, NULL AS table_name, NULL::JSON AS record"
    return " UNION ALL ".join(selects) or nothing
