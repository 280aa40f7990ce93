"""Following files that grow: scan the paths, ingest what changed, wait, again.

The database is opened only while a scan writes, so notebooks and `workbench plot`
can read it between scans; a scan that finds it locked by a reader tries again at the
next one.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Iterator
from pathlib import Path
from stat import S_ISREG

import duckdb

from workbench.errors import WorkbenchError, first_line, is_interrupt
from workbench.ingestion import Report, ingest_files
from workbench.paths import expand_paths, open_regular, roots_of, text_of

# The longest wait between two scans, in seconds: a day.
LONGEST_INTERVAL = 86_400


def watch(
    paths, db=None, format: str | None = None, interval: float = 2.0, prune: bool = False
) -> Iterator[Report | WorkbenchError]:
    """Each scan's report (only the files that changed since the last scan, and those
    gone since: `missing`, or `pruned`), or the error that kept the scan from writing
    (it is tried again at the next one: a full disk, a locked database). The first scan
    reads every file. Runs until the caller stops iterating; a bad `interval` is
    refused at once, before any scan."""
    if not (math.isfinite(interval) and 0 < interval <= LONGEST_INTERVAL):
        raise WorkbenchError(
            f"--interval must be a number of seconds more than 0 and at most {LONGEST_INTERVAL:,} "
            f"(a day), got {interval:g}"
        )
    return _scans(paths, db, format, interval, prune)


def _scans(paths, db, format: str | None, interval: float, prune: bool) -> Iterator[Report | WorkbenchError]:
    seen: dict[Path, tuple] = {}
    told: set[str] = set()  # missing files said once
    roots = roots_of(paths)
    while True:
        try:
            files = expand_paths(paths)
            stamps = {path: stamp(path) for path, _ in files}
            changed = [(path, named) for path, named in files if stamps[path] != seen.get(path)]
            vanished = [path for path in seen if path not in stamps]
            if changed or vanished:
                report = _ingested(changed, db, format, roots, prune, [path for path, _ in files])
                report.files = [f for f in report.files if f.status != "missing" or f.path not in told]
                told |= {f.path for f in report.files if f.status == "missing"}
                # Stamps taken before reading: a file that grows during the scan is read
                # again; one that failed (its transaction rolled back) is tried again, but
                # for a FIFO or a device in a file's place, said once, until it changes.
                failed = {f.path for f in report.failed}
                seen.update(
                    (path, stamps[path])
                    for path, _ in changed
                    if text_of(path) not in failed or stamps[path][-1] == NOT_A_FILE
                )
                for path in vanished:
                    del seen[path]
                yield report
        except WorkbenchError as exc:
            yield exc
        time.sleep(interval)


def _ingested(changed, db, format, roots, prune, present) -> Report:
    """One scan's ingest; what the machine refuses as it writes (a full disk, a file
    system gone read-only) is said in one line, and the scan tried again."""
    try:
        return ingest_files(changed, db, format, roots=roots, prune=prune, present=present)
    except OSError as exc:
        raise WorkbenchError(f"cannot write the database: {exc.strerror or exc}") from None
    except duckdb.Error as exc:
        if is_interrupt(exc):
            raise
        raise WorkbenchError(f"cannot write the database: {first_line(exc)}") from None


# The end of a file re-hashed at each scan: a rewrite of the same size whose times were
# put back (`touch -r`, `rsync -t`, a backup restored) changes what it holds.
TAIL_BYTES = 64 * 1024


NOT_A_FILE = "not a regular file"


def stamp(path: Path) -> tuple:
    """What changes when a file is written to: its identity, size and times, and a hash
    of its last TAIL_BYTES. A FIFO or a device in a file's place is never opened (it
    could block the scan): its identity, then NOT_A_FILE."""
    try:
        status = path.stat()
        if not S_ISREG(status.st_mode):
            return status.st_dev, status.st_ino, status.st_mode, NOT_A_FILE
        with open_regular(path) as handle:  # a FIFO put in the file's place since: not waited on
            handle.seek(max(status.st_size - TAIL_BYTES, 0))
            tail = hashlib.sha256(handle.read(TAIL_BYTES)).hexdigest()
    except OSError:
        return ()
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns, tail
