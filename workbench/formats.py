"""What a source format provides to the ingest engine, and the helpers they share.

A format is a folder (`workbench/damage/`, ...) exposing one `FORMAT` value. The
engine opens a transaction per file, creates the `sources` row, and hands the format
a `LoadContext`; the format writes its own tables, `violations`, `rejects` and
`decisions` through it and returns how many records and rejects the file gave.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import duckdb

from workbench import catalog
from workbench.catalog import Violation


@dataclass
class LoadContext:
    con: duckdb.DuckDBPyConnection
    source_id: int
    path: Path
    # Called with a number of bytes read, so long files can drive a progress bar.
    advance: Callable[[int], None] = field(default=lambda n: None)

    def add_violations(self, violations: list[Violation]) -> None:
        catalog.add_violations(self.con, self.source_id, violations)

    def add_rejects(self, rejects: list[tuple[str, str]]) -> None:
        catalog.add_rejects(self.con, self.source_id, rejects)


@dataclass(frozen=True)
class Counts:
    records: int
    rejected: int


@dataclass(frozen=True)
class Format:
    name: str
    # DDL of the format's own tables (CREATE ... IF NOT EXISTS).
    tables: str
    # Does this file belong to the format? Gets the path and its first 64 KiB.
    claims: Callable[[Path, bytes], bool]
    load: Callable[[LoadContext], Counts]
    describe: str = ""
    # Extra lines for the demo summary (e.g. a bot's quality gates), from the database.
    summary: Callable[[duckdb.DuckDBPyConnection], list[str]] | None = None


def first_json_line(head: bytes) -> dict | None:
    """The first non-blank line of `head` parsed as a JSON object, or None."""
    import json

    for line in head.splitlines():
        if line.strip():
            try:
                value = json.loads(line)
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


def jsonl_claims(suffix: str, signature: set[str]) -> Callable[[Path, bytes], bool]:
    """Detection for a JSONL format: files named `*<suffix>`, or any `.jsonl` whose first
    object carries every key of `signature`."""

    def claims(path: Path, head: bytes) -> bool:
        if path.name.endswith(suffix):
            return True
        if path.suffix != ".jsonl":
            return False
        first = first_json_line(head)
        return first is not None and signature <= first.keys()

    return claims
