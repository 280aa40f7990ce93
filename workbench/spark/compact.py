"""A tree's parts merged into few large ones, and a part written again without the rows
of a file that left it: `workbench compact --parquet DIR`, and what an ingest does on
its own.

A task writes each file's rows as parts of their own, so that a file read again
replaces only its parts. Many small files make many small parts, which a cluster
reads slowly (each is listed, opened and planned). Parts under SMALL_BYTES of one
table and format are merged into parts of up to TARGET_BYTES, one after another: each
part holds its rows by game, so each row group's statistics of `game_id` still let a
reader skip other games'. An
ingest merges a folder's small parts on its own once it holds more than AUTOMATIC of
them, and rewrites the parts of a tree of the layout before (a folder per game) in
this one before it writes any.

A merged part holds rows of several files, and each of those files lists it. When one
of them is read again or pruned, the part is written again without that file's rows,
and the others list the new part. Every change is written beside the parts it
replaces, listed by one write of the manifest, and only then are the parts it
replaced removed (`switch`): a reader of the parts the manifest lists never sees rows
missing or doubled, and a run cut short leaves only unlisted parts, which the next
run removes.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from workbench.errors import WorkbenchError, first_line
from workbench.parquet_tree import GAME_COLUMNS, ROW_GROUP_ROWS
from workbench.paths import text_of
from workbench.spark.manifest import (
    MANIFEST,
    STAGING,
    listed_parts,
    locked,
    part_path,
    read_manifest,
    remove_unlisted,
    stamp,
    unlink_part,
    write_manifest,
)

SMALL_BYTES = 32 * 2**20
TARGET_BYTES = 128 * 2**20
# Parts merged at once, at most (each is opened to be read).
BATCH_PARTS = 256
AUTOMATIC = 8


@dataclass
class Compacted:
    """What `compact` did: parts before and after, per table."""

    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)
    rewritten: set[str] = field(default_factory=set)  # tables with a part written again
    not_as_written: int = 0  # listed parts changed since they were written: left to be read again

    def lines(self) -> list[str]:
        changed = [
            table
            for table in sorted(self.before)
            if self.before[table] != self.after.get(table) or table in self.rewritten
        ]
        lines = [
            f"{table}: {self.before[table]} parts -> {self.after[table]}"
            + (" (in this layout)" if self.before[table] == self.after.get(table) else "")
            for table in changed
        ]
        if not changed:
            lines.append(
                "nothing to merge: no table has two parts under "
                f"{SMALL_BYTES // 2**20} MB in one format, nor a part in a folder per game"
            )
        if self.not_as_written:
            lines.append(
                f"{self.not_as_written} parts are not as the ingest wrote them (copied or changed since) and "
                f"were left: the next `workbench ingest --engine spark` into the tree reads their files again"
            )
        return lines


def compact(root: str | Path) -> Compacted:
    """Merge the small parts of the tree at `root` (one `ingest --engine spark` keeps),
    and rewrite its parts of the layout before."""
    root = Path(root)
    if not root.is_dir():
        raise WorkbenchError(
            f"{text_of(root)} is not a folder: give the Parquet tree `workbench ingest --engine spark` keeps"
        )
    if read_manifest(root) is None:
        raise WorkbenchError(
            f"{text_of(root)} is not a tree `workbench ingest --engine spark` keeps (it has no "
            f"{MANIFEST}); a tree `workbench export --parquet` wrote is written whole: export again"
        )
    with locked(root):
        manifest = read_manifest(root) or {}
        before = _parts_per_table(manifest)
        present = remove_unlisted(root, manifest)
        stale = len(listed_parts(manifest) - present)
        replaced = merged(root, manifest, present, f"compact-{uuid.uuid4().hex[:12]}", more_than=1)
        switch(root, manifest, replaced)
        shutil.rmtree(root / STAGING, ignore_errors=True)
    return Compacted(before, _parts_per_table(manifest), {part.split("/", 1)[0] for part in replaced}, stale)


def _parts_per_table(manifest: dict[str, dict]) -> dict[str, int]:
    return dict(Counter(part.split("/", 1)[0] for part in listed_parts(manifest)))


def merged(
    root: Path, manifest: dict[str, dict], present: set[str], run: str, more_than: float | None = None
) -> dict[str, list[str]]:
    """Per table and format, its parts under SMALL_BYTES where there are more than
    `more_than` of them (default AUTOMATIC), and its parts of the layout before, merged
    into parts of up to TARGET_BYTES (written in place, unlisted until `switch`). Each
    part merged, and the parts that hold its rows now. Only parts as they were written
    (`present`) merge."""
    folders: dict[str, list[tuple[str, int]]] = {}
    for part in sorted(listed_parts(manifest) & present):
        if not _declared_columns(part.split("/", 1)[0]):
            continue  # a table no format declares (a plugin's, since removed): its columns are unknown
        size = (root / part).stat().st_size
        if size < SMALL_BYTES or of_layout_before(part):
            folders.setdefault(_format_folder(part), []).append((part, size))
    replaced: dict[str, list[str]] = {}
    for folder, parts in sorted(folders.items()):
        if len(parts) <= (AUTOMATIC if more_than is None else more_than) and not any(
            of_layout_before(part) for part, _ in parts
        ):
            continue
        for batch in _batches(parts):
            if len(batch) > 1 or of_layout_before(batch[0]):
                try:
                    written = _rewrite(root, batch, f"{run}-{len(replaced)}")
                except (OSError, pa.ArrowException, duckdb.Error) as exc:
                    # Parts written so far are listed by nothing: the next run removes them.
                    raise WorkbenchError(
                        f"cannot merge the parts of {text_of(root / folder)}: {first_line(exc)}; the tree is as it was"
                    ) from None
                replaced.update({part: written for part in batch})
    return replaced


def _batches(parts: list[tuple[str, int]]) -> list[list[str]]:
    """The parts in order, cut into runs of up to TARGET_BYTES and BATCH_PARTS parts."""
    batches: list[list[str]] = [[]]
    size = 0
    for part, bytes_ in parts:
        if batches[-1] and (size + bytes_ > TARGET_BYTES or len(batches[-1]) == BATCH_PARTS):
            batches.append([])
            size = 0
        batches[-1].append(part)
        size += bytes_
    return batches


class Leaving:
    """The parts that files leave (a file read again or pruned leaves its earlier
    parts), with the source ids whose rows leave each."""

    def __init__(self) -> None:
        self.ids: dict[str, set[int]] = {}

    def add(self, row: dict) -> None:
        for part in row["parts"]:
            self.ids.setdefault(part, set()).add(row["source_id"])

    def parts_rewritten(self, root: Path, manifest: dict[str, dict], run: str) -> dict[str, list[str]]:
        """Each part left: by no file the manifest still lists (then nothing replaces
        it), or written again without the rows that left it (in place, unlisted until
        `switch`). A part not there as written stays listed: its files are read again."""
        holders = listed_parts(manifest)
        replaced: dict[str, list[str]] = {}
        for number, (part, ids) in enumerate(sorted(self.ids.items())):
            if part not in holders:
                replaced[part] = []
            elif part_path(root, part) is not None and (root / part).is_file():
                try:
                    replaced[part] = _rewrite(root, [part], f"{run}-w{number}", without=ids)
                except (duckdb.Error, OSError, pa.ArrowException) as exc:
                    # The part would keep rows of a file the manifest no longer lists: nothing
                    # is switched, and the tree stays as it was.
                    raise WorkbenchError(
                        f"cannot write {text_of(root / part)} again without the rows of a file "
                        f"that leaves it: {first_line(exc)}; the tree is as it was"
                    ) from None
        return replaced


def switch(root: Path, manifest: dict[str, dict], replaced: dict[str, list[str]]) -> None:
    """Every file lists, in place of each part of `replaced`, the parts that replace it;
    the manifest is written; then the parts replaced are removed."""
    for row in manifest.values():
        if any(part in replaced for part in row["parts"]):
            stamps = dict(zip(row["parts"], row.get("part_stamps") or [None] * len(row["parts"])))
            parts = list(dict.fromkeys(new for part in row["parts"] for new in replaced.get(part, [part])))
            row["parts"] = parts
            row["part_stamps"] = [stamps.get(part) or stamp(root / part) for part in parts]
    write_manifest(root, manifest)
    for part in replaced:
        unlink_part(root, part)


def _rewrite(root: Path, parts: list[str], name: str, without: set[int] | None = None) -> list[str]:
    """The rows of `parts` (of one table and format), but those of the files `without`,
    as parts named `c-<name>_<i>.parquet` in their format's folder. The parts are read a
    row group at a time and written one after another, so the memory a merge takes is
    that of a few row groups, whatever its size; each part holds its rows by game (as an
    ingest writes them), and so does each row group of the merged one."""
    table = parts[0].split("/", 1)[0]
    staging = root / STAGING / "rewritten" / name
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True, exist_ok=True)
    for part in parts:
        if not (root / part).is_file():  # a FIFO or a device would be waited on
            raise OSError(f"{root / part} is not a file")
    schema = _arrow_schema(_declared_columns(table))
    leaving = pa.array(sorted(int(i) for i in without), pa.int64()) if without else None
    with _Parts(staging, name, schema) as out:
        for part in parts:
            file = _parquet(root / part)
            stored = _stored_names(file.schema_arrow.names, schema, of_layout_before(part))
            for batch in file.iter_batches(batch_size=ROW_GROUP_ROWS, columns=sorted(set(stored.values()))):
                rows = _conformed(batch, schema, stored)
                if leaving is not None:
                    rows = rows.filter(pc.invert(pc.fill_null(pc.is_in(rows["source_id"], value_set=leaving), False)))
                out.add(rows)
    folder = _format_folder(parts[0])
    written = []
    for path in sorted(staging.glob("*.parquet")):
        (root / folder).mkdir(parents=True, exist_ok=True)
        os.replace(path, root / folder / path.name)
        written.append(f"{folder}/{path.name}")
    shutil.rmtree(staging, ignore_errors=True)
    return written


class _Parts:
    """Parquet files `c-<name>_<i>.parquet` in `folder`, written in row groups of
    ROW_GROUP_ROWS, a new file begun once one reaches TARGET_BYTES."""

    def __init__(self, folder: Path, name: str, schema: pa.Schema):
        self.folder, self.name, self.schema = folder, name, schema
        self.pending: list[pa.RecordBatch] = []
        self.writer: pq.ParquetWriter | None = None
        self.path: Path | None = None
        self.count = 0

    def __enter__(self):
        return self

    def add(self, rows: pa.RecordBatch) -> None:
        self.pending.append(rows)
        if sum(batch.num_rows for batch in self.pending) >= ROW_GROUP_ROWS:
            self._flush()

    def _flush(self) -> None:
        table = pa.Table.from_batches(self.pending, schema=self.schema)
        self.pending = []
        if not table.num_rows:
            return
        if self.writer is None:
            self.path = self.folder / f"c-{self.name}_{self.count}.parquet"
            # zstd, not pyarrow's default snappy: smaller parts (docs/performance.md, Measured where the code chose)
            self.writer = pq.ParquetWriter(self.path, self.schema, compression="zstd")
            self.count += 1
        assert self.path is not None  # named when its writer was made
        self.writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
        if self.path.stat().st_size >= TARGET_BYTES:
            self.writer.close()
            self.writer = None

    def __exit__(self, kind, *_):
        if kind is None:
            self._flush()
        if self.writer is not None:
            self.writer.close()


def _parquet(path: Path) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path)
    except Exception as exc:  # pyarrow's errors: not a Parquet file
        raise OSError(f"{path}: {first_line(exc)}") from None


def _stored_names(names: list[str], schema: pa.Schema, games_in_folders: bool) -> dict[str, str]:
    """Per declared column a part holds, the name it holds it under: of the layout
    before, a game's whole id is `<column>_full`. (A column added after the part was
    written is not there: NULL.)"""
    stored = {}
    for column in schema:
        name = f"{column.name}_full" if games_in_folders and column.name in GAME_COLUMNS else column.name
        if name in names:
            stored[column.name] = name
    return stored


def _conformed(batch: pa.RecordBatch, schema: pa.Schema, stored: dict[str, str]) -> pa.RecordBatch:
    """A part's rows with the table's declared columns, in order and of their types."""
    return pa.RecordBatch.from_arrays(
        [
            batch.column(stored[field.name]).cast(field.type)
            if field.name in stored
            else pa.nulls(batch.num_rows, field.type)
            for field in schema
        ],
        schema=schema,
    )


def _arrow_schema(columns: dict[str, str]) -> pa.Schema:
    """The Arrow types DuckDB gives the declared columns."""
    listed = ", ".join(f'CAST(NULL AS {type_}) AS "{name}"' for name, type_ in columns.items())
    with duckdb.connect() as con:
        return con.sql(f"SELECT {listed} LIMIT 0").to_arrow_table().schema


def _declared_columns(table: str) -> dict[str, str]:
    """The table's columns as its files hold them (not `format`, its folder's)."""
    from workbench import registry

    for declared in registry.data_tables():
        if declared.name == table:
            return {c.name: c.type for c in declared.columns if c.name != "format"}
    return {}


def _format_folder(part: str) -> str:
    """`<table>/format=<name>`, the folder a part of either layout belongs in."""
    table, folder = part.split("/")[:2]
    return f"{table}/{folder}"


def of_layout_before(part: str) -> bool:
    """A part of the layout before: in a folder per game under its format's."""
    return any(folder.split("=", 1)[0] in GAME_COLUMNS for folder in part.split("/")[2:-1])
