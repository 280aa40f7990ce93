"""Load an EC4X order-draft log or bot trace.

An order-draft log takes the bulk path (`bulk.py`): each chunk of lines is parsed once
by DuckDB into `ec4x_orders`; then a drift-free screen passes the valid drafts that hold
no drift, the plain screen the other valid ones, while `drift.py` finds the drift of the
drafts the first refused, and pydantic-core writes the violations of the invalid ones.
A bot trace, a few lines per turn, is validated a batch of lines per pydantic-core call
and inserted from Arrow. A draft's decision is derived with its chunk, a bot turn's once
the whole file is in."""

from __future__ import annotations

import dataclasses
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from workbench import bulk
from workbench.ec4x import orders, tables, trace
from workbench.ec4x.drift import DRIFT_FREE_SCREEN, DriftTally, occurrences_in
from workbench.formats import Counts, LoadContext
from workbench.jsonl import LineChunk, check_lines, context_batches, context_chunks, store_batch
from workbench.paths import name_without
from workbench.screen import model_screen
from workbench.validation import line_count, violation
from workbench.violation import Violation, line_of

ORDERS_SUFFIX = ".orders.jsonl"
ORDER_SCREEN = model_screen(orders.OrderDraft)


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


def load_draft_chunk(ctx: LoadContext, chunk: LineChunk, params: dict, tally: DriftTally,
                     stop: threading.Event) -> Counts:
    """The chunk parsed, screened and its drift found (`_parsed_and_checked`). Lines
    that are no record (DuckDB could not parse them, or pydantic refuses them) lose
    their rows and hold no drift. The decisions come last, from the drafts as the checks
    left them."""
    con, source_id = ctx.con, ctx.source_id
    missing, checked, found = _parsed_and_checked(con, chunk, params, stop)
    bulk.go_on(stop)
    ctx.advance(chunk.size // 2)
    forgotten = bulk.refused_rows(chunk, missing, checked)
    if forgotten:
        bulk.forget_rows(con, tables.ORDERS.name, source_id, forgotten)
    no_record = pa.array([*chunk.numbers[missing].tolist(), *forgotten], pa.int64())
    tally.add(found.filter(pc.invert(pc.is_in(found["seq"], no_record))))
    invalid = {line_of(v.locator) for v in checked.violations if v.severity == "error"}
    tables.mark_invalid(con, source_id, sorted(invalid - {int(chunk.numbers[i]) for i in checked.reject_at}))
    # Once the drafts are known valid or not: a decision is valid when its draft is.
    tables.insert_decisions(con, bulk.rows_of(source_id, chunk))
    counts = bulk.store_findings(ctx, chunk, checked)
    ctx.advance(chunk.size - chunk.size // 2)
    return counts


def _parsed_and_checked(con, chunk: LineChunk, params: dict,
                        stop: threading.Event) -> tuple[list[int], bulk.Checked, pa.Table]:
    """DuckDB parses the chunk's lines into `ec4x_orders` while, in a thread, the
    drift-free screen reads them, and, in another, DuckDB finds the drift of the lines
    it refuses from their text, on a connection of its own (`drift.occurrences_in`);
    then the first thread screens those lines with the plain screen. (On two cores, the
    parse and the screen side by side take 0.30 s per 100k drafts where one after the
    other they took 0.39 s; an append of 1,000 drafts, whose drift no longer waits for
    the parse, 5 ms less.) Returns the lines DuckDB could not parse, the checks, and
    the drift occurrences."""
    lines = bulk.line_table(chunk)
    missing: list[int] = []
    drift_con = con.cursor()
    try:
        with ThreadPoolExecutor(max_workers=1) as screen, ThreadPoolExecutor(max_workers=1) as drifting:
            try:
                # One screen worker: the plain screen starts once the drift-free one is done.
                drift_free = screen.submit(bulk.screened_before_parse, chunk, DRIFT_FREE_SCREEN, stop)
                early = drifting.submit(lambda: occurrences_in(drift_con, bulk.line_table(chunk, drift_free.result())))
                if len(chunk) and tables.insert_drafts(con, params, lines) != len(chunk):
                    missing = bulk.missing_lines(con, tables.ORDERS.name, params["source_id"], chunk, lines)
                refused = bulk.screened_once_parsed(chunk, drift_free.result(), missing, DRIFT_FREE_SCREEN, stop)
                screening = screen.submit(bulk.check, chunk, missing, ORDER_SCREEN, orders.LINES, _draft_violation,
                                          stop, among=refused)
                # The drift-free screen read again after the parse may refuse more lines.
                later = sorted(set(refused).difference(drift_free.result()))
                found = pa.concat_tables([bulk.waited(early, stop, drift_con),
                                          occurrences_in(con, bulk.line_table(chunk, later))])
                return missing, screening.result(), found
            except BaseException:
                drift_con.interrupt()  # its statement ends with the load's (Ctrl-C, an error)
                raise
    finally:
        drift_con.close()


def _draft_violation(locator: str, error: dict, loc: tuple) -> Violation:
    found = violation(locator, error, loc)
    if error["type"] == "extra_forbidden":
        found = dataclasses.replace(found, message=orders.unknown_key_message(loc))
    return found


def load_trace(ctx: LoadContext) -> Counts:
    """A bot trace, a batch of lines at a time: checked, then inserted."""
    params = {"source_id": ctx.source_id}
    records = rejected = 0
    for batch in context_batches(ctx):
        found, reject_at = check_lines(batch, trace.LINES, _trace_violation)
        counts = store_batch(ctx, batch, found, reject_at,
                             lambda lines: tables.insert(ctx.con, [tables.INSERT_SESSIONS, tables.INSERT_TURNS],
                                                         lines, params))
        records += counts.records
        rejected += counts.rejected
    ctx.add_file_findings(trace_findings(ctx.con, ctx.source_id))
    # A bot turn's decision is its own line's (`decisions_by_line`).
    ctx.con.execute(tables.TURN_DECISIONS, {"source_id": ctx.source_id, "first": ctx.first_line}).fetchall()
    return Counts(records, rejected)


def _trace_violation(locator: str, error: dict, loc: tuple) -> Violation:
    # A line's own kind leads the location of its errors.
    return violation(locator, error, loc[1:] if loc and loc[0] in trace.LINE_TAGS else loc)


def trace_findings(con, source_id: int) -> list[Violation]:
    """Drift in a bot trace: line kinds and feature tags the workbench does not know."""
    params = {"source_id": source_id}
    found = [
        Violation(f"line {first}", "info", "undocumented_kind", "kind",
                  f"kind {kind!r} is not a line the bot is known to write (only session_start); kept in "
                  f"ec4x_sessions ({line_count(count)}, first line {first})")
        for kind, count, first in con.execute(tables.OTHER_KINDS, params).fetchall()
    ]
    found += [
        Violation(f"line {first}", "info", "unmapped_feature_tag", "featureTags",
                  f"feature tag {tag!r} maps to none of the twelve feature families, so it counts for no "
                  f"family in the coverage gate ({line_count(count)}, first line {first})")
        for tag, count, first in con.execute(tables.UNMAPPED_TAGS, params).fetchall()
    ]
    return found


