"""Find files, detect their format, and load each one in its own transaction.

Each file is chosen (its format found, its hash begun: `file_choice`) before the one
ahead of it loads; then it is loaded in one transaction: a new or changed file whole,
a grown one from where its last ingest ended (its `sources` row: `source_rows`). What
the run says of each file: `ingest_report`."""

from __future__ import annotations

import copy
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import duckdb

from workbench import catalog, connection
from workbench.content import FileHash, KnownSource
from workbench.errors import UnreadableFile, first_line
from workbench.file_choice import HEAD_BYTES, Chosen, detect, identity, refuse_cr_only
from workbench.formats import Counts, Format, LoadContext
from workbench.ingest_report import FileReport, Report
from workbench.paths import check_regular, expand_paths, open_regular, roots_of, text_of
from workbench.source_rows import (
    forget_file_derivations,
    forget_lines_from,
    forget_sources,
    gone_from,
    known_source,
    read_as_other_formats,
    record,
    table_rows,
    violations_of,
)
from workbench.validation import line_count
from workbench.worker import Worker

# DuckDB keeps a file's uncommitted rows in memory up to its limit (80% of RAM by
# default) before spilling to disk. Loading is streaming work, but DuckDB's JSON
# functions need many times a line's size while they work on it: 1 GB lets a line of
# jsonl.MAX_LINE_BYTES be read by every format (320 MB failed at 4 MB lines). Rows are
# inserted in order: inserted out of order, a chunk's rows land in part-filled row
# groups that closing the database merges again, and the file is larger
# (docs/performance.md, Measured where the code chose).
INGEST_SETTINGS = ("SET memory_limit = '1GB'", "SET preserve_insertion_order = true")
# An append of fewer new bytes than this runs DuckDB on one thread (_one_thread_if_small).
SMALL_APPEND_BYTES = 16 << 20


def ingest(paths, db=None, format: str | None = None, progress: bool = False, prune: bool = False) -> Report:
    """Load files, folders (recursive) or globs into the database `db`.

    The database mirrors each file's current content. Each file is one transaction:
    it lands whole (source row, records, violations, rejects, decisions) or not at all.
    A file whose content is the one ingested before is `unchanged` and adds nothing; a
    file that grew is `appended` (only its new lines are read); a file changed in any
    other way, or now read as another format, is `replaced`. A file ingested before
    from under `paths` that is gone (deleted, or a link that now leads elsewhere) is
    `missing`, its rows kept; with `prune`, its rows are removed (`pruned`).

    A file that cannot be read is reported `failed` and the others go on. In a folder,
    hidden files are left out and a file of no known format is skipped; a file named
    directly whose format is not recognised fails.

    Args:
        paths: a path or glob, or a list of them: files, folders (walked recursively) or globs.
        db: the database file (created when missing), or `":memory:"`. None: `$WORKBENCH_DB`,
            else `data/workbench.duckdb`.
        format: read every file as this format (`damage`, `ec4x`, `arena`, `gm`, `otel`,
            `stellaris`, or a plugin's). None: each file's format is detected.
        progress: show a progress bar over the bytes read.
        prune: remove the rows of files that are gone, instead of keeping them.

    Returns:
        A `Report`: `.files` holds one `FileReport` per file (`path`, `format`, `status`,
        `records`, `rejected`, `violations`, `message`, `lines_added`), `.failed` the failed
        ones, `.has_errors()` whether any finding is an error, `.to_dict()` all as plain data.

    Raises:
        WorkbenchError: an unknown `format`, a path or glob that matches nothing, a symbolic
            link that leads back to itself, or a database that cannot be opened for writing.
    """
    files = expand_paths(paths)
    return ingest_files(files, db, format, progress, roots=roots_of(paths), prune=prune)


def ingest_files(
    files: list[tuple[Path, bool]],
    db=None,
    format: str | None = None,
    progress: bool = False,
    roots: list[str] | None = None,
    prune: bool = False,
    present: list[Path] | None = None,
) -> Report:
    """`ingest` for files already found by `expand_paths` (path, named by the user).
    With `roots` (`paths.roots_of` the user's arguments), the files ingested before
    from under them that are not among `present` (default: `files`) and are gone are
    reported `missing`, or removed with `prune`."""
    present = [path for path, _ in files] if present is None else present
    return _run(files, db, _registry().format_named(format), progress, roots, prune, present)


def validate(paths, format: str | None = None, progress: bool = False) -> Report:
    """Check files without storing them: the same reading and rules as `ingest`.

    The files are read into a throwaway in-memory database (it holds everything it
    reads: the ingest's memory limit is not set there). Nothing is written to disk.

    Args:
        paths: a path or glob, or a list of them: files, folders (walked recursively) or globs.
        format: read every file as this format; None: each file's format is detected.
        progress: show a progress bar over the bytes read.

    Returns:
        A `Report` as `ingest` gives it: one `FileReport` per file with its status, counts
        and findings (`violations`); `.has_errors()` says whether any finding is an error.

    Raises:
        WorkbenchError: an unknown `format`, a path or glob that matches nothing, or a
            symbolic link that leads back to itself.
    """
    return _run(expand_paths(paths), ":memory:", _registry().format_named(format), progress)


def _run(
    files,
    db,
    fmt: Format | None,
    progress: bool,
    roots: list[str] | None = None,
    prune: bool = False,
    present: Sequence[Path] = (),
) -> Report:
    """Load `files` into `db`. Each file is chosen (its format found, its hash started)
    before the one ahead of it is loaded, the first while the database opens. Then the
    files gone from under `roots` are told (`gone_from`)."""
    stop = threading.Event()  # a run that ends early (an error, Ctrl-C) waits for no hash
    with Worker() as hasher:
        try:
            chosen = (_choose(path, named, fmt, hasher, stop) for path, named in files)
            ahead = next(chosen, None)
            with connection.bulk_connection(db, INGEST_SETTINGS) as con:
                _registry().create_tables(con, loading=True)
                report = _load_all(con, ahead, chosen, progress, files)
                if roots:
                    report.files += gone_from(con, roots, present, prune)
                return report
        finally:
            stop.set()


def _registry():
    """The registry of formats, imported on first use: `import workbench` loads no format."""
    from workbench import registry as formats

    return formats


def _load_all(con, ahead: Chosen | None, chosen, progress: bool, files) -> Report:
    report = Report()
    bar = _Progress(files) if progress else None
    orphans = _Orphans()
    try:
        while ahead is not None:
            file, ahead = ahead, next(chosen, None)
            if ahead is None:
                connection.commits_write_the_file(con)
            file_report = _load_file(con, file, bar, orphans)
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

        total = sum(_size_of(path) for path, _ in files)
        self._bar = tqdm(total=total, unit="B", unit_scale=True, desc="ingest", leave=False)
        self._in_file = 0

    def advance(self, nbytes: int) -> None:
        # Never past the total: an append rolled back and read whole again, or a file
        # that grew after it was counted, reads more bytes than it was counted for.
        nbytes = min(nbytes, max(self._bar.total - self._bar.n, 0))
        self._bar.update(nbytes)
        self._in_file += nbytes

    def finish_file(self, path: Path, size: int, status: str) -> None:
        self.advance(max(size - self._in_file, 0))
        self._in_file = 0
        self._bar.set_postfix_str(f"{path.name}: {status}", refresh=False)

    def close(self) -> None:
        self._bar.close()


def _choose(path: Path, named: bool, fmt: Format | None, hasher, stop: threading.Event) -> Chosen:
    try:
        check_regular(path)
        head = _read_head(path)
        found = fmt or detect(path, head)
        if found is not None and found.reads_lines(path):
            refuse_cr_only(path, head)
        if found is None:
            return Chosen(path, named, fmt)
        stat = identity(path.stat())
        return Chosen(path, named, found, FileHash(path, stat[2], hasher, stop), stat=stat, stop=stop)
    except (UnreadableFile, OSError) as exc:
        return Chosen(path, named, fmt, error=exc)


class _Orphans:
    """Rows of files the database no longer knows are removed once a run, before the
    first file read as new (`catalog.forget_orphans`)."""

    def __init__(self):
        self.gone = False

    def forget(self, con) -> None:
        if not self.gone:
            catalog.forget_orphans(con, _registry().file_tables())
            self.gone = True


def _load_file(con, file: Chosen, bar: _Progress | None, orphans: _Orphans) -> FileReport | None:
    report, path, fmt = None, file.path, file.fmt
    try:
        report = _read_and_load(con, file, bar, orphans)
    except UnreadableFile as exc:
        report = FileReport(text_of(path), fmt.name if fmt else None, "failed", message=str(exc))
    except OSError as exc:
        report = FileReport(
            text_of(path),
            fmt.name if fmt else None,
            "failed",
            message=f"{text_of(path)}: cannot read file ({exc.strerror or exc})",
        )
    if bar is not None:
        bar.finish_file(path, _size_of(path), report.status if report else "skipped")
    return report


def _size_of(path: Path) -> int:
    """A file's size for the progress bar; 0 for one that is gone (its load says so)."""
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0


def _read_and_load(con, file: Chosen, bar, orphans: _Orphans) -> FileReport | None:
    path, fmt = file.path, file.fmt
    if file.error is not None:
        raise file.error
    if file.content is None:
        if not file.named:
            return None  # a stray file inside a folder (a README, a manifest) is not data
        raise UnreadableFile(
            f"{text_of(path)}: unknown format; pass --format ({', '.join(_registry().FORMATS)}), "
            f"declare your game's in a TOML file (--spec FILE.toml; docs: Your own game), or "
            f"write OpenTelemetry GenAI traces (*.otlp.jsonl)"
        )
    assert fmt is not None  # a file whose hash is begun has its format
    content = file.current_content()
    key = text_of(path.resolve())
    known = known_source(con, key, fmt.name)
    content.expect(known)
    advance = bar.advance if bar else (lambda n: None)
    before = read_as_other_formats(con, key, fmt.name)
    if before:  # the same file, read as another format before: its rows under that one go
        return _in_transaction(con, path, lambda: _reformatted(con, key, path, fmt, known, content, advance, before))
    if known is None:
        orphans.forget(con)
        return _in_transaction(con, path, lambda: _load_whole(con, key, path, fmt, None, content, advance))
    if known.table_rows is not None and table_rows(con, known.source_id, fmt) != known.table_rows:
        # Its rows changed behind the workbench's back (a table emptied, rows deleted):
        # read whole again, as if the file had changed.
        return _in_transaction(con, path, lambda: _load_whole(con, key, path, fmt, known, content, advance))
    if fmt.reading is not None and (known.resume or {}).get("reading") != fmt.reading:
        # read under another declaration of its format: read whole again, as it is declared now
        report = _in_transaction(con, path, lambda: _load_whole(con, key, path, fmt, known, content, advance))
        report.message = "read again: its format's declaration changed since"
        return report
    if fmt.reads_lines(path) and content.size > known.size:
        return _load_grown(con, key, path, fmt, known, content, advance)
    if content.result().sha256 == known.sha256:
        return FileReport(
            text_of(path),
            fmt.name,
            "unchanged",
            known.records,
            known.rejected,
            source_id=known.source_id,
            message=f"already ingested as source {known.source_id}; nothing added",
        ).stored(violations_of(con, known.source_id))
    return _in_transaction(con, path, lambda: _load_whole(con, key, path, fmt, known, content, advance))


def _reformatted(con, key, path, fmt, known, content, advance, before: dict[int, str]) -> FileReport:
    forget_sources(con, list(before))
    report = _load_whole(con, key, path, fmt, known, content, advance)
    report.status = "replaced"
    report.message = f"read as {fmt.name} now, no longer as {', '.join(sorted(set(before.values())))}"
    return report


def _load_grown(con, key, path, fmt, known: KnownSource, content: FileHash, advance) -> FileReport:
    """A file that grew is appended to; if its hash then shows that what was ingested
    before changed too, the append is rolled back and the file is read whole again."""
    try:
        advance(known.complete_bytes)  # in the database already (a cut last line is read again)
        with _one_thread_if_small(con, content.size - known.complete_bytes):
            return _in_transaction(con, path, lambda: _append(con, path, fmt, known, content, advance))
    except _EarlierContentChanged:
        return _in_transaction(con, path, lambda: _load_whole(con, key, path, fmt, known, content, advance))


@contextmanager
def _one_thread_if_small(con, new_bytes: int) -> Iterator[None]:
    """DuckDB on one thread while it reads a few MiB of new lines: a morsel or two of
    work for each statement, so a second thread only wakes to find none, and competes
    with the hash of the whole file for the other core (docs/performance.md, Measured
    where the code chose)."""
    if new_bytes >= SMALL_APPEND_BYTES:
        yield
        return
    with connection.one_thread(con):
        yield


class _EarlierContentChanged(Exception):
    """A file that grew also changed before its old end: it is read whole again."""


def _in_transaction(con, path, load) -> FileReport:
    try:
        with catalog.transaction(con):
            report = load()
            report.stored(violations_of(con, report.source_id))
    except duckdb.Error as exc:
        raise UnreadableFile(f"{text_of(path)}: could not be loaded ({first_line(exc)})") from None
    return report


def _load_whole(con, key, path, fmt, known, content, advance) -> FileReport:
    """A new file, or one whose content changed other than by growing: its rows are
    (re)written from the first byte, under the same source id."""
    if known is None:  # its hash is recorded once the load is done
        source_id = con.execute(
            "INSERT INTO sources (path, sha256, format, found_at) VALUES (?, '', ?, ?) RETURNING source_id",
            [key, fmt.name, text_of(os.path.abspath(path))],
        ).fetchall()[0][0]
    else:
        source_id = known.source_id
        forget_sources(con, [source_id], keep_sources=True)
    ctx = LoadContext(con, source_id, path, advance)
    if fmt.reads_lines(path):
        counts = _load_lines(ctx, fmt, content, Counts(0, 0))
    else:
        counts = fmt.load(ctx)
        ctx.count_violations()
        record(con, source_id, fmt, content.result(), counts, None, path)
    status = "replaced" if known else "ingested"
    return FileReport(text_of(path), fmt.name, status, counts.records, counts.rejected, source_id=source_id)


def _append(con, path, fmt, known: KnownSource, content: FileHash, advance) -> FileReport:
    """A file that grew: only the lines after the last complete one are read. A cut last
    line read before (a crashed writer's) is forgotten and read again, complete now."""
    source_id = known.source_id
    cut_line = known.size > known.complete_bytes
    if cut_line:
        forget_lines_from(con, source_id, fmt, known.complete_lines + 1)
    forget_file_derivations(con, source_id, fmt)
    resume = known.resume or {}
    before = Counts(resume.get("records", 0), resume.get("rejected", 0))
    ctx = LoadContext(
        con,
        source_id,
        path,
        advance,
        start_byte=known.complete_bytes,
        first_line=known.complete_lines + 1,
        appending=True,
        state=resume.get("format"),
        forgot_cut_line=cut_line,
    )
    counts = _load_lines(ctx, fmt, content, before)
    if content.result().prefix_sha256 != known.sha256:
        raise _EarlierContentChanged
    added = content.result().complete_lines + (content.size > content.complete_bytes) - known.complete_lines
    return FileReport(
        text_of(path),
        fmt.name,
        "appended",
        counts.records,
        counts.rejected,
        source_id=source_id,
        message=f"appended {line_count(added)}",
        lines_added=added,
    )


def _load_lines(ctx: LoadContext, fmt: Format, content: FileHash, before: Counts) -> Counts:
    """Load a line-based file from `ctx`'s first byte: its complete lines, recording
    where an append will resume, then a cut last line if there is one. The resume
    point leaves the cut line out, so a later append reads it again whole."""
    ctx.end_byte = content.complete_bytes
    counts = _plus(before, fmt.load(ctx))
    ctx.count_violations()
    resume = {
        "records": counts.records,
        "rejected": counts.rejected,
        "format": ctx.state,
        **({"reading": fmt.reading} if fmt.reading is not None else {}),
    }
    if content.size > content.complete_bytes:
        tail = LoadContext(
            ctx.con,
            ctx.source_id,
            ctx.path,
            ctx.advance,
            start_byte=content.complete_bytes,
            end_byte=content.size,
            first_line=content.result().complete_lines + 1,
            appending=True,
            state=copy.deepcopy(ctx.state),
            cap=False,
        )
        forget_file_derivations(ctx.con, ctx.source_id, fmt)
        counts = _plus(counts, fmt.load(tail))
    record(ctx.con, ctx.source_id, fmt, content.result(), counts, resume, ctx.path)
    return counts


def _plus(a: Counts, b: Counts) -> Counts:
    return Counts(a.records + b.records, a.rejected + b.rejected)


def _read_head(path: Path) -> bytes:
    with open_regular(path) as handle:  # a FIFO that took the file's place since its check: not waited on
        return handle.read(HEAD_BYTES)
