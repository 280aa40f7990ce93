"""From the number to the record: every record a database holds, found by format, model,
game, rule, severity, validity or the words in its text, with that text exactly as
written in its file; and two models' decisions on the same turns, side by side.

A record is a line of a line-based file (`line N`), or a located part of another file
(`tool get_planets`, `country 5`). What is known of it comes from every table that keeps
rows per record (found from the schema: a `seq` line number or a `locator`), from the
decisions, from the findings and from the rejects. A response of the game master is
named `response r-12` in its findings and decisions; it is the line its response row was
read from.

Raw text: a reject's is kept in the database; any other record's is read back from its
file, but only while the file still holds what was ingested (`raw_text`); otherwise `raw`
is NULL.
"""

from __future__ import annotations

import uuid
from contextlib import contextmanager

import polars as pl
import pyarrow as pa

from workbench.connection import query_frame
from workbench.errors import WorkbenchError
from workbench.naming import alias_sql, read_aliases, two_models
from workbench.outcomes import OUTCOMES
from workbench.raw_text import LINE_OF_LOCATOR, file_lines, raw_texts, text_matches

RECORD_COLUMNS = (
    "path",
    "locator",
    "line",
    "format",
    "game_id",
    "turn",
    "model",
    "agent_id",
    "action",
    "valid",
    "outcome",
    "failure",
    "rules",
    "severities",
    "raw",
    "source_id",
)
SEVERITIES = ("error", "warning", "info")
# Tables read here for what they are, not as records of a file.
_NOT_RECORDS = ("sources", "violations", "rejects", "decisions", "workbench_schema")


def known_severities(severities) -> tuple[str, ...]:
    """`severities` (one, or several) as a tuple; WorkbenchError at one not in SEVERITIES."""
    severities = (severities,) if isinstance(severities, str) else tuple(severities)
    unknown = [severity for severity in severities if severity not in SEVERITIES]
    if unknown:
        raise WorkbenchError(f"no severity {unknown[0]!r}; one of {', '.join(SEVERITIES)}")
    return severities


# --- which records -----------------------------------------------------------------------


def records(
    con,
    format: str | None = None,
    model: str | None = None,
    game_id: str | None = None,
    rule: str | None = None,
    severity: str | None = None,
    valid: bool | None = None,
    text: str | None = None,
    limit: int | None = 200,
    aliases=None,
    at=None,
    outcome: str | None = None,
) -> pl.DataFrame:
    """One row per record (a line, or a located part of a file that has none), filtered:
    where it is, its format, game, turn, model, validity, the rules it breaks and its raw
    text as written in its file.

    Every filter given must hold; None means any.

    Args:
        con: a connection to a workbench database.
        format: a format's name.
        model: a model (or an alias of one, with `aliases`).
        game_id: a game (Arena: an episode).
        rule: a rule the record breaks.
        severity: a severity of a finding about it: `error`, `warning` or `info`.
        valid: True or False: the validity of its decision (a failed call has none).
        text: words found in its raw text, in any case.
        limit: at most this many rows; None: all.
        aliases: a dict, or a JSON or CSV (`name,model`) file, mapping names to one model.
        at: a frame (or a dict of columns) of `source_id` and `line` keeping only the
            records named there, as a chart's drill-down finds them; a null line names the
            records of a file without lines.
        outcome: `valid`, `invalid` or `failed` (a call that got no answer): its decision's.

    Returns:
        A polars DataFrame in file and line order: `path`, `locator` (`line N`, or where in
        a file that has no lines), `line`, `format`, `game_id`, `turn`, `model`, `agent_id`,
        `action`, `valid` (NULL for a failed call: no answer to judge), `outcome`, `failure`
        (a failed call's reason, in the provider's words), `rules` and `severities`
        (lists), `raw` (NULL when the file no longer holds what was ingested) and
        `source_id`.

    Raises:
        WorkbenchError: an unknown `severity` or `outcome`, a `limit` that is not a whole
            number of 0 or more, or `aliases` that cannot be read.
    """
    if severity is not None:
        known_severities(severity)
    if outcome is not None and outcome not in OUTCOMES:
        raise WorkbenchError(f"no outcome {outcome!r}; one of {', '.join(OUTCOMES)}")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise WorkbenchError(f"limit must be a whole number of rows, 0 or more (not {limit!r})")
    given, aliases = _given(format, model, game_id, rule, severity, valid, outcome, aliases)
    frame = _found(con, given, limit, aliases, _kept(con, text, format, at))
    return frame.with_columns(raw=pl.Series(raw_texts(frame), dtype=pl.String)).select(RECORD_COLUMNS)


def count_records(
    con,
    format: str | None = None,
    model: str | None = None,
    game_id: str | None = None,
    rule: str | None = None,
    severity: str | None = None,
    valid: bool | None = None,
    text: str | None = None,
    aliases=None,
    outcome: str | None = None,
) -> int:
    """How many records `records` finds with these filters, all of them."""
    given, aliases = _given(format, model, game_id, rule, severity, valid, outcome, aliases)
    lines = _kept(con, text, format, None)
    sql = (
        "SELECT count(*) AS n FROM ("
        + _records_sql(con, given, aliases, searched=lines is not None, limited=False)
        + ")"
    )
    if lines is None:
        return int(query_frame(con, sql, given)["n"][0])
    with _registered(con, lines) as name:
        return int(query_frame(con, sql.replace("$matched", name), given)["n"][0])


def _given(format, model, game_id, rule, severity, valid, outcome, aliases) -> tuple[dict, dict]:
    """The filters given (a model named by an alias as its model), and the aliases read."""
    aliases = read_aliases(aliases)  # once: a file is read here, not again for the query
    if model is not None:  # a name the aliases map is its model's, as in a comparison
        model = aliases.get(model, model)
    given = {
        "format": format,
        "model": model,
        "game_id": None if game_id is None else str(game_id),
        "rule": rule,
        "severity": severity,
        "valid": valid,
        "outcome": outcome,
    }
    return {k: v for k, v in given.items() if v is not None}, aliases


def _kept(con, text: str | None, format: str | None, at) -> pa.Table | None:
    """The (source_id, line) a search keeps to: the lines holding `text`, those `at`
    names, or both; None for no such restriction."""
    if at is not None:
        at = pl.DataFrame(at).select(pl.col("source_id").cast(pl.Int64), pl.col("line").cast(pl.Int64))
    if not text:
        return None if at is None else at.to_arrow()
    lines = text_matches(con, text, format)
    return lines if at is None else pl.DataFrame(lines).join(at, on=["source_id", "line"]).to_arrow()


def _found(con, given: dict, limit: int | None, aliases, lines: pa.Table | None) -> pl.DataFrame:
    """The records that match every filter `given`, kept to `lines` (source_id, line)."""
    sql = _records_sql(con, given, aliases, searched=lines is not None, limited=limit is not None)
    params = {**given, **({"limit": limit} if limit is not None else {})}
    if lines is None:
        return query_frame(con, sql, params)
    with _registered(con, lines) as name:
        return query_frame(con, sql.replace("$matched", name), params)


# A record's key: its line, or (no line: NO_LINE) its locator in `other` ('' for a line).
# Lines count from 1; a key never holds NULL, so every join on it is a plain hash join.
_KEY = "source_id, line, other"
NO_LINE = 0


def _records_sql(con, given: dict, aliases, searched: bool, limited: bool) -> str:
    """One statement in two steps. The candidates: the keys of the rows of the one kind
    (decisions, table rows, findings, rejects) a filter given says a match must have,
    or of every kind; with no filter left that needs what a record is (only format,
    text, `at`), the first `limit` of them. Then what each candidate is, each kind
    aggregated over the candidates' rows only, and the filters checked on it."""
    who = alias_sql(read_aliases(aliases), "model")
    where = {
        "game_id": "coalesce(d.game_id, t.game_id, g.game_id) = $game_id",
        "model": "d.model = $model",
        "valid": "$valid = " + VALIDITY,
        "rule": "list_contains(f.rules, $rule)",
        "severity": "list_contains(f.severities, $severity)",
        "outcome": "d.outcome = $outcome",
    }
    conditions = [where[name] for name in given if name in where]
    tables = _record_tables(con)

    def located(table: str, has_line: bool) -> str:
        line = f"coalesce({'x.line, ' if has_line else ''}{LINE_OF_LOCATOR.format('x.locator')}, n.line)"
        return (
            f"SELECT x.*{' EXCLUDE (line)' if has_line else ''}, coalesce({line}, {NO_LINE}) AS line, "
            f"CASE WHEN {line} IS NULL THEN x.locator ELSE '' END AS other "
            f"FROM {table} x SEMI JOIN src USING (source_id) LEFT JOIN named n USING (source_id, locator)"
        )

    # a null line of $matched: a record of a file without lines
    matched = (
        f"SEMI JOIN $matched m ON m.source_id = k.source_id AND coalesce(m.line, {NO_LINE}) = k.line"
        if searched
        else ""
    )
    early = limited and not conditions
    return f"""
    WITH src AS (SELECT source_id, path, format, sha256, size FROM sources
                 {"WHERE format = $format" if "format" in given else ""}
                 {"AND" if "format" in given else "WHERE"}
                 {"source_id IN (SELECT source_id FROM $matched)" if searched else "true"}),
    named AS ({_named_lines(tables)}),
    decisions_at AS NOT MATERIALIZED ({located("decisions", False)}),
    findings_at AS NOT MATERIALIZED ({located("violation_lines", True)}),
    rejects_at AS NOT MATERIALIZED ({located("rejects", True)}),
    rows_at AS NOT MATERIALIZED ({_table_rows(tables)}),
    -- the game of a file whose decisions name one: also that of its lines no game is read from (rejects)
    file_games AS (SELECT source_id, min(game_id) AS game_id FROM decisions SEMI JOIN src USING (source_id)
                   GROUP BY source_id HAVING min(game_id) = max(game_id)),
    candidates AS MATERIALIZED (
        SELECT k.* FROM ({_candidates(given, who)}) k JOIN src s USING (source_id) {matched}
        {"ORDER BY s.path, s.source_id, k.line = " + str(NO_LINE) + ", k.line, k.other LIMIT $limit" if early else ""}
    ),
    dec AS (SELECT {_KEY}, min(game_id) AS game_id, min(turn) AS turn, min({who}) AS model,
                   min(agent_id) AS agent_id, string_agg(DISTINCT action, ', ' ORDER BY action) AS action,
                   bool_and(valid) AS valid,
                   -- a record of several decisions: invalid if one was, else failed if one was
                   CASE WHEN bool_or(outcome = 'invalid') THEN 'invalid' WHEN bool_or(outcome = 'failed')
                        THEN 'failed' ELSE min(outcome) END AS outcome, min(failure) AS failure
            FROM decisions_at SEMI JOIN candidates USING ({_KEY}) GROUP BY ALL),
    fnd AS (SELECT {_KEY}, list(DISTINCT rule ORDER BY rule) AS rules,
                   list(DISTINCT severity ORDER BY severity) AS severities
            FROM findings_at SEMI JOIN candidates USING ({_KEY}) GROUP BY ALL),
    rej AS (SELECT {_KEY}, first(raw) AS raw FROM rejects_at SEMI JOIN candidates USING ({_KEY}) GROUP BY ALL),
    tab AS (SELECT {_KEY}, max(game_id) AS game_id, max(turn) AS turn, bool_and(valid) AS valid
            FROM rows_at SEMI JOIN candidates USING ({_KEY}) GROUP BY ALL)
    SELECT s.path, CASE WHEN k.line = {NO_LINE} THEN k.other ELSE 'line ' || k.line END AS locator,
           nullif(k.line, {NO_LINE}) AS line, s.format,
           coalesce(d.game_id, t.game_id, g.game_id) AS game_id, coalesce(d.turn, t.turn) AS turn, d.model,
           d.agent_id, d.action, {VALIDITY} AS valid, d.outcome, d.failure, coalesce(f.rules, []) AS rules,
           coalesce(f.severities, []) AS severities, r.raw, s.source_id, s.sha256, s.size
    FROM candidates k JOIN src s USING (source_id)
    LEFT JOIN dec d USING ({_KEY}) LEFT JOIN fnd f USING ({_KEY}) LEFT JOIN rej r USING ({_KEY})
    LEFT JOIN tab t USING ({_KEY}) LEFT JOIN file_games g USING (source_id)
    {"WHERE " + " AND ".join(conditions) if conditions else ""}
    ORDER BY s.path, s.source_id, k.line = {NO_LINE}, k.line, k.other
    {"LIMIT $limit" if limited else ""}
    """


def _candidates(given: dict, who: str) -> str:
    """The keys of the rows a match must have one of: of the kind a filter names, or of
    every kind (the final WHERE checks every filter on what the record is)."""

    def keys(table: str, condition: str = "true") -> str:
        return f"SELECT DISTINCT {_KEY} FROM {table} WHERE {condition}"

    if "model" in given:
        return keys("decisions_at", f"{who} = $model")
    if "outcome" in given:
        return keys("decisions_at", "outcome = $outcome")
    if "rule" in given or "severity" in given:
        return keys("findings_at", " AND ".join(f"{name} = ${name}" for name in ("rule", "severity") if name in given))
    if given.get("valid") is False:
        return " UNION ".join(
            [
                keys("decisions_at", "NOT valid"),
                keys("rows_at", "NOT valid"),
                keys("findings_at", "severity = 'error'"),
                keys("rejects_at"),
            ]
        )
    if "game_id" in given:
        in_game = "source_id IN (SELECT source_id FROM file_games WHERE game_id = $game_id)"
        return " UNION ".join(
            [
                keys("decisions_at", "game_id = $game_id"),
                keys("rows_at", "game_id = $game_id"),
                keys("findings_at", in_game),
                keys("rejects_at", in_game),
            ]
        )
    return " UNION ".join(keys(table) for table in ("decisions_at", "findings_at", "rejects_at", "rows_at"))


# A decision's own validity (none for a failed call: no answer to judge); else its table
# row's; else: not rejected and no error found.
VALIDITY = (
    "CASE WHEN d.outcome = 'failed' THEN NULL ELSE coalesce(d.valid, t.valid, r.source_id IS NULL AND NOT "
    "coalesce(list_contains(f.severities, 'error'), false)) END"
)


def _table_rows(tables: list[tuple[str, set[str]]]) -> str:
    """(source_id, locator, line, game_id, turn, valid) of every row of the tables that
    keep rows per record (a `seq` line or a `locator`), of the sources in `src`, with
    the key columns of _KEY."""
    parts = []
    for table, columns in tables:
        game = next((f"{c}::VARCHAR" for c in ("game_id", "episode", "episode_id") if c in columns), "NULL::VARCHAR")
        turn = next((f"{c}::BIGINT" for c in ("turn", "tick") if c in columns), "NULL::BIGINT")
        valid = "valid" if "valid" in columns else "NULL::BOOLEAN"
        key = "seq AS line, '' AS other" if "seq" in columns else f"{NO_LINE}::BIGINT AS line, locator AS other"
        parts.append(
            f"SELECT source_id, {key}, {game} AS game_id, {turn} AS turn, {valid} AS valid "
            f"FROM {table} SEMI JOIN src USING (source_id)"
        )
    none = (
        "SELECT NULL::BIGINT AS source_id, NULL::BIGINT AS line, '' AS other, NULL::VARCHAR AS game_id, "
        "NULL::BIGINT AS turn, NULL::BOOLEAN AS valid WHERE false"
    )
    return " UNION ALL ".join(parts) or none


def _record_tables(con) -> list[tuple[str, set[str]]]:
    """The tables that keep rows per record: a source_id, and a `seq` line or a `locator`."""
    rows = con.execute("""
        SELECT table_name, list(column_name) FROM duckdb_columns()
        WHERE NOT internal AND database_name = current_database() AND schema_name = 'main'
          AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'
                             AND database_name = current_database())
        GROUP BY table_name ORDER BY table_name
    """).fetchall()
    return [
        (table, set(columns))
        for table, columns in rows
        if table not in _NOT_RECORDS and "source_id" in columns and ({"seq", "locator"} & set(columns))
    ]


def _named_lines(tables: list[tuple[str, set[str]]]) -> str:
    """(source_id, locator, line) for records named otherwise than `line N` in findings
    and decisions: from findings that give the line, and from the tables whose format
    locates its records otherwise (`Format.locators`)."""
    from workbench.registry import record_locators

    parts = [
        "SELECT source_id, locator, min(line) AS line FROM violation_lines WHERE line IS NOT NULL "
        "AND NOT starts_with(locator, 'line ') GROUP BY ALL",
        "SELECT source_id, locator, min(line) FROM rejects WHERE line IS NOT NULL "
        "AND NOT starts_with(locator, 'line ') GROUP BY ALL",
    ]
    present = {table for table, _ in tables}
    parts += [
        f"SELECT source_id, {name} AS locator, min(seq) FROM {table} GROUP BY ALL"
        for table, name in record_locators().items()
        if table in present
    ]
    return "SELECT source_id, locator, min(line) AS line FROM (" + " UNION ALL ".join(parts) + ") GROUP BY ALL"


# --- two models on the same turns ---------------------------------------------------------


SIDE_COLUMNS = ("agent_id", "action", "valid", "outcome", "rules", "raw", "path", "locator")
# A turn's decisions in the order they came: by round (as first reached), then line.
_BLOCK = ["format", "game_id", "turn"]


def side_by_side(con, a: str, b: str, format: str | None = None, aliases=None) -> pl.DataFrame:
    """Both models' decisions on each turn they shared (same game and turn; Arena:
    episode and tick; Damage: hand), disagreements first, with their raw texts.

    One decision a side per row: within a turn, each round (Damage: betting round) pairs
    the two models' decisions in the order they came, so a model playing several seats
    has a row for each, and a side with no decision of its own in a row is empty.

    Args:
        con: a connection to a workbench database.
        a: the first model (or agent, where a log names no model).
        b: the second model, another than `a`.
        format: only this format's decisions; None: every format.
        aliases: a dict, or a JSON or CSV file, mapping names to one model.

    Returns:
        A polars DataFrame, the turns where one model's answered decisions were all valid
        and the other's not (`disagree`) first, then by format, game, turn and round:
        `format`, `game_id`, `turn`, `round`, `a`, `b`, `disagree`, then for each model
        (`_a`, `_b`) `agent_id` (the seat), `action`, `valid` (NULL for a failed call),
        `outcome`, `rules`, `raw`, `path` and `locator`.

    Raises:
        WorkbenchError: `a` and `b` are the same model, or `aliases` that cannot be read.
    """
    from workbench.comparison import decisions_sql

    aliases = read_aliases(aliases)
    a, b = two_models(a, b, aliases, "side by side")
    decisions = query_frame(
        con,
        f"""
        WITH d AS ({decisions_sql(aliases, failures=None)}),
        named AS ({_named_lines(_record_tables(con))}),
        mine AS (
            SELECT d.format, d.game_id, d.turn, d.round, d.who, d.agent_id, d.action, d.valid, d.outcome,
                   d.source_id, d.locator, coalesce({LINE_OF_LOCATOR.format("d.locator")}, n.line) AS line
            FROM d LEFT JOIN named n USING (source_id, locator)
            WHERE d.who IN ($a, $b) AND d.game_id IS NOT NULL AND d.turn IS NOT NULL
              AND ($format IS NULL OR d.format = $format)
        ),
        turns AS (SELECT format, game_id, turn FROM mine GROUP BY ALL HAVING count(DISTINCT who) = 2)
        SELECT mine.* FROM mine SEMI JOIN turns USING (format, game_id, turn)
    """,
        {"a": a, "b": b, "format": format},
    )
    texts = _texts_of(con, decisions)
    joined = decisions.join(texts, on=["source_id", "line"], how="left").sort("source_id", "line", "locator")
    # a round's place in its turn: where it was first reached
    joined = joined.with_columns(
        round_at=pl.col("line").min().over([*_BLOCK, "round"]),
        place=pl.int_range(pl.len()).over([*_BLOCK, "round", "who"]),
    )
    sides = [
        joined.filter(pl.col("who") == who)
        .drop("who", "source_id", "line")
        .rename({c: f"{c}{suffix}" for c in SIDE_COLUMNS})
        for who, suffix in ((a, "_a"), (b, "_b"))
    ]
    keys = [*_BLOCK, "round", "place"]
    pairs = (
        sides[0]
        .join(sides[1], on=keys, how="full", coalesce=True, nulls_equal=True)
        .with_columns(round_at=pl.min_horizontal("round_at", "round_at_right"))
        .drop("round_at_right")
    )
    # over the answered decisions: a failed call (no validity) or an empty side is no disagreement
    disagree = pl.col("valid_a").all().over(_BLOCK) != pl.col("valid_b").all().over(_BLOCK)
    pairs = pairs.with_columns(a=pl.lit(a), b=pl.lit(b), disagree=disagree)
    order = [*_BLOCK, "round", "a", "b", "disagree", *(f"{c}{s}" for s in ("_a", "_b") for c in SIDE_COLUMNS)]
    return pairs.sort(
        ["disagree", *_BLOCK, "round_at", "place"],
        descending=[True, False, False, False, False, False],
        nulls_last=True,
    ).select(order)


def _texts_of(con, decisions: pl.DataFrame) -> pl.DataFrame:
    """(source_id, line, path, rules, raw) of the records the decisions were read from."""
    lines = decisions.select("source_id", "line").drop_nulls().unique()
    found = _found(con, {}, None, None, lines.to_arrow())
    found = found.with_columns(raw=pl.Series(raw_texts(found), dtype=pl.String))
    return found.select("source_id", "line", "path", "rules", "raw")


@contextmanager
def _registered(con, table: pa.Table):
    """`table` readable by a name of its own for the block (no table of a database has it)."""
    name = f"workbench_matches_{uuid.uuid4().hex}"
    con.register(name, table)
    try:
        yield name
    finally:
        con.unregister(name)


# --- what a text search passes over ------------------------------------------------------------


def unsearched(con, format: str | None = None) -> list[str]:
    """The files a `text` search passes over: they no longer hold what was ingested
    (changed, gone, or something other than a regular file in their place)."""
    sources = con.execute(
        "SELECT path, sha256, size FROM sources WHERE $format IS NULL OR format = $format ORDER BY path",
        {"format": format},
    ).fetchall()
    return [path for path, sha256, size in sources if file_lines(path, sha256, size) is None]


def findings_of(con, source_id: int, locator: str, line: int | None) -> pl.DataFrame:
    """The findings about one record (by its line, or its locator): severity, rule,
    field and message, most severe first."""
    return query_frame(
        con,
        f"""
        SELECT severity, rule, field, message FROM violation_lines
        WHERE source_id = $source_id
          AND (locator = $locator OR coalesce(line, {LINE_OF_LOCATOR.format("locator")}) = $line)
        ORDER BY list_position(['error', 'warning', 'info'], severity), rule, field
    """,
        {"source_id": source_id, "locator": locator, "line": line},
    )
