"""Load an Agent Arena reasoning trace (`traces/<episode_id>.jsonl`): validate each batch
of lines in one pydantic-core call, insert the records and their steps through DuckDB
from Arrow, then find drift in SQL over the file's rows.

The real runtime's trace store writes one file per episode into its `traces` folder,
one line per traced tick, appending as the episode runs; a trace file is recognised by
that place, or anywhere by the keys of its first record.
"""

from __future__ import annotations

from pathlib import Path

from workbench.arena import drift, reader, tables
from workbench.arena.models import TRACE_LINES
from workbench.formats import Counts, LoadContext, first_json_line
from workbench.jsonl import LineBatch, check_lines, store_batches
from workbench.paths import name_without
from workbench.validation import violation
from workbench.violation import Violation

SUFFIX = ".jsonl"
FOLDER = "traces"
TRACE_SIGNATURE = {"agent_id", "tick", "episode_id", "start_time", "steps"}
HEAD_BYTES = 64 * 1024


def episode_of(path) -> str:
    return name_without(path, SUFFIX)


def is_trace(path: Path, head: bytes) -> bool:
    """A trace: its first record carries a trace's keys; or it is a plain
    `<episode_id>.jsonl` in a `traces` folder whose first line is no decision (a cut or
    broken first line included). A name with another suffix before `.jsonl` is some
    other log kept there; a decision log is known by its name first."""
    if path.name.endswith(reader.SUFFIX):
        return False
    first = first_json_line(head)
    keys = first.keys() if first is not None else set()
    if TRACE_SIGNATURE <= keys:
        return True
    return path.parent.name == FOLDER and path.suffixes == [SUFFIX] and not reader.DECISION_SIGNATURE <= keys


def is_trace_file(path: Path) -> bool:
    with open(path, "rb") as handle:
        return is_trace(path, handle.read(HEAD_BYTES))


def load(ctx: LoadContext) -> Counts:
    params = {"source_id": ctx.source_id, "episode": episode_of(ctx.path)}
    counts = store_batches(ctx, check_batch, lambda lines: tables.insert_traces(ctx.con, lines, params))
    # Drift is counted over all the file's rows, so an append reports it again whole.
    ctx.add_file_findings(drift.trace_findings(ctx.con, params))
    return counts


def check_batch(batch: LineBatch) -> tuple[list[Violation], dict[int, str]]:
    """Validate the batch's lines (see `jsonl.check_lines`)."""
    return check_lines(batch, TRACE_LINES, lambda locator, error, loc: violation(locator, *_pointed(error, loc)))


def _pointed(error: dict, loc: tuple) -> tuple[dict, tuple]:
    """A rule that names the step it is about (`3.tick`) points the location at it,
    the step's position as a list index (`steps[3].tick`)."""
    context = error.get("ctx") or {}
    if "field" not in context:
        return error, loc
    parts = tuple(int(part) if part.isdigit() else part for part in context["field"].split("."))
    return {**error, "ctx": {k: v for k, v in context.items() if k != "field"}}, (*loc, *parts)
