"""Questions the notebooks ask across formats, as short functions over a workbench
database: the model comparisons (`comparison`), the records behind a number
(`records`), Damage's ratings and play quality (`damage`), the violations and the
records behind them, and what a database holds.

Each takes a DuckDB connection (or a Parquet tree open on Spark) and returns a polars
frame; the notebooks only wire these to widgets and charts. Nothing here draws (that is
`workbench.plots`) or keeps a connection open (the database a notebook works on is
`workbench.notebook`'s). A question about one format's tables is that format's
(`workbench.<format>.queries`); Damage's are imported when first asked, so that
`import workbench.analysis` loads no format.
"""

from __future__ import annotations

import polars as pl

from workbench.comparison import compare_models, sample_size, scorecard
from workbench.connection import format_summary, query_frame
from workbench.records import records, side_by_side

__all__ = [
    "scorecard",
    "compare_models",
    "sample_size",
    "ratings",
    "records",
    "side_by_side",
    "play_quality",
    "play_summary",
    "attack_outcomes",
    "top_violation_rules",
    "violations_for_rule",
    "provenance",
    "quality_gates",
    "format_summary",
]


# --- decision quality --------------------------------------------------------------


def top_violation_rules(con, limit: int = 10, severities=("error", "warning"), examples: int = 0) -> pl.DataFrame:
    """The rules broken most often, with the formats and files they were found in; with
    `examples`, that many places to look (`path:locator`, first by file and line).

    Args:
        con: a connection to a workbench database (or a Parquet tree open on Spark).
        limit: how many rules, the most often broken first.
        severities: the severities counted: `error`, `warning`, `info`, or several.
        examples: how many places to list per rule; 0: no `examples` column.

    Returns:
        A polars DataFrame, one row per rule, most findings first: `rule`, `severity` (the
        severities it was found with, joined by `/`), `formats` (comma-separated),
        `violations` (findings), `files`, `example` (the message of the first finding by
        file and line) and, with `examples`, `examples` (a list of `path:locator`, the
        path as ingested).

    Raises:
        WorkbenchError: a severity that is none of `error`, `warning` and `info`.
    """
    from workbench.records import known_severities

    severities = known_severities(severities)
    frame = query_frame(
        con,
        """
        SELECT v.rule, array_to_string(list_sort(list_distinct(list(v.severity))), '/') AS severity,
               array_to_string(list_sort(list_distinct(list(s.format))), ', ') AS formats,
               count(*) AS violations, count(DISTINCT v.source_id) AS files,
               -- the first finding's, by file and line: the same on every engine
               arg_min(v.message, s.path || lpad(CAST(coalesce(v.line, 0) AS VARCHAR), 20, '0') || v.locator) AS example
        FROM violation_lines v JOIN sources s USING (source_id)
        WHERE list_contains($severities, v.severity)
        GROUP BY v.rule ORDER BY violations DESC, v.rule LIMIT $limit
    """,
        {"limit": limit, "severities": list(severities)},
    )
    if not examples:
        return frame
    # The places are listed by a query of their own, and the lists above sorted, not
    # aggregated in order: an ordered aggregate is DuckDB's, not Spark's.
    places = query_frame(
        con,
        """
        SELECT rule, place FROM (
            SELECT v.rule, s.path || ':' || v.locator AS place,
                   row_number() OVER (PARTITION BY v.rule ORDER BY s.path, v.line, v.locator) AS nth
            FROM violation_lines v JOIN sources s USING (source_id)
            WHERE list_contains($severities, v.severity) AND list_contains($rules, v.rule))
        WHERE nth <= $examples ORDER BY rule, nth
    """,
        {"severities": list(severities), "rules": frame["rule"].to_list(), "examples": examples},
    )
    listed = places.group_by("rule", maintain_order=True).agg(examples=pl.col("place"))
    return frame.join(listed, on="rule", how="left", maintain_order="left")


# --- what a database holds ------------------------------------------------------------


def provenance(con) -> pl.DataFrame:
    """Every file the database holds: path, format, sha256, size, records, rejected, when read.

    Args:
        con: a connection to a workbench database.

    Returns:
        A polars DataFrame, one row per file, by format and path: `path`, `format`, `sha256`,
        `size` (bytes), `records`, `rejected`, `ingested_at`.
    """
    return query_frame(
        con,
        """
        SELECT path, format, sha256, size, records, rejected, ingested_at
        FROM sources ORDER BY format, path
    """,
    )


def quality_gates(con) -> pl.DataFrame:
    """The EC4X bot's quality gates per game and model (`ec4x_quality_gates`).

    Args:
        con: a connection to a workbench database.

    Returns:
        A polars DataFrame, one row per game, model and gate, in that order: `game_id`,
        `model`, `turns`, `gate`, `value`, `threshold`, `comparison` (`>=` or `<=`) and
        `passed` (the value against the threshold).
    """
    from workbench.ec4x.queries import GATES_QUERY

    return query_frame(con, GATES_QUERY)


def violations_for_rule(con, rule: str, limit: int = 100) -> pl.DataFrame:
    """The records behind a rule, one row per violation: where (file, locator, field),
    the message, `raw` (the record as written: the rejected text, or the line read back
    from the file while it holds what was ingested, `raw_text.raw_texts`) and `stored`
    (the rows the workbench keeps from that record, as a JSON object by table).

    Args:
        con: a connection to a workbench database.
        rule: the rule's name, as `violations.rule` holds it.
        limit: at most this many violations, first by file, line and locator.

    Returns:
        A polars DataFrame, by file, line and locator: `format`, `path`, `locator`,
        `severity`, `field`, `message`, `raw` (NULL when the file no longer holds what was
        ingested) and `stored` (JSON text; NULL when nothing is kept from the record).
    """
    hits = query_frame(
        con,
        f"""
        WITH hits AS (
            SELECT v.*, s.path, s.format, s.sha256, s.size,
                   TRY_CAST(regexp_extract(v.locator, '^line (\\d+)$', 1) AS BIGINT) AS line
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
               CAST(st.stored AS VARCHAR) AS stored, h.source_id, h.sha256, h.size
        FROM hits h
        LEFT JOIN rejects r USING (source_id, locator)
        LEFT JOIN (SELECT source_id, locator, json_group_object(table_name, record) AS stored
                   FROM stored GROUP BY ALL) st USING (source_id, locator)
        ORDER BY h.path, h.line, h.locator
    """,
        {"rule": rule, "limit": limit},
    )
    from workbench.raw_text import raw_texts

    return hits.with_columns(raw=pl.Series(raw_texts(hits), dtype=pl.String)).drop(
        "line", "source_id", "sha256", "size"
    )


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
        selects.append(
            f"SELECT t.source_id, {key} AS locator, '{table}' AS table_name, to_json(t) AS record "
            f"FROM {table} t SEMI JOIN hits h ON h.source_id = t.source_id AND h.locator = {key}"
        )
    nothing = "SELECT NULL::BIGINT AS source_id, NULL AS locator, NULL AS table_name, NULL::JSON AS record"
    return " UNION ALL ".join(selects) or nothing


# --- Damage: ratings and play quality -----------------------------------------------------


def ratings(
    con, by: str = "model", bootstrap: int = 500, seed: int = 0, aliases=None, failures: str = "exclude"
) -> pl.DataFrame:
    """Damage placements as Plackett-Luce ratings per model (or seat, or player) with
    95% intervals from a bootstrap over games, rank intervals and tied groups; none below
    3 rated games (`damage.ratings.ratings`).

    Args:
        con: a connection to a workbench database.
        by: who is rated: `model`, `seat` or `player`.
        bootstrap: how many resamples of the games the interval is drawn from.
        seed: the random seed of the resampling (the same seed, the same intervals).
        aliases: a dict, or a JSON or CSV file, mapping names to one model (`by="model"`).
        failures: `exclude`: a player's model is the one most of its answered decisions
            name; `invalid`: of all its calls, failed ones too.

    Returns:
        A polars DataFrame, one row per model (seat, player), by rank: the `by` column,
        `games`, `rated_games` (with at least one other team), `placements` (every place
        its seats took, in the order the games ended), `wins`, `mean_place`, `mu`, `sigma`,
        `ordinal` (mu - 3 sigma), `mu_low`, `mu_high` (the 95% interval; NULL below 3 rated
        games), `rank` (by ordinal), `rank_low`, `rank_high` (the ranks it could hold),
        `tied` (the rank of the best model it cannot be told apart from) and `note` ("too
        few games ...").

    Raises:
        WorkbenchError: an unknown `by`, no finished Damage game, or none with two of `by`
            to rank.
    """
    from workbench.damage.ratings import ratings as rate

    return rate(con, by=by, bootstrap=bootstrap, seed=seed, aliases=aliases, failures=failures)


def play_quality(con, model: str | None = None, game_id: str | None = None) -> pl.DataFrame:
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
    from workbench.damage.quality import play_quality as judged

    return judged(con, model=model, game_id=game_id)


def play_summary(con, aliases=None, model: str | None = None, game_id: str | None = None) -> pl.DataFrame:
    """Per model: each mistake's rate, `vpip`, `pfr`, `aggression`, `fold_to_raise` and
    `showdown_win_rate`, each with `_low`/`_high` (95%, clustered by game) and `_n`, and
    the chips and Lives won at showdown beside those its win probabilities expected.

    Raises:
        WorkbenchError: no answered Damage betting decision (of `model`, in `game_id`).
    """
    from workbench.damage.quality import play_summary as summary

    return summary(con, aliases=aliases, model=model, game_id=game_id)


def attack_outcomes(con, game_id: str | None = None) -> pl.DataFrame:
    """Per attack (a raise's attack plan the simulator resolved): where it is, attacker,
    target, `plan`, `intent`, `expected_shift`, and the target's `fold_rate`,
    `aggression` and `mistake_rate` in its 3 judged decisions before (`_before`) and
    after (`_after`), with their counts (`n_before`, `n_after`)."""
    from workbench.damage.quality import attack_outcomes as outcomes

    return outcomes(con, game_id=game_id)
