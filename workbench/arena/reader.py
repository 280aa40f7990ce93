"""Load an Agent Arena decision log: validate each batch of lines in one pydantic-core
call, insert it through DuckDB from Arrow, then derive in SQL the outcomes the lines
read set or change, their decisions, and the drift findings over the file's rows."""

from __future__ import annotations

import dataclasses

from workbench.arena import drift, tables
from workbench.arena.models import LINE_TAGS, LINES, unknown_param_message
from workbench.formats import Counts, LoadContext
from workbench.jsonl import LineBatch, check_lines, store_batches
from workbench.paths import game_of_file, name_without
from workbench.validation import violation
from workbench.violation import Violation

SUFFIX = ".decisions.jsonl"
# The keys that make a JSONL file a decision log whatever its name.
DECISION_SIGNATURE = {"agent_id", "tick", "tool", "params"}


def episode_of(path) -> str:
    return name_without(path, SUFFIX)


def load(ctx: LoadContext) -> Counts:
    params = {"source_id": ctx.source_id, "episode": episode_of(ctx.path)}
    counts = store_batches(ctx, check_batch, lambda lines: tables.insert(ctx.con, lines, params))
    # A new line can carry the result of the action before it: the outcomes of earlier
    # lines may change. Decisions are the lines read.
    tables.derive(
        ctx.con,
        ctx.source_id,
        ctx.first_line,
        whole=not ctx.appending or ctx.forgot_cut_line,
        game_id=game_of_file(ctx.path, SUFFIX),
    )
    ctx.add_file_findings(drift.findings(ctx.con, ctx.source_id))
    return counts


def check_batch(batch: LineBatch) -> tuple[list[Violation], dict[int, str]]:
    """Validate the batch's lines (see `jsonl.check_lines`)."""
    return check_lines(batch, LINES, _found_at)


def _found_at(locator: str, error: dict, loc: tuple) -> Violation:
    # A tool's own tag leads the location; an unknown parameter's message names the tool's.
    if loc[0] not in LINE_TAGS:
        return violation(locator, error, tuple(loc))
    tool, loc = loc[0], loc[1:]
    found = violation(locator, error, tuple(loc))
    if error["type"] == "extra_forbidden" and loc[:1] == ("params",):
        found = dataclasses.replace(found, message=unknown_param_message(tool, str(loc[-1])))
    return found
