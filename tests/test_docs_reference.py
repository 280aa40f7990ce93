"""The generated reference pages (`docs/generate.py`): every column of every built-in
table and every view is described, the committed pages are what the code generates, and
what it generates depends on neither the terminal nor the installed plugins."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys

import pytest

from tests.conftest import ROOT
from workbench import catalog, registry

REGENERATE = "run: python docs/generate.py"


def _generator():
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would: its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


generate = _generator()


def built_in_tables():
    return [*catalog.SHARED_TABLES, *(table for fmt in registry.BUILT_IN for table in fmt.tables)]


def test_every_column_of_every_table_says_what_it_holds():
    undocumented = [
        f"{table.name}.{column.name}"
        for table in built_in_tables()
        for column in table.columns
        if not column.doc.strip()
    ]
    assert not undocumented, f"columns declared with an empty doc: {', '.join(undocumented)}"


def test_every_table_says_what_a_row_is():
    undocumented = [table.name for table in built_in_tables() if not table.doc.strip()]
    assert not undocumented, f"tables declared with an empty doc: {', '.join(undocumented)}"


def test_every_view_says_what_it_holds():
    undocumented = []
    for group in generate.groups():
        undocumented += [name for name in group.views if not group.view_docs.get(name, "").strip()]
        unknown = set(group.view_docs) - set(group.views)
        assert not unknown, f"VIEW_DOCS describes views no statement makes: {', '.join(sorted(unknown))}"
    assert not undocumented, f"views without a description in VIEW_DOCS: {', '.join(undocumented)}"


@pytest.mark.parametrize("name", sorted(generate.PAGES))
def test_the_committed_page_is_what_the_code_generates(name):
    if name.endswith("cli.md") and sys.version_info >= (3, 13):
        # argparse lays its help out otherwise from 3.13 on; the page is Python 3.11's and 3.12's
        pytest.skip("the command line page is generated with Python 3.11 or 3.12, whose argparse CI runs")
    path = ROOT / "docs" / name
    assert path.is_file(), f"docs/{name} is missing; {REGENERATE}"
    assert path.read_text(encoding="utf-8") == generate.PAGES[name](), (
        f"docs/{name} differs from what the code generates; {REGENERATE}"
    )


def test_the_help_does_not_depend_on_the_terminal_or_the_plugins(monkeypatch):
    page = generate.cli_page()
    monkeypatch.setenv("COLUMNS", "40")
    dice = dataclasses.replace(registry.BUILT_IN[0], name="dice", describe="a plugin's dice rolls")
    monkeypatch.setattr(registry, "FORMATS", {**registry.FORMATS, "dice": dice})
    assert generate.cli_page() == page
    assert "dice" not in page


def test_a_cell_reads_as_written():
    assert (
        generate._cell("save | history, `a|b`, *.sav and <game_id>.jsonl")
        == "save \\| history, `a\\|b`, \\*.sav and &lt;game_id>.jsonl"
    )


def test_the_database_page_names_only_columns_that_exist():
    # docs/database.md is prose, a row per table with the columns it names: each must be one.
    import re

    known = {}
    for group in generate.groups():
        known.update({table.name: {column.name for column in table.columns} for table in group.tables})
        known.update({name: {column for column, _ in columns} for name, columns in group.views.items()})
    named = re.findall(r"`(\w+)\(([^)`]*)\)`", (ROOT / "docs" / "database.md").read_text(encoding="utf-8"))
    assert len(named) >= 15, named
    for table, columns in named:
        assert table in known, f"docs/database.md names a table no declaration makes: {table}"
        for column in (c.strip() for c in columns.split(",")):
            assert column == "..." or column in known[table], f"docs/database.md: {table} has no column {column}"


def test_the_database_page_lists_each_tables_columns_as_declared():
    """docs/database.md names tables with their columns by hand: each list is the table's
    (or view's) columns in order, or their first ones followed by `...` (then not all)."""
    import re

    import workbench

    con = workbench.connect(":memory:")
    try:
        declared = {}
        for table, column in con.execute(
            "SELECT table_name, column_name FROM information_schema.columns ORDER BY table_name, ordinal_position"
        ).fetchall():
            declared.setdefault(table, []).append(column)
    finally:
        con.close()
    page = (ROOT / "docs" / "database.md").read_text()
    listed = re.findall(r"`(\w+)\(([^)`]*)\)`", page)
    assert len(listed) >= 20
    wrong = []
    for table, names in listed:
        names = [name.strip() for name in names.split(",")]
        cut = names[-1] == "..."
        names = names[:-1] if cut else names
        columns = declared.get(table)
        if columns is None or (columns[: len(names)] if cut else columns) != names or (cut and names == columns):
            wrong.append(f"{table}: the page lists {names}{' ...' if cut else ''}; declared: {columns}")
    assert not wrong, "\n".join(wrong)
