"""A file's rows in the database, by its `sources` row: what its last ingest left
(`known_source`), what a load records there (`record`), the rows a load removes before
it reads the file again or reads on, and the files gone from under the paths given."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from workbench import catalog, connection, finding_writers
from workbench.content import Content, KnownSource
from workbench.formats import Counts, Format
from workbench.ingest_report import FileReport
from workbench.paths import path_of, text_of, under
from workbench.violation import FIELDS, StoredViolations


def known_source(con, key: str, format_name: str) -> KnownSource | None:
    row = con.execute(
        "SELECT source_id, sha256, size, complete_bytes, complete_lines, resume, records, rejected, table_rows "
        "FROM sources WHERE path = ? AND format = ?",
        [key, format_name],
    ).fetchone()
    if row is None:
        return None
    resume, rows_then = (json.loads(text) if text else None for text in (row[5], row[8]))
    return KnownSource(row[0], row[1], row[2], row[3], row[4], resume, row[6], row[7], rows_then)


def read_as_other_formats(con, key: str, format_name: str) -> dict[int, str]:
    return dict(
        con.execute(
            "SELECT source_id, format FROM sources WHERE path = ? AND format <> ?", [key, format_name]
        ).fetchall()
    )


def table_rows(con, source_id: int, fmt: Format) -> dict[str, int]:
    """The file's rows in each table its format writes (its own and the shared ones)."""
    from workbench import registry

    return catalog.table_rows(con, source_id, registry.file_tables(fmt))


def violations_of(con, source_id: int) -> StoredViolations:
    return StoredViolations(
        con.execute(
            f"SELECT {', '.join(FIELDS)}, count FROM violations WHERE source_id = ? ORDER BY rowid", [source_id]
        ).fetchnumpy()
    )


def record(con, source_id: int, fmt: Format, content: Content, counts: Counts, resume: dict | None, path: Path) -> None:
    """What the file's load left: its content, where an append resumes, its counts, its
    rows in each table (an ingest that finds them changed reads the file again), and
    where it was found."""
    con.execute(catalog.SET_OUTCOMES, {"source_id": source_id})
    con.execute(
        "UPDATE sources SET sha256 = ?, size = ?, complete_bytes = ?, complete_lines = ?, resume = ?, "
        "records = ?, rejected = ?, table_rows = ?, found_at = ?, ingested_at = CAST(now() AS TIMESTAMP) "
        "WHERE source_id = ?",
        [
            content.sha256,
            content.size,
            content.complete_bytes,
            content.complete_lines,
            json.dumps(resume) if resume is not None else None,
            counts.records,
            counts.rejected,
            json.dumps(table_rows(con, source_id, fmt)),
            text_of(os.path.abspath(path)),
            source_id,
        ],
    )


def forget_sources(con, source_ids: list[int], keep_sources: bool = False) -> None:
    """Every row of these sources, in every table; then (unless `keep_sources`: a file
    read again whole keeps its id) the sources themselves."""
    for table in connection.tables_with(con, "source_id"):
        if table != "sources":
            con.execute(f"DELETE FROM {table} WHERE list_contains(?, source_id)", [source_ids])
    if not keep_sources:
        con.execute("DELETE FROM sources WHERE list_contains(?, source_id)", [source_ids])


def forget_file_derivations(con, source_id: int, fmt: Format) -> None:
    """Findings about the whole file, and the decisions of a format whose decisions are
    not by line: the format derives them again over all the file's lines when it reads
    more of them. (Decisions by line are the rows of their lines: `forget_lines_from`.)"""
    con.execute("DELETE FROM violations WHERE source_id = ? AND line IS NULL", [source_id])
    if not fmt.decisions_by_line:
        con.execute("DELETE FROM decisions WHERE source_id = ?", [source_id])


def forget_lines_from(con, source_id: int, fmt: Format, line: int) -> None:
    """Remove every row a file's lines from `line` on gave (records by `seq`, findings
    and rejects by `line`, decisions by line by their `line N`)."""
    for table in connection.tables_with(con, "source_id", "seq"):
        con.execute(f"DELETE FROM {table} WHERE source_id = ? AND seq >= ?", [source_id, line])
    for table in ("violations", "rejects"):
        con.execute(f"DELETE FROM {table} WHERE source_id = ? AND line >= ?", [source_id, line])
    if fmt.decisions_by_line:
        finding_writers.forget_decisions_from(con, source_id, line)


def gone_from(con, roots: list[str], present: Iterable[Path], prune: bool) -> list[FileReport]:
    """The files ingested before from under `roots` that this run did not find and that
    are gone: deleted, or found through a link that now leads elsewhere. Each is
    `missing`, or, with `prune`, its rows are removed (one transaction each)."""
    found = {text_of(path.resolve()) for path in present}
    reports = []
    for source_id, key, fmt, found_at, records in con.execute(
        "SELECT source_id, path, format, found_at, records FROM sources ORDER BY path, format"
    ).fetchall():
        if (
            key in found
            or not (under(key, roots) or (found_at and under(found_at, roots)))
            or _still_there(key, found_at)
        ):
            continue
        if prune:
            with catalog.transaction(con):
                forget_sources(con, [source_id])
            reports.append(
                FileReport(
                    key, fmt, "pruned", records, source_id=source_id, message="no longer there; its rows were removed"
                )
            )
        else:
            reports.append(
                FileReport(
                    key,
                    fmt,
                    "missing",
                    records,
                    source_id=source_id,
                    message="no longer there (deleted, or a link that leads elsewhere now); its "
                    "rows are kept: pass --prune to remove them",
                )
            )
    return reports


def _still_there(key: str, found_at: str | None) -> bool:
    """The file a source was read from is where it was, and still reached as it was."""
    path = path_of(key)
    if not os.path.isfile(path):
        return False
    if found_at is None or found_at == key:
        return True
    try:
        return os.path.realpath(path_of(found_at)) == os.path.realpath(path)
    except OSError:
        return False
