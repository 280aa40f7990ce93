"""A record's raw text: its line exactly as written in its file, read back while the file
still holds what was ingested (the SHA-256 of the bytes the database read is checked once
per version of the file, and the line ends kept for it), and the lines whose text holds
some words (`text_matches`), searched in those files and in the rejects the database
keeps.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG

import numpy as np
import polars as pl
import pyarrow as pa

from workbench.formats import BOM
from workbench.jsonl import line_spans, read_line
from workbench.paths import open_regular

# SQL of the line number a locator `line N` names (NULL for another locator).
LINE_OF_LOCATOR = "TRY_CAST(regexp_extract({0}, '^line (\\d+)$', 1) AS BIGINT)"


# --- the text of a line -------------------------------------------------------------------


@dataclass(frozen=True)
class _Lines:
    """Where each line of a file's ingested bytes ends (the byte of its LF, or the end)."""

    size: int
    ends: np.ndarray

    def text(self, data, line: int) -> str | None:
        """Line `line` as the ingest reads it (`jsonl.read_line`: no CR, UTF-8 or escapes)."""
        if not 1 <= line <= len(self.ends):
            return None
        start = 0 if line == 1 else int(self.ends[line - 2]) + 1
        raw = bytes(data[start : int(self.ends[line - 1])])
        if line == 1 and raw.startswith(BOM):
            raw = raw[len(BOM) :]
        return read_line(raw)[0]


_INDEXED: dict[tuple, _Lines | None] = {}
_INDEX_LOCK = threading.Lock()


def file_lines(path: str, sha256: str, size: int) -> _Lines | None:
    """The line ends of `path`'s first `size` bytes while they are what was ingested
    (`sha256`), else None. Kept per version of the file (inode, size, mtime)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    if not S_ISREG(stat.st_mode):  # a FIFO in its place would never give its text
        return None
    key = (path, sha256, size, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    with _INDEX_LOCK:
        if key in _INDEXED:
            return _INDEXED[key]
    lines = _index(Path(path), sha256, size) if stat.st_size >= size else None
    with _INDEX_LOCK:
        if len(_INDEXED) > 256:
            _INDEXED.clear()
        _INDEXED[key] = lines
    return lines


def _index(path: Path, sha256: str, size: int) -> _Lines | None:
    try:
        with open_regular(path) as handle:
            if size == 0:
                return _Lines(0, np.zeros(0, np.int64))
            with mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_READ) as data:
                digest = hashlib.sha256()
                digest.update(data)  # hashlib reads the mapping outside the GIL
                if digest.hexdigest() != sha256:
                    return None
                _, ends = line_spans(data, size, size + 1)
    except (OSError, ValueError):
        return None
    return _Lines(size, ends)


def raw_texts(frame: pl.DataFrame) -> list[str | None]:
    """For each row (`source_id`, `path`, `sha256`, `size`, `line`, `raw`): the raw text
    kept, else the line read back from its file while the file holds what was ingested."""
    rows = frame.select("source_id", "path", "sha256", "size", "line", "raw").rows()
    wanted: dict[tuple, list[int]] = {}
    for source_id, path, sha256, size, line, raw in rows:
        if raw is None and line is not None:
            wanted.setdefault((source_id, path, sha256, size), []).append(line)
    texts: dict[tuple[int, int], str | None] = {}
    for (source_id, path, sha256, size), lines in wanted.items():
        index = file_lines(path, sha256, size)
        if index is not None:
            with _mapped(path, index.size) as data:
                texts.update(((source_id, line), index.text(data, line)) for line in lines)
    return [raw if raw is not None else texts.get((source_id, line)) for source_id, _, _, _, line, raw in rows]


class _mapped:
    """The first `size` bytes of a file, mapped (an empty file: no bytes)."""

    def __init__(self, path: str, size: int) -> None:
        self.path, self.size = path, size

    def __enter__(self):
        if not self.size:
            self.handle, self.data = None, b""
            return self.data
        self.handle = open_regular(self.path)
        self.data = mmap.mmap(self.handle.fileno(), self.size, access=mmap.ACCESS_READ)
        return self.data

    def __exit__(self, *exc) -> None:
        if self.handle is not None:
            self.data.close()
            self.handle.close()


# --- searching the text ---------------------------------------------------------------------


def text_matches(con, text: str, format: str | None) -> pa.Table:
    """(source_id, line) of every line whose text holds `text`, ASCII letters in any case:
    searched in each file that still holds what was ingested, and in the rejects kept."""
    needle = text.encode("utf-8").lower()
    sources = con.execute(
        "SELECT source_id, path, sha256, size FROM sources WHERE $format IS NULL OR format = $format",
        {"format": format},
    ).fetchall()
    ids, lines = [], []
    for source_id, path, sha256, size in sources:
        index = file_lines(path, sha256, size)
        if index is None:
            continue
        with _mapped(path, index.size) as data:
            found = _matching_lines(needle, data, index.ends)
        ids.append(np.full(len(found), source_id, np.int64))
        lines.append(found)
    kept = con.execute(
        f"""
        SELECT source_id, coalesce(line, {LINE_OF_LOCATOR.format("locator")}) FROM rejects
        WHERE contains(lower(raw), lower($text)) AND coalesce(line, {LINE_OF_LOCATOR.format("locator")}) IS NOT NULL
    """,
        {"text": text},
    ).fetchall()
    ids.append(np.array([row[0] for row in kept], np.int64))
    lines.append(np.array([row[1] for row in kept], np.int64))
    return pa.table({"source_id": np.concatenate(ids), "line": np.concatenate(lines)})


# A file is searched this many bytes at a time, lower-cased (a copy of this size at most).
SEARCH_BLOCK = 64 << 20


def _matching_lines(needle: bytes, data, ends: np.ndarray) -> np.ndarray:
    """The 1-based numbers of the lines of `data` (ending at `ends`) that hold `needle`
    (lower case) in any ASCII case: each block is lower-cased and searched by
    `bytes.find`; a line found in is searched on from its end."""
    found, size, start = [], len(data), 0
    while start < size:
        block = data[start : min(size, start + SEARCH_BLOCK + len(needle) - 1)].lower()
        at = block.find(needle)
        while at != -1 and at < SEARCH_BLOCK:
            index = int(np.searchsorted(ends, start + at))
            found.append(index + 1)
            at = block.find(needle, int(ends[index]) + 1 - start) if index < len(ends) else -1
        start += SEARCH_BLOCK
    return np.unique(np.array(found, np.int64))
