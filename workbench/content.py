"""What a file holds: its SHA-256, its size and its complete lines, computed in a thread
of its own from the moment the file is chosen, while the database opens and the file
loads (hashlib works outside the GIL).

The hash starts before the database has said what was ingested of the file before
(`KnownSource`), so it cannot know where that content ends. It keeps a copy of the
digest at the start of each block instead: the hash of any prefix is one copy away,
plus at most a block read again. Lines are counted only where they are needed (after
the content ingested before, once that is known to be unchanged).
"""

from __future__ import annotations

import hashlib
import threading
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from workbench.worker import Worker

BLOCK = 1 << 20


@dataclass(frozen=True)
class KnownSource:
    """What the database holds of a file: the `sources` row of its last ingest."""

    source_id: int
    sha256: str
    size: int
    complete_bytes: int
    complete_lines: int
    resume: dict | None
    records: int
    rejected: int
    table_rows: dict | None = None  # its rows in each table then (None: not recorded)


@dataclass(frozen=True)
class Content:
    """What a file holds now: its hash, size, where its last complete line ends, and
    the hash of its first `known.size` bytes (the content ingested before; None when
    there was none, or the file is shorter now)."""

    sha256: str
    size: int
    complete_bytes: int
    complete_lines: int
    prefix_sha256: str | None


@dataclass
class _Block:
    start: int
    end: int
    digest_before: hashlib._Hash
    newlines: int | None = None  # None: not counted
    last_newline: int = -1


class FileHash:
    """The `Content` of a file's first `size` bytes (the size it had when chosen: a file
    still being written is read up to there, and its load reads exactly those bytes),
    computed by `worker`. `expect` tells it what was ingested before, once known;
    `result` waits for it. Once `stop` is set, it stops reading (its result is then of
    no use: the run is over)."""

    def __init__(self, path: Path, size: int, worker: Worker, stop: threading.Event):
        self.path, self.size, self._stop = path, size, stop
        self._known: KnownSource | None = None
        # Newlines before this offset need not be counted: the content ingested before.
        # None until known: a block hashed before then is counted once the hash is done,
        # if it is needed (most of a grown file's blocks are not).
        self._count_from: int | None = None
        self._blocks: list[_Block] = []
        self._end_digest = hashlib.sha256()  # of every byte hashed, once the hash is done
        self._content: Content | None = None
        self._pending = worker.submit(self._hash)

    @cached_property
    def complete_bytes(self) -> int:
        """Where the last complete line ends (0: none); known at once, a load starts with it."""
        return last_line_end(self.path, self.size)

    def expect(self, known: KnownSource | None) -> None:
        self._known = known
        self._count_from = known.size if known is not None and known.size <= self.size else 0

    def result(self) -> Content:
        """The content, once hashed (computed once: `expect` comes before)."""
        if self._content is None:
            self._content = self._computed()
        return self._content

    def _computed(self) -> Content:
        sha256, size = self._pending.result()
        known = self._known
        prefix = self._digest_at(known.size) if known is not None and known.size <= size else None
        if known is not None and prefix == known.sha256:  # it grew, or is the same: count what is new
            newlines, last_newline = self._newlines_from(known.size)
            if last_newline < 0:
                return Content(sha256, size, known.complete_bytes, known.complete_lines, prefix)
            return Content(sha256, size, last_newline + 1, known.complete_lines + newlines, prefix)
        newlines, last_newline = self._newlines_from(0)
        return Content(sha256, size, last_newline + 1, newlines, prefix)

    def _hash(self) -> tuple[str, int]:
        digest = hashlib.sha256()
        offset = 0
        with open(self.path, "rb") as handle:
            while offset < self.size and not self._stop.is_set():
                block = handle.read(min(BLOCK, self.size - offset))
                if not block:
                    break  # the file shrank meanwhile: what was read is what it holds
                entry = _Block(offset, offset + len(block), digest.copy())
                count_from = self._count_from
                if count_from is not None and entry.end > count_from:
                    _count(entry, block)
                self._blocks.append(entry)
                digest.update(block)
                offset = entry.end
            self._count_needed(handle)
        self._end_digest = digest
        return digest.hexdigest(), offset

    def _count_needed(self, handle) -> None:
        """Count the blocks hashed before it was known where counting starts, from that
        point on (the rest are counted when `result` needs them)."""
        count_from = self._count_from
        if count_from is None:
            return
        for block in self._blocks:
            if block.newlines is None and block.end > count_from and not self._stop.is_set():
                handle.seek(block.start)
                _count(block, handle.read(block.end - block.start))

    def _digest_at(self, offset: int) -> str:
        """The hash of the first `offset` bytes hashed."""
        at = bisect_right([b.start for b in self._blocks], offset) - 1
        if at < 0:
            return hashlib.sha256().hexdigest()
        block = self._blocks[at]
        if offset >= block.end:
            return self._end_digest.hexdigest()
        digest = block.digest_before.copy()
        digest.update(self._read(block.start, offset))
        return digest.hexdigest()

    def _newlines_from(self, offset: int) -> tuple[int, int]:
        """How many newlines the bytes from `offset` on hold, and where the last one is (-1: none)."""
        newlines, last_newline = 0, -1
        for block in self._blocks:
            if block.end <= offset:
                continue
            if block.start < offset or block.newlines is None:
                block = _Block(max(block.start, offset), block.end, block.digest_before)
                newlines += _count(block, self._read(block.start, block.end))
            else:
                newlines += block.newlines
            last_newline = max(last_newline, block.last_newline)
        return newlines, last_newline

    def _read(self, start: int, end: int) -> bytes:
        with open(self.path, "rb") as handle:
            handle.seek(start)
            return handle.read(end - start)


def _count(block: _Block, data: bytes) -> int:
    """The newlines of `block`, whose bytes are `data`, counted into it."""
    # NumPy compares the bytes without the GIL, which `bytes.count` holds, and the
    # threads that screen and load run beside the hash (docs/performance.md).
    block.newlines = newlines = int(np.count_nonzero(np.frombuffer(data, np.uint8) == ord("\n")))
    if newlines:
        block.last_newline = block.start + data.rindex(b"\n")
    return newlines


def last_line_end(path: Path, size: int) -> int:
    """Where the last complete line of the file's first `size` bytes ends (0: none)."""
    with open(path, "rb") as handle:
        end = size
        while end > 0:
            start = max(0, end - (1 << 16))
            handle.seek(start)
            found = handle.read(end - start).rfind(b"\n")
            if found >= 0:
                return start + found + 1
            end = start
    return 0
