"""Load an EC4X order-draft log or bot trace: validate each batch of lines in one
pydantic-core call, insert it through DuckDB from Arrow, then derive decisions and
drift findings in SQL over the file's rows."""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from workbench.violation import Violation
from workbench.ec4x import orders, tables, trace
from workbench.ec4x.rules import DRIFT_LINES, DRIFT_MODE, DRIFT_RULES
from workbench.formats import Counts, LoadContext
from workbench.jsonl import LineBatch, context_batches, store_batch
from workbench.paths import name_without
from workbench.validation import line_count, violation

ORDERS_SUFFIX = ".orders.jsonl"


@dataclasses.dataclass(frozen=True)
class LineKind:
    """How one kind of EC4X file is read: its model, tables and derived rows."""

    name: str
    lines: TypeAdapter
    union_tags: tuple[str, ...]
    inserts: list[str]
    decisions: str


ORDER_DRAFTS = LineKind("order drafts", orders.LINES, (), [tables.INSERT_ORDERS], tables.ORDER_DECISIONS)
BOT_TRACE = LineKind("bot trace", trace.LINES, trace.LINE_TAGS,
                     [tables.INSERT_SESSIONS, tables.INSERT_TURNS], tables.TURN_DECISIONS)


def is_order_log(path: Path) -> bool:
    return path.name.endswith(ORDERS_SUFFIX)


def load(ctx: LoadContext) -> Counts:
    kind = ORDER_DRAFTS if is_order_log(ctx.path) else BOT_TRACE
    params = {"source_id": ctx.source_id}
    if kind is ORDER_DRAFTS:
        params["game_id"] = name_without(ctx.path, ORDERS_SUFFIX)
    records = rejected = 0
    drift = DriftTally.from_state(ctx.state)
    for batch in context_batches(ctx):
        found, drift_found, reject_at = check_batch(batch, kind)
        counts = store_batch(ctx, batch, found, reject_at,
                             lambda lines: tables.insert(ctx.con, kind.inserts, lines, params))
        drift.add(batch, [(i, v) for i, v in drift_found if i not in reject_at])
        records += counts.records
        rejected += counts.rejected
    ctx.state = drift.state()
    ctx.add_file_findings(drift.findings())
    if kind is BOT_TRACE:
        ctx.add_file_findings(trace_findings(ctx.con, ctx.source_id))
    ctx.con.execute(kind.decisions, {"source_id": ctx.source_id})
    ctx.con.execute(tables.LINK_DRAFT_MODELS)
    return Counts(records, rejected)


def check_batch(batch: LineBatch, kind: LineKind) -> tuple[list[Violation], list[tuple[int, Violation]],
                                                             dict[int, str]]:
    """Validate every line of the batch in one pydantic-core call, and the lines that
    hold drift in a second one.

    Returns the violations of the lines that are records, the drift findings by line
    position, and the positions of the lines that cannot be records at all (not UTF-8,
    not JSON, not an object), each with the reason.
    """
    reject_at = dict(batch.unreadable)
    context: dict = {}
    violations = []
    for index, loc, error in _errors(kind.lines, batch.texts, context, kind.union_tags):
        if index in reject_at:
            continue
        if not loc:  # the line as a whole: invalid JSON, or JSON that is not an object
            reject_at[index] = error["msg"]
            continue
        violations.append(_violation(batch.locator(index), error, loc, kind))
    drift = []
    with_drift = sorted(context.get(DRIFT_LINES, ()))
    texts = [batch.texts[i] for i in with_drift]
    for position, loc, error in _errors(kind.lines, texts, {DRIFT_MODE: True}, kind.union_tags):
        index = with_drift[position]
        if error["type"] in DRIFT_RULES and index not in reject_at:
            drift.append((index, violation(batch.locator(index), error, loc, severity="info")))
    return violations, drift, reject_at


def _errors(adapter: TypeAdapter, texts: list[str], context: dict, union_tags: tuple[str, ...]):
    try:
        adapter.validate_python(texts, context=context)
        return
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    for error in errors:
        index, *loc = error["loc"]
        if loc and loc[0] in union_tags:
            loc = loc[1:]
        yield index, tuple(loc), error


def _violation(locator: str, error: dict, loc: tuple, kind: LineKind) -> Violation:
    found = violation(locator, error, loc)
    if kind is ORDER_DRAFTS and error["type"] == "extra_forbidden":
        found = dataclasses.replace(found, message=orders.unknown_key_message(loc))
    return found


class DriftTally:
    """Drift reported once per file and kind (rule, path with indexes generalised,
    value): at the first line and path it appears on, with how many lines carry it."""

    def __init__(self):
        self._first: dict[tuple, Violation] = {}
        self._lines: dict[tuple, int] = defaultdict(int)

    def add(self, batch: LineBatch, found: list[tuple[int, Violation]]) -> None:
        seen = set()
        for _, v in found:
            key = _kind(v)
            self._first.setdefault(key, v)
            if (key, v.locator) not in seen:  # a line counts once per kind
                seen.add((key, v.locator))
                self._lines[key] += 1

    def findings(self) -> list[Violation]:
        out = []
        for key, first in self._first.items():
            count = self._lines[key]
            out.append(dataclasses.replace(first, message=f"{first.message} ({line_count(count)}, first {first.locator})"))
        return out

    def state(self) -> dict:
        """The tally as JSON, for a later append to go on from."""
        kinds = [[dataclasses.astuple(first)[:5], self._lines[key]] for key, first in self._first.items()]
        return {"kinds": sorted(kinds)}

    @classmethod
    def from_state(cls, state: dict | None) -> "DriftTally":
        tally = cls()
        for first, lines in (state or {}).get("kinds", []):
            v = Violation(*first[:5])
            tally._first[_kind(v)], tally._lines[_kind(v)] = v, lines
        return tally


def _kind(v: Violation) -> tuple:
    """A kind of drift: its rule, its path with indexes generalised, its message."""
    return v.rule, re.sub(r"\[\d+\]", "[]", v.field), v.message


def trace_findings(con, source_id: int) -> list[Violation]:
    """Drift in a bot trace: line kinds and feature tags the workbench does not know."""
    params = {"source_id": source_id}
    found = [
        Violation(f"line {first}", "info", "undocumented_kind", "kind",
                  f"kind {kind!r} is not a line the bot is known to write (only session_start); kept in "
                  f"ec4x_sessions ({line_count(count)}, first line {first})")
        for kind, count, first in con.execute(tables.OTHER_KINDS, params).fetchall()
    ]
    found += [
        Violation(f"line {first}", "info", "unmapped_feature_tag", "featureTags",
                  f"feature tag {tag!r} maps to none of the twelve feature families, so it counts for no "
                  f"family in the coverage gate ({line_count(count)}, first line {first})")
        for tag, count, first in con.execute(tables.UNMAPPED_TAGS, params).fetchall()
    ]
    return found


