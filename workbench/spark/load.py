"""`workbench ingest --engine spark`: the workbench's own loader, run by Spark's
executors, each on its share of the files, into a Parquet tree partitioned by format.

The driver lists the files and leaves out those the tree's manifest holds unchanged
(same size and modification time). Each Spark task loads its files with `ingest`
into a DuckDB file of its own, in its own temporary folder: the same readers and
rules, and each file still one transaction. It then writes each file's rows, table by
table, as the export does (`parquet_tree.partitioned_select`), under the tree's
`_staging/<run>/` folder, and tells the driver what it wrote. The driver moves a
file's new parts into place, records them in the manifest, and only then removes the
parts of the file's earlier content, so a reader never sees a file's rows doubled by a
finished run, and a run cut short leaves parts the manifest does not list, which the
next run removes.

A part is named `s<source id>-<run>_<i>.parquet`: the file it holds rows of, and the
run that wrote it. Source ids are given by the driver, one per file for the life of
the tree. Small parts are merged once there are many (`compact`), and a merged part
loses a file's rows by being written again without them (the manifest's protocol:
`manifest`).

No task sees another's files: a value a format derives from another file's rows is
derived over the whole tree when it is read (`lake`), so how the files are dealt to
tasks changes no answer.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa

from workbench.errors import WorkbenchError, first_line
from workbench.paths import expand_paths, path_of, roots_of, text_of, under
from workbench.spark import compact
from workbench.spark.manifest import (
    LOCK,
    MANIFEST,
    MANIFEST_SCHEMA,
    RESULT_SCHEMA,
    STAGING,
    locked,
    manifest_or_empty,
    part_path,
    remove_unlisted,
    stamp,
    write_manifest,
)
from workbench.spark.session import cancelled, check_master, said

# A task's file: its key (`sources.path`, links followed) and where it was found (links
# kept, as the ingest records it in `sources.found_at`), which the task reads it by.
TASK_FIELDS = ("path", "named", "source_id", "size", "mtime_ns", "found_at")


@dataclass
class LoadedFile:
    """A file's outcome, shaped as `ingest.FileReport` for `cli.summary_lines`."""

    path: str
    format: str | None
    status: str  # ingested | replaced | unchanged | failed | missing | pruned
    records: int = 0
    rejected: int = 0
    message: str = ""
    counts: dict = field(default_factory=lambda: {"error": 0, "warning": 0, "info": 0})
    source_id: int | None = None

    def severity_counts(self) -> dict:
        return self.counts


@dataclass
class LakeReport:
    files: list[LoadedFile] = field(default_factory=list)

    @property
    def failed(self) -> list[LoadedFile]:
        return [f for f in self.files if f.status == "failed"]


def ingest(
    paths,
    parquet_dir: str | Path,
    spark=None,
    format: str | None = None,
    prune: bool = False,
    master: str | None = None,
    partitions: int | None = None,
) -> LakeReport:
    """Load `paths` (files, folders, globs) into the Parquet tree `parquet_dir` on Spark.

    Files the tree holds unchanged are `unchanged`; a file whose size or modification
    time differ is read again whole (`replaced`); a file ingested before from under
    `paths` that is gone is `missing`, or with `prune` its rows are removed (`pruned`).
    `partitions`: Spark tasks (default: one per file, up to 4 per core Spark has)."""
    from workbench import registry
    from workbench.spark.session import session

    registry.format_named(format)  # an unknown format is said before Spark starts
    if master is not None:
        check_master(master)
    root = Path(parquet_dir)
    found = expand_paths(paths)
    files = [(path, named) for path, named in found if not _inside(path, root)]
    _make_tree(root)
    with locked(root):
        manifest = manifest_or_empty(root)
        write_manifest(root, manifest)  # a new tree is one from now on, even if this run is cut short
        present = _in_this_layout(root, manifest, remove_unlisted(root, manifest))
        report, todo = _plan(present, files, manifest, roots_of(paths), prune, format)
        report.files += [
            LoadedFile(
                text_of(path.resolve()),
                None,
                "failed",
                message=(
                    f"{text_of(path)}: inside the Parquet tree {text_of(root)}, whose files are not logs; move it out of the "
                    f"tree to ingest it"
                ),
            )
            for path, named in found
            if named and _inside(path, root)
        ]
        _forget(root, manifest, [f.path for f in report.files if f.status == "pruned"])
        if todo:
            spark = session(spark, master)
            run = uuid.uuid4().hex[:12]
            results = _run_tasks(spark, root, run, todo, format, partitions)
            ctimes = {key: ctime for key, *_, ctime in todo}
            report.files += _commit(root, run, manifest, results, ctimes)
            shutil.rmtree(root / STAGING / run, ignore_errors=True)
        merged = compact.merged(root, manifest, remove_unlisted(root, manifest), f"merge-{uuid.uuid4().hex[:12]}")
        if merged:  # past the threshold, whether this run wrote parts or not
            compact.switch(root, manifest, merged)
    order = {text_of(path.resolve()): i for i, (path, _) in enumerate(files)}
    report.files.sort(key=lambda f: (order.get(f.path, len(order)), f.path))
    return report


# --- the driver ------------------------------------------------------------------------


def _inside(path: Path, root: Path) -> bool:
    """A file of the tree itself, found under the paths to ingest: not a log."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def _in_this_layout(root: Path, manifest: dict[str, dict], present: set[str]) -> set[str]:
    """The tree's parts of the layout before (a folder per game) rewritten in this one,
    before any part of this run is written beside them; the parts there as written."""
    if not any(compact.of_layout_before(part) for part in present):
        return present
    replaced = compact.merged(root, manifest, present, f"layout-{uuid.uuid4().hex[:12]}", more_than=math.inf)
    compact.switch(root, manifest, replaced)
    return (present - set(replaced)) | {part for parts in replaced.values() for part in parts}


def _make_tree(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise WorkbenchError(f"cannot write the Parquet tree to {root}: it is a file, not a folder")
    if (
        root.is_dir()
        and not (root / MANIFEST).exists()
        and any(  # a first run cut short leaves these
            entry.name not in (LOCK, STAGING) and not entry.name.startswith(f".{MANIFEST}.") for entry in root.iterdir()
        )
    ):
        raise WorkbenchError(
            f"{root} holds files but no {MANIFEST}: choose an empty folder (a tree written by "
            f"`workbench export --parquet` is read by --engine spark, not ingested into)"
        )
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkbenchError(f"cannot write the Parquet tree to {root}: {exc.strerror or exc}") from None


def _plan(
    present: set[str],
    files: list[tuple[Path, bool]],
    manifest: dict[str, dict],
    roots: list[str],
    prune: bool,
    format: str | None,
) -> tuple[LakeReport, list[tuple]]:
    """The files to load (path, named, source id, size, mtime), and the report of the
    others. A file is held unchanged when its size and modification time are the ones
    read, it was read as the format asked for, and its parts are all there."""
    report, todo = LakeReport(), []
    next_id = max((row["source_id"] for row in manifest.values()), default=0) + 1
    found = set()
    for path, named in files:
        key = text_of(path.resolve())
        found.add(key)
        try:
            stat = path.stat()
        except OSError as exc:
            report.files.append(LoadedFile(key, None, "failed", message=f"{key}: {exc.strerror or exc}"))
            continue
        known = manifest.get(key)
        if known is not None and _unchanged(present, known, stat, named, format):
            if known["format"] is None:  # of no known format, in a folder: skipped, as the ingest does
                continue
            report.files.append(
                LoadedFile(
                    key,
                    known["format"],
                    "unchanged",
                    known["records"],
                    known["rejected"],
                    message="unchanged since the last ingest",
                    source_id=known["source_id"],
                )
            )
            continue
        source_id = known["source_id"] if known is not None else next_id
        next_id += known is None
        todo.append(
            (key, named, source_id, stat.st_size, stat.st_mtime_ns, text_of(os.path.abspath(path)), stat.st_ctime_ns)
        )
    for key, row in sorted(manifest.items()):
        if key in found or not under(key, roots) or os.path.isfile(path_of(key)):
            continue
        if row["format"] is None:  # a file skipped before, now gone: nothing to tell
            del manifest[key]
            continue
        status, message = (
            ("pruned", "no longer there; its rows were removed")
            if prune
            else ("missing", "no longer there; its rows are kept: pass --prune to remove them")
        )
        report.files.append(
            LoadedFile(key, row["format"], status, row["records"], source_id=row["source_id"], message=message)
        )
    return report, todo


def _unchanged(present: set[str], known: dict | None, stat: os.stat_result, named: bool, format: str | None) -> bool:
    if known is None or (known["size"], known["mtime_ns"], known["ctime_ns"]) != (
        stat.st_size,
        stat.st_mtime_ns,
        stat.st_ctime_ns,
    ):
        return False
    if known["format"] is None:  # skipped: still so unless now named, or a format is given
        return not named and format is None
    return (
        format in (None, known["format"])
        and present.issuperset(known["parts"])
        and known.get("reading") == _reading(known["format"])
    )


def _reading(format_name: str | None) -> str | None:
    """How the format reads a file now (`Format.reading`), where that can change."""
    from workbench import registry

    fmt = registry.FORMATS.get(format_name) if format_name is not None else None
    return fmt.reading if fmt is not None else None


def _forget(root: Path, manifest: dict[str, dict], keys: list[str]) -> None:
    """The files' rows removed: from the manifest first, then their parts (a part that
    holds other files' rows too is written again without theirs, before)."""
    leaving = compact.Leaving()
    for key in keys:
        leaving.add(manifest.pop(key))
    compact.switch(root, manifest, leaving.parts_rewritten(root, manifest, f"forget-{uuid.uuid4().hex[:12]}"))


def _run_tasks(
    spark, root: Path, run: str, todo: list[tuple], format: str | None, partitions: int | None
) -> list[dict]:
    """The files spread over Spark tasks (`shares`); each task's results back on the
    driver. Task k of `spark.range` is given the k-th share (hashing the share numbers
    instead would put two shares in one task, and none in another)."""
    tasks = partitions or min(len(todo), 4 * _cores(spark))
    shares = _shares(todo, tasks)
    staging, chosen = str((root / STAGING / run).resolve()), format
    from pyspark.sql.pandas.types import from_arrow_schema

    try:
        numbers = spark.range(0, len(shares), 1, len(shares))
        loaded = numbers.mapInArrow(
            lambda batches: load_task(batches, shares, staging, chosen), from_arrow_schema(RESULT_SCHEMA)
        )
        return loaded.toArrow().to_pylist()
    except Exception as exc:
        if cancelled(exc):  # the job cancelled by a Ctrl-C (pyspark's handler cancels it)
            raise KeyboardInterrupt from None
        raise WorkbenchError(f"Spark could not load the files: {said(exc)}") from None


def _shares(todo: list[tuple], tasks: int) -> list[list[dict]]:
    """The files, largest first, dealt round-robin to `tasks` tasks, so each gets a like
    share of bytes. How they are dealt changes no answer: a value derived from another
    file's rows is derived over the whole tree when it is read (`lake`)."""
    todo = sorted(todo, key=lambda task: -task[3])
    return [[dict(zip(TASK_FIELDS, task)) for task in todo[k::tasks]] for k in range(tasks)]


def _cores(spark) -> int:
    try:
        return max(1, spark.sparkContext.defaultParallelism)
    except Exception:  # Spark Connect has no SparkContext
        return max(1, int(spark.conf.get("spark.default.parallelism", "2")))


def _commit(
    root: Path, run: str, manifest: dict[str, dict], results: list[dict], ctimes: dict[str, int] | None = None
) -> list[LoadedFile]:
    """Each loaded file's parts moved into the tree and listed in the manifest (with
    `ctimes`, the files' change times as the driver saw them); the parts of its earlier
    content removed after."""
    reports, leaving, ctimes = [], compact.Leaving(), ctimes or {}

    def listed(row: dict) -> dict:
        return {
            **{key: row[key] for key in RESULT_SCHEMA.names if key in MANIFEST_SCHEMA.names},
            "ctime_ns": ctimes.get(row["path"]),
            "part_stamps": [stamp(root / part) for part in row["parts"]],
            "reading": _reading(row["format"]),
        }

    for row in results:
        counts = {"error": row["errors"], "warning": row["warnings"], "info": row["infos"]}
        before = manifest.get(row["path"])
        if row["status"] == "skipped":  # remembered, so that it is not read again while unchanged
            if before is None or before["format"] is None:  # (rows read before, as a known format, are kept)
                manifest[row["path"]] = listed(row)
            continue
        if row["status"] == "failed":
            reports.append(LoadedFile(row["path"], row["format"], "failed", message=row["message"], counts=counts))
            continue
        if any(part_path(root, part) is None for part in row["parts"]):
            reports.append(
                LoadedFile(
                    row["path"],
                    row["format"],
                    "failed",
                    counts=counts,
                    message=(
                        f"{row['path']}: its rows would be written outside {text_of(root)}: a folder of the tree is a link "
                        f"that leads elsewhere"
                    ),
                )
            )
            continue
        for part in row["parts"]:
            target = root / part
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(root / STAGING / run / row["staged"] / part, target)
        if before is not None:
            leaving.add(before)
        manifest[row["path"]] = listed(row)
        known = before is not None and before["format"] is not None
        reports.append(
            LoadedFile(
                row["path"],
                row["format"],
                "replaced" if known else "ingested",
                row["records"],
                row["rejected"],
                row["message"],
                counts,
                row["source_id"],
            )
        )
    compact.switch(root, manifest, leaving.parts_rewritten(root, manifest, run))
    return reports


# --- on an executor --------------------------------------------------------------------


def load_task(
    batches: Iterator[pa.RecordBatch], shares: list[list[dict]], staging: str, format: str | None
) -> Iterator[pa.RecordBatch]:
    """A Spark task: the files of its share (by the task numbers it is given) loaded by
    the workbench's ingest into a DuckDB file of its own, then each file's rows written
    as Parquet parts under `staging`, in a folder of this attempt's own (Spark may run a
    task twice at once)."""
    from pyspark import TaskContext

    todo = [task for batch in batches for number in batch.column("id").to_pylist() for task in shares[number]]
    if not todo:
        return
    context = TaskContext.get()
    assert context is not None  # run by Spark, in a task
    attempt = context.taskAttemptId()
    with tempfile.TemporaryDirectory(prefix="workbench-task-") as folder:
        results = _load_files(todo, Path(folder) / "task.duckdb", Path(staging), format, attempt)
    yield pa.RecordBatch.from_pylist(results, schema=RESULT_SCHEMA)


def _load_files(todo: list[dict], db: Path, staging: Path, format: str | None, attempt: int = 0) -> list[dict]:
    from workbench import connection
    from workbench.ingestion import ingest_files

    run = staging.name
    report = ingest_files([(_path_from_key(task["found_at"]), task["named"]) for task in todo], db=db, format=format)
    loaded = {file.path: file for file in report.files}  # by the path each was read by
    results = []
    con = connection.connect(db, read_only=True)
    try:
        holding = _tables_holding(con)
        for task in todo:
            file = loaded.get(task["found_at"])
            if file is None:  # of no known format, found in a folder: the ingest skips it
                results.append(_result(task, "skipped", None))
                continue
            if file.status == "failed" or file.source_id is None:
                results.append(_result(task, "failed", file, message=file.message))
                continue
            staged = f"{task['source_id']}-{attempt}"
            try:
                parts = _write_parts(
                    con,
                    file.source_id,
                    task["source_id"],
                    staging / staged,
                    run,
                    [table for table, ids in holding.items() if file.source_id in ids],
                )
            except (OSError, duckdb.Error) as exc:  # a full disk, a tree not writable: this file fails
                results.append(
                    _result(
                        task,
                        "failed",
                        file,
                        message=f"{task['path']}: cannot write its rows to {staging.parent.parent}: {first_line(exc)}",
                    )
                )
                continue
            source = con.execute("SELECT sha256, size FROM sources WHERE source_id = ?", [file.source_id]).fetchone()
            assert source is not None  # the file its report is of
            sha256, size = source
            results.append(_result(task, "loaded", file, parts=parts, sha256=sha256, size=size, staged=staged))
    finally:
        con.close()
    return results


def _path_from_key(key: str) -> Path:
    """The file a `sources.path` or `found_at` names (`paths.text_of` wrote it)."""
    return Path(os.fsdecode(path_of(key)))


def _result(task: dict, status: str, file, message: str = "", parts=(), sha256=None, size=None, staged=None) -> dict:
    counts = file.severity_counts() if file is not None else {"error": 0, "warning": 0, "info": 0}
    return {
        "path": task["path"],
        "source_id": task["source_id"],
        "status": status,
        "format": file.format if file is not None else None,
        "records": file.records if file is not None else 0,
        "rejected": file.rejected if file is not None else 0,
        "errors": counts["error"],
        "warnings": counts["warning"],
        "infos": counts["info"],
        "message": message or (file.message if file is not None else ""),
        "sha256": sha256,
        "size": task["size"] if size is None else size,
        "mtime_ns": task["mtime_ns"],
        "staged": staged,
        "parts": list(parts),
    }


def _tables_holding(con) -> dict[str, set[int]]:
    """Per table of files' rows, the (task's own) source ids it holds rows of: asked once
    for the task's files, in one query, so that a file's parts are written only for the
    few tables it has rows in (a COPY of no rows writes no part, but costs a query)."""
    from workbench import connection, parquet_tree

    tables = [table for table in parquet_tree.data_tables(con) if "source_id" in connection.column_names(con, table)]
    if not tables:
        return {}
    found = con.execute(
        " UNION ALL ".join(f"SELECT DISTINCT '{table}' AS t, source_id FROM {table}" for table in tables)
    ).fetchall()
    holding: dict[str, set[int]] = {table: set() for table in tables}
    for table, source_id in found:
        holding[table].add(source_id)
    return holding


def _write_parts(con, local_id: int, source_id: int, folder: Path, run: str, tables: list[str]) -> list[str]:
    """The file's rows in `tables` (those that hold any), as the tree holds them, under
    `folder`; the parts written, relative to the tree."""
    from workbench import parquet_tree

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for table in tables:
        select, partitions = parquet_tree.partitioned_select(
            con, table, source_id=f"CAST({source_id} AS BIGINT)", of_source=local_id
        )
        # A file with no rows in the table writes no part.
        parquet_tree.write_partitioned(con, select, partitions, folder / table, file_names=f"s{source_id}-{run}_{{i}}")
    return sorted(part.relative_to(folder).as_posix() for part in folder.rglob("*.parquet"))
