"""Load a Damage replay (or tournament) log chunk by chunk (see `jsonl.read_chunks`).

Each line is parsed once by DuckDB, straight into `damage_events`. The screen then
reads the chunk's lines a run at a time, straight from the file's bytes (msgspec's
`decode_lines`): a line it passes is valid. pydantic-core writes the exact violations
of the lines it refuses, in one call. Emotions, drift and the calls decisions need are
derived in SQL over the chunk's rows meanwhile; the decisions follow once the whole
file is in.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import msgspec
import numpy as np
import pyarrow as pa

from workbench.damage import drift, emotions, tables
from workbench.damage.models import LINES, PAYLOADS, SCREEN, UNDOCUMENTED
from workbench.formats import Counts, LoadContext
from workbench.jsonl import LineBatch, LineChunk, check_lines, context_chunks, reject_violation, text_of_line
from workbench.screen import maybe_too_deep, refused
from workbench.validation import violation
from workbench.violation import Violation

EVENT_TAGS = {*PAYLOADS, UNDOCUMENTED}
# More undocumented types than this in one chunk are not given a place in the screen's
# union: their lines are screened one by one.
MAX_OTHER_TAGS = 64
SCAN_BATCH_LINES = 8192
SCREEN_LINES = 2048
CALLS_KEPT = "calls_kept"  # in the file's state: `damage_calls` holds its calls


def load(ctx: LoadContext) -> Counts:
    # A single worker runs DuckDB, so Ctrl-C reaches this thread, which stops the
    # worker's statement and tells it to stop between steps (`stop`); the load ends and
    # the file's transaction is rolled back. Chunks are read one at a time: reading the
    # next one ahead would hold two in memory.
    tally = drift.DriftTally.from_state(ctx.state)
    stop = threading.Event()
    # The state of a file read by a workbench that did not keep its calls says nothing
    # of them: they are read once from its rows.
    backfill = ctx.appending and not (ctx.state or {}).get(CALLS_KEPT)
    records = rejected = 0
    with ThreadPoolExecutor(max_workers=1) as worker:
        def run(task, *args):
            pending = worker.submit(task, *args)
            try:
                return pending.result()
            except KeyboardInterrupt:
                stop.set()
                ctx.con.interrupt()
                wait([pending])
                raise

        if backfill:
            run(tables.backfill_calls, ctx.con, ctx.source_id)
        for chunk in context_chunks(ctx):
            counts = run(load_chunk, ctx, chunk, tally, stop)
            records, rejected = records + counts.records, rejected + counts.rejected
        run(tables.derive_decisions, ctx.con, ctx.source_id)
    ctx.state = {**tally.state(), CALLS_KEPT: True}
    ctx.add_file_findings(tally.findings())
    return Counts(records, rejected)


@dataclass
class Checked:
    """What the checks found in a chunk's lines (positions are into the chunk)."""

    violations: list[Violation] = field(default_factory=list)
    reject_at: dict[int, str] = field(default_factory=dict)  # lines that are not records, and why
    extra: list[int] = field(default_factory=list)  # lines whose envelope may have unlisted keys


def load_chunk(ctx: LoadContext, chunk: LineChunk, tally: drift.DriftTally, stop: threading.Event) -> Counts:
    """Parse a chunk into `damage_events`, then screen its lines (Python) while DuckDB
    derives drift, emotions and calls from its rows. In the rare chunk where the screen
    changes rows (a line pydantic refuses that DuckDB parsed, an envelope key the seed
    does not list), those are derived again once the rows are right."""
    con, source_id = ctx.con, ctx.source_id
    # Record batches of a few thousand lines: DuckDB scans an Arrow table's batches in
    # parallel, and one batch would be read by one thread.
    whole = pa.table({"seq": pa.array(chunk.numbers, pa.int64()), "raw": chunk.raw})
    lines = pa.Table.from_batches(whole.to_batches(max_chunksize=SCAN_BATCH_LINES), whole.schema)
    missing: list[int] = []
    if len(chunk) and tables.insert_events(con, source_id, lines) != len(chunk):
        missing = np.searchsorted(chunk.numbers, tables.unparsed(con, source_id, lines)).tolist()
    parsed_share = chunk.size * 2 // 5  # about the part of a chunk's time its parse takes
    ctx.advance(parsed_share)
    first, last = (int(chunk.numbers[0]), int(chunk.numbers[-1])) if len(chunk) else (0, -1)
    params = {"source_id": source_id, "first": first, "last": last}
    before = tally.state()
    with ThreadPoolExecutor(max_workers=1) as screen:
        screening = screen.submit(check_chunk, chunk, missing, tables.types_in(con, params), stop)
        if len(chunk):
            _derive(con, params, tally, stop)
        checked = screening.result()
    unparsed_lines = set(missing)
    refused_rows = [int(chunk.numbers[i]) for i in checked.reject_at if i not in unparsed_lines]
    if refused_rows:
        tables.forget_events(con, source_id, refused_rows)
    for i in missing:
        checked.reject_at.setdefault(i, "DuckDB's JSON parser could not read it")
    kept = [i for i in checked.extra if i not in checked.reject_at]
    if (kept and tables.set_extra(con, source_id, lines.take(kept))) or refused_rows:
        tables.forget_derived(con, params)
        tally.restore(before)
        _derive(con, params, tally, stop)
    counts = _store_findings(ctx, chunk, checked)
    ctx.advance(chunk.size - parsed_share)
    return counts


def _derive(con, params: dict, tally: drift.DriftTally, stop: threading.Event) -> None:
    """Drift, emotions and calls of a chunk's rows."""
    _go_on(stop)
    tally.add_chunk(con, params)
    _go_on(stop)
    emotions.insert_vectors(con, params["source_id"], params["first"], params["last"])
    _go_on(stop)
    tables.keep_calls(con, params["source_id"], params["first"], params["last"])


def _go_on(stop: threading.Event) -> None:
    if stop.is_set():
        raise KeyboardInterrupt


def check_chunk(chunk: LineChunk, missing: list[int], types: set[str], stop: threading.Event) -> Checked:
    """Screen the lines DuckDB parsed a run at a time, closed (an envelope key the seed
    does not list is refused too); the lines it refuses are screened again one by one.
    Those that fail, the lines nested too deep for the screen to judge and the lines
    DuckDB could not parse go to pydantic-core in one call."""
    checked = Checked()
    other_tags = frozenset(t for t in types if t not in PAYLOADS)
    if len(other_tags) > MAX_OTHER_TAGS:
        other_tags = frozenset()  # their lines are refused, and screened one by one
    for i in missing:  # a lone surrogate, which DuckDB refuses: no record whatever the format
        problem = text_of_line(chunk.line(i))[1]
        if problem:
            checked.reject_at[i] = problem
    refused_lines = _refused(chunk, missing, SCREEN.lines(other_tags, closed=True), stop)
    checked.extra = refused_lines  # an envelope key the seed does not list, or not valid
    suspects = {i for i in refused_lines if not SCREEN.accepts(chunk.line(i))}
    suspects |= set(np.flatnonzero(maybe_too_deep(chunk.data, chunk.starts, chunk.ends)).tolist())
    suspects |= set(missing)
    _validate(chunk, sorted(suspects - checked.reject_at.keys()), checked)
    return checked


def _refused(chunk: LineChunk, missing: list[int], decoder: msgspec.json.Decoder,
             stop: threading.Event) -> list[int]:
    """The lines DuckDB parsed that `decoder` refuses, read a run of lines at a time
    (every line is a JSON value on its own, so msgspec's values are the lines); all of
    a run's lines where msgspec cannot say which it refused. A run is at most
    SCREEN_LINES long: between two runs DuckDB's thread can take the GIL."""
    found: list[int] = []
    lines = memoryview(chunk.data)
    for span in chunk.spans(missing):
        for run in np.array_split(span, -(-len(span) // SCREEN_LINES)):
            _go_on(stop)
            begin = chunk.starts[run[0]]
            refused_here = refused(decoder, lines[begin:chunk.ends[run[-1]]], chunk.starts[run] - begin)
            found += run.tolist() if refused_here is None else run[refused_here].tolist()
    return found


def _validate(chunk: LineChunk, suspects: list[int], checked: Checked) -> None:
    """pydantic-core on the suspect lines, in one call (`jsonl.check_lines`): their
    violations, and the lines that cannot be records at all, with the reason."""
    if not suspects:
        return
    batch = LineBatch(numbers=chunk.numbers[suspects].tolist(), texts=chunk.texts(suspects))
    violations, reject_at = check_lines(batch, LINES, _found_at)
    checked.violations += violations
    checked.reject_at.update({suspects[position]: why for position, why in reject_at.items()})


def _found_at(locator: str, error: dict, loc: tuple) -> Violation:
    # A record's own type leads the location of its errors.
    return violation(locator, error, loc[1:] if loc and loc[0] in EVENT_TAGS else loc)


def _store_findings(ctx: LoadContext, chunk: LineChunk, checked: Checked) -> Counts:
    """The chunk's violations, then its rejects (unreadable lines among them), in line
    order."""
    rejects = sorted([(int(chunk.numbers[i]), chunk.text(i), why) for i, why in checked.reject_at.items()]
                     + chunk.unreadable)
    rejected_lines = {f"line {number}" for number, _, _ in rejects}
    ctx.add_violations([v for v in checked.violations if v.locator not in rejected_lines]
                       + [reject_violation(f"line {number}", why) for number, _, why in rejects])
    ctx.add_rejects([(f"line {number}", text) for number, text, _ in rejects])
    return Counts(len(chunk) - len(checked.reject_at), len(rejects))
