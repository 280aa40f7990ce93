"""The registry, the one place that knows the formats: each built-in format is the
folder its line names, what a format says of its tables and batches is read through
it, and a record located otherwise than by line is found as its decisions name it."""

from __future__ import annotations

import duckdb

import workbench
from workbench import registry
from workbench.schema import BOUND_NAMES, bound_names


def test_each_built_in_format_is_the_folder_its_line_names():
    assert [fmt.name for fmt in registry.BUILT_IN] == list(registry.BUILT_IN_FOLDERS)
    # each reads its files with its own folder's code
    assert all(
        fmt.load.__module__.startswith(f"workbench.{folder}")
        for fmt, folder in zip(registry.BUILT_IN, registry.BUILT_IN_FOLDERS)
    )
    assert list(registry.FORMATS)[: len(registry.BUILT_IN)] == list(registry.BUILT_IN_FOLDERS)


def test_the_names_batches_are_bound_under_are_the_core_s_and_the_formats():
    # as the formats declare them; a database holding a table of one of these names is
    # refused (tests/test_catalog_schema.py)
    declared = {name for fmt in registry.BUILT_IN for name in fmt.bound_names}
    assert {"event_lines", "emotion_docs", "ec4x_lines", "draft_lines", "arena_lines"} <= declared
    assert bound_names() == BOUND_NAMES | declared


def test_a_record_located_otherwise_than_by_line_is_found_as_its_decisions_name_it(sample, tmp_path):
    assert set(registry.record_locators()) == {"gm_responses", "otel_spans"}
    db = tmp_path / "w.duckdb"
    workbench.ingest([sample / "gm"], db=db)
    with duckdb.connect(str(db), read_only=True) as con:
        locator = registry.record_locators()["gm_responses"]
        located = con.execute(f"SELECT DISTINCT source_id, {locator} FROM gm_responses").fetchall()
        decided = con.execute("SELECT DISTINCT source_id, locator FROM decisions WHERE format = 'gm'").fetchall()
    assert decided and set(decided) <= set(located)
