"""Following files that grow: scan the paths, ingest what changed, wait, again.

The database is opened only while a scan writes, so notebooks and `workbench plot`
can read it between scans; a scan that finds it locked by a reader tries again at the
next one.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

from workbench.errors import WorkbenchError
from workbench.ingest import Report, ingest_files
from workbench.paths import expand_paths


def watch(paths, db=None, format: str | None = None, interval: float = 2.0) -> Iterator[Report | WorkbenchError]:
    """Each scan's report (only the files that changed since the last scan), or the
    error that kept the scan from writing (it is tried again at the next one). The
    first scan reads every file. Runs until the caller stops iterating; a bad
    `interval` is refused at once, before any scan."""
    if interval <= 0:
        raise WorkbenchError(f"--interval must be more than 0 seconds, got {interval:g}")
    return _scans(paths, db, format, interval)


def _scans(paths, db, format: str | None, interval: float) -> Iterator[Report | WorkbenchError]:
    seen: dict[Path, tuple[int, int]] = {}
    while True:
        try:
            files = expand_paths(paths)
            stamps = {path: _stamp(path) for path, _ in files}
            changed = [(path, named) for path, named in files if stamps[path] != seen.get(path)]
            if changed:
                report = ingest_files(changed, db, format)
                # Stamps taken before reading: a file that grows during the scan is read again.
                seen.update((path, stamps[path]) for path, _ in changed)
                yield report
        except WorkbenchError as exc:
            yield exc
        time.sleep(interval)


def _stamp(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
    except OSError:
        return (-1, -1)
    return stat.st_size, stat.st_mtime_ns
