"""Load an Agent Arena decision log: validate each batch of lines in one pydantic-core
call, insert it through DuckDB from Arrow, then derive outcomes, decisions and drift
findings in SQL over the file's rows."""

from __future__ import annotations

import dataclasses

from pydantic import ValidationError

from workbench.arena import drift, tables
from workbench.arena.models import LINE_TAGS, LINES, unknown_param_message
from workbench.violation import Violation
from workbench.formats import Counts, LoadContext
from workbench.jsonl import LineBatch, context_batches, store_batch
from workbench.paths import name_without
from workbench.validation import violation

SUFFIX = ".decisions.jsonl"


def episode_of(path) -> str:
    return name_without(path, SUFFIX)


def load(ctx: LoadContext) -> Counts:
    params = {"source_id": ctx.source_id, "episode": episode_of(ctx.path)}
    records = rejected = 0
    for batch in context_batches(ctx):
        found, reject_at = check_batch(batch)
        counts = store_batch(ctx, batch, found, reject_at, lambda lines: tables.insert(ctx.con, lines, params))
        records += counts.records
        rejected += counts.rejected
    # Outcomes, decisions and drift are derived over all the file's rows: a new line
    # can carry the result of the action before it.
    if ctx.appending:
        tables.forget_outcomes(ctx.con, ctx.source_id)
    tables.derive(ctx.con, ctx.source_id)
    ctx.add_file_findings(drift.findings(ctx.con, ctx.source_id))
    return Counts(records, rejected)


def check_batch(batch: LineBatch) -> tuple[list[Violation], dict[int, str]]:
    """Validate every line of the batch in one pydantic-core call.

    Returns the violations of the lines that are records, and the positions of the
    lines that cannot be records at all (not UTF-8, not JSON, not an object), each
    with the reason.
    """
    reject_at = dict(batch.unreadable)
    violations: list[Violation] = []
    try:
        LINES.validate_python(batch.texts)
        return violations, reject_at
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    for error in errors:
        index, *loc = error["loc"]
        if index in reject_at:
            continue
        if not loc:  # the line as a whole: invalid JSON, or JSON that is not an object
            reject_at[index] = error["msg"]
            continue
        tool, loc = (loc[0], loc[1:]) if loc[0] in LINE_TAGS else (None, loc)
        found = violation(batch.locator(index), error, tuple(loc))
        if error["type"] == "extra_forbidden" and loc[:1] == ["params"]:
            found = dataclasses.replace(found, message=unknown_param_message(tool, str(loc[-1])))
        violations.append(found)
    return violations, reject_at
