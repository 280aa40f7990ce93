"""Load an EC4X order-draft log or bot trace.

An order-draft log takes the bulk path (`bulk.py`): each chunk of lines is parsed once
by DuckDB (into `ec4x_orders`, or first into a temporary table: `_parsed`), while the
order screen passes the valid drafts and notes the drift they hold as it decodes them
(`drift.DriftWatch`); pydantic-core writes the violations of the drafts it refuses,
whose drift `drift.walked` finds.
A bot trace, a few lines per turn, is validated a batch of lines per pydantic-core call
and inserted from Arrow. A draft's decision is derived with its chunk, a bot turn's once
the whole file is in."""

from __future__ import annotations

import dataclasses
import functools
import threading
from pathlib import Path

import duckdb
import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from workbench import bulk
from workbench.connection import BULK_ROW_GROUP_ROWS, one_thread
from workbench.ec4x import orders, tables, trace
from workbench.ec4x.drift import WATCHING, DriftTally, DriftWatch, walked
from workbench.finding_writers import forget_decisions_from
from workbench.formats import Counts, LoadContext
from workbench.jsonl import LineChunk, check_lines, context_chunks, store_batches
from workbench.paths import name_without
from workbench.screen import model_screen
from workbench.validation import drift_finding, violation
from workbench.violation import Violation, line_of
from workbench.worker import Worker

ORDERS_SUFFIX = ".orders.jsonl"


@functools.cache
def order_screen() -> msgspec.json.Decoder:
    """The order screen, watching for the drift of the drafts it accepts. Built when a
    log is first read, not as the format loads: a command reading a database (a report,
    a figure) does without the time it takes."""
    return model_screen(orders.OrderDraft, WATCHING)


def is_order_log(path: Path) -> bool:
    return path.name.endswith(ORDERS_SUFFIX)


def load(ctx: LoadContext) -> Counts:
    if is_order_log(ctx.path):
        return load_drafts(ctx)  # its drafts' decisions take their models as they are derived
    counts = load_trace(ctx)
    if ctx.appending and not ctx.forgot_cut_line:
        ctx.con.execute(tables.LINK_GAME_DRAFTS, {"source_id": ctx.source_id, "first": ctx.first_line}).fetchall()
    else:
        ctx.con.execute(tables.LINK_DRAFT_MODELS).fetchall()
    return counts


def load_drafts(ctx: LoadContext) -> Counts:
    params = {"source_id": ctx.source_id, "game_id": name_without(ctx.path, ORDERS_SUFFIX)}
    tally = DriftTally.from_state(ctx.state)
    records = rejected = 0
    with bulk.duckdb_worker(ctx) as (run, stop):
        for chunk in context_chunks(ctx):
            counts = run(load_draft_chunk, ctx, chunk, params, tally, stop)
            records, rejected = records + counts.records, rejected + counts.rejected
    ctx.state = tally.state()
    ctx.add_file_findings(tally.findings())
    return Counts(records, rejected)


def load_draft_chunk(
    ctx: LoadContext, chunk: LineChunk, params: dict, tally: DriftTally, stop: threading.Event
) -> Counts:
    """The chunk parsed, screened, its drift found and its decisions derived
    (`_parsed_and_checked`). Lines that are no record (DuckDB could not parse them, or
    pydantic refuses them) lose their rows and hold no drift. A decision is valid when
    its draft is: where pydantic does not say of the drafts what the screen presumed,
    they are marked again and the decisions derived again."""
    con, source_id = ctx.con, ctx.source_id
    rows = bulk.rows_of(source_id, chunk)
    missing, checked, forgotten, presumed = _parsed_and_checked(con, chunk, params, rows, tally, stop)
    bulk.go_on(stop)
    ctx.advance(chunk.size // 2)
    if forgotten:
        bulk.forget_rows(con, tables.ORDERS.name, source_id, forgotten)
    # The drafts with an error that have a row: not those that are no record, nor those
    # DuckDB could not parse (pydantic may read one, a lone surrogate, say). Each error
    # of a chunk is located at its line (`line N`).
    invalid = {line for v in checked.violations if v.severity == "error" and (line := line_of(v.locator)) is not None}
    invalid -= {int(chunk.numbers[i]) for i in (*checked.reject_at, *missing)}
    if forgotten or invalid != presumed:
        tables.mark(con, source_id, sorted(presumed - invalid), valid=True)
        tables.mark(con, source_id, sorted(invalid - presumed), valid=False)
        forget_decisions_from(con, source_id, rows["first"])  # the chunk is the last read so far
        tables.insert_decisions(con, rows)
    counts = bulk.store_findings(ctx, chunk, checked)
    ctx.advance(chunk.size - chunk.size // 2)
    return counts


def _parsed_and_checked(
    con: duckdb.DuckDBPyConnection, chunk: LineChunk, params: dict, rows: dict, tally: DriftTally, stop: threading.Event
) -> tuple[list[int], bulk.Checked, list[int], set[int]]:
    """DuckDB parses the chunk's lines (`_parsed`) while, in a thread, the order screen
    reads them, its watchers noting the drift of the drafts it accepts
    (`drift.DriftWatch`). Then that thread checks the lines the screen refused and
    tallies the chunk's drift (`_checked`), while DuckDB stores the drafts the screen
    refused as invalid, presumed so, and derives the chunk's decisions (pydantic nearly
    always agrees; derived after it, they left a core idle). Returns the lines DuckDB
    could not parse, the checks, the line numbers of rows whose lines are no record, and
    the lines presumed invalid."""
    lines = bulk.line_table(chunk)
    staged = len(chunk) > 0 and len(chunk) >= BULK_ROW_GROUP_ROWS
    missing: list[int] = []
    watch = DriftWatch()
    with Worker() as screen:
        early = screen.submit(bulk.screened_before_parse, chunk, order_screen(), stop, watch)
        if len(chunk) and _parsed(con, params, lines, staged) != len(chunk):
            missing = bulk.missing_lines(
                con, (tables.STAGED if staged else tables.ORDERS).name, params["source_id"], chunk, lines
            )
        deep = bulk.too_deep(chunk)  # while the screen reads on: numpy lets go of the GIL
        refused = bulk.screened_once_parsed(chunk, early.result(), missing, order_screen(), stop, watch)
        presumed = chunk.numbers[refused].tolist()
        checking = screen.submit(_checked, chunk, missing, refused, presumed, deep, watch, tally, stop)
        if staged:
            with one_thread(con):  # as the parse: each row group filled before the next
                tables.move_staged(con, presumed)
        else:
            tables.mark(con, rows["source_id"], presumed, valid=False)
        tables.insert_decisions(con, rows)
        checked, forgotten = checking.result()
        return missing, checked, forgotten, set(presumed)


def _checked(
    chunk: LineChunk,
    missing: list[int],
    refused: list[int],
    presumed: list[int],
    deep: list[int],
    watch: DriftWatch,
    tally: DriftTally,
    stop: threading.Event,
) -> tuple[bulk.Checked, list[int]]:
    """pydantic-core on the lines the screen `refused` (numbered `presumed`) and on those
    DuckDB could not parse (`missing`); then the drift of the lines that are records,
    tallied: what the screen saw as it decoded, and what the refused drafts' text holds
    (`drift.walked`). Returns the checks and the line numbers of the rows whose lines
    turned out to be no record."""
    checked = bulk.check(
        chunk, missing, order_screen(), orders.LINES, _draft_violation, stop, refused=refused, deep=deep
    )
    forgotten = bulk.refused_rows(chunk, missing, checked)
    found = pa.concat_tables([watch.occurrences(chunk), walked(presumed, chunk.texts(refused))])
    no_record = pa.array([*chunk.numbers[missing].tolist(), *forgotten], pa.int64())
    tally.add(found.filter(pc.invert(pc.is_in(found["seq"], no_record))))
    return checked, forgotten


def _parsed(con: duckdb.DuckDBPyConnection, params: dict, lines: pa.Table, staged: bool) -> int:
    """The drafts parsed on one DuckDB thread: into `ec4x_orders`, or, for a chunk that
    fills a row group (`staged`), into `tables.STAGED`, to be moved into `ec4x_orders`
    with their validity once the screen has read them, so that no row group DuckDB
    wrote as it filled changes after (`tables.move_staged` says what that costs; the
    move costs less, and runs beside pydantic). A smaller chunk's rows are written at
    the commit anyway: they are inserted, then marked.

    One thread takes no longer: the screen beside it is the longer path, and gets the
    other core to itself. And one thread fills each row group before the next, where
    two leave each short by the lines they could not parse; DuckDB's checkpoint merges
    short row groups into fewer, rewriting each (a 1% append then rewrote all of
    `ec4x_orders`)."""
    with one_thread(con):
        return (tables.stage_drafts if staged else tables.insert_drafts)(con, params, lines)


def _draft_violation(locator: str, error: dict, loc: tuple) -> Violation:
    found = violation(locator, error, loc)
    if error["type"] == "extra_forbidden":
        found = dataclasses.replace(found, message=orders.unknown_key_message(loc))
    return found


def load_trace(ctx: LoadContext) -> Counts:
    """A bot trace, a batch of lines at a time: checked, then inserted."""
    params = {"source_id": ctx.source_id}
    counts = store_batches(
        ctx,
        lambda batch: check_lines(batch, trace.LINES, _trace_violation),
        lambda lines: tables.insert(ctx.con, [tables.INSERT_SESSIONS, tables.INSERT_TURNS], lines, params),
    )
    ctx.add_file_findings(trace_findings(ctx.con, ctx.source_id))
    ctx.add_violations(refused_turns(ctx.con, ctx.source_id, ctx.first_line))
    # A bot turn's decision is its own line's (`decisions_by_line`).
    ctx.con.execute(tables.TURN_DECISIONS, {"source_id": ctx.source_id, "first": ctx.first_line}).fetchall()
    return counts


def _trace_violation(locator: str, error: dict, loc: tuple) -> Violation:
    # A line's own kind leads the location of its errors.
    return violation(locator, error, loc[1:] if loc and loc[0] in trace.LINE_TAGS else loc)


def refused_turns(con: duckdb.DuckDBPyConnection, source_id: int, first: int) -> list[Violation]:
    """The turns from line `first` on whose orders the bot refused: the model answered,
    and its answer broke the orders' rules (the rule its decision is invalid by)."""
    return [
        Violation(
            f"line {seq}",
            "error",
            "orders_refused",
            "errorClass",
            f"the bot could not use the model's orders for this turn: errorClass {error_class!r} at stage "
            f"{stage!r} after {attempts if attempts is not None else '?'} attempt(s)"
            + (f" ({'; '.join(errors)})" if errors else ""),
            line=seq,
        )
        for seq, error_class, stage, attempts, errors in con.execute(
            tables.REFUSED_TURNS, {"source_id": source_id, "first": first}
        ).fetchall()
    ]


def trace_findings(con: duckdb.DuckDBPyConnection, source_id: int) -> list[Violation]:
    """Drift in a bot trace: line kinds and feature tags the workbench does not know."""
    params = {"source_id": source_id}
    found = [
        drift_finding(
            "undocumented_kind",
            "kind",
            f"kind {kind!r} is not a line the bot is known to write (only session_start); kept in ec4x_sessions",
            count,
            first,
        )
        for kind, count, first in con.execute(tables.OTHER_KINDS, params).fetchall()
    ]
    found += [
        drift_finding(
            "unmapped_feature_tag",
            "featureTags",
            f"feature tag {tag!r} maps to none of the twelve feature families, so it counts for no "
            "family in the coverage gate",
            count,
            first,
        )
        for tag, count, first in con.execute(tables.UNMAPPED_TAGS, params).fetchall()
    ]
    return found
