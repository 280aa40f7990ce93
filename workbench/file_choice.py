"""A file about to be loaded, as found without the database: the format that reads it
(`detect`), a file whose lines end with CR alone refused, and its hash begun
(`Chosen`), or why it cannot be read."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from workbench import jsonl
from workbench.content import FileHash
from workbench.errors import UnreadableFile
from workbench.formats import Format
from workbench.paths import text_of
from workbench.worker import Worker

HEAD_BYTES = 64 * 1024


def detect(path: Path, head: bytes) -> Format | None:
    """The format that reads a file: a declared format whose `files` name it (the user
    said these files are its), else the first registered format that claims it."""
    from workbench import registry

    declared = [fmt for name, fmt in registry.FORMATS.items() if name in registry.DECLARED]
    for fmt in [*declared, *(fmt for fmt in registry.FORMATS.values() if fmt not in declared)]:
        if fmt.claims(path, head):
            return fmt
    return None


@dataclass
class Chosen:
    """A file about to be loaded, as found without the database: its format and its
    hash under way; or why it cannot be read (said when its turn comes)."""

    path: Path
    named: bool
    fmt: Format | None
    content: FileHash | None = None
    error: Exception | None = None
    stat: tuple | None = None  # the file as it was when its hash began
    stop: threading.Event | None = None

    def current_content(self) -> FileHash:
        """The hash begun when the file was chosen; or, if the file has changed since
        (a writer appended to it or rewrote it while the one before loaded), one begun
        now: the rows loaded and the hash recorded must be of the same bytes."""
        assert self.content is not None and self.stop is not None  # chosen with its hash begun
        stat = identity(self.path.stat())
        if stat != self.stat:
            worker = Worker()
            self.content, self.stat = FileHash(self.path, stat[2], worker, self.stop), stat
            worker.close(wait=False)  # its thread ends with the hash
        return self.content


def identity(stat: os.stat_result) -> tuple:
    """What changes when a file is written to, in any way (ctime cannot be set back)."""
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns


def refuse_cr_only(path: Path, head: bytes) -> None:
    """Lines end at LF. A file whose lines end at CR alone (classic Mac) would be one
    line: it is refused, with the way out. Where the head holds no line end at all (a
    first line longer than it), the file is read on to its first line end."""
    if b"\n" in head:
        return
    if b"\r" in head.rstrip(b"\r \t") or (len(head) == HEAD_BYTES and _first_line_end(path) == b"\r"):
        raise UnreadableFile(
            f"{text_of(path)}: its lines end with CR alone, not LF (or CR LF); convert it first, "
            f"e.g. `tr '\\r' '\\n' < FILE > FIXED`"
        )


def _first_line_end(path: Path) -> bytes | None:
    """How the file's first line ends, read on from the head: b"\\n" (LF, or CR LF),
    b"\\r" (CR alone), or None (no line end within the longest line a file may hold)."""
    with open(path, "rb") as handle:
        handle.seek(HEAD_BYTES)
        for _ in range(0, jsonl.MAX_LINE_BYTES, HEAD_BYTES):
            block = handle.read(HEAD_BYTES + 1)  # a byte more: the LF of a CR at the block's end
            found = [at for at in (block.find(b"\r", 0, HEAD_BYTES), block.find(b"\n", 0, HEAD_BYTES)) if at >= 0]
            if found:
                at = min(found)
                return b"\r" if block[at : at + 1] == b"\r" and block[at + 1 : at + 2] != b"\n" else b"\n"
            if len(block) <= HEAD_BYTES:
                return None
            handle.seek(-1, os.SEEK_CUR)
    return None
