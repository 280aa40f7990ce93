"""A tree's parts merged into few large ones, and a part written again without the rows
of a file that left it: `workbench compact --parquet DIR`, and what an ingest does on
its own.

A task writes each file's rows as parts of their own, so that a file read again
replaces only its parts. Many small files make many small parts, which a cluster
reads slowly (each is listed, opened and planned). Parts under SMALL_BYTES of one
table and format are merged into parts of up to TARGET_BYTES, their rows ordered by
game, so each row group's statistics of `game_id` let a reader skip other games'. An
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
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from workbench.errors import WorkbenchError, first_line
from workbench.export import GAME_COLUMNS, by_game, quoted
from workbench.paths import text_of
from workbench.spark.manifest import (MANIFEST, STAGING, listed_parts, locked, part_path, read_manifest,
                                      remove_unlisted, stamp, unlink_part, write_manifest)

SMALL_BYTES = 32 * 2 ** 20
TARGET_BYTES = 128 * 2 ** 20
# Parts merged at once, at most: thousands in one query ran DuckDB out of memory.
BATCH_PARTS = 256
AUTOMATIC = 8
# The driver's DuckDB merging parts: what an ingest's task gives its own, and a folder of
# its own to sort in beyond it (10M events in memory took 4 GB more than the ingest).
MEMORY_LIMIT = "1GB"


@dataclass
class Compacted:
    """What `compact` did: parts before and after, per table."""

    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)

    def lines(self) -> list[str]:
        changed = [table for table in sorted(self.before) if self.before[table] != self.after.get(table)]
        if not changed:
            return ["nothing to merge: no table has two parts under "
                    f"{SMALL_BYTES // 2 ** 20} MB in one format, nor a part in a folder per game"]
        return [f"{table}: {self.before[table]} parts -> {self.after[table]}" for table in changed]


def compact(root: str | Path) -> Compacted:
    """Merge the small parts of the tree at `root` (one `ingest --engine spark` keeps),
    and rewrite its parts of the layout before."""
    root = Path(root)
    if not root.is_dir():
        raise WorkbenchError(f"{text_of(root)} is not a folder: give the Parquet tree `workbench ingest --engine "
                             f"spark` keeps")
    if read_manifest(root) is None:
        raise WorkbenchError(f"{text_of(root)} is not a tree `workbench ingest --engine spark` keeps (it has no "
                             f"{MANIFEST}); a tree `workbench export --parquet` wrote is written whole: export again")
    with locked(root):
        manifest = read_manifest(root) or {}
        before = _parts_per_table(manifest)
        present = remove_unlisted(root, manifest)
        switch(root, manifest, merged(root, manifest, present, f"compact-{uuid.uuid4().hex[:12]}", more_than=1))
        shutil.rmtree(root / STAGING, ignore_errors=True)
    return Compacted(before, _parts_per_table(manifest))


def _parts_per_table(manifest: dict[str, dict]) -> dict[str, int]:
    return dict(Counter(part.split("/", 1)[0] for part in listed_parts(manifest)))


def merged(root: Path, manifest: dict[str, dict], present: set[str], run: str,
           more_than: float | None = None) -> dict[str, list[str]]:
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
                of_layout_before(part) for part, _ in parts):
            continue
        for batch in _batches(parts):
            if len(batch) > 1 or of_layout_before(batch[0]):
                written = _rewrite(root, batch, f"{run}-{len(replaced)}")
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
                    raise WorkbenchError(f"cannot write {text_of(root / part)} again without the rows of a file "
                                         f"that leaves it: {first_line(exc)}; the tree is as it was") from None
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
    ordered by game, as parts named `c-<name>_<i>.parquet` in their format's folder."""
    table = parts[0].split("/", 1)[0]
    staging = root / STAGING / "rewritten" / name
    shutil.rmtree(staging, ignore_errors=True)
    staging.parent.mkdir(parents=True, exist_ok=True)
    where = f" WHERE source_id NOT IN ({', '.join(str(int(i)) for i in sorted(without))})" if without else ""
    order = by_game(_declared_columns(table))
    with duckdb.connect(config={"memory_limit": MEMORY_LIMIT,
                                "temp_directory": str(root / STAGING / "rewritten" / "spill")}) as con:
        # Each part read by pyarrow as the one file it is: DuckDB's read_parquet takes a
        # path as a glob (`lake[1]` would read `lake1`, a part named `c-?.parquet` others).
        for number, part in enumerate(parts):
            if not (root / part).is_file():  # a FIFO or a device would be waited on
                raise OSError(f"{root / part} is not a file")
        select = " UNION ALL ".join(_rows_of(root / part, f"part_{number}", table, of_layout_before(part))
                                    for number, part in enumerate(parts))
        for number, part in enumerate(parts):
            con.register(f"part_{number}", ds.dataset(str(root / part), format="parquet"))
        con.execute(f"COPY (SELECT * FROM ({select}){where}{order}) TO {quoted(staging)} (FORMAT parquet, "
                    f"FILENAME_PATTERN 'c-{name}_{{i}}', FILE_SIZE_BYTES '{TARGET_BYTES}b')")
    folder = _format_folder(parts[0])
    written = []
    for path in sorted(staging.glob("*.parquet")):
        if pq.ParquetFile(path).metadata.num_rows == 0:
            continue
        (root / folder).mkdir(parents=True, exist_ok=True)
        os.replace(path, root / folder / path.name)
        written.append(f"{folder}/{path.name}")
    shutil.rmtree(staging, ignore_errors=True)
    return written


def _rows_of(path: Path, view: str, table: str, games_in_folders: bool) -> str:
    """A part's rows with the table's declared columns in order (one written before a
    column was added has it NULL); of the layout before, a game's id from its whole
    `<column>_full`."""
    try:
        names = set(pq.read_schema(path).names)
    except Exception as exc:  # pyarrow's errors: not a Parquet file
        raise OSError(f"{path}: {first_line(exc)}") from None
    columns = []
    for name, type_ in _declared_columns(table).items():
        stored = f"{name}_full" if games_in_folders and name in GAME_COLUMNS else name
        columns.append(f'"{stored}" AS "{name}"' if stored in names else f'CAST(NULL AS {type_}) AS "{name}"')
    listed = ", ".join(columns) if columns else "*"
    return f"SELECT {listed} FROM {view}"


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
