"""A Parquet tree of workbench tables (`workbench export --parquet`, or
`workbench ingest --engine spark`) as Spark views named as the database's tables, and
the workbench's queries asked of them.

Each table is read from `<tree>/<table>/`, its partition folders giving `format`. (A
tree of the layout before, with a folder per game, is read too: there a game column's
folder holds its name, shortened when long, and the game's whole id is `<column>_full`.)
The views have the database's own columns in its own order and types (`schema`), so a
query asks the tree what it asks a database. A table with no files is an empty view.
The database's views (`violation_lines`, a format's own) are made from their one
definition (`sql.to_spark`).

A value a format derives from another file's rows (an EC4X order draft's model, taken
from its game's bot trace: `registry.across_files`) is derived here, over the whole
tree, by the same query the database's ingest keeps it with: a Spark task that loaded
the draft may not have seen the trace, so what the tree's files hold is what each task
knew, and the view is what the whole tree says.
"""

from __future__ import annotations

import functools
import os
import re
import weakref
from collections import OrderedDict
from pathlib import Path
from urllib.parse import unquote

import polars as pl

from workbench.errors import WorkbenchError
from workbench.parquet_tree import GAME_COLUMNS
from workbench.spark.compact import of_layout_before
from workbench.spark.manifest import read_manifest
from workbench.spark.session import cancelled, said, session
from workbench.spark.sql import spark_type, statements, tables_read, to_spark

# A Lake reads the parts its tree held when it was opened, so the same query has the same
# answer for the Lake's life: it is asked of Spark once. (A later ingest, prune or export
# may remove those parts: the tree is opened again to read what it holds now.)
# Spark answers in seconds even a small query, and a report asks the scorecard once for
# its table and again for each figure. Only small answers (the analyses' per-model and
# per-game rows) are kept, the latest REMEMBERED of them.
REMEMBERED = 64
REMEMBERED_BYTES = 4 * 1024 * 1024

# Per Spark session (by id), the Lake whose views it holds: the views are named as the
# database's tables, so two trees open on one session take turns holding the names.
_SHOWING: weakref.WeakValueDictionary[int, Lake] = weakref.WeakValueDictionary()


class Lake:
    """The tables of a Parquet tree, on a Spark session. `frame` asks one of the
    workbench's queries (DuckDB's dialect) and gives a polars frame: what
    `connection.query_frame` gives from a database. It reads the parts the tree held when
    it was opened: open it again after an ingest, a prune or an export into the tree."""

    def __init__(self, root: str | Path, spark=None, master: str | None = None):
        self.root = Path(root)
        if not self.root.is_dir():
            raise WorkbenchError(
                f"{self.root} is not a folder of Parquet tables (made by `workbench export "
                f"--parquet` or `workbench ingest --engine spark`)"
            )
        listed = _listed_parts(self.root)  # a manifest refused before Spark starts
        self.spark = session(spark, master)
        self.where = self.root.resolve()  # Spark's own working folder may be another
        self.tables = {table.name: table for table in _declared_tables()}
        self._answers: OrderedDict[str, pl.DataFrame] = OrderedDict()  # by Spark SQL text
        # Each table's files, found now: the parts the tree holds as it is opened.
        self._files = {name: self._parts(table, listed) for name, table in self.tables.items()}
        filled = {name for name, (files, _) in self._files.items() if files}
        # A derivation from tables with no rows here derives nothing: the rows as written.
        self._derived = {
            table: values
            for table, values in (
                (table, [value for value in values if tables_read(value.query) & filled])
                for table, values in _across_files().items()
            )
            if values
        }
        self._views = {_view_name(ddl): ddl for script in _views() for ddl in statements(script)}
        self._named: set[str] = set()  # what this Lake has named in the session

    def _name(self, names) -> None:
        """Name in the session the tables and views `names` (and what each view reads):
        this tree's, in place of another Lake's on the same session. Each is named when
        a query first reads it: Spark reads a table's files list as it is named, a round
        trip to a Spark Connect server each, and a query reads a few of the twenty."""
        if _SHOWING.get(id(self.spark)) is not self:
            _SHOWING.pop(id(self.spark), None)  # until named: a failure part-way names no Lake
            self._named.clear()
        for name in sorted(names):
            self._name_one(name)
        _SHOWING[id(self.spark)] = self

    def _name_one(self, name: str) -> None:
        """Name `name`, after what it reads."""
        if name in self._named:
            return
        if name in self._views:
            for read in sorted(tables_read(self._views[name]) - {name}):
                self._name_one(read)
            self.spark.sql(_temporary_view(self._views[name]))
        elif name in self._derived:
            for read in sorted(set().union(*(tables_read(value.query) for value in self._derived[name])) - {name}):
                self._name_one(read)
            self._rows(name).createOrReplaceTempView(f"{name}{AS_WRITTEN}")
            self.spark.sql(_temporary_view(_derived_view(self.tables[name], self._derived[name])))
        elif name in self.tables:
            self._rows(name).createOrReplaceTempView(name)
        else:
            return  # a query's own name (Spark's functions' tables), or one Spark says it does not know
        self._named.add(name)

    def frame(self, sql: str, params: dict | None = None) -> pl.DataFrame:
        try:
            query = to_spark(sql, params or {})  # the parameters written in: the answer's key
            if query in self._answers:
                self._answers.move_to_end(query)
                return self._answers[query].clone()
            self._name(tables_read(sql))
            table = self.spark.sql(query).toArrow()
        except Exception as exc:
            if isinstance(exc, WorkbenchError):
                raise
            if cancelled(exc):  # the job cancelled by a Ctrl-C (pyspark's handler cancels it)
                raise KeyboardInterrupt from None
            raise WorkbenchError(f"Spark could not run a query over {self.root}: {said(exc)}") from None
        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)  # of an Arrow table, not an array
        if frame.estimated_size() <= REMEMBERED_BYTES:
            self._answers[query] = frame
            while len(self._answers) > REMEMBERED:
                self._answers.popitem(last=False)
        return frame.clone()

    def columns(self, table: str) -> set[str]:
        return {column.name for column in self.tables[table].columns} if table in self.tables else set()

    def close(self) -> None:
        """The views stay in the session (which may be the caller's); the answers kept go."""
        self._answers.clear()

    def _parts(self, table, listed: dict[str, list[str]] | None) -> tuple[list[Path], bool]:
        """`table`'s files (its folder, where that holds them all), and whether they are of
        the layout before. A tree written by `ingest --engine spark` is read as its
        manifest lists it: parts an ingest under way has not listed yet, or has
        unlisted, are left out."""
        folder = self.where / table.name
        if folder.is_symlink() or (folder.exists() and not folder.resolve().is_relative_to(self.where)):
            raise WorkbenchError(
                f"{self.root}: its folder {table.name} is a link that leads out of the tree; "
                f"nothing read from a tree is read from outside it"
            )
        _refuse_links_out(folder, self.where, self.root)
        found = sorted(folder.rglob("*.parquet"))
        if listed is not None:
            wanted = {self.where / part for part in listed.get(table.name, [])}
            files = [folder] if found and set(found) == wanted else sorted(wanted)
        else:
            files = [folder] if found else []
        return files, bool(files) and self._game_folders(folder, found if files == [folder] else files)

    def _rows(self, name: str):
        """The table's rows as the database holds them (a Spark DataFrame), read with the
        table's declared schema (a column its files lack, written before it was added,
        is NULL). A table with no files is an empty one."""
        table, (files, games) = self.tables[name], self._files[name]
        if not files:
            return self.spark.sql(
                "SELECT "
                + ", ".join(f"CAST(NULL AS {spark_type(c.type)}) AS {c.name}" for c in table.columns)
                + " WHERE false"
            )
        folder = self.where / name
        rows = (
            self.spark.read.schema(_file_schema(table, games))
            .option("basePath", str(folder))
            .parquet(*(_literal_path(path) for path in files))
        )
        return rows.selectExpr(*(_column(column, _format_names(folder), games) for column in table.columns))

    def _game_folders(self, folder: Path, files: list[Path]) -> bool:
        """Are the table's files in the layout before, a folder per game? (A tree holds one
        layout: an ingest rewrites the parts of the one before first.)"""
        layouts = {of_layout_before(path.relative_to(self.where).as_posix()) for path in files}
        if len(layouts) > 1:
            raise WorkbenchError(
                f"{folder} holds parts of two layouts, a folder per game and one per format: run "
                f"`workbench compact --parquet {self.root}` to write them in one"
            )
        return layouts == {True}


def open(root: str | Path, spark=None, master: str | None = None) -> Lake:  # noqa: A001  (the API's name)
    """The Parquet tree at `root` on `spark` (default: the active session, or a new one
    on `master`, `session.session`): pass it to `analysis.scorecard`, `compare_models`,
    `ratings`, `plan`, or `report.write_report` as to any of them a database connection."""
    return Lake(root, spark, master)


# A table with values derived across files: its rows as the tree's files hold them.
AS_WRITTEN = "_as_written"


def _view_name(ddl: str) -> str:
    """The name a view's DDL (`CREATE OR REPLACE VIEW name AS ...`) gives it."""
    named = re.match(r"CREATE (?:OR REPLACE )?VIEW ([A-Za-z_][A-Za-z0-9_]*)", ddl)
    assert named is not None, ddl  # the registry's views are made so
    return named[1]


def _derived_view(table, derivations) -> str:
    """The view of `table` whose derived columns are what the whole tree says (DuckDB's
    dialect): a row a derivation gives a value for takes it (NULL too, as the ingest's
    UPDATE sets it); the others keep the value written."""
    joins, values = [], {}
    for number, derived in enumerate(derivations):
        alias = f"derived_{number}"
        on = " AND ".join(f"w.{key} = {alias}.{key}" for key in derived.keys)
        joins.append(f"LEFT JOIN ({derived.query}) {alias} ON {on}")
        values[derived.column] = (
            f"CASE WHEN {alias}.{derived.keys[0]} IS NOT NULL THEN {alias}.{derived.column} ELSE w.{derived.column} END"
        )
    columns = ", ".join(f"{values[c.name]} AS {c.name}" if c.name in values else f"w.{c.name}" for c in table.columns)
    return f"CREATE OR REPLACE VIEW {table.name} AS SELECT {columns} FROM {table.name}{AS_WRITTEN} w " + " ".join(joins)


@functools.lru_cache(maxsize=256)
def _temporary_view(ddl: str) -> str:
    """A view of the database (its DuckDB DDL) as a temporary view in Spark SQL: translated
    once, though a Lake names its views again whenever another Lake held them last."""
    return to_spark(ddl).replace("CREATE OR REPLACE VIEW", "CREATE OR REPLACE TEMPORARY VIEW", 1)


def _column(column, formats: dict[str, str] | None = None, games: bool = False) -> str:
    """The column as the database has it: in a tree of the layout before (`games`), a
    game's whole id from `<column>_full` (else its folder's name); a format whose name its folder writes in
    escapes (`odd%20name%2F%C3%A4`) as it is named (Spark reads each escaped byte as a
    character: `odd name/Ã¤`)."""
    # (a tree of the first layout has the game's id in its folder's name only)
    stored = f"coalesce({column.name}_full, {column.name})" if games and column.name in GAME_COLUMNS else column.name
    value = f"CAST({stored} AS {spark_type(column.type)})"
    if column.name == "format" and formats:
        value = (
            "CASE "
            + " ".join(f"WHEN {value} = {_text(read)} THEN {_text(name)}" for read, name in formats.items())
            + f" ELSE {value} END"
        )
    return f"{value} AS {column.name}"


def _text(value: str) -> str:
    """A Spark SQL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _format_names(folder: Path) -> dict[str, str]:
    """For each format folder of a table whose name Spark reads otherwise than it is
    (bytes written as %XX by DuckDB, read by Spark one character a byte): what Spark
    reads, and the name."""
    names = {}
    for partition in folder.glob("format=*"):
        escaped = partition.name.removeprefix("format=")
        name = unquote(escaped, errors="strict") if "%" in escaped else escaped
        read = unquote(escaped, encoding="latin-1")
        if read != name:
            names[read] = name
    return names


def _refuse_links_out(folder: Path, where: Path, root: Path) -> None:
    """A folder under a table's (a format's, a game's) that is a link leading out of the
    tree is refused: Spark would list the files it leads to as the table's."""
    for parent, folders, _ in os.walk(folder):
        for name in folders:
            path = Path(parent) / name
            if path.is_symlink() and not path.resolve().is_relative_to(where):
                raise WorkbenchError(
                    f"{root}: its folder {path.relative_to(where).as_posix()} is a link that leads "
                    f"out of the tree; nothing read from a tree is read from outside it"
                )


def _literal_path(path: Path) -> str:
    """A path as Spark takes it, meaning only itself: Spark reads a path as a glob, so
    `lake[1]` named `lake1`; each glob character is escaped."""
    return re.sub(r"([\\\[\]{}*?])", r"\\\1", str(path))


def _file_schema(table, games: bool = False) -> str:
    """The columns of the table's files, then its partition folders' (`format`; in a tree
    of the layout before, `games`, a game column's folder name, the column whole as
    `<column>_full` in the files), as text."""
    folders = [c.name for c in table.columns if games and c.name in GAME_COLUMNS]
    stored = [
        f"{c.name}_full {spark_type(c.type)}" if c.name in folders else f"{c.name} {spark_type(c.type)}"
        for c in table.columns
        if c.name != "format"
    ]
    return ", ".join(stored + ["format STRING", *(f"{name} STRING" for name in folders)])


def _listed_parts(root: Path) -> dict[str, list[str]] | None:
    """Per table, the parts the manifest of a tree `ingest --engine spark` writes lists
    (each checked to be a part of the tree: `manifest.read_manifest`); None for a tree
    without one (`workbench export --parquet`'s)."""
    manifest = read_manifest(root)
    if manifest is None:
        return None
    listed: dict[str, list[str]] = {}
    for row in manifest.values():
        for part in row["parts"]:
            listed.setdefault(part.split("/", 1)[0], []).append(part)
    return listed


def _across_files() -> dict:
    from workbench import registry

    return registry.across_files()


def _declared_tables():
    from workbench import registry

    return registry.data_tables()


def _views() -> list[str]:
    from workbench import registry

    return registry.views_ddl()
