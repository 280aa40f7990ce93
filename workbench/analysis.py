"""Questions the notebooks ask across formats, as short functions over a workbench
database: violations and the records behind them, model comparisons (from
`comparison`), and the database a notebook works on.

Each takes a DuckDB connection and returns a polars frame; the notebooks only wire
these to widgets and charts. Nothing here draws (that is `workbench.plots`) or keeps a
connection open. A question about one format's tables is that format's
(`workbench.<format>.queries`).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from workbench import catalog
from workbench.catalog import format_summary, query_frame  # noqa: F401  (format_summary: asked here too)
from workbench.errors import WorkbenchError


# --- the database a notebook works on ----------------------------------------------


def notebook_database() -> Path:
    """The database a notebook works on, built from the demo when missing.

    `$WORKBENCH_DB`, else `data/workbench.duckdb` of the repository (also when the
    notebook runs from `notebooks/`); builds the demo database there when missing.

    Returns:
        The database's absolute path.

    Raises:
        WorkbenchError: the database is missing and the demo does not write it (the path
            is not named `workbench.duckdb`).
    """
    db = catalog.default_db()
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
    """Where a notebook exports its figures: `figures/` beside the database.

    Args:
        db: the database's path.

    Returns:
        The `figures` folder beside the database (not created here).
    """
    return Path(db).parent / "figures"


# A short-lived read-only connection on a database path, so a notebook never holds the
# database while `workbench ingest` wants to write to it.
read_only = catalog.reading


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
    frame = query_frame(con, """
        SELECT v.rule, array_to_string(list_sort(list_distinct(list(v.severity))), '/') AS severity,
               array_to_string(list_sort(list_distinct(list(s.format))), ', ') AS formats,
               count(*) AS violations, count(DISTINCT v.source_id) AS files,
               -- the first finding's, by file and line: the same on every engine
               arg_min(v.message, s.path || lpad(CAST(coalesce(v.line, 0) AS VARCHAR), 20, '0') || v.locator) AS example
        FROM violation_lines v JOIN sources s USING (source_id)
        WHERE list_contains($severities, v.severity)
        GROUP BY v.rule ORDER BY violations DESC, v.rule LIMIT $limit
    """, {"limit": limit, "severities": list(severities)})
    if not examples:
        return frame
    # The places are listed by a query of their own, and the lists above sorted, not
    # aggregated in order: an ordered aggregate is DuckDB's, not Spark's.
    places = query_frame(con, """
        SELECT rule, place FROM (
            SELECT v.rule, s.path || ':' || v.locator AS place,
                   row_number() OVER (PARTITION BY v.rule ORDER BY s.path, v.line, v.locator) AS nth
            FROM violation_lines v JOIN sources s USING (source_id)
            WHERE list_contains($severities, v.severity) AND list_contains($rules, v.rule))
        WHERE nth <= $examples ORDER BY rule, nth
    """, {"severities": list(severities), "rules": frame["rule"].to_list(), "examples": examples})
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
    return query_frame(con, """
        SELECT path, format, sha256, size, records, rejected, ingested_at
        FROM sources ORDER BY format, path
    """)


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
    from the file while it holds what was ingested, `records.raw_texts`) and `stored` (the rows the workbench keeps
    from that record, as a JSON object by table).

    Args:
        con: a connection to a workbench database.
        rule: the rule's name, as `violations.rule` holds it.
        limit: at most this many violations, first by file, line and locator.

    Returns:
        A polars DataFrame, by file, line and locator: `format`, `path`, `locator`,
        `severity`, `field`, `message`, `raw` (NULL when the file no longer holds what was
        ingested) and `stored` (JSON text; NULL when nothing is kept from the record).
    """
    hits = query_frame(con, f"""
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
    """, {"rule": rule, "limit": limit})
    from workbench.records import raw_texts

    return hits.with_columns(raw=pl.Series(raw_texts(hits), dtype=pl.String)).drop(
        "line", "source_id", "sha256", "size")


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


# --- from the number to the record ---------------------------------------------------------


def records(con, format=None, model=None, game_id=None, rule=None, severity=None, valid=None, text=None,
            limit: int | None = 200, aliases=None, at=None, outcome=None) -> pl.DataFrame:
    """One row per record (a line, or a located part of a file that has none), filtered:
    where it is, its format, game, turn, model, validity, the rules it breaks and its raw
    text as written in its file (`records.records`).

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
        `action`, `valid`, `outcome`, `failure` (a failed call's reason, in the provider's
        words), `rules` and `severities` (lists), `raw` (NULL when the file no
        longer holds what was ingested) and `source_id`.

    Raises:
        WorkbenchError: an unknown `severity` or `outcome`, a `limit` that is not a whole number of 0 or
            more, or `aliases` that cannot be read.
    """
    from workbench.records import records as found

    return found(con, format=format, model=model, game_id=game_id, rule=rule, severity=severity, valid=valid,
                 text=text, limit=limit, aliases=aliases, at=at, outcome=outcome)


def side_by_side(con, a: str, b: str, format=None, aliases=None) -> pl.DataFrame:
    """Both models' decisions on each turn they shared (same game and turn; Arena:
    episode and tick; Damage: hand), disagreements first, with their raw texts
    (`records.side_by_side`).

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
        WorkbenchError: `a` and `b` are the same model.
    """
    from workbench.records import side_by_side as paired

    return paired(con, a, b, format=format, aliases=aliases)


# --- comparing models -------------------------------------------------------------------


def scorecard(con, by=("format", "model"), prices=None, aliases=None, cluster: str | None = "game",
              failures: str = "exclude") -> pl.DataFrame:
    """Per format and model: validity with its 95% interval clustered by game, n and
    games, latency, tokens, retries, the rule broken most, and costs
    (`comparison.scorecard`).

    A decision's model is the one its log names, else its agent.

    Args:
        con: a connection to a workbench database.
        by: the groups, one or more of `format`, `model`, `game_id`, `agent_id`.
        prices: a dict, or a JSON or CSV file, of prices laid over genai-prices' table.
        aliases: a dict, or a JSON or CSV file, mapping names to one model.
        cluster: what the interval is clustered by: `game`, `file`, or None for
            independent decisions.
        failures: `exclude` (validity of the answered decisions) or `invalid` (a failed
            call, which got no answer, counted as an invalid decision).

    Returns:
        A polars DataFrame, one row per group: the `by` columns (with `model`, also
        `model_from`: model, agent or unknown), `decisions`, `valid`, `validity`, `ci_low`,
        `ci_high` (95%), `games` (the clusters), `design_effect`, `ci_method` (`wilson`, or
        `wilson-clustered` where the games differ more than independent decisions would),
        `failed` (calls that got no answer), `failure_rate` (of all calls) with `failure_low`
        and `failure_high` (95%, clustered), `p50_ms`, `p95_ms` (latency), `p50_tokens` (per decision), `retries` (EC4X attempts
        past the first), `top_rule` and `top_rule_count` (the error rule broken most); with
        `model`, also `cost_per_decision`, `cost_per_valid` and `price_source` where a price
        is known.

    Raises:
        WorkbenchError: an unknown group or `cluster`, or `prices` or `aliases` that cannot be read.
    """
    from workbench.comparison import scorecard as card

    return card(con, by=by, prices=prices, aliases=aliases, cluster=cluster, failures=failures)


def compare_models(con, a: str | None = None, b: str | None = None, format: str | None = None, aliases=None,
                   all_pairs: bool = False, cluster: str | None = "game", failures: str = "exclude") -> pl.DataFrame:
    """Model a against b (or every pair, or each against the best beyond 30 models),
    per format, with clustered intervals, exact tests, Holm's correction and a verdict
    in plain words (`comparison.compare_models`).

    Paired where both decided at least 10 of the same turns of the same games (Newcombe's
    paired interval at the effective counts); otherwise unpaired (Newcombe's interval over
    each model's clustered interval); the p-value is the interval's own inversion, so the
    two never disagree. A difference is claimed only where the Holm-adjusted p-value is below
    0.05, the interval excludes 0 and each side has at least 2 games.

    Args:
        con: a connection to a workbench database.
        a: a model (or an alias); give both `a` and `b`, or neither for every pair.
        b: the model `a` is compared with.
        format: only this format; None: every format both decided in.
        aliases: a dict, or a JSON or CSV file, mapping names to one model.
        all_pairs: compare every pair even in a format of more than 30 models.
        cluster: what intervals are clustered by: `game`, `file`, or None.
        failures: `exclude` (compare the answered decisions) or `invalid` (a failed call
            counted against its model as an invalid decision).

    Returns:
        A polars DataFrame, one row per comparison: `format`, `a`, `b`, `compared` (which
        pairs), `n_a`, `n_b`, `games_a`, `games_b`, `validity_a`, `validity_b`, `difference`
        (a - b) with `ci_low`, `ci_high` (95%), `shared_turns`, `shared_games`,
        `validity_a_shared`, `validity_b_shared`, `games_compared`, `method`, `p_value`,
        `latency_p50_diff_ms`, `tokens_p50_diff`, `p_holm`, `shown_in_the_games` (shown, but
        perhaps within a single game), `significant`, `games_needed` (per model, to show the
        difference where no evidence was found), `failures` (how failed calls were
        counted) and `verdict` (in plain words, saying that too).

    Raises:
        WorkbenchError: only one of `a` and `b` given, a model or format with no decisions,
            two models that share no format, or nothing to compare.
    """
    from workbench.comparison import compare_models as compare

    return compare(con, a, b, format, aliases=aliases, all_pairs=all_pairs, cluster=cluster, failures=failures)


def sample_size(*given, difference: float | None = None, validity: float | None = None,
                decisions_per_game: float | None = None, icc: float | None = None, power: float = 0.8,
                level: float = 0.95, con=None, format: str | None = None, aliases=None,
                failures: str = "exclude") -> int:
    """Games per model to detect a difference in validity: `sample_size(difference=0.1,
    validity=0.85, decisions_per_game=40, icc=0.2)` (or positionally, in that order), or
    `sample_size(con, difference=...)` (or `con=con`) with the rest estimated from the
    database (`comparison.sample_size`).

    The fewest games for which the comparison's own test (Newcombe's interval from two
    Wilson intervals at the effective counts, Student's t at the degrees of freedom
    those games give it) keeps the difference at `power`; the design effect is
    1 + (m - 1) ICC of games of m decisions. Never fewer than 2.

    Args:
        difference: the difference in validity to detect (0.05 for 5 points).
        validity: the baseline validity (0 to 1); with `con`, overrides the estimate.
        decisions_per_game: decisions per game (at least 1); overrides the estimate.
        icc: the intra-class correlation of validity within games (0 to 1); overrides the
            estimate. Estimated, the ICC is taken at its 90% upper bound: from few
            games the estimate is often far too low.
        power: the chance of detecting the difference.
        level: the confidence level of the two-sided test.
        con: a connection to estimate validity, decisions per game and the ICC from.
        format: with `con`, estimate from that format's decisions only.
        aliases: with `con`, a dict or file mapping names to one model.
        failures: with `con`, `exclude` (the answered decisions) or `invalid` (a failed
            call counted as invalid).

    Returns:
        Games per model.

    Raises:
        WorkbenchError: an input is missing or out of range, or the database has no
            decisions to estimate from.
    """
    from workbench.comparison import sample_size as games

    named = {"difference": difference, "validity": validity, "decisions_per_game": decisions_per_game, "icc": icc,
             "power": power, "level": level}
    if given and not isinstance(given[0], (int, float)):  # sample_size(con, difference=...)
        if con is not None:
            raise WorkbenchError("sample_size takes one connection: positionally or as con=, not both")
        con, given = given[0], given[1:]
    if len(given) > len(named):
        raise WorkbenchError(f"sample_size takes at most {len(named)} numbers positionally, not {len(given)}")
    defaults = {"power": 0.8, "level": 0.95}
    for name, value in zip(named, given):
        if named[name] is not None and named[name] != defaults.get(name):
            raise WorkbenchError(f"sample_size was given {name} twice")
        named[name] = value
    return games(named["difference"], named["validity"], named["decisions_per_game"], named["icc"], named["power"],
                 named["level"], con=con, format=format, aliases=aliases, failures=failures)


def ratings(con, by: str = "model", bootstrap: int = 500, seed: int = 0, aliases=None,
            failures: str = "exclude") -> pl.DataFrame:
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
