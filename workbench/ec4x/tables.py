"""The EC4X tables, declared once, the quality-gate view, and the SQL that fills them.

Every line that is a JSON object becomes a row, valid or not (`valid` says whether the
line has an error violation); typed columns are NULL where the value has the wrong
JSON type, and the whole record stays in a JSON column.
"""

from __future__ import annotations

import dataclasses

import duckdb
import pyarrow as pa

from workbench.catalog import DECISIONS
from workbench.ec4x.families import FAMILIES, draft_families_sql, draft_keys, tag_family_sql
from workbench.ec4x.orders import OrderDraft
from workbench.ec4x.trace import OtherKind, SessionStart, TurnRecord
from workbench.jsonl import OPENS_AN_OBJECT
from workbench.schema import Column, Table, json_path, once, read_values, run_on, values_at

# The bot's own gates (its trace evaluation script): name, threshold, comparison.
GATES = (
    ("success_rate", 0.75, ">="),
    ("retry_rate", 0.50, "<="),
    ("longest_success_run", 20, ">="),
    ("feature_families", len(FAMILIES), ">="),
)


def _gate_rows() -> str:
    values = {
        "success_rate": "g.success_rate",
        "retry_rate": "g.retry_rate",
        "longest_success_run": "coalesce(r.longest, 0)",
        "feature_families": "coalesce(f.covered, 0)",
    }
    rows = ", ".join(
        f"{{'gate': '{name}', 'value': CAST({values[name]} AS DOUBLE), 'threshold': CAST({threshold} AS DOUBLE), "
        f"'comparison': '{comparison}'}}"
        for name, threshold, comparison in GATES
    )
    return f"unnest([{rows}])"


ORDERS = Table(
    "ec4x_orders",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("seq", "BIGINT", "1-based line number", required=True),
        Column("game_id", "VARCHAR", "from the file name: `<game_id>.orders.jsonl`"),
        Column("turn", "BIGINT", "the draft's `turn`", path="turn"),
        Column("house_id", "BIGINT", "the draft's `houseId`: the house (player) it orders for", path="houseId"),
        Column("families", "VARCHAR[]", "feature families the draft uses (families.py)"),
        Column("payload", "JSON", "the draft as written"),
        Column("valid", "BOOLEAN", "no error violation on the line", required=True),
    ),
    doc="One row per order draft (a line of `*.orders.jsonl`), valid or not.",
    model=OrderDraft,
)

SESSIONS = Table(
    "ec4x_sessions",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("seq", "BIGINT", "1-based line number", required=True),
        Column("kind", "VARCHAR", "session_start, or a kind the bot is not known to write", path="kind"),
        Column("game_id", "VARCHAR", "the line's `gameId`", path="gameId"),
        Column("ts", "TIMESTAMP", "the line's `timestamp`, as UTC", path="timestamp"),
        Column("model", "VARCHAR", "the model the bot plays with (`model`)", path="model"),
        Column(
            "max_retries",
            "BIGINT",
            "how many times the bot retries a failed attempt at a turn (`maxRetries`)",
            path="maxRetries",
        ),
        Column("record", "JSON", "the line as written"),
        Column("valid", "BOOLEAN", "no error violation on the line", required=True),
    ),
    doc="One row per line of a bot trace that has a `kind`: a `session_start` at each start of the bot.",
    model=(SessionStart, OtherKind),
)

TURNS = Table(
    "ec4x_turns",
    (
        Column("source_id", "BIGINT", "the file (`sources.source_id`)", required=True),
        Column("seq", "BIGINT", "1-based line number", required=True),
        Column("game_id", "VARCHAR", "the line's `gameId`", path="gameId"),
        Column(
            "ts",
            "TIMESTAMP",
            "the line's `timestamp`, as UTC (the bot writes local time with its offset)",
            path="timestamp",
        ),
        Column("turn", "BIGINT", "the game turn played (`turn`)", path="turn"),
        Column("ok", "BOOLEAN", "the turn's orders were submitted (`ok`)", path="ok"),
        Column(
            "error_class",
            "VARCHAR",
            "`errorClass`: success, validation, llm_request, transport or unknown",
            path="errorClass",
        ),
        Column("attempts", "BIGINT", "attempts the turn took, from 1 (`attempts`)", path="attempts"),
        Column("errors", "VARCHAR[]", "the errors the bot reports for the turn (`errors`)", path="errors"),
        Column(
            "feature_tags",
            "VARCHAR[]",
            "what a successful turn's orders used (`featureTags`): family names and `ztc_<command>` tags",
            path="featureTags",
        ),
        Column("failed_stages", "VARCHAR[]", "trace[].stage, one per failed attempt", path="trace[].stage"),
        Column(
            "llm_ms",
            "DOUBLE",
            "sum of trace[].llmRequestMs (the trace times failed attempts only)",
            path="trace[].llmRequestMs",
        ),
        Column("llm_response_bytes", "BIGINT", "sum of trace[].llmResponseBytes", path="trace[].llmResponseBytes"),
        Column("trace", "JSON", "the failed attempts as written (`trace`)", path="trace"),
        Column("model", "VARCHAR", "from the latest session_start before the line"),
        Column("valid", "BOOLEAN", "no error violation on the line", required=True),
    ),
    doc="One row per turn line of a bot trace (`bot_trace_<gameId>.jsonl`): how the bot's turn went.",
    model=TurnRecord,
)

# What each view holds, by its name.
VIEW_DOCS = {
    "ec4x_quality_gates": "The bot's own quality gates, per game and model: success rate, retry rate, longest run "
    "of successful turns (in the order of their files' paths, then lines) and feature "
    "families covered, each with its threshold and whether it passed.",
}

TABLES = (ORDERS, SESSIONS, TURNS)

VIEWS = f"""
CREATE OR REPLACE VIEW ec4x_quality_gates AS
WITH turns AS (
    -- A game's turns in the order of their files' paths, then lines: not of source ids,
    -- which follow the order the files were first read in.
    SELECT game_id, coalesce(model, '(no session_start)') AS model, s.path, seq,
           coalesce(ok, false) AS ok, coalesce(attempts, 1) > 1 AS retried, feature_tags
    FROM ec4x_turns JOIN sources s USING (source_id)
),
islands AS (
    SELECT game_id, model, ok,
           row_number() OVER (PARTITION BY game_id, model ORDER BY path, seq)
         - row_number() OVER (PARTITION BY game_id, model, ok ORDER BY path, seq) AS island
    FROM turns
),
runs AS (
    SELECT game_id, model, max(n) AS longest
    FROM (SELECT game_id, model, island, count(*) AS n FROM islands WHERE ok GROUP BY ALL)
    GROUP BY ALL
),
families AS (
    SELECT game_id, model, count(DISTINCT family) AS covered
    FROM (SELECT game_id, model, {tag_family_sql("tag")} AS family FROM turns, unnest(feature_tags) AS u(tag))
    WHERE family IS NOT NULL
    GROUP BY ALL
),
games AS (
    SELECT game_id, model, count(*) AS turns, avg(CAST(ok AS INTEGER)) AS success_rate,
           avg(CAST(retried AS INTEGER)) AS retry_rate
    FROM turns GROUP BY ALL
),
gates AS (
    SELECT g.game_id, g.model, g.turns, {_gate_rows()} AS gate
    FROM games g LEFT JOIN runs r USING (game_id, model) LEFT JOIN families f USING (game_id, model)
)
SELECT game_id, model, turns, gate.gate AS gate, gate.value AS value, gate.threshold AS threshold,
       gate.comparison AS comparison,
       CASE gate.comparison WHEN '>=' THEN gate.value >= gate.threshold ELSE gate.value <= gate.threshold END AS passed
FROM gates;
"""

# A chunk of order-draft lines (seq, raw), parsed once: the columns, the families and
# the payload come from one read of the values at the draft's keys. A line DuckDB cannot
# read as an object is left out (JSON that opens with `{` is an object). Each row is
# valid until the checks say otherwise.
_DRAFT_COLUMNS = [c for c in ORDERS.columns if c.path]
# The columns' paths first (`read_values`), then the keys the families read.
_DRAFT_KEYS = list(dict.fromkeys([*(c.path for c in _DRAFT_COLUMNS if c.path is not None), *draft_keys()]))


def _at(key: str) -> str:
    return f"v[{_DRAFT_KEYS.index(key) + 1}]"


_DRAFT_ROWS = f"""
SELECT $source_id::BIGINT AS source_id, seq, $game_id AS game_id,
       {read_values("v", _DRAFT_COLUMNS)},
       {draft_families_sql({key: _at(key) for key in draft_keys()})} AS families, j AS payload, true AS valid
FROM (SELECT seq, j, {values_at("j", _DRAFT_KEYS)} AS v
      FROM (SELECT seq, {once("TRY_CAST(raw AS JSON)")} AS j FROM draft_lines WHERE {OPENS_AN_OBJECT})
      WHERE j IS NOT NULL)
"""
INSERT_DRAFTS = ORDERS.insert(_DRAFT_ROWS)
# A temporary table of `ec4x_orders`' own columns, where a chunk's drafts wait until the
# screen has said which are valid (`move_staged`): a column a user added to
# `ec4x_orders` keeps its default in the move.
STAGED = dataclasses.replace(ORDERS, name="ec4x_staged_drafts", temporary=True)
STAGE_DRAFTS = STAGED.insert(_DRAFT_ROWS)

# The batch of (seq, raw, valid) lines of a bot trace the inserts read.
LINES = "ec4x_lines"
LINE_RECORDS = f"(SELECT seq, valid, {once('TRY_CAST(raw AS JSON)')} AS j FROM {LINES})"

# A trace line with a `kind` is a session line (trace.py tells the kinds apart the same way).
KIND = SESSIONS.column("kind")
assert KIND.path is not None  # declared with its path in SESSIONS
KIND_AT = json_path(KIND.path)
HAS_KIND = f"json_exists(j, '{KIND_AT}')"
SESSION_PATHS = [c.name for c in SESSIONS.columns if c.path and c is not KIND]

# A kind that is not a string is kept as its JSON text, so the drift finding can show it.
INSERT_SESSIONS = SESSIONS.insert(f"""
SELECT $source_id AS source_id, seq,
       coalesce({KIND.read_from("j")}, CAST(json_extract(j, '{KIND_AT}') AS VARCHAR)) AS kind,
       {SESSIONS.select_paths("j", SESSION_PATHS)}, j AS record, valid
FROM {LINE_RECORDS}
WHERE json_type(j) = 'OBJECT' AND {HAS_KIND}
""")

INSERT_TURNS = TURNS.insert(f"""
SELECT $source_id AS source_id, t.seq AS seq, {TURNS.select_paths("j")}, s.model AS model, t.valid AS valid
FROM {LINE_RECORDS} t
ASOF LEFT JOIN (SELECT seq, model FROM ec4x_sessions WHERE source_id = $source_id AND kind = 'session_start') s
  ON t.seq > s.seq
WHERE json_type(j) = 'OBJECT' AND NOT {HAS_KIND}
""")

# Order drafts name no model; a bot trace does (its session's). A draft takes the model of
# the bot turn of the same game and turn, else of the game when one model played all of
# it. The bot's trace names no house (every bot of a game appends to the one
# bot_trace_<gameId>.jsonl), so where two models played the same turn the draft's model
# stays unknown rather than guessed. Read from every file's turns, so the result does
# not depend on which file was read first: a draft's decision takes it when derived,
# and the decisions of drafts read before are linked again when a trace changes.
_ONE_MODEL = """
one_model_turns AS (
    SELECT game_id, turn, any_value(model) AS model FROM ec4x_turns
    WHERE model IS NOT NULL GROUP BY ALL HAVING count(DISTINCT model) = 1
), one_model_games AS (
    SELECT game_id, any_value(model) AS model FROM ec4x_turns
    WHERE model IS NOT NULL GROUP BY ALL HAVING count(DISTINCT model) = 1
)"""
# The drafts `o` with the model `coalesce(t.model, g.model)` of each.
_DRAFTS_AND_MODELS = """ec4x_orders o
LEFT JOIN one_model_turns t ON t.game_id = o.game_id AND t.turn = o.turn
LEFT JOIN one_model_games g ON g.game_id = o.game_id"""

# The decisions of a chunk's drafts (lines `$first` to `$last`): one per order draft.
ORDER_DECISIONS = DECISIONS.insert(f"""
WITH {_ONE_MODEL}
SELECT o.source_id, 'ec4x' AS format, o.game_id, o.turn, 'house ' || o.house_id AS agent_id,
       coalesce(t.model, g.model) AS model,
       coalesce(nullif(array_to_string(o.families, ' '), ''), '(empty draft)') AS action, o.valid,
       'line ' || o.seq AS locator
FROM {_DRAFTS_AND_MODELS}
WHERE o.source_id = $source_id AND o.seq BETWEEN $first AND $last
""")

# The error classes of a turn that got no orders from the model to judge: its LLM request
# failed (`llm_request`), or the orders could not be submitted to the game (`transport`).
# Neither is the model's move: the turn is a failed call.
NO_ANSWER_CLASSES = ("llm_request", "transport")
_NO_ANSWER = ", ".join(f"'{c}'" for c in NO_ANSWER_CLASSES)

# One decision per bot turn from line `$first` on: valid when the turn succeeded, failed
# when no orders came back to judge (its errors, as the bot wrote them, say why), else
# invalid (`REFUSED_TURNS` names its rule); the action says how.
TURN_DECISIONS = DECISIONS.insert(f"""
SELECT source_id, 'ec4x' AS format, game_id, turn, model,
       coalesce(error_class, '?') || ' (attempts ' || coalesce(CAST(attempts AS VARCHAR), '?') || ')'
         || CASE WHEN len(feature_tags) > 0 THEN ': ' || array_to_string(feature_tags, ' ') ELSE '' END AS action,
       coalesce(ok, false) AS valid, llm_ms AS latency_ms, 'line ' || seq AS locator,
       greatest(coalesce(attempts, 1) - 1, 0) AS retries,
       CASE WHEN NOT coalesce(ok, false) AND error_class IN ({_NO_ANSWER})
            THEN error_class || ': ' || coalesce(nullif(array_to_string(errors, '; '), ''), 'no error written') END
         AS failure
FROM ec4x_turns WHERE source_id = $source_id AND seq >= $first
""")

# The turns from line `$first` on whose orders the bot could not use (errorClass
# `validation`, from a `schema_parse` or `compile` stage; or `unknown`), on lines that
# break no rule of their own: the model's answer broke the orders' rules, the error rule
# its decision is invalid by (a line that breaks one is invalid by that).
REFUSED_TURNS = f"""
SELECT seq, error_class, coalesce(failed_stages[-1], 'no stage'), attempts, errors
FROM ec4x_turns
WHERE source_id = $source_id AND seq >= $first AND valid AND ok IS false AND error_class NOT IN ({_NO_ANSWER})
ORDER BY seq
"""


def draft_models(drafts: str = "true") -> str:
    """Each draft's decision (source_id, locator) that satisfies `drafts` (a condition on
    `o`, a row of ec4x_orders), and its model: the one derivation of a draft's model, by
    which the ingest links it and a Spark tree's reader derives it (`ec4x.FORMAT.across_files`)."""
    return f"""
WITH {_ONE_MODEL}
SELECT o.source_id, 'ec4x' AS format, 'line ' || o.seq AS locator, coalesce(t.model, g.model) AS model
FROM {_DRAFTS_AND_MODELS}
WHERE {drafts}
"""


def _link_draft_models(drafts: str) -> str:
    """UPDATE of the model of the decisions of the drafts that satisfy `drafts`."""
    return f"""
UPDATE decisions d SET model = linked.model
FROM ({draft_models(drafts)}) linked
WHERE d.format = linked.format AND d.source_id = linked.source_id AND d.locator = linked.locator
  AND d.model IS DISTINCT FROM linked.model
"""


# After a bot trace grew by lines from `$first` on: the drafts of the games they are of.
LINK_GAME_DRAFTS = _link_draft_models(
    "o.game_id IN (SELECT game_id FROM ec4x_turns WHERE source_id = $source_id AND seq >= $first)"
)
# After a bot trace read whole, or one whose forgotten cut line may have been of another
# game: every draft.
LINK_DRAFT_MODELS = _link_draft_models("true")

OTHER_KINDS = """
SELECT kind, count(*), min(seq) FROM ec4x_sessions
WHERE source_id = $source_id AND kind IS DISTINCT FROM 'session_start' GROUP BY kind ORDER BY 3
"""

UNMAPPED_TAGS = f"""
SELECT tag, count(DISTINCT seq), min(seq)
FROM (SELECT seq, unnest(feature_tags) AS tag FROM ec4x_turns WHERE source_id = $source_id)
WHERE ({tag_family_sql("tag")}) IS NULL
GROUP BY tag ORDER BY 3
"""


def insert(con: duckdb.DuckDBPyConnection, statements: list[str], lines: pa.Table, params: dict) -> int:
    """Run the INSERT statements over a batch of (seq, raw, valid) lines; returns the rows added."""
    return sum(run_on(con, lines, sql, LINES, params)[0][0] for sql in statements)


def insert_drafts(con: duckdb.DuckDBPyConnection, params: dict, draft_lines: pa.Table) -> int:
    """Parse (seq, raw) lines into `ec4x_orders` (`params`: source_id, game_id); returns
    how many became rows."""
    return run_on(con, draft_lines, INSERT_DRAFTS, "draft_lines", params)[0][0]


def stage_drafts(con: duckdb.DuckDBPyConnection, params: dict, draft_lines: pa.Table) -> int:
    """`insert_drafts` into STAGED, until `move_staged`."""
    con.execute(STAGED.ddl())
    return run_on(con, draft_lines, STAGE_DRAFTS, "draft_lines", params)[0][0]


def move_staged(con: duckdb.DuckDBPyConnection, invalid: list[int]) -> None:
    """The staged drafts into `ec4x_orders`, those of lines `invalid` not valid.

    Inserted with their validity, not updated after: DuckDB writes a row group to the
    database file as it fills, and one whose rows then change is written again at the
    commit."""
    run_on(
        con,
        pa.table({"seq": pa.array(invalid, pa.int64())}),
        f"INSERT INTO {ORDERS.name} BY NAME SELECT * REPLACE (seq NOT IN (SELECT seq FROM invalid) AS valid) "
        f"FROM temp.{STAGED.name}",
        "invalid",
    )
    con.execute(f"DROP TABLE temp.{STAGED.name}")


def insert_decisions(con: duckdb.DuckDBPyConnection, rows: dict) -> None:
    """The decisions of a chunk's drafts (`rows`: source_id, first, last)."""
    con.execute(ORDER_DECISIONS, rows).fetchall()


def mark(con: duckdb.DuckDBPyConnection, source_id: int, seqs: list[int], valid: bool) -> None:
    """The drafts of lines `seqs` are valid, or not."""
    if seqs:
        run_on(
            con,
            pa.table({"seq": pa.array(seqs, pa.int64())}),
            f"UPDATE ec4x_orders SET valid = {str(valid).lower()} WHERE source_id = $source_id "
            f"AND seq IN (SELECT seq FROM marked)",
            "marked",
            {"source_id": source_id},
        )
