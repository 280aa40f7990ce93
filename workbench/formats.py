"""What a source format provides to the ingest engine, and the helpers they share.

A format is a folder (`workbench/damage/`, ...) exposing one `FORMAT` value. The
engine opens a transaction per file, creates the `sources` row, and hands the format
a `LoadContext`; the format writes its own tables, `violations`, `rejects` and
`decisions` through it and returns how many records and rejects the file gave.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from workbench import catalog, finding_writers
from workbench.schema import Table, bind_names
from workbench.violation import Violation, line_of


@dataclass
class LoadContext:
    """One load of a file, or of the part of a line-based file that is new.

    A line-based format reads bytes `start_byte` to `end_byte` (None: to the end),
    numbering lines from `first_line`. When `appending`, the rows of the earlier lines
    are in the database already, its findings about the whole file (drift counts) and
    its `decisions` have been removed: the format adds the new lines' rows and derives
    the whole file's findings and decisions again. (For a format whose decisions are by
    line, `Format.decisions_by_line`, only the decisions of the lines from `first_line`
    on are removed, and it derives those.) `state` is what the format left after the
    earlier lines (None on a first load); the format sets it to what it needs to go on
    after these lines (JSON-able). `forgot_cut_line`: the rows of a cut last line read
    before were removed, to be read again complete; what the format derived from them
    about earlier lines is to be derived again.
    """

    con: duckdb.DuckDBPyConnection
    source_id: int
    path: Path
    # Called with a number of bytes read, so long files can drive a progress bar.
    advance: Callable[[int], None] = field(default=lambda n: None)
    start_byte: int = 0
    end_byte: int | None = None
    first_line: int = 1
    appending: bool = False
    state: dict | None = None
    forgot_cut_line: bool = False
    # Findings past the first VIOLATIONS_PER_RULE of a rule in the file are counted, not
    # listed (`count_violations`); a cut last line, read again later on its own, lists its
    # own, so that a count never stands for a line that is forgotten and read again.
    cap: bool = True
    _listed: dict | None = field(default=None, repr=False)
    _counted: dict = field(default_factory=dict, repr=False)

    def add_violations(self, violations: list[Violation]) -> None:
        """Findings about single lines (or, for files that are not line-based, anything)."""
        finding_writers.add_violations(
            self.con, self.source_id, self._past_the_cap(violations) if self.cap else violations
        )

    def _past_the_cap(self, violations: list[Violation]) -> list[Violation]:
        """The findings still to list; the others kept aside to be counted."""
        if self._listed is None:
            self._listed = finding_writers.listed_per_rule(self.con, self.source_id)
        listed, keep = self._listed, []
        for v in violations:
            if listed.get(v.rule, 0) < catalog.VIOLATIONS_PER_RULE:
                listed[v.rule] = listed.get(v.rule, 0) + 1
                keep.append(v)
            else:
                self._counted.setdefault((v.rule, v.severity), []).append(
                    (v.locator, line_of(v.locator, v.line), v.field)
                )
        return keep

    def count_violations(self) -> None:
        """Once the load is done: one row per rule for the findings past the cap."""
        for (rule, severity), found in self._counted.items():
            finding_writers.add_counted(self.con, self.source_id, rule, severity, found)
        self._counted = {}

    def add_file_findings(self, violations: list[Violation]) -> None:
        """Findings about the whole file (counted over its lines): recomputed on append."""
        finding_writers.add_violations(self.con, self.source_id, violations, whole_file=True)

    def add_rejects(self, rejects: list[tuple]) -> None:
        finding_writers.add_rejects(self.con, self.source_id, rejects)


@dataclass(frozen=True)
class Counts:
    records: int
    rejected: int


@dataclass(frozen=True)
class AcrossFiles:
    """A column a format derives from other files' rows (an EC4X draft's model, from its
    game's bot trace). `query` (DuckDB's dialect, over the whole database) gives, for
    each row it derives, its `keys` and the `column`'s value. The database's ingest keeps
    the column equal to it; a tree whose files were loaded by separate Spark tasks, none
    of which saw every file, derives it when read (`spark.lake`)."""

    table: str
    column: str
    keys: tuple[str, ...]
    query: str


@dataclass(frozen=True)
class Format:
    name: str
    # The format's own tables, declared in its folder (`<format>/tables.py`).
    tables: tuple[Table, ...]
    # Does this file belong to the format? Gets the path and its first 64 KiB.
    claims: Callable[[Path, bytes], bool]
    load: Callable[[LoadContext], Counts]
    describe: str = ""
    # Extra lines for the demo summary (e.g. a bot's quality gates), from the database.
    summary: Callable[[duckdb.DuckDBPyConnection], list[str]] | None = None
    # One record per line, so a file that grew is appended to (see LoadContext); other
    # files are read whole again when they change. A function of the path for a format
    # that reads some of its files whole (`otel`: an `*.otlp.json` export is one object).
    line_based: bool | Callable[[Path], bool] = False
    # Views over the format's tables (CREATE OR REPLACE VIEW ...).
    views: str = ""
    # Each decision is located `line N` and depends only on that line and the ones
    # before it: when the file grows, those of its earlier lines stay, and the format
    # derives the decisions of the lines it reads (from LoadContext.first_line on).
    decisions_by_line: bool = False
    # Values derived from other files' rows.
    across_files: tuple[AcrossFiles, ...] = ()
    # How the format reads a file, where that can change without the workbench changing
    # (a declared format's declaration, as a digest): a file read otherwise is read again.
    reading: str | None = None
    # The names its loader binds batches under (`schema.run_on`) besides the core's
    # `schema.BOUND_NAMES`: a database holding a table of one of them is refused.
    bound_names: tuple[str, ...] = ()
    # Tables whose records findings and decisions locate otherwise than `line N`: each
    # with the SQL of a row's locator (`'response ' || response_id`).
    locators: tuple[tuple[str, str], ...] = ()
    # Writes a synthetic corpus of the format (`workbench synth`, the demo):
    # `generate(folder, scale, rng)` returns a manifest entry per file (`workbench.synth`).
    generate: Callable[[Path, int, random.Random], list[dict]] | None = None

    def __post_init__(self) -> None:
        bind_names(self.bound_names)

    def reads_lines(self, path: Path) -> bool:
        """Is `path` read line by line (see `line_based`)?"""
        return self.line_based(path) if callable(self.line_based) else self.line_based

    def ddl(self) -> str:
        """The statements that create the format's tables and views."""
        return "".join(table.ddl() for table in self.tables) + self.views


# A UTF-8 byte order mark: skipped before a file's first line.
BOM = b"\xef\xbb\xbf"


def first_json_line(head: bytes) -> dict | None:
    """The first non-blank line of `head` parsed as a JSON object, or None (also for a
    line nested too deeply to parse: detection never fails a run)."""
    import json

    for line in head.removeprefix(BOM).splitlines():
        if line.strip():
            try:
                value = json.loads(line)
            except (ValueError, RecursionError):
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


def generated_by(module: str) -> Callable[[Path, int, random.Random], list[dict]]:
    """A format's generator: `generate` of `module`, imported when first called, so that
    reading a format's files never loads the code that writes its synthetic ones."""

    def generate(folder: Path, scale: int, rng: random.Random) -> list[dict]:
        return importlib.import_module(module).generate(folder, scale, rng)

    return generate
