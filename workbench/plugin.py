"""The API a format plugin is built with: the only names of the workbench a plugin
imports, kept stable across releases (a change to them is a major version's). Every
other module of the package is private.

A plugin declares, in its package's `pyproject.toml`,

    [project.entry-points."workbench.formats"]
    dice = "dice_workbench:FORMAT"

and `dice_workbench.FORMAT` is a `Format`:

- `Format(name, tables, claims, load, ...)`: the format's name (as the entry point's),
  its tables, `claims(path, head)` (does this file belong to it? `jsonl_claims` for a
  JSONL format), and `load(ctx) -> Counts`, which writes one file's rows.
- `Table`/`Column`: a table declared once; `Column(..., path=)` checks each JSON path
  against the record's pydantic model when the plugin is imported, and
  `Table.insert(sql)`/`Table.select_paths(alias)` write the statement that stores it.
- `LoadContext`: the file (`path`), its `source_id`, the connection (`con`, in the
  file's transaction), and `add_violations`/`add_rejects`.
- `context_batches(ctx)` reads a line-based file in batches of `LineBatch`
  (`texts`, `unreadable`, `locator(i)`), `store_batch(...)` stores a batch's lines,
  violations and rejects, and `run_on(con, arrow_table, sql, name, params)` runs a
  statement over an Arrow table bound as `name`.
- `violation(locator, pydantic_error, loc)` turns a pydantic error into a located
  `Violation`; `DECISIONS` is the shared table a format adds its agents' decisions to,
  so the scorecard, comparisons and report count them.

See docs/plugins.md for a whole plugin, and `tests/plugins/dice` for one that the test
suite installs and runs."""

from workbench.catalog import DECISIONS
from workbench.formats import Counts, Format, LoadContext, first_json_line, jsonl_claims
from workbench.jsonl import LineBatch, context_batches, store_batch
from workbench.schema import Column, Table, run_on
from workbench.validation import violation
from workbench.violation import Violation

__all__ = [
    "DECISIONS",
    "Column",
    "Counts",
    "Format",
    "LineBatch",
    "LoadContext",
    "Table",
    "Violation",
    "context_batches",
    "first_json_line",
    "jsonl_claims",
    "run_on",
    "store_batch",
    "violation",
]
