"""Load a `*.gm.jsonl` file: one game-master response per line.

Reading raw model text is per-response Python (one regex pass, see `parser.py`); the
rows are collected per batch of lines and inserted in bulk through Arrow, and the
file's `decisions` rows are derived from them in SQL.

A line that is not a JSON object, or has no `id` or `text`, cannot be a response: it
is kept in `rejects` with an error violation (located `response <id>` when the id is
readable, else `line N`). Every other line is a record, whatever its text says.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from workbench.formats import Counts, LoadContext
from workbench.gm import rules, tables
from workbench.gm.models import ResponseLine
from workbench.gm.parser import parse
from workbench.jsonl import context_batches
from workbench.paths import game_of_file
from workbench.validation import violation
from workbench.violation import Violation

SUFFIX = ".gm.jsonl"
ENVELOPE_ESSENTIALS = ("id", "text")


@dataclass
class Outcome:
    """What one line gave: a row (None when rejected) and its violations."""

    locator: str
    violations: list[Violation] = field(default_factory=list)
    row: dict[str, Any] | None = None


def load(ctx: LoadContext) -> Counts:
    # response id -> its first line, to flag reused ids (those of earlier lines when appending)
    first_line_of = tables.first_lines(ctx.con, ctx.source_id) if ctx.appending else {}
    records = rejected = 0
    for batch in context_batches(ctx):
        rows, violations, rejects = tables.Rows(), [], []
        for index, (number, raw) in enumerate(zip(batch.numbers, batch.texts)):
            outcome = read_line(number, raw, unreadable=batch.unreadable.get(index))
            if outcome.row is None:
                rejects.append((outcome.locator, raw, number))
            else:
                outcome.violations += _reused_id(outcome.locator, outcome.row["response_id"], number, first_line_of)
                rows.add(outcome.row)
            # Located by response id: the line is said, so a cut last line can be forgotten.
            violations += [dataclasses.replace(v, line=number) for v in outcome.violations]
        rows.insert(ctx.con, ctx.source_id)
        ctx.add_violations(violations)
        ctx.add_rejects(rejects)
        records += len(rows)
        rejected += len(rejects)
    tables.derive_decisions(ctx.con, ctx.source_id, session_of(ctx.path))
    return Counts(records, rejected)


def session_of(path: Path) -> str:
    """The game id of a file: one file is one game session, within its run (the folder it
    is in: `run1/saloon-1.gm.jsonl` -> `run1/saloon-1`)."""
    return game_of_file(path, SUFFIX)


def read_line(number: int, raw: str, unreadable: str | None = None) -> Outcome:
    """Parse and check one line of a `*.gm.jsonl` file; `unreadable` says why the line
    cannot be a record at all (see `jsonl.read_line`)."""
    if unreadable:
        return _not_an_object(f"line {number}", f"a line that cannot be read ({unreadable})")
    try:
        record = json.loads(raw, parse_constant=lambda name: None)
    except json.JSONDecodeError as exc:
        return _not_an_object(f"line {number}", f"text that is not JSON ({exc.msg}, column {exc.colno})")
    except ValueError:  # Python reads an integer of at most 4,300 digits
        return _not_an_object(f"line {number}", "an integer of more digits than can be read (over 4,300)")
    except RecursionError:
        return _not_an_object(f"line {number}", "JSON nested too deeply to read")
    if not isinstance(record, dict):
        return _not_an_object(f"line {number}", f"a JSON {type(record).__name__}, not an object")
    locator = _locator(record) or f"line {number}"
    line, envelope_errors = _envelope(record)
    # An ErrorDetails is a dict, which `violation` reads.
    found = [violation(locator, cast(dict, error), error["loc"]) for error in envelope_errors]
    if line is None:
        return Outcome(locator, [_kept_in_rejects(v) for v in found])
    parsed = parse(line.text)
    values, found_in_text = rules.check(parsed, locator)
    found += found_in_text
    row = {
        "seq": number,
        "response_id": line.id,
        "ts": _utc(line.ts),
        "model": line.model,
        "kind": parsed.kind,
        "valid": not any(v.severity == "error" for v in found),
        "text": line.text,
        **values,
    }
    return Outcome(locator, found, row)


def _envelope(record: dict) -> tuple[ResponseLine | None, list[ErrorDetails]]:
    """The line's envelope, and its errors. Without a usable `id` or `text` there is no
    response (None); a bad `ts` or `model` is reported and left out."""
    try:
        return ResponseLine.model_validate(record), []
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    if any(error["loc"][0] in ENVELOPE_ESSENTIALS for error in errors):
        return None, errors
    bad = {error["loc"][0] for error in errors}
    return ResponseLine.model_validate({k: v for k, v in record.items() if k not in bad}), errors


def _locator(record: dict) -> str | None:
    rid = record.get("id")
    if isinstance(rid, (str, int)) and not isinstance(rid, bool) and str(rid).strip():
        return f"response {str(rid).strip()}"
    return None


def _utc(ts: datetime | None) -> datetime | None:
    # A timestamp without an offset is taken as UTC, like the other formats' logs.
    if ts is None or ts.tzinfo is None:
        return ts
    return ts.astimezone(UTC).replace(tzinfo=None)


def _not_an_object(locator: str, what: str) -> Outcome:
    return Outcome(
        locator,
        [
            Violation(
                locator,
                "error",
                "not_a_json_object",
                "(record)",
                f"expected one JSON object per line with `id` and `text`; found {what}; kept in `rejects`",
            )
        ],
    )


def _kept_in_rejects(found: Violation) -> Violation:
    return Violation(
        found.locator,
        found.severity,
        found.rule,
        found.field,
        f"{found.message}; the line is not a response and is kept in `rejects`",
    )


def _reused_id(locator: str, response_id: str, number: int, first_line_of: dict[str, int]) -> list[Violation]:
    first = first_line_of.setdefault(response_id, number)
    if first == number:
        return []
    return [
        Violation(
            locator,
            "warning",
            "duplicate_response_id",
            "id",
            f"expected a response id used once per file; found {response_id!r} again "
            f"(first on line {first}, again on line {number})",
        )
    ]
