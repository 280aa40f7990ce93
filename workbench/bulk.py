"""The bulk path of a JSON-lines format, chunk by chunk (see `jsonl.read_chunks`).

DuckDB parses each chunk once, straight into the format's table. Meanwhile a msgspec
screen, derived from the same pydantic models (`screen.py`), reads the chunk's lines a
run at a time from the file's bytes: a line it passes is valid. pydantic-core writes the
exact violations of the lines it refuses (and of those DuckDB could not parse), in one
call. A format's reader calls these steps; what it derives in SQL is its own. Why it is
built so, and what each step costs: docs/performance.md, "How the ingest is fast".
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Protocol

import duckdb
import msgspec
import numpy as np
import pyarrow as pa
from pydantic import TypeAdapter

from workbench.formats import Counts, LoadContext
from workbench.jsonl import LineBatch, LineChunk, check_lines, reject_violation, string_views, text_of_line
from workbench.schema import run_on
from workbench.screen import maybe_too_deep, refused
from workbench.violation import Violation
from workbench.worker import Worker

# A run of lines the screen reads in one call: between two runs the thread running
# DuckDB can take the GIL.
SCREEN_LINES = 2048
# Record batches of a few thousand lines: DuckDB scans an Arrow table's batches in
# parallel, and one batch would be read by one thread.
SCAN_BATCH_LINES = 8192
# How soon a thread waiting for the GIL gets it while a load runs (CPython's default is
# 5 ms). The screen holds the GIL for a run of lines at a time, and the thread running
# DuckDB needs it between statements and for each Arrow batch it scans: with the
# default, it waits up to 5 ms each time (what 1 ms gains: docs/performance.md).
SWITCH_INTERVAL = 0.001


@dataclass
class Checked:
    """What the checks found in a chunk's lines (positions are into the chunk)."""

    violations: list[Violation] = field(default_factory=list)
    reject_at: dict[int, str] = field(default_factory=dict)  # lines that are not records, and why
    refused: list[int] = field(default_factory=list)  # lines the screen refused


@contextmanager
def duckdb_worker(ctx: LoadContext) -> Iterator[tuple[Callable, threading.Event]]:
    """`run(task, *args)` runs `task` in a single worker thread and returns its result.

    DuckDB's work runs there, so Ctrl-C reaches the calling thread, which interrupts the
    worker's statement and sets `stop`, which the steps check between statements
    (`go_on`): the load ends once its task has, and the file's transaction is rolled
    back. Meanwhile the GIL changes hands within SWITCH_INTERVAL; the interpreter's own
    setting is restored after.
    """
    stop = threading.Event()
    with quick_gil_handoff(), Worker() as thread:

        def run(task, *args):
            try:
                return thread.submit(task, *args).result()
            except KeyboardInterrupt:
                stop.set()
                ctx.con.interrupt()
                raise  # leaving the worker waits for the task

        yield run, stop


_handoff = {"loads": 0, "own": 0.0}
_handoff_lock = threading.Lock()


@contextmanager
def quick_gil_handoff() -> Iterator[None]:
    """The switch interval at most SWITCH_INTERVAL while any load runs; the
    interpreter's own setting back once the last one ends (loads may overlap in
    threads of a caller's)."""
    # Counted before the interval is set and inside the `try`, with no point between the
    # count and `counted` where a Ctrl-C can land: wherever it lands, the `finally`
    # undoes what was done (a Ctrl-C as the block begins, through the generator's
    # collection).
    counted = False
    try:
        with _handoff_lock:
            if _handoff["loads"] == 0:
                _handoff["own"] = sys.getswitchinterval()
            _handoff["loads"] += 1
            counted = True
            sys.setswitchinterval(min(_handoff["own"], SWITCH_INTERVAL))
        yield
    finally:
        if counted:
            with _handoff_lock:
                _handoff["loads"] -= 1
                if _handoff["loads"] == 0:
                    sys.setswitchinterval(_handoff["own"])


def go_on(stop: threading.Event) -> None:
    if stop.is_set():
        raise KeyboardInterrupt


def unreadable(chunk: LineChunk, missing: list[int], checked: Checked) -> None:
    """Of the lines DuckDB could not parse, those that can be no record whatever the
    format (a lone surrogate escape, which DuckDB refuses), with the reason."""
    for i in missing:
        problem = text_of_line(chunk.line(i))[1]
        if problem:
            checked.reject_at[i] = problem


class Watcher(Protocol):
    """What a screen that watches what it decodes (`screen.Watching`) reports to: entered
    while the screen decodes, in that thread; told after each run of lines which of them
    it accepted (`accepted`: their positions, in order; the structs decoded after those
    belonged to lines refused after all), and to forget all it saw when the lines are
    screened again from the start."""

    def __enter__(self): ...

    def __exit__(self, *exc): ...

    def accepted(self, positions: np.ndarray) -> None: ...

    def forget(self) -> None: ...


def screened(
    chunk: LineChunk,
    skip: list[int],
    decoder: msgspec.json.Decoder,
    stop: threading.Event,
    watcher: Watcher | None = None,
) -> list[int]:
    """The lines of the chunk, but those in `skip`, that `decoder` refuses, read a run of
    lines at a time straight from the chunk's bytes (every line is a JSON value on its
    own, so msgspec's values are the lines)."""
    lines = memoryview(chunk.data)

    def read(run: np.ndarray) -> tuple[memoryview, np.ndarray]:
        begin = chunk.starts[run[0]]
        return lines[begin : chunk.ends[run[-1]]], chunk.starts[run] - begin

    return _refused_runs(chunk.spans(skip), read, decoder, stop, watcher)


def screened_before_parse(
    chunk: LineChunk, decoder: msgspec.json.Decoder, stop: threading.Event, watcher: Watcher | None = None
) -> list[int]:
    """`screened`, run while DuckDB parses the chunk, before it says which lines it
    cannot read: every line but the unfinished ones. The screen reads a run of lines as
    one buffer; a run of lines that each open and close like an object cannot have one
    line's value run into the next. `screened_once_parsed` finishes it."""
    return screened(chunk, unfinished(chunk), decoder, stop, watcher)


def screened_once_parsed(
    chunk: LineChunk,
    early: list[int],
    missing: list[int],
    decoder: msgspec.json.Decoder,
    stop: threading.Event,
    watcher: Watcher | None = None,
) -> list[int]:
    """The lines DuckDB parsed (all but `missing`) that `decoder` refuses, from `early`
    (`screened_before_parse`): the unfinished lines DuckDB parsed are screened now. A
    line DuckDB cannot parse that ends like an object (two values on one line, say)
    may have shifted the screen's count of the lines after it: then all are screened
    again without it."""
    cut = set(unfinished(chunk))
    if not cut.issuperset(missing):
        if watcher is not None:
            watcher.forget()
        return screened(chunk, missing, decoder, stop, watcher)
    return sorted({*early, *screened_at(chunk, sorted(cut.difference(missing)), decoder, stop, watcher)})


def unfinished(chunk: LineChunk) -> list[int]:
    """The lines whose last byte is not `}`: no JSON object on its own, and the usual
    line DuckDB cannot parse (one cut short)."""
    return np.flatnonzero(np.frombuffer(chunk.data, np.uint8)[chunk.ends - 1] != ord("}")).tolist()


def screened_at(
    chunk: LineChunk,
    positions: list[int],
    decoder: msgspec.json.Decoder,
    stop: threading.Event,
    watcher: Watcher | None = None,
) -> list[int]:
    """The lines at `positions` (readable ones, in order) that `decoder` refuses, read a
    run of them at a time from a buffer of those lines alone."""
    lines = memoryview(chunk.data)

    def read(run: np.ndarray) -> tuple[bytes, np.ndarray]:
        starts, ends = chunk.starts[run], chunk.ends[run]
        offsets = np.zeros(len(run), np.int64)
        np.cumsum(ends[:-1] - starts[:-1] + 1, out=offsets[1:])
        return b"\n".join([lines[start:end] for start, end in zip(starts.tolist(), ends.tolist())]), offsets

    at = np.asarray(positions, np.int64)
    return _refused_runs([at] if len(at) else [], read, decoder, stop, watcher)


def _refused_runs(
    spans, read, decoder: msgspec.json.Decoder, stop: threading.Event, watcher: Watcher | None
) -> list[int]:
    """The positions of `spans` whose lines `decoder` refuses, SCREEN_LINES of them a
    call: `read(run)` gives the run's lines as one buffer and where each starts in it.
    All of a run's lines where msgspec cannot say which it refused."""
    found: list[int] = []
    with watcher if watcher is not None else nullcontext():
        for span in spans:
            for run in np.array_split(span, -(-len(span) // SCREEN_LINES)):
                go_on(stop)
                buffer, starts = read(run)
                refused_here = refused(decoder, memoryview(buffer), starts)
                found += run.tolist() if refused_here is None else run[refused_here].tolist()
                if watcher is not None:
                    watcher.accepted(run[:0] if refused_here is None else np.delete(run, refused_here))
    return found


def too_deep(chunk: LineChunk) -> list[int]:
    """The lines nested too deep for the screen to judge (see `screen.DEPTH_BOUND`)."""
    return np.flatnonzero(maybe_too_deep(chunk.data, chunk.starts, chunk.ends)).tolist()


def validate(
    chunk: LineChunk,
    suspects: list[int],
    lines: TypeAdapter,
    found_at: Callable[[str, dict, tuple], Violation],
    checked: Checked,
) -> None:
    """pydantic-core on the suspect lines, in one call of `lines` (`jsonl.check_lines`):
    their violations, and the lines that cannot be records at all, with the reason."""
    suspects = sorted(set(suspects) - checked.reject_at.keys())
    if not suspects:
        return
    batch = LineBatch(numbers=chunk.numbers[suspects].tolist(), texts=chunk.texts(suspects))
    violations, reject_at = check_lines(batch, lines, found_at)
    checked.violations += violations
    checked.reject_at.update({suspects[position]: why for position, why in reject_at.items()})


def check(
    chunk: LineChunk,
    missing: list[int],
    decoder: msgspec.json.Decoder,
    lines: TypeAdapter,
    found_at: Callable[[str, dict, tuple], Violation],
    stop: threading.Event,
    still_suspect: Callable[[int], bool] = lambda i: True,
    refused: list[int] | None = None,
    deep: list[int] | None = None,
) -> Checked:
    """The checks of a chunk whose lines DuckDB has parsed (`missing`: those it could
    not): the screen reads the others a run at a time (unless it has: `refused`, the
    lines it refused then); the lines it refuses (those `still_suspect` keeps), the
    lines nested too deep for it to judge (`too_deep`, unless found already: `deep`)
    and the lines DuckDB could not parse go to pydantic-core in one call."""
    checked = Checked()
    unreadable(chunk, missing, checked)
    checked.refused = screened(chunk, missing, decoder, stop) if refused is None else refused
    deep = too_deep(chunk) if deep is None else deep
    suspects = {i for i in checked.refused if still_suspect(i)} | set(deep) | set(missing)
    validate(chunk, list(suspects), lines, found_at, checked)
    return checked


def line_table(chunk: LineChunk, positions: list[int] | None = None) -> pa.Table:
    """The chunk's lines (or those at `positions`) as (seq, raw), for DuckDB to parse."""
    if positions is None:
        numbers, raw = chunk.numbers, chunk.raw
    else:
        at = np.asarray(positions, np.int64)
        numbers, raw = chunk.numbers[at], string_views(chunk.data, chunk.starts[at], chunk.ends[at])
    whole = pa.table({"seq": pa.array(numbers, pa.int64()), "raw": raw})
    return pa.Table.from_batches(whole.to_batches(max_chunksize=SCAN_BATCH_LINES), whole.schema)


def rows_of(source_id: int, chunk: LineChunk) -> dict:
    """The parameters that name a chunk's rows: source_id, first and last line."""
    first, last = (int(chunk.numbers[0]), int(chunk.numbers[-1])) if len(chunk) else (0, -1)
    return {"source_id": source_id, "first": first, "last": last}


def missing_lines(
    con: duckdb.DuckDBPyConnection, table: str, source_id: int, chunk: LineChunk, lines: pa.Table
) -> list[int]:
    """The positions in the chunk of its `lines` that did not become rows of `table`."""
    sql = (
        f"SELECT seq FROM lines WHERE seq NOT IN (SELECT seq FROM {table} WHERE source_id = $source_id "
        f"AND seq BETWEEN (SELECT min(seq) FROM lines) AND (SELECT max(seq) FROM lines)) ORDER BY seq"
    )
    seqs = [seq for (seq,) in run_on(con, lines, sql, "lines", {"source_id": source_id})]
    return np.searchsorted(chunk.numbers, seqs).tolist()


def forget_rows(con: duckdb.DuckDBPyConnection, table: str, source_id: int, seqs: list[int]) -> None:
    """Take out rows whose lines turned out not to be records."""
    run_on(
        con,
        pa.table({"seq": pa.array(seqs, pa.int64())}),
        f"DELETE FROM {table} WHERE source_id = $source_id AND seq IN (SELECT seq FROM refused)",
        "refused",
        {"source_id": source_id},
    )


def refused_rows(chunk: LineChunk, missing: list[int], checked: Checked) -> list[int]:
    """The line numbers of rows DuckDB parsed that turned out not to be records; the lines
    DuckDB could not parse become rejects too (with pydantic's reason where it has one)."""
    unparsed = set(missing)
    rows = [int(chunk.numbers[i]) for i in checked.reject_at if i not in unparsed]
    for i in missing:
        checked.reject_at.setdefault(i, "DuckDB's JSON parser could not read it")
    return rows


def store_findings(ctx: LoadContext, chunk: LineChunk, checked: Checked) -> Counts:
    """The chunk's violations, then its rejects (unreadable lines among them), in line
    order."""
    rejects = sorted(
        [(int(chunk.numbers[i]), chunk.text(i), why) for i, why in checked.reject_at.items()] + chunk.unreadable
    )
    rejected_lines = {f"line {number}" for number, _, _ in rejects}
    ctx.add_violations(
        [v for v in checked.violations if v.locator not in rejected_lines]
        + [reject_violation(f"line {number}", why) for number, _, why in rejects]
    )
    ctx.add_rejects([(f"line {number}", text) for number, text, _ in rejects])
    return Counts(len(chunk) - len(checked.reject_at), len(rejects))
