"""Find files, detect their format, and load each one in its own transaction."""

from __future__ import annotations

import glob
import hashlib
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import duckdb

from workbench import catalog
from workbench.catalog import Violation
from workbench.errors import UnreadableFile, WorkbenchError, first_line
from workbench.formats import Format, LoadContext
from workbench.registry import FORMATS

HEAD_BYTES = 64 * 1024
# DuckDB keeps a file's uncommitted rows in memory up to its limit (80% of RAM by
# default) before spilling to disk. Loading is streaming work: a small limit keeps a
# 1M-event file near 0.5 GB instead of 0.7 GB, for about 7% more time (bench/scale.py).
INGEST_SETTINGS = ("SET memory_limit = '320MB'", "SET preserve_insertion_order = false")


@dataclass
class FileReport:
    path: str
    format: str | None
    status: str  # ingested | unchanged | failed | skipped
    records: int = 0
    rejected: int = 0
    violations: list[Violation] = field(default_factory=list)
    source_id: int | None = None
    message: str = ""

    def severity_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(catalog.SEVERITIES, 0)
        for v in self.violations:
            counts[v.severity] += 1
        return counts

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "format": self.format,
            "status": self.status,
            "records": self.records,
            "rejected": self.rejected,
            "message": self.message,
            "violations": [asdict(v) for v in self.violations],
        }


@dataclass
class Report:
    files: list[FileReport] = field(default_factory=list)

    @property
    def failed(self) -> list[FileReport]:
        return [f for f in self.files if f.status == "failed"]

    def has_errors(self) -> bool:
        return any(v.severity == "error" for f in self.files for v in f.violations)

    def to_dict(self) -> dict:
        return {"files": [f.to_dict() for f in self.files]}


def ingest(paths, db=None, format: str | None = None, progress: bool = False) -> Report:
    """Load files, folders (recursive) or globs into the database `db`.

    Each file is one transaction: it lands whole (source row, records, violations,
    rejects, decisions) or not at all. A file whose sha256 is already in `sources`
    is reported as `unchanged` and adds nothing.
    """
    fmt = _format_named(format)
    files = expand_paths(paths)
    con = catalog.connect(db)
    for setting in INGEST_SETTINGS:
        con.execute(setting)
    try:
        return _load_all(con, files, fmt, progress)
    finally:
        con.close()


def validate(paths, format: str | None = None, progress: bool = False) -> Report:
    """The same reading and rules as `ingest`, into a throwaway in-memory database."""
    fmt = _format_named(format)
    files = expand_paths(paths)
    con = catalog.connect(":memory:")  # holds everything it reads, so no memory limit here
    try:
        return _load_all(con, files, fmt, progress)
    finally:
        con.close()


def _format_named(name: str | None) -> Format | None:
    if name is None:
        return None
    if name not in FORMATS:
        raise WorkbenchError(f"unknown format {name!r}; choose one of: {', '.join(FORMATS)}")
    return FORMATS[name]


def expand_paths(paths) -> list[tuple[Path, bool]]:
    """Every file named by `paths`, with whether the user named it directly.

    Folders are walked recursively; globs are expanded. A path that matches nothing
    is an error before anything is read.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found: list[tuple[Path, bool]] = []
    for raw in paths:
        text = str(raw)
        matches = sorted(glob.glob(text, recursive=True)) if glob.has_magic(text) else [text]
        if not matches or not all(os.path.exists(m) for m in matches):
            raise WorkbenchError(f"no such file or folder: {text}")
        for match in matches:
            path = Path(match)
            if path.is_dir():
                found += [(p, False) for p in sorted(path.rglob("*")) if p.is_file() and not p.name.startswith(".")]
            else:
                found.append((path, True))
    seen, unique = set(), []
    for path, named in found:
        if path.resolve() not in seen:
            seen.add(path.resolve())
            unique.append((path, named))
    return unique


def detect(path: Path, head: bytes) -> Format | None:
    for fmt in FORMATS.values():
        if fmt.claims(path, head):
            return fmt
    return None


def _load_all(con, files, fmt, progress) -> Report:
    report = Report()
    bar = _Progress(files) if progress else None
    try:
        for path, named in files:
            file_report = _load_file(con, path, named, fmt, bar)
            if file_report is not None:
                report.files.append(file_report)
    finally:
        if bar is not None:
            bar.close()
    return report


class _Progress:
    """A byte-count progress bar over all files; long files advance it as they read."""

    def __init__(self, files):
        from tqdm.auto import tqdm

        total = sum(path.stat().st_size for path, _ in files)
        self._bar = tqdm(total=total, unit="B", unit_scale=True, desc="ingest", leave=False)
        self._in_file = 0

    def advance(self, nbytes: int) -> None:
        self._bar.update(nbytes)
        self._in_file += nbytes

    def finish_file(self, path: Path, size: int, status: str) -> None:
        self._bar.update(max(size - self._in_file, 0))
        self._in_file = 0
        self._bar.set_postfix_str(f"{path.name}: {status}", refresh=False)

    def close(self) -> None:
        self._bar.close()


def _load_file(con, path: Path, named: bool, fmt: Format | None, bar: _Progress | None) -> FileReport | None:
    report = None
    try:
        report = _read_and_load(con, path, named, fmt, bar)
    except UnreadableFile as exc:
        report = FileReport(str(path), fmt.name if fmt else None, "failed", message=str(exc))
    except OSError as exc:
        report = FileReport(str(path), fmt.name if fmt else None, "failed",
                            message=f"{path}: cannot read file ({exc.strerror or exc})")
    if bar is not None:
        bar.finish_file(path, path.stat().st_size if path.exists() else 0, report.status if report else "skipped")
    return report


def _read_and_load(con, path, named, fmt, bar) -> FileReport | None:
    fmt = fmt or detect(path, _read_head(path))
    if fmt is None:
        if not named:
            return None  # a stray file inside a folder (a README, a manifest) is not data
        raise UnreadableFile(f"{path}: unknown format; pass --format ({', '.join(FORMATS)})")
    sha = _sha256(path)
    existing = con.execute("SELECT source_id FROM sources WHERE sha256 = ?", [sha]).fetchone()
    if existing:
        return FileReport(str(path), fmt.name, "unchanged", source_id=existing[0],
                          message=f"already ingested as source {existing[0]}; nothing added")
    return _load_in_transaction(con, path, sha, fmt, bar.advance if bar else (lambda n: None))


def _load_in_transaction(con, path, sha, fmt, advance) -> FileReport:
    con.begin()
    try:
        source_id = con.execute(
            "INSERT INTO sources (path, sha256, format) VALUES (?, ?, ?) RETURNING source_id",
            [str(path), sha, fmt.name],
        ).fetchone()[0]
        counts = fmt.load(LoadContext(con, source_id, path, advance))
        con.execute(
            "UPDATE sources SET records = ?, rejected = ? WHERE source_id = ?",
            [counts.records, counts.rejected, source_id],
        )
        violations = _violations_of(con, source_id)
        con.commit()
    except BaseException as exc:
        con.rollback()
        if isinstance(exc, duckdb.Error):
            raise UnreadableFile(f"{path}: could not be loaded ({first_line(exc)})") from None
        raise
    return FileReport(str(path), fmt.name, "ingested", counts.records, counts.rejected, violations, source_id)


def _violations_of(con, source_id: int) -> list[Violation]:
    rows = con.execute(
        "SELECT locator, severity, rule, field, message FROM violations WHERE source_id = ? "
        "ORDER BY rowid",
        [source_id],
    ).fetchall()
    return [Violation(*row) for row in rows]


def _read_head(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(HEAD_BYTES)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

