"""`workbench ingest --engine spark`: the workbench's own loader, run by Spark's
executors, each on its share of the files, into a Hive-partitioned Parquet tree.

The driver lists the files and leaves out those the tree's manifest holds unchanged
(same size and modification time). Each Spark task loads its files with `ingest`
into a DuckDB file of its own, in its own temporary folder: the same readers and
rules, and each file still one transaction. It then writes each file's rows, table by
table, as the export does (`export.partitioned_select`), under the tree's
`_staging/<run>/` folder, and tells the driver what it wrote. The driver moves a
file's new parts into place, records them in the manifest, and only then removes the
parts of the file's earlier content, so a reader never sees a file's rows doubled by a
finished run, and a run cut short leaves parts the manifest does not list, which the
next run removes.

A part is named `s<source id>-<run>_<i>.parquet`: the file it holds rows of, and the
run that wrote it. Source ids are given by the driver, one per file for the life of
the tree.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from workbench.errors import WorkbenchError
from workbench.paths import expand_paths, path_of, roots_of, text_of, under
from workbench.spark.session import said

MANIFEST = "_manifest.parquet"
STAGING = "_staging"
LOCK = "_lock"
# What the tree knows of each file it holds rows of.
MANIFEST_SCHEMA = pa.schema([
    ("path", pa.string()), ("format", pa.string()), ("source_id", pa.int64()), ("size", pa.int64()),
    ("mtime_ns", pa.int64()), ("sha256", pa.string()), ("records", pa.int64()), ("rejected", pa.int64()),
    ("parts", pa.list_(pa.string())),
])
# What a task tells the driver of each file it was given.
RESULT_SCHEMA = pa.schema([
    ("path", pa.string()), ("source_id", pa.int64()), ("status", pa.string()), ("format", pa.string()),
    ("records", pa.int64()), ("rejected", pa.int64()), ("errors", pa.int64()), ("warnings", pa.int64()),
    ("infos", pa.int64()), ("message", pa.string()), ("sha256", pa.string()), ("size", pa.int64()),
    ("mtime_ns", pa.int64()), ("parts", pa.list_(pa.string())),
])
RESULT_DDL = ("path STRING, source_id BIGINT, status STRING, format STRING, records BIGINT, rejected BIGINT, "
              "errors BIGINT, warnings BIGINT, infos BIGINT, message STRING, sha256 STRING, size BIGINT, "
              "mtime_ns BIGINT, parts ARRAY<STRING>")
TASK_SCHEMA = "path STRING, named BOOLEAN, source_id BIGINT, size BIGINT, mtime_ns BIGINT"


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
    seconds: float = 0.0

    @property
    def failed(self) -> list[LoadedFile]:
        return [f for f in self.files if f.status == "failed"]


def ingest(paths, parquet_dir: str | Path, spark=None, format: str | None = None, prune: bool = False,
           master: str | None = None, partitions: int | None = None) -> LakeReport:
    """Load `paths` (files, folders, globs) into the Parquet tree `parquet_dir` on Spark.

    Files the tree holds unchanged are `unchanged`; a file whose size or modification
    time differ is read again whole (`replaced`); a file ingested before from under
    `paths` that is gone is `missing`, or with `prune` its rows are removed (`pruned`).
    `partitions`: Spark tasks (default: one per file, up to 4 per core Spark has)."""
    from workbench.spark.session import session

    started = time.monotonic()
    root = Path(parquet_dir)
    _make_tree(root)
    files = expand_paths(paths)
    with _locked(root):
        manifest = _read_manifest(root)
        _remove_unlisted(root, manifest)
        report, todo = _plan(files, manifest, roots_of(paths), prune)
        _forget(root, manifest, [f.path for f in report.files if f.status == "pruned"])
        if todo:
            spark = session(spark, master)
            run = uuid.uuid4().hex[:12]
            results = _run_tasks(spark, root, run, todo, format, partitions)
            report.files += _commit(root, run, manifest, results)
            shutil.rmtree(root / STAGING / run, ignore_errors=True)
        _write_manifest(root, manifest)
    order = {text_of(path.resolve()): i for i, (path, _) in enumerate(files)}
    report.files.sort(key=lambda f: (order.get(f.path, len(order)), f.path))
    report.seconds = time.monotonic() - started
    return report


# --- the driver ------------------------------------------------------------------------


def _make_tree(root: Path) -> None:
    if root.exists() and not root.is_dir():
        raise WorkbenchError(f"cannot write the Parquet tree to {root}: it is a file, not a folder")
    if root.is_dir() and not (root / MANIFEST).exists() and any(
            entry.name not in (LOCK, STAGING) for entry in root.iterdir()):  # a first run cut short leaves these
        raise WorkbenchError(f"{root} holds files but no {MANIFEST}: choose an empty folder (a tree written by "
                             f"`workbench export --parquet` is read by --engine spark, not ingested into)")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkbenchError(f"cannot write the Parquet tree to {root}: {exc.strerror or exc}") from None


@contextmanager
def _locked(root: Path) -> Iterator[None]:
    """One ingest at a time per tree."""
    with open(root / LOCK, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise WorkbenchError(f"another ingest is writing {root}; try again when it is done") from None
        yield


def _read_manifest(root: Path) -> dict[str, dict]:
    path = root / MANIFEST
    if not path.exists():
        return {}
    return {row["path"]: row for row in pq.read_table(path).to_pylist()}


def _write_manifest(root: Path, manifest: dict[str, dict]) -> None:
    """Written beside and renamed over: the manifest is whole or as it was."""
    rows = sorted(manifest.values(), key=lambda row: row["path"])
    partial = root / f".{MANIFEST}.{os.getpid()}"
    pq.write_table(pa.Table.from_pylist(rows, schema=MANIFEST_SCHEMA), partial)
    os.replace(partial, root / MANIFEST)


def _remove_unlisted(root: Path, manifest: dict[str, dict]) -> None:
    """Parts no file in the manifest lists, and staging left behind: a run cut short."""
    listed = {part for row in manifest.values() for part in row["parts"]}
    shutil.rmtree(root / STAGING, ignore_errors=True)
    for part in root.glob("*/**/s*-*.parquet"):
        if part.relative_to(root).as_posix() not in listed:
            part.unlink(missing_ok=True)


def _plan(files: list[tuple[Path, bool]], manifest: dict[str, dict], roots: list[str],
          prune: bool) -> tuple[LakeReport, list[tuple]]:
    """The files to load (path, source id, size, mtime), and the report of the others."""
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
        if known is not None and (known["size"], known["mtime_ns"]) == (stat.st_size, stat.st_mtime_ns):
            if known["format"] is None:  # of no known format, in a folder: skipped, as the ingest does
                continue
            report.files.append(LoadedFile(key, known["format"], "unchanged", known["records"], known["rejected"],
                                           message="unchanged since the last ingest", source_id=known["source_id"]))
            continue
        source_id = known["source_id"] if known is not None else next_id
        next_id += known is None
        todo.append((key, named, source_id, stat.st_size, stat.st_mtime_ns))
    for key, row in sorted(manifest.items()):
        if key in found or not under(key, roots) or os.path.isfile(path_of(key)):
            continue
        if prune:
            report.files.append(LoadedFile(key, row["format"], "pruned", row["records"], source_id=row["source_id"],
                                           message="no longer there; its rows were removed"))
        else:
            report.files.append(LoadedFile(key, row["format"], "missing", row["records"], source_id=row["source_id"],
                                           message="no longer there; its rows are kept: pass --prune to remove them"))
    return report, todo


def _forget(root: Path, manifest: dict[str, dict], keys: list[str]) -> None:
    for key in keys:
        for part in manifest.pop(key)["parts"]:
            (root / part).unlink(missing_ok=True)


def _run_tasks(spark, root: Path, run: str, todo: list[tuple], format: str | None,
               partitions: int | None) -> list[dict]:
    """The files spread over Spark tasks, largest first, dealt round-robin so each task
    gets a like share of bytes; each task's results back on the driver."""
    todo = sorted(todo, key=lambda task: -task[3])
    tasks = partitions or min(len(todo), 4 * _cores(spark))
    rows = [(*task, i % tasks) for i, task in enumerate(todo)]
    frame = spark.createDataFrame(rows, TASK_SCHEMA + ", task INT").repartition(tasks, "task").drop("task")
    staging, chosen = str((root / STAGING / run).resolve()), format
    loaded = frame.mapInArrow(lambda batches: load_task(batches, staging, chosen), RESULT_DDL)
    try:
        return loaded.toArrow().to_pylist()
    except Exception as exc:
        raise WorkbenchError(f"Spark could not load the files: {said(exc)}") from None


def _cores(spark) -> int:
    try:
        return max(1, spark.sparkContext.defaultParallelism)
    except Exception:  # Spark Connect has no SparkContext
        return max(1, int(spark.conf.get("spark.default.parallelism", "2")))


def _commit(root: Path, run: str, manifest: dict[str, dict], results: list[dict]) -> list[LoadedFile]:
    """Each loaded file's parts moved into the tree and listed in the manifest; the
    parts of its earlier content removed after."""
    reports, old_parts = [], []
    for row in results:
        counts = {"error": row["errors"], "warning": row["warnings"], "info": row["infos"]}
        if row["status"] == "skipped":  # remembered, so that it is not read again while unchanged
            manifest[row["path"]] = {**{key: row[key] for key in MANIFEST_SCHEMA.names if key != "parts"}, "parts": []}
            continue
        if row["status"] == "failed":
            reports.append(LoadedFile(row["path"], row["format"], "failed", message=row["message"], counts=counts))
            continue
        for part in row["parts"]:
            target = root / part
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(root / STAGING / run / str(row["source_id"]) / part, target)
        before = manifest.get(row["path"])
        old_parts += before["parts"] if before is not None else []
        manifest[row["path"]] = {key: row[key] for key in MANIFEST_SCHEMA.names}
        reports.append(LoadedFile(row["path"], row["format"], "replaced" if before is not None else "ingested",
                                  row["records"], row["rejected"], row["message"], counts, row["source_id"]))
    _write_manifest(root, manifest)
    for part in old_parts:
        (root / part).unlink(missing_ok=True)
    return reports


# --- on an executor --------------------------------------------------------------------


def load_task(batches: Iterator[pa.RecordBatch], staging: str, format: str | None) -> Iterator[pa.RecordBatch]:
    """A Spark task: its files loaded by the workbench's ingest into a DuckDB file of its
    own, then each file's rows written as Parquet parts under `staging`."""
    todo = [row for batch in batches for row in batch.to_pylist()]
    if not todo:
        return
    with tempfile.TemporaryDirectory(prefix="workbench-task-") as folder:
        results = _load_files(todo, Path(folder) / "task.duckdb", Path(staging), format)
    yield pa.RecordBatch.from_pylist(results, schema=RESULT_SCHEMA)


def _load_files(todo: list[dict], db: Path, staging: Path, format: str | None) -> list[dict]:
    from workbench import catalog
    from workbench.ingest import ingest_files

    run = staging.name
    report = ingest_files([(path_of_text(task["path"]), task["named"]) for task in todo], db=db, format=format)
    loaded = {file.path: file for file in report.files}
    results = []
    con = catalog.connect(db, read_only=True)
    try:
        for task in todo:
            file = loaded.get(task["path"])
            if file is None:  # of no known format, found in a folder: the ingest skips it
                results.append(_result(task, "skipped", None))
                continue
            if file.status == "failed" or file.source_id is None:
                results.append(_result(task, "failed", file, message=file.message))
                continue
            parts = _write_parts(con, file.source_id, task["source_id"], staging, run)
            sha256, size = con.execute("SELECT sha256, size FROM sources WHERE source_id = ?",
                                       [file.source_id]).fetchone()
            results.append(_result(task, "loaded", file, parts=parts, sha256=sha256, size=size))
    finally:
        con.close()
    return results


def path_of_text(key: str) -> Path:
    return Path(os.fsdecode(path_of(key)))


def _result(task: dict, status: str, file, message: str = "", parts=(), sha256=None, size=None) -> dict:
    counts = file.severity_counts() if file is not None else {"error": 0, "warning": 0, "info": 0}
    return {"path": task["path"], "source_id": task["source_id"], "status": status,
            "format": file.format if file is not None else None,
            "records": file.records if file is not None else 0, "rejected": file.rejected if file is not None else 0,
            "errors": counts["error"], "warnings": counts["warning"], "infos": counts["info"],
            "message": message or (file.message if file is not None else ""), "sha256": sha256,
            "size": task["size"] if size is None else size, "mtime_ns": task["mtime_ns"], "parts": list(parts)}


def _write_parts(con, local_id: int, source_id: int, staging: Path, run: str) -> list[str]:
    """The file's rows in every table, as the tree holds them, under `staging`; the
    parts written, relative to the tree."""
    from workbench import export

    folder = staging / str(source_id)
    shutil.rmtree(folder, ignore_errors=True)  # a task Spark runs again writes afresh
    folder.mkdir(parents=True)
    for table in export.data_tables(con):
        select, partitions = export.partitioned_select(con, table, source_id=str(source_id), of_source=local_id)
        if con.execute(f"SELECT count(*) FROM ({select})").fetchone()[0]:
            export.write_partitioned(con, select, partitions, folder / table, file_names=f"s{source_id}-{run}_{{i}}")
    return sorted(part.relative_to(folder).as_posix() for part in folder.rglob("*.parquet"))

