"""Load a Damage replay (or tournament) log chunk by chunk, on the bulk path (`bulk.py`).

Each line is parsed once by DuckDB, straight into `damage_events`; the screen passes
the valid lines and pydantic-core writes the violations of the others. Emotions, drift
and the calls decisions need are derived in SQL over the chunk's rows meanwhile; the
decisions follow once the whole file is in.
"""

from __future__ import annotations

import threading

import duckdb

from workbench import bulk
from workbench.damage import drift, emotions, tables
from workbench.damage.models import LINES, PAYLOADS, SCREEN, UNDOCUMENTED
from workbench.formats import Counts, LoadContext
from workbench.jsonl import LineChunk, context_chunks
from workbench.validation import violation
from workbench.violation import Violation
from workbench.worker import Worker

EVENT_TAGS = {*PAYLOADS, UNDOCUMENTED}
# More undocumented types than this in one chunk are not given a place in the screen's
# union: their lines are screened one by one.
MAX_OTHER_TAGS = 64
CALLS_KEPT = "calls_kept"  # in the file's state: `damage_calls` holds its calls
# In the file's state: its failed calls (`action_rejected`) are decisions. A file read by
# a workbench that did not make them gets those of its earlier lines when it grows.
FAILED_CALLS_DECIDED = "failed_calls_decided"


def load(ctx: LoadContext) -> Counts:
    # Chunks are read one at a time: reading the next one ahead would hold two in memory.
    tally = drift.DriftTally.from_state(ctx.state)
    # The state of a file read by a workbench that did not keep its calls says nothing
    # of them: they are read once from its rows.
    backfill = ctx.appending and not (ctx.state or {}).get(CALLS_KEPT)
    records = rejected = 0
    with bulk.duckdb_worker(ctx) as (run, stop):
        if backfill:
            run(tables.backfill_calls, ctx.con, ctx.source_id)
        for chunk in context_chunks(ctx):
            counts = run(load_chunk, ctx, chunk, tally, stop)
            records, rejected = records + counts.records, rejected + counts.rejected
        run(derive_decisions, ctx, ctx.first_line if (ctx.state or {}).get(FAILED_CALLS_DECIDED) else 1)
    ctx.state = {**tally.state(), CALLS_KEPT: True, FAILED_CALLS_DECIDED: True}
    ctx.add_file_findings(tally.findings())
    return Counts(records, rejected)


def derive_decisions(ctx: LoadContext, failed_from: int) -> None:
    """The decisions of the lines read (an action's depends only on the calls before it:
    `decisions_by_line`), and those of the failed calls from line `failed_from` on."""
    tables.derive_decisions(ctx.con, ctx.source_id, ctx.first_line, failed_from)


def load_chunk(ctx: LoadContext, chunk: LineChunk, tally: drift.DriftTally, stop: threading.Event) -> Counts:
    """Parse a chunk into `damage_events`, then screen its lines (Python) while DuckDB
    derives drift, emotions and calls from its rows. In the rare chunk where the screen
    changes rows (a line pydantic refuses that DuckDB parsed, an envelope key the seed
    does not list), those are derived again once the rows are right."""
    con, source_id = ctx.con, ctx.source_id
    lines = bulk.line_table(chunk)
    missing: list[int] = []
    if len(chunk) and tables.insert_events(con, source_id, lines) != len(chunk):
        missing = bulk.missing_lines(con, tables.EVENTS.name, source_id, chunk, lines)
    parsed_share = chunk.size * 2 // 5  # about the part of a chunk's time its parse takes
    ctx.advance(parsed_share)
    params = bulk.rows_of(source_id, chunk)
    before = tally.state()
    with Worker() as screen:
        screening = screen.submit(check_chunk, chunk, missing, tables.types_in(con, params), stop)
        if len(chunk):
            _derive(con, params, tally, stop)
        checked = screening.result()
    forgotten = bulk.refused_rows(chunk, missing, checked)
    if forgotten:
        bulk.forget_rows(con, tables.EVENTS.name, source_id, forgotten)
    # A line the screen refused may have envelope keys the seed does not list.
    kept = [i for i in checked.refused if i not in checked.reject_at]
    if (kept and tables.set_extra(con, source_id, bulk.line_table(chunk, kept))) or forgotten:
        tables.forget_derived(con, params)
        tally.restore(before)
        _derive(con, params, tally, stop)
    counts = bulk.store_findings(ctx, chunk, checked)
    ctx.advance(chunk.size - parsed_share)
    return counts


def _derive(con: duckdb.DuckDBPyConnection, params: dict, tally: drift.DriftTally, stop: threading.Event) -> None:
    """Drift, emotions and calls of a chunk's rows."""
    bulk.go_on(stop)
    tally.add_chunk(con, params)
    bulk.go_on(stop)
    emotions.insert_vectors(con, params["source_id"], params["first"], params["last"])
    bulk.go_on(stop)
    tables.keep_calls(con, params["source_id"], params["first"], params["last"])


def check_chunk(chunk: LineChunk, missing: list[int], types: set[str], stop: threading.Event) -> bulk.Checked:
    """`bulk.check`, with the screen closed (an envelope key the seed does not list is
    refused too); the lines it refuses are screened again one by one, open, and only
    those that fail go to pydantic."""
    other_tags = frozenset(t for t in types if t not in PAYLOADS)
    if len(other_tags) > MAX_OTHER_TAGS:
        other_tags = frozenset()  # their lines are refused, and screened one by one
    return bulk.check(
        chunk,
        missing,
        SCREEN.lines(other_tags, closed=True),
        LINES,
        _found_at,
        stop,
        still_suspect=lambda i: not SCREEN.accepts(chunk.line(i)),
    )


def _found_at(locator: str, error: dict, loc: tuple) -> Violation:
    # A record's own type leads the location of its errors.
    return violation(locator, error, loc[1:] if loc and loc[0] in EVENT_TAGS else loc)
