"""The protocol of a Parquet tree that `workbench ingest --engine spark` keeps: its
manifest, which lists, for each file read, the parts that hold its rows; parts written
before they are listed, and removed only after they are unlisted, so a reader of the
parts the manifest lists never sees a file's rows missing or doubled; one writer at a
time (the lock).

A part may hold rows of several files (`compact` merges small ones): each of those files
lists it, and a file's rows leave it by the part being written again without them.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from workbench.errors import WorkbenchError, first_line
from workbench.paths import text_of

MANIFEST = "_manifest.parquet"
STAGING = "_staging"
LOCK = "_lock"
# What a task tells the driver of each file it was given.
RESULT_SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("source_id", pa.int64()),
        ("status", pa.string()),
        ("format", pa.string()),
        ("records", pa.int64()),
        ("rejected", pa.int64()),
        ("errors", pa.int64()),
        ("warnings", pa.int64()),
        ("infos", pa.int64()),
        ("message", pa.string()),
        ("sha256", pa.string()),
        ("size", pa.int64()),
        ("mtime_ns", pa.int64()),
        ("staged", pa.string()),
        ("parts", pa.list_(pa.string())),
    ]
)
# What the tree knows of each file it holds rows of: those of a task's result.
MANIFEST_SCHEMA = pa.schema(
    [
        RESULT_SCHEMA.field(name)
        for name in ("path", "format", "source_id", "size", "mtime_ns", "sha256", "records", "rejected", "parts")
    ]
    + [
        # Added since: the file's ctime (a rewrite whose times were put back, `touch -r`,
        # changes it), and each part's size, mtime and ctime as written ("size:mtime:ctime";
        # a part written over since is not the file's rows). A manifest written before them
        # has them NULL: its files are read again once.
        ("ctime_ns", pa.int64()),
        ("part_stamps", pa.list_(pa.string())),
        # and how the file's format read it, where that can change (`Format.reading`: a
        # declared format's declaration): a file read otherwise is read again.
        ("reading", pa.string()),
    ]
)
# What a part is named: `s<source id>-<run>_<i>.parquet`, a file's rows as a task wrote
# them, or `c-<run>_<i>.parquet`, rows of several files merged (`compact`) or a part
# written again without a file's rows.
PART_NAME = re.compile(r"(s[0-9]+|c)-[^/*?\[\]{}\\]+\.parquet")
# What a part listed in a manifest is named: under a table's folder, in the tree.
PART = re.compile(r"[a-z][a-z0-9_]*(/[^/]+=[^/]*)+/" + PART_NAME.pattern)


@contextmanager
def locked(root: Path) -> Iterator[None]:
    """One ingest at a time per tree."""
    # not through a link left in its place: the lock is a file of the tree's own
    with os.fdopen(os.open(root / LOCK, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644), "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise WorkbenchError(f"another ingest or compact is writing {root}; try again when it is done") from None
        yield


def read_manifest(root: Path) -> dict[str, dict] | None:
    """What the tree's manifest says of each file, by its path; None for a tree without
    one (`workbench export --parquet`'s). A manifest that cannot be read as the one an
    ingest writes, or that lists a part outside the tree's tables, is refused in one
    line: nothing read from a tree names a path outside it."""
    path = root / MANIFEST
    if not path.exists():
        return None

    def refused(why: str) -> WorkbenchError:
        return WorkbenchError(
            f"{text_of(path)} is not a manifest `workbench ingest --engine spark` wrote: {why}; "
            f"ingest into a new tree (or remove this one to start it again)"
        )

    if path.is_symlink() or not path.is_file():  # a FIFO would block the read, a device never end it
        raise refused("it is not a file")
    try:
        # Arrow's own file, whatever its name holds (`lake:1` is no URI); read through a
        # Python file object, Arrow's threads aborted the process at exit, 1 run in 3.
        with pa.OSFile(str(path)) as handle:
            table = pq.read_table(handle)
    except (OSError, pa.ArrowException) as exc:
        raise refused(first_line(exc)) from None
    wanted = [name for name in MANIFEST_SCHEMA.names if name in table.column_names]
    missing = [name for name in MANIFEST_SCHEMA.names[:9] if name not in wanted]
    if missing:
        raise refused(f"it has no column {missing[0]!r}")
    try:
        rows = table.select(wanted).cast(pa.schema([MANIFEST_SCHEMA.field(name) for name in wanted])).to_pylist()
    except (pa.ArrowException, ValueError) as exc:
        raise refused(first_line(exc)) from None
    manifest, ids = {}, set()
    for row in rows:
        parts = row["parts"] or []
        if row["path"] is None or row["source_id"] is None or None in (row["size"], row["mtime_ns"]):
            raise refused("a file's path, source id, size or modification time is missing")
        if not 0 < row["source_id"] < 2**62 or row["source_id"] in ids:  # one id a file, as an ingest gives them
            raise refused(f"the source id {row['source_id']} is not one an ingest gives")
        ids.add(row["source_id"])
        outside = [part for part in parts if not isinstance(part, str) or not confined(part)]
        if outside:
            raise refused(f"it lists {outside[0]!r} as a part, which is not a part of a table of the tree")
        if row["format"] is not None and not any(part.startswith("sources/") for part in parts):
            raise refused(f"{row['path']} is listed with no part of `sources`; every file read has one")
        if row.get("part_stamps") is not None and len(row["part_stamps"]) != len(parts):
            raise refused(f"{row['path']} is listed with {len(parts)} parts and {len(row['part_stamps'])} stamps")
        manifest[row["path"]] = {name: row.get(name) for name in MANIFEST_SCHEMA.names} | {"parts": parts}
    return manifest


def confined(part: str) -> bool:
    """A part's name as a manifest may list it: `<table>/<column>=<value>/.../s<id>-<run>_<i>.parquet`."""
    return PART.fullmatch(part) is not None and ".." not in part.split("/")


def part_path(root: Path, part: str) -> Path | None:
    """Where a listed part is, if it is inside the tree (a folder of the tree may be a
    link that leads elsewhere: then it is not touched)."""
    path = root / part
    try:
        return path if path.resolve().is_relative_to(root.resolve()) else None
    except OSError:
        return None


def unlink_part(root: Path, part: str) -> None:
    """The part removed, and the folders it leaves empty below its table's (a game's
    folder of the layout before)."""
    path = part_path(root, part)
    if path is None:
        return
    path.unlink(missing_ok=True)
    for folder in path.parents[: len(Path(part).parts) - 2]:
        try:
            folder.rmdir()
        except OSError:  # not empty: it holds other parts
            return


def manifest_or_empty(root: Path) -> dict[str, dict]:
    return read_manifest(root) or {}


def write_manifest(root: Path, manifest: dict[str, dict]) -> None:
    """Written beside and renamed over: the manifest is whole or as it was."""
    rows = sorted(manifest.values(), key=lambda row: row["path"])
    partial = root / f".{MANIFEST}.{os.getpid()}"
    partial.unlink(missing_ok=True)  # made anew: never written through a link left in its place
    with open(partial, "xb") as handle:  # a file, whatever its name holds (`lake:1` is no URI)
        pq.write_table(pa.Table.from_pylist(rows, schema=MANIFEST_SCHEMA), handle)
    os.replace(partial, root / MANIFEST)


def listed_parts(manifest: dict[str, dict]) -> set[str]:
    """Every part some file of the manifest lists."""
    return {part for row in manifest.values() for part in row["parts"]}


def stamp(path: Path) -> str:
    """A part as it is on disk: its size, modification and change times."""
    status = path.stat()
    return f"{status.st_size}:{status.st_mtime_ns}:{status.st_ctime_ns}"


def remove_unlisted(root: Path, manifest: dict[str, dict]) -> set[str]:
    """Parts no file in the manifest lists, and staging left behind: a run cut short.
    Returns the listed parts that are there as they were written (relative to the
    tree): one written over since (garbage, say) is not, and its file is read again."""
    stamps = {
        part: stamp
        for row in manifest.values()
        for part, stamp in zip(row["parts"], row["part_stamps"] or [None] * len(row["parts"]))
    }
    if (root / STAGING).is_symlink():  # removed as a link: nothing is written through it
        (root / STAGING).unlink()
    shutil.rmtree(root / STAGING, ignore_errors=True)
    for partial in root.glob(f".{MANIFEST}.*"):  # a manifest written, not yet renamed into place
        partial.unlink(missing_ok=True)
    present = set()
    for part in root.glob("*/**/*.parquet"):
        name = part.relative_to(root).as_posix()
        if not PART.fullmatch(name):
            continue  # not a part of a table's folder (a backup, a snapshot kept in the tree)
        if part_path(root, name) is None:
            continue  # reached through a link out of the tree
        if name not in stamps:
            part.unlink(missing_ok=True)
        elif stamps[name] is None or stamps[name] == stamp(part):
            present.add(name)
    return present
