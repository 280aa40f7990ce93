"""Reading line-based files in batches, for every JSONL format: the one place that
decides what a readable line is.

Lines are numbered from 1 over the whole file, blank lines included, so `line N`
locators match what an editor shows. Blank lines are neither records nor rejects. A line
ends at LF (a CR before it is dropped); a UTF-8 byte order mark before the first line is
skipped. A line that cannot be a record whatever its format says (not UTF-8, longer than
MAX_LINE_BYTES, or holding a lone UTF-16 surrogate) is marked `unreadable` with the
reason, and the format keeps it as a reject with its text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from pydantic import ValidationError

from workbench.formats import BOM, Counts, LoadContext
from workbench.schema import run_on
from workbench.violation import Violation

BATCH_LINES = 20_000
# Lines checked by pydantic-core in one call (`check_lines`).
CHECK_LINES = 4096
# A file is read in chunks of this many bytes (complete lines): large enough that the
# fixed cost of each statement over a chunk does not count, small enough for memory.
CHUNK_BYTES = 128 << 20
# A chunk also ends after this many lines: its arrays hold some 60 bytes a line, so a
# file of tiny lines (`{}`) would otherwise need several GB for one chunk.
CHUNK_LINES = 1 << 21
SPLIT_BYTES = 4 << 20
# The largest line read as a record. DuckDB's JSON functions need many times a line's
# size while they work on it; 8 MiB lines stay within the ingest's memory limit.
MAX_LINE_BYTES = 8 << 20
# A batch closes at this many bytes of text too, so a few long lines never share one.
BATCH_BYTES = 8 << 20
# A \uD800-\uDFFF escape not paired high+low: legal JSON text, but no Unicode string
# (DuckDB, Arrow and UTF-8 refuse it). A match is confirmed by parsing the line.
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
# A line of only these bytes is blank: neither a record nor a reject.
BLANK = b" \t\r\n\f\v"
# SQL over a chunk's `raw` line: may it be a JSON object (the first test is all a line
# that opens with its brace costs)?
OPENS_AN_OBJECT = "(starts_with(raw, '{') OR starts_with(ltrim(raw, ' \t\r'), '{'))"


@dataclass
class LineBatch:
    numbers: list[int] = field(default_factory=list)  # 1-based line numbers
    texts: list[str] = field(default_factory=list)
    # Positions (into `texts`) of lines that cannot be records, with the reason. A line
    # that is not UTF-8 holds its bytes as backslash escapes, so nothing is lost.
    unreadable: dict[int, str] = field(default_factory=dict)
    size: int = 0  # bytes of text

    def __len__(self) -> int:
        return len(self.texts)

    def locator(self, index: int) -> str:
        return f"line {self.numbers[index]}"

    def arrow(self, keep: list[bool] | None = None) -> pa.Table:
        """(seq, raw) of the batch's lines, optionally only where `keep` is true."""
        table = pa.table({"seq": pa.array(self.numbers, pa.int64()), "raw": pa.array(self.texts, pa.string())})
        return table if keep is None else table.filter(pa.array(keep, pa.bool_()))


@dataclass
class LineChunk:
    """The complete lines of one stretch of a file, read in bulk: no Python runs per
    line unless the line is unusual (blank, not starting with `{`, not UTF-8, or too long).

    `numbers` and `raw` hold the lines that may be records, in order: their 1-based
    line numbers and their text, without line ends, as an Arrow string-view array over
    the chunk's bytes (`string_views`: nothing is copied).
    `unreadable` holds the lines that cannot be records: (number, text, why). A line of
    `numbers` may still hold a lone surrogate escape, which is not looked for here:
    DuckDB's JSON reader refuses such a line, and `text_of_line` then says why.
    """

    data: bytes
    numbers: np.ndarray
    raw: pa.Array
    unreadable: list[tuple[int, str, str]]
    starts: np.ndarray  # where each line of `numbers` starts in `data`
    ends: np.ndarray  # where it ends (before CR LF)
    lines: int  # lines of the stretch, blank and unreadable ones included
    size: int  # bytes of the stretch

    def __len__(self) -> int:
        return len(self.numbers)

    def line(self, index: int) -> bytes:
        """The bytes of line `numbers[index]`, without its line end."""
        return self.data[self.starts[index] : self.ends[index]]

    def text(self, index: int) -> str:
        return self.line(index).decode("utf-8")

    def locator(self, index: int) -> str:
        return f"line {self.numbers[index]}"

    def texts(self, indices) -> list[str]:
        return [self.text(i) for i in indices]

    def spans(self, skip) -> Iterator[np.ndarray]:
        """The positions of the lines, but those in `skip`, in runs whose stretch of the
        file holds no other line but blank ones: each run can be read as one buffer of
        JSON lines (see `screen.refused`)."""
        keep = np.ones(len(self), bool)
        keep[list(skip)] = False
        # A run breaks where a line is skipped or an unreadable line lies in between.
        breaks = np.zeros(len(self), bool)
        breaks[1:] = ~keep[:-1]
        if self.unreadable:
            between = np.searchsorted(self.numbers, [number for number, _, _ in self.unreadable])
            breaks[between[between < len(self)]] = True
        kept = np.flatnonzero(keep)
        yield from (run for run in np.split(kept, np.flatnonzero(breaks[kept[1:]]) + 1) if len(run))


def read_chunks(
    path: Path, start: int = 0, end: int | None = None, first_line: int = 1, chunk_bytes: int | None = None
) -> Iterator[LineChunk]:
    """The lines of bytes `start` to `end` (None: to the end of the file) of `path`,
    the first numbered `first_line`, in chunks of about `chunk_bytes` (or CHUNK_LINES
    lines, if fewer), each ending at a line end (a line longer than that makes its chunk
    longer). The reader of a chunk reports its `size` to a progress bar as it goes."""
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    position, number, want = start, first_line, chunk_bytes
    with open(path, "rb") as handle:
        while end is None or position < end:
            handle.seek(position)
            data = handle.read(want if end is None else min(want, end - position))
            if not data:
                return
            last = len(data) < want or (end is not None and position + len(data) >= end)
            size = len(data) if last else data.rfind(b"\n") + 1
            if size == 0:
                want *= 2  # a line longer than a chunk: read it whole
                continue
            chunk = _chunk(data, size, number, bom=number == 1 and data.startswith(BOM))
            yield chunk
            # A chunk cut at CHUNK_LINES: the next read asks for about as many bytes.
            want = chunk_bytes if chunk.size == size else min(chunk_bytes, 2 * chunk.size)
            position, number = position + chunk.size, number + chunk.lines


def _chunk(data: bytes, size: int, first_line: int, bom: bool) -> LineChunk:
    """Split the first `size` bytes of `data` (whole lines), or its first CHUNK_LINES
    lines, into lines, keeping aside the blank and unreadable ones."""
    starts, ends = line_spans(data, size, CHUNK_LINES)
    count = len(starts)
    if count == CHUNK_LINES:
        size = min(size, int(ends[-1]) + 1)  # up to the last line's end
    if bom:
        starts[0] += len(BOM)
    view = np.frombuffer(data, np.uint8)
    opens = np.zeros(count, bool)
    nonempty = ends > starts
    opens[nonempty] = view[starts[nonempty]] == ord("{")
    has_cr = np.zeros(count, bool)
    has_cr[nonempty] = view[ends[nonempty] - 1] == ord("\r")
    ends -= has_cr
    keep = opens & (ends - starts <= MAX_LINE_BYTES)
    unreadable: dict[int, tuple[int, str, str]] = {}

    def line(i: int) -> bytes:  # with its CR, as `read_line` takes it
        return data[starts[i] : ends[i] + has_cr[i]]

    for i in np.flatnonzero(~keep).tolist():  # the unusual lines, one by one
        if not line(i).strip(BLANK):
            continue  # blank: neither a record nor a reject
        text, problem = read_line(line(i))
        if problem:
            unreadable[i] = (first_line + i, text, problem)
        else:
            keep[i] = True
    raw = pa.LargeBinaryArray.from_buffers(
        pa.large_binary(), count, [None, pa.py_buffer(np.append(starts, size)), pa.py_buffer(data)]
    )
    try:
        raw.cast(pa.large_string())  # checks the whole stretch is UTF-8, in one call
    except pa.ArrowInvalid:  # not UTF-8 somewhere: find the lines
        for i in np.flatnonzero(keep).tolist():
            text, problem = read_line(line(i))
            if problem:
                unreadable[i], keep[i] = (first_line + i, text, problem), False
    kept = np.flatnonzero(keep)
    return LineChunk(
        data,
        first_line + kept,
        string_views(data, starts[kept], ends[kept]),
        [unreadable[i] for i in sorted(unreadable)],
        starts[kept],
        ends[kept],
        lines=count,
        size=size,
    )


# A string view names its bytes by buffer and an int32 offset: each buffer is the
# chunk's bytes from a multiple of 2**30 on, so an offset stays below 2**31 however
# long the chunk.
_VIEW_BUFFER_SHIFT = 30
_INLINE = 12  # a string of up to this many bytes is held in its view


def string_views(data: bytes, starts: np.ndarray, ends: np.ndarray) -> pa.Array:
    """The UTF-8 text of `data[starts[i]:ends[i]]` for each i, as an Arrow string-view
    array that shares `data`: each line's text as it is, without its line end, with no
    copy (DuckDB reads the views as they are; a large string array would have to hold
    the line ends between its values)."""
    count = len(starts)
    lengths = (ends - starts).astype(np.int32)
    view = np.frombuffer(data, np.uint8)
    # Layout (Arrow's columnar format): int32 length, then the bytes themselves when they
    # fit in 12, else a 4-byte prefix, int32 buffer index and int32 offset. The bytes are
    # gathered a position at a time, so the temporaries stay one index per line.
    views = np.zeros((count, 16), np.uint8)
    short = np.flatnonzero(lengths <= _INLINE)
    long = np.flatnonzero(lengths > _INLINE)
    for k in range(4):
        views[long, 4 + k] = view[starts[long] + k]
    for k in range(_INLINE):
        short = short[lengths[short] > k]
        views[short, 4 + k] = view[starts[short] + k]
    words = views.view(np.int32)
    words[:, 0] = lengths
    at = starts[long]
    buffer = at >> _VIEW_BUFFER_SHIFT
    words[long, 2] = buffer
    words[long, 3] = at - (buffer << _VIEW_BUFFER_SHIFT)
    buffers = [
        pa.py_buffer(memoryview(data)[b << _VIEW_BUFFER_SHIFT :]) for b in range(int(buffer.max(initial=-1)) + 1)
    ]
    return pa.StringViewArray.from_buffers(pa.string_view(), count, [None, pa.py_buffer(views), *buffers])


def line_spans(data, size: int, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """Where each line of the first `size` bytes of `data` (bytes or a mapping) starts and
    ends (before its LF; the last line may have none), for the first `limit` lines at
    most: the line ends
    are found a few MiB at a time, so the comparison's temporary array stays small."""
    view = np.frombuffer(data, np.uint8, count=size)
    parts: list[np.ndarray] = []
    found = 0
    for at in range(0, size, SPLIT_BYTES):
        parts.append(np.flatnonzero(view[at : at + SPLIT_BYTES] == ord("\n")) + at)
        found += len(parts[-1])
        if found >= limit:
            break
    ends = np.concatenate(parts)[:limit].astype(np.int64) if parts else np.zeros(0, np.int64)
    if size and len(ends) < limit and (not len(ends) or ends[-1] != size - 1):
        ends = np.append(ends, size)  # the last line has no line end
    starts = np.zeros(len(ends), np.int64)
    starts[1:] = ends[:-1] + 1
    return starts, ends


def line_batches(
    path: Path,
    advance: Callable[[int], None] = lambda n: None,
    batch_lines: int | None = None,
    start: int = 0,
    end: int | None = None,
    first_line: int = 1,
) -> Iterator[LineBatch]:
    """Yield the non-blank lines of `path` in batches of texts, for formats checked line
    by line: bytes `start` to `end` (None: to the end of the file), the first of them
    numbered `first_line`."""
    batch_lines = batch_lines or BATCH_LINES
    batch = LineBatch()
    for chunk in read_chunks(path, start, end, first_line):
        lines: dict[int, tuple[str, str | None]] = {number: (text, why) for number, text, why in chunk.unreadable}
        for i, number in enumerate(chunk.numbers.tolist()):
            lines[number] = text_of_line(chunk.line(i))  # a lone surrogate is found here
        reported = 0  # bytes of the chunk reported to `advance`, in step with the lines handed out
        for count, number in enumerate(sorted(lines), 1):
            text, problem = lines[number]
            if problem:
                batch.unreadable[len(batch.texts)] = problem
            batch.numbers.append(number)
            batch.texts.append(text)
            batch.size += len(text)
            if len(batch.texts) >= batch_lines or batch.size >= BATCH_BYTES:
                share = chunk.size * count // len(lines)
                advance(share - reported)
                reported = share
                yield batch
                batch = LineBatch()
        advance(chunk.size - reported)
    if batch.texts:
        yield batch


def context_batches(ctx: LoadContext, batch_lines: int | None = None) -> Iterator[LineBatch]:
    """The batches of the part of the file a load reads (see LoadContext)."""
    return line_batches(ctx.path, ctx.advance, batch_lines, ctx.start_byte, ctx.end_byte, ctx.first_line)


def context_chunks(ctx: LoadContext, chunk_bytes: int | None = None) -> Iterator[LineChunk]:
    """The chunks of the part of the file a load reads (see LoadContext)."""
    return read_chunks(ctx.path, ctx.start_byte, ctx.end_byte, ctx.first_line, chunk_bytes)


def read_line(line: bytes) -> tuple[str, str | None]:
    """A line's text (without the CR of a CR LF), and why it cannot be a record (None
    when it may be one)."""
    return text_of_line(line[:-1] if line.endswith(b"\r") else line)


def text_of_line(line: bytes) -> tuple[str, str | None]:
    """`read_line` for a line whose line end is already gone."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode("utf-8", "backslashreplace"), "it is not valid UTF-8"
    if len(line) > MAX_LINE_BYTES:
        return text, (
            f"it is {len(line) / (1 << 20):.1f} MiB long, over the {MAX_LINE_BYTES >> 20} MiB "
            f"a line may have to be read as a record"
        )
    if ("\\ud" in text or "\\uD" in text) and (found := lone_surrogate(text)):
        return text, f"it holds a lone UTF-16 surrogate ({found}): legal JSON, but not text"
    return text, None


def lone_surrogate(text: str) -> str | None:
    """The first unpaired surrogate escape (`\\ud800`) of a JSON text, or None."""
    match = _LONE_SURROGATE.search(text)
    if match is None:
        return None
    try:  # the match may be a literal backslash in a string: only parsing tells
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return match.group(0)
    return None


def check_lines(
    batch: LineBatch, lines, found_at: Callable[[str, Any, tuple], Violation]
) -> tuple[list[Violation], dict[int, str]]:
    """Validate every line of the batch in one pydantic-core call of `lines` (a
    TypeAdapter over a list of JSON texts).

    Returns the violations of the lines that are records, each made by
    `found_at(locator, error, loc)` (`loc` inside the record), and the positions of the
    lines that cannot be records at all (not UTF-8, not JSON, not an object), each with
    the reason.
    """
    reject_at = dict(batch.unreadable)
    violations: list[Violation] = []
    # A few thousand lines a call: pydantic-core's errors for a whole chunk of hostile
    # lines (a million of them for 600 KB of `{}`) held over a gigabyte at once.
    for start in range(0, len(batch.texts), CHECK_LINES):
        try:
            lines.validate_python(batch.texts[start : start + CHECK_LINES])
            continue
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
        for error in errors:
            position, *loc = error["loc"]
            index = int(position) + start  # the list's index: the line in the batch
            if index in reject_at:
                continue
            if not loc:  # the line as a whole: invalid JSON, or JSON that is not an object
                reject_at[index] = error["msg"]
                continue
            violations.append(found_at(batch.locator(index), error, tuple(loc)))
        del errors
    return violations, reject_at


def reject_violation(locator: str, why: str) -> Violation:
    return Violation(
        locator,
        "error",
        "not_a_json_object",
        "(record)",
        f"expected one JSON object per line; found a line that cannot be read ({why}), kept in `rejects`",
    )


def store_batch(
    ctx: LoadContext,
    batch: LineBatch,
    violations: list[Violation],
    reject_at: dict[int, str],
    insert: Callable[[pa.Table], int],
) -> Counts:
    """Store a checked batch: `insert` writes the kept lines (a `(seq, raw, valid)`
    Arrow table, `valid` = no error on the line) and returns how many rows it added,
    skipping lines DuckDB cannot parse; then the violations and rejects go in.

    `reject_at` (position -> why) is completed in place with the lines DuckDB refused.
    """
    keep = [i not in reject_at for i in range(len(batch))]
    bad = {v.locator for v in violations if v.severity == "error"}
    valid = pa.array([batch.locator(i) not in bad for i in range(len(batch))], pa.bool_())
    lines = batch.arrow().append_column("valid", valid).filter(pa.array(keep, pa.bool_()))
    if insert(lines) != sum(keep):
        # DuckDB's JSON parser refused a line pydantic-core accepted: reject it too.
        for seq in _unparsable_seqs(ctx.con, lines):
            reject_at[batch.numbers.index(seq)] = "DuckDB's JSON parser could not read it"
    located = {batch.locator(i) for i in reject_at}
    ctx.add_violations(
        [v for v in violations if v.locator not in located]
        + [reject_violation(batch.locator(i), why) for i, why in sorted(reject_at.items())]
    )
    ctx.add_rejects([(batch.locator(i), batch.texts[i]) for i in sorted(reject_at)])
    return Counts(len(batch) - len(reject_at), len(reject_at))


def store_batches(
    ctx: LoadContext,
    check: Callable[[LineBatch], tuple[list[Violation], dict[int, str]]],
    insert: Callable[[pa.Table], int],
) -> Counts:
    """Every batch of the part of the file a load reads (`context_batches`), checked by
    `check` (its violations, and position -> why for the lines to reject) and stored
    (`store_batch`). Returns the counts of them all."""
    records = rejected = 0
    for batch in context_batches(ctx):
        found, reject_at = check(batch)
        counts = store_batch(ctx, batch, found, reject_at, insert)
        records += counts.records
        rejected += counts.rejected
    return Counts(records, rejected)


def _unparsable_seqs(con, lines: pa.Table) -> list[int]:
    return [
        seq
        for (seq,) in run_on(
            con,
            lines,
            "SELECT seq FROM lines WHERE json_type(TRY_CAST(raw AS JSON)) IS DISTINCT FROM 'OBJECT'",
            "lines",
        )
    ]
