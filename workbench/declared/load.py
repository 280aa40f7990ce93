"""A declared format as the engine takes it: its table, how a file's lines are checked
against the schema and stored, and the decisions derived from them."""

from __future__ import annotations

import fnmatch
import json
import re
import signal
import threading

from workbench.catalog import DECISIONS
from workbench.declared.spec import Spec, registry_of
from workbench.errors import UnreadableFile, first_line
from workbench.formats import Counts, Format, LoadContext
from workbench.jsonl import context_batches, store_batch
from workbench.paths import text_of
from workbench.schema import Column, Table, run_on
from workbench.validation import field_path
from workbench.violation import Violation

# A schema error's message quotes the value it is about, which may be a whole record.
MESSAGE_CHARACTERS = 300
# A line checked for longer is left unchecked, said on it: a schema's `pattern` (or the
# `file` expression) that backtracks without end must not stop the run.
CHECK_SECONDS = 2.0
# What a turn may be: a whole number a BIGINT holds.
LOWEST, HIGHEST = -(2**63), 2**63 - 1
REQUIRED = re.compile(r"^'(.+)' is a required property$")


def declared_format(spec: Spec) -> Format:
    """The format `spec` declares."""
    table = _table(spec)
    insert = table.insert(f"""
        SELECT $source_id AS source_id, seq, {_fields(spec)}, valid, j AS record
        FROM (SELECT seq, valid, TRY_CAST(raw AS JSON) AS j FROM lines) WHERE json_type(j) = 'OBJECT'
    """)
    derive = DECISIONS.insert(f"""
        SELECT source_id, '{spec.name}' AS format, game_id, turn, player AS agent_id, model, action, valid,
               'line ' || seq AS locator
        FROM {table.name} WHERE source_id = $source_id AND seq >= $first
    """)
    check = _checker(spec)

    def load(ctx: LoadContext) -> Counts:
        """Each line checked against the schema and stored with its findings; then the
        decisions of the lines read (those of earlier lines stay when the file grew)."""
        records = rejected = 0
        named = _named_by_the_path(spec, ctx.path)
        for batch in context_batches(ctx):
            violations: list[Violation] = []
            reject_at = dict(batch.unreadable)
            with _Bound(CHECK_SECONDS) as bound:
                for index, text in enumerate(batch.texts):
                    if index in reject_at:
                        continue
                    why = check(text, batch.locator(index), violations, bound)
                    if why is not None:
                        reject_at[index] = why

            def stored(lines) -> int:
                return run_on(ctx.con, lines, insert, "lines", {"source_id": ctx.source_id, **named})[0][0]

            counts = store_batch(ctx, batch, violations, reject_at, stored)
            records, rejected = records + counts.records, rejected + counts.rejected
        ctx.con.execute(derive, {"source_id": ctx.source_id, "first": ctx.first_line})
        return Counts(records, rejected)

    return Format(
        name=spec.name,
        tables=(table,),
        claims=lambda path, head: fnmatch.fnmatchcase(path.name, spec.files),
        load=load,
        line_based=True,
        decisions_by_line=True,
        reading=spec.reading,
        describe=spec.description or f"declared in {text_of(spec.path.name)} ({spec.files})",
    )


def _table(spec: Spec) -> Table:
    return Table(
        f"{spec.name}_records",
        (
            Column("source_id", "BIGINT", required=True),
            Column("seq", "BIGINT", "1-based line number", required=True),
            Column("game_id", "VARCHAR", _said(spec, "game")),
            Column("turn", "BIGINT", _said(spec, "turn")),
            Column("player", "VARCHAR", _said(spec, "player")),
            Column("model", "VARCHAR", _said(spec, "model")),
            Column("action", "VARCHAR", _said(spec, "action") + " (JSON text where it is not text)"),
            Column("valid", "BOOLEAN", "the line meets the schema", required=True),
            Column("record", "JSON", "the line as written"),
        ),
        doc=f"One row per line of a {spec.name} file (declared in {text_of(spec.path.name)}).",
    )


COLUMNS = {"game": "game_id", "turn": "turn", "player": "player", "model": "model", "action": "action"}


def _said(spec: Spec, field: str) -> str:
    """Where a column's value comes from, for the table's documentation."""
    where = [f"fields.{field}: {spec.fields[field]}"] if field in spec.fields else []
    if spec.file is not None and field in spec.file.groupindex:
        where.append("the file's path")
    return ", else ".join(where) or "not declared"


def _fields(spec: Spec) -> str:
    """Each declared field read out of the record `j`, else from the file's path
    (`$file_<field>`, `_named_by_the_path`); NULL where neither gives it."""
    read = []
    for field, column in COLUMNS.items():
        dotted = spec.fields.get(field)
        value = f"${'file_' + field}"
        if column == "turn":  # a whole number as written (a line's other turn is a finding: `_turn_finding`)
            value = f"TRY_CAST({value} AS BIGINT)"
            if dotted is not None:
                at = _literal(_json_path(dotted))
                value = (
                    f"CASE WHEN json_type(j, {at}) IN ('BIGINT', 'UBIGINT') THEN TRY_CAST(json_extract_string("
                    f"j, {at}) AS BIGINT) WHEN json_type(j, {at}) IS NULL OR json_type(j, {at}) = 'NULL' "
                    f"THEN {value} END"
                )
        elif dotted is not None:
            value = f"coalesce(json_extract_string(j, {_literal(_json_path(dotted))}), {value})"
        read.append(f"{value} AS {column}")
    return ", ".join(read)


def _named_by_the_path(spec: Spec, path) -> dict[str, str | None]:
    """The fields the spec's `file` expression finds in the file's path as `sources.path`
    holds it, absolute with links followed, wherever the command ran from
    (`$file_<field>`); a byte of a name that is not UTF-8 as `\\xNN`."""
    if spec.file is None:
        return dict.fromkeys((f"file_{field}" for field in COLUMNS), None)
    try:
        with _Bound(CHECK_SECONDS) as bound:
            found = bound.run(lambda: spec.file.search(path.resolve().as_posix()))
    except _TooLong:
        raise UnreadableFile(
            f"{spec.path.name}: its file expression took more than {CHECK_SECONDS:g} s on this "
            f"file's path (it backtracks without end)"
        ) from None
    return {f"file_{field}": (_text(found.groupdict().get(field)) if found else None) for field in COLUMNS}


def _text(value: str | None) -> str | None:
    """Text a database holds: a name's bytes that are not UTF-8 (held as surrogates) as `\\xNN`."""
    return None if value is None else value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _json_path(dotted: str) -> str:
    """`agent.model` -> `$."agent"."model"`; a key of digits is a list's index (`moves.0`)."""
    path = "$"
    for key in dotted.split("."):
        path += f"[{key}]" if key.isdigit() else '."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return path


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _checker(spec: Spec):
    """`check(text, locator, violations, bound)`: the line's schema errors (and a turn that is
    not a whole number) added to `violations`; why it is rejected (not a JSON object),
    or None."""
    from workbench.lean_imports import jsonschema

    jsonschema()  # loaded without a part it never needs
    from jsonschema import validators

    validator = validators.validator_for(spec.schema)(spec.schema, registry=registry_of(spec.schema)[0])
    turn = spec.fields.get("turn")

    def check(text: str, locator: str, violations: list[Violation], bound: _Bound) -> str | None:
        try:
            record = json.loads(text)
        except (ValueError, RecursionError) as exc:
            return f"not JSON: {exc}"
        if not isinstance(record, dict):
            return "not a JSON object"
        if turn is not None:
            violations.extend(_turn_finding(record, turn, locator))
        try:
            errors = bound.run(lambda: list(validator.iter_errors(record)))
        except _TooLong:
            violations.append(
                _unchecked(
                    locator,
                    f"the schema could not be checked on this line within {CHECK_SECONDS:g} s (a pattern that "
                    f"backtracks without end?)",
                )
            )
            return None
        except Exception as exc:  # the schema's own fault, which reading it did not show: said per line
            violations.append(
                _unchecked(locator, _short(f"the schema could not be checked on this line: {first_line(exc)}"))
            )
            return None
        for error in errors:
            where = list(error.absolute_path)
            missing = REQUIRED.match(error.message) if error.validator == "required" else None
            if missing:
                where.append(missing.group(1))
            violations.append(
                Violation(locator, "error", str(error.validator), field_path(where), _short(error.message))
            )
        return None

    return check


def _turn_finding(record: dict, dotted: str, locator: str) -> list[Violation]:
    """A finding where the line's turn is there but not a whole number a BIGINT holds
    (stored as NULL, never rounded or cut)."""
    value, parts = record, []
    for key in dotted.split("."):
        if isinstance(value, dict) and key in value:
            value = value[key]
            parts.append(key)
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
            parts.append(int(key))
        else:
            return []
    where = field_path(parts)
    if value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, int):
        return [Violation(locator, "error", "int_type", where, _short(f"a whole number was expected, got {value!r}"))]
    if value > HIGHEST:
        return [Violation(locator, "error", "less_than_equal", where, f"a turn of at most {HIGHEST} was expected")]
    if value < LOWEST:
        return [Violation(locator, "error", "greater_than_equal", where, f"a turn of at least {LOWEST} was expected")]
    return []


class _TooLong(Exception):
    """A check ran past its time."""


class _Bound:
    """Work each run within `seconds` (`run`), else _TooLong: the alarm's handler is set
    once, as the bound is entered (a file's load), and only the timer per run (a line).
    Where no signal can land (not the main thread), the work runs unbounded."""

    def __init__(self, seconds: float):
        self.seconds, self.running = seconds, False

    def __enter__(self) -> _Bound:
        self.active = threading.current_thread() is threading.main_thread()
        if self.active:
            self.previous = signal.signal(signal.SIGALRM, self._late)
        return self

    def __exit__(self, *exc) -> None:
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)

    def _late(self, signum, frame) -> None:
        if self.running:  # not a signal that came as the work ended
            raise _TooLong

    def run(self, work):
        if not self.active:
            return work()
        self.running = True
        signal.setitimer(signal.ITIMER_REAL, self.seconds)
        try:
            return work()
        finally:
            self.running = False
            signal.setitimer(signal.ITIMER_REAL, 0)


def _unchecked(locator: str, message: str) -> Violation:
    """A line the schema could not be checked on: an error of the whole record."""
    return Violation(locator, "error", "schema", "(record)", message)


def _short(message: str) -> str:
    return message if len(message) <= MESSAGE_CHARACTERS else message[: MESSAGE_CHARACTERS - 1] + "…"
