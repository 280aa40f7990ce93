"""Writes the reference pages that are generated from the code: `reference/tables.md`
from the table declarations, `reference/cli.md` from the command line's parser.

    python docs/generate.py

Only the built-in formats are described (installed plugins are left out), and the help
is formatted 100 columns wide whatever the terminal, so the pages are the same on every
machine; `tests/test_docs_reference.py` fails when a committed page differs from what
this writes.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # this checkout's package, whatever is installed

import duckdb  # noqa: E402  (after the path above: this checkout's package)

from workbench import catalog, registry  # noqa: E402
from workbench.schema import Table  # noqa: E402

REGENERATE = "python docs/generate.py"
WIDTH = 100  # columns the help is formatted to


# -- tables ----------------------------------------------------------------------------


def view_docs(fmt=None) -> dict[str, str]:
    """What each view of `fmt` (None: the shared ones) holds, by name, as declared beside
    its SQL: `catalog.VIEW_DOCS`, a format's `tables.VIEW_DOCS`."""
    if fmt is None:
        return dict(catalog.VIEW_DOCS)
    return dict(getattr(importlib.import_module(f"workbench.{fmt.name}.tables"), "VIEW_DOCS", {}))


@dataclass(frozen=True)
class Group:
    """The shared tables, or one built-in format's: a section of the tables page."""

    heading: str
    about: str
    tables: list[Table]
    views: dict[str, list[tuple[str, str]]]  # name -> [(column, type)], as DuckDB describes it
    view_docs: dict[str, str]  # name -> what it holds, as declared beside its SQL


def groups() -> list[Group]:
    """The shared tables, then each built-in format's, with the views' columns made in a
    scratch database by the same statements a workbench database is made by."""
    scratch = duckdb.connect(":memory:", config=catalog.NO_EXTENSIONS)
    try:
        found = [
            Group(
                "Every format",
                "The tables and views all formats share.",
                list(catalog.SHARED_TABLES),
                _views_made(scratch, catalog.SHARED_DDL),
                view_docs(),
            )
        ]
        for fmt in registry.BUILT_IN:
            found.append(
                Group(
                    f"Format `{fmt.name}`",
                    fmt.describe,
                    [t for t in fmt.tables if not t.temporary],
                    _views_made(scratch, fmt.ddl()),
                    view_docs(fmt),
                )
            )
    finally:
        scratch.close()
    return found


def _views_made(scratch: duckdb.DuckDBPyConnection, ddl: str) -> dict[str, list[tuple[str, str]]]:
    before = _view_names(scratch)
    scratch.execute(ddl)
    return {
        name: [(column, kind) for column, kind, *_ in scratch.execute(f"DESCRIBE {name}").fetchall()]
        for name in sorted(_view_names(scratch) - before)
    }


def _view_names(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {name for (name,) in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}


def _line(text: str) -> str:
    """Text as one line of Markdown that reads as written: outside code spans, `*`
    starts no emphasis and `<game_id>` is no HTML tag."""
    parts = " ".join(text.split()).split("`")
    for n in range(0, len(parts), 2):
        parts[n] = parts[n].replace("*", "\\*").replace("<", "&lt;")
    return "`".join(parts)


def _cell(text: str) -> str:
    """Text for a cell of a Markdown table: one line, its pipes escaped."""
    return _line(text).replace("|", "\\|")


def _key(column, table: Table) -> str:
    said = []
    if column.primary_key:
        said.append("primary key")
    elif column.required:
        said.append("required")
    if column.name in table.unique:
        said.append("unique with " + ", ".join(f"`{n}`" for n in table.unique if n != column.name))
    return "; ".join(said)


def table_section(table: Table) -> list[str]:
    lines = [
        f"### {table.name}",
        "",
        _line(table.doc),
        "",
        "| column | type | key/required | meaning |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{c.name}` | {c.type} | {_key(c, table)} | {_cell(c.doc)} |" for c in table.columns]
    return lines + [""]


def view_section(name: str, doc: str, columns: list[tuple[str, str]]) -> list[str]:
    lines = [f"### {name}", "", f"A view. {_line(doc)}", "", "| column | type |", "|---|---|"]
    lines += [f"| `{column}` | {kind} |" for column, kind in columns]
    return lines + [""]


def tables_page() -> str:
    intro = (
        "Generated from the table declarations (`Table` and `Column` in `workbench/catalog.py` and each "
        f"format's `tables.py`) and the views' SQL; regenerate it with `{REGENERATE}`. "
        "A column not marked required may be NULL: where the file does not give its value, or gives it "
        "with another JSON type than the column's (a violation says so)."
    )
    lines = ["# Tables and views", "", intro, ""]
    for group in groups():
        lines += [f"## {group.heading}", "", _line(group.about), ""]
        for table in group.tables:
            lines += table_section(table)
        for name, columns in group.views.items():
            lines += view_section(name, group.view_docs.get(name, ""), columns)
    return "\n".join(lines).rstrip("\n") + "\n"


# -- command line ----------------------------------------------------------------------


@contextlib.contextmanager
def _fixed_help() -> Iterator[None]:
    """Help formatted as on a terminal `WIDTH` columns wide, without colour, listing
    the built-in formats only."""
    saved = {name: os.environ.get(name) for name in ("COLUMNS", "NO_COLOR", "FORCE_COLOR", "PYTHON_COLORS")}
    formats = registry.FORMATS
    os.environ.update(COLUMNS=str(WIDTH), NO_COLOR="1")
    for name in ("FORCE_COLOR", "PYTHON_COLORS"):
        os.environ.pop(name, None)
    registry.FORMATS = {fmt.name: fmt for fmt in registry.BUILT_IN}
    try:
        yield
    finally:
        registry.FORMATS = formats
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands by name, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def cli_page() -> str:
    from workbench.cli import _parser

    intro = (
        f"Each command's `--help`, as `workbench` prints it ({WIDTH} columns wide). Generated from the "
        f"parser in `workbench/cli.py`; regenerate it with `{REGENERATE}`."
    )
    lines = ["# Command line", "", intro, ""]
    with _fixed_help():
        parser = _parser()
        for title, command in [("workbench", parser), *((f"workbench {n}", c) for n, c in commands(parser).items())]:
            lines += [f"## {title}", "", "```text", command.format_help().rstrip("\n"), "```", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# -- writing ---------------------------------------------------------------------------

PAGES = {"reference/tables.md": tables_page, "reference/cli.md": cli_page}


def main() -> None:
    for name, page in PAGES.items():
        path = DOCS / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page(), encoding="utf-8")
        print(f"wrote {path.relative_to(DOCS.parent)}")


if __name__ == "__main__":
    main()
