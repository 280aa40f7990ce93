"""Load a Damage replay (or tournament) log chunk by chunk (see `jsonl.read_chunks`).

Each line is parsed once by DuckDB, straight into `damage_events`. The screen then
reads the chunk's lines as one JSON array, in one msgspec call: a line it passes is
valid. pydantic-core writes the exact violations of the lines it refuses, in one call.
Emotions, drift and the calls decisions need are derived in SQL over the chunk's rows;
the decisions follow once the whole file is in.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import msgspec
import numpy as np
import pyarrow as pa
from pydantic import ValidationError

from workbench.damage import drift, emotions, tables
from workbench.damage.models import LINES, PAYLOADS, SCREEN, UNDOCUMENTED
from workbench.formats import Counts, LoadContext
from workbench.jsonl import LineChunk, context_chunks, read_line, reject_violation
from workbench.screen import refused
from workbench.validation import violation
from workbench.violation import Violation

EVENT_TAGS = {*PAYLOADS, UNDOCUMENTED}
# More undocumented types than this in one chunk are not given a place in the strict
# screen's union: their lines are screened one by one.
MAX_OTHER_TAGS = 64


def load(ctx: LoadContext) -> Counts:
    # The file is read and split in this thread while a single worker loads the chunk
    # before. DuckDB runs only in the worker: Ctrl-C reaches this thread, which stops
    # the worker's statement and ends the load (the file's transaction is rolled back).
    tally = drift.DriftTally.from_state(ctx.state)
    counts: list[Counts] = []
    with ThreadPoolExecutor(max_workers=1) as worker:
        pending = worker.submit(tables.start_calls, ctx.con, ctx.source_id, ctx.appending)
        try:
            for chunk in context_chunks(ctx):
                pending.result()
                pending = worker.submit(lambda chunk=chunk: counts.append(load_chunk(ctx, chunk, tally)))
            pending.result()
        except KeyboardInterrupt:
            ctx.con.interrupt()
            wait([pending])
            raise
    tables.derive_decisions(ctx.con, ctx.source_id)
    ctx.state = tally.state()
    ctx.add_file_findings(tally.findings())
    return Counts(sum(c.records for c in counts), sum(c.rejected for c in counts))


@dataclass
class Checked:
    """What the checks found in a chunk's lines (positions are into the chunk)."""

    violations: list[Violation] = field(default_factory=list)
    reject_at: dict[int, str] = field(default_factory=dict)  # lines that are not records, and why
    extra: list[int] = field(default_factory=list)  # lines whose envelope may have unlisted keys


def load_chunk(ctx: LoadContext, chunk: LineChunk, tally: drift.DriftTally) -> Counts:
    con, source_id = ctx.con, ctx.source_id
    lines = pa.table({"seq": pa.array(chunk.numbers, pa.int64()), "raw": chunk.raw})
    missing: list[int] = []
    if len(chunk) and tables.insert_events(con, source_id, lines) != len(chunk):
        missing = np.searchsorted(chunk.numbers, tables.unparsed(con, source_id, lines)).tolist()
    first, last = (int(chunk.numbers[0]), int(chunk.numbers[-1])) if len(chunk) else (0, -1)
    params = {"source_id": source_id, "first": first, "last": last}
    checked = check_chunk(chunk, missing, tables.types_in(con, params))
    refused_rows = [int(chunk.numbers[i]) for i in checked.reject_at if i not in set(missing)]
    if refused_rows:
        tables.forget_events(con, source_id, refused_rows)
    for i in missing:
        checked.reject_at.setdefault(i, "DuckDB's JSON parser could not read it")
    kept = [i for i in checked.extra if i not in checked.reject_at]
    if kept:
        tables.set_extra(con, source_id, lines.take(kept))
    if len(chunk):
        tally.add_chunk(con, params)
        emotions.insert_vectors(con, source_id, first, last)
        tables.keep_calls(con, source_id, first, last)
    return _store_findings(ctx, chunk, checked)


def check_chunk(chunk: LineChunk, missing: list[int], types: set[str]) -> Checked:
    """Screen the lines DuckDB parsed as one array, closed (an envelope key the seed does
    not list is refused too); the lines it refuses are screened again one by one, and
    those that fail, with the lines DuckDB could not parse, go to pydantic-core in one
    call."""
    checked = Checked()
    other_tags = frozenset(t for t in types if t not in PAYLOADS)
    if len(other_tags) > MAX_OTHER_TAGS:
        other_tags = frozenset()  # their lines are refused, and screened one by one
    for i in missing:  # a lone surrogate, which DuckDB refuses: no record whatever the format
        problem = read_line(chunk.line(i))[1]
        if problem:
            checked.reject_at[i] = problem
    parsed = np.delete(np.arange(len(chunk)), missing)
    refused_lines = _refused(chunk, parsed, SCREEN.array(other_tags, closed=True))
    checked.extra = refused_lines  # an envelope key the seed does not list, or not valid
    suspects = [i for i in refused_lines if not SCREEN.accepts(chunk.line(i))]
    _validate(chunk, sorted([*(i for i in missing if i not in checked.reject_at), *suspects]), checked)
    return checked


def _refused(chunk: LineChunk, positions: np.ndarray, decoder: msgspec.json.Decoder) -> list[int]:
    """The lines at `positions` that `decoder` refuses, read as one JSON array (every
    line is a JSON value on its own: DuckDB parsed it, so the array's elements are the
    lines); all of them where msgspec cannot say which it refused."""
    if len(positions) == 0:
        return []
    lengths = chunk.ends[positions] - chunk.starts[positions]
    whole = len(positions) == len(chunk)
    found = refused(decoder, chunk.joined(None if whole else positions), lengths)
    return positions.tolist() if found is None else positions[found].tolist()


def _validate(chunk: LineChunk, suspects: list[int], checked: Checked) -> None:
    """pydantic-core on the suspect lines, in one call: their violations, and the lines
    that cannot be records at all (not JSON, or not an object), with the reason."""
    if not suspects:
        return
    try:
        LINES.validate_python(chunk.texts(suspects))
        return
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    for error in errors:
        position, *loc = error["loc"]
        index = suspects[position]
        if not loc:  # the line as a whole: invalid JSON, or JSON that is not an object
            checked.reject_at[index] = error["msg"]
            continue
        if loc[0] in EVENT_TAGS:
            loc = loc[1:]
        checked.violations.append(violation(chunk.locator(index), error, tuple(loc)))


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
