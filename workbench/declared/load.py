"""A declared format as the engine takes it: its table, how a file's lines are checked
against the schema and stored, and the decisions derived from them."""

from __future__ import annotations

import fnmatch
import json
import re

from workbench.catalog import DECISIONS
from workbench.declared.spec import Spec
from workbench.formats import Counts, Format, LoadContext
from workbench.jsonl import context_batches, store_batch
from workbench.schema import Column, Table, run_on
from workbench.validation import field_path
from workbench.violation import Violation

# A schema error's message quotes the value it is about, which may be a whole record.
MESSAGE_CHARACTERS = 300
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
    check = _checker(spec.schema)

    def load(ctx: LoadContext) -> Counts:
        """Each line checked against the schema and stored with its findings; then the
        decisions of the lines read (those of earlier lines stay when the file grew)."""
        records = rejected = 0
        for batch in context_batches(ctx):
            violations, reject_at = [], dict(batch.unreadable)
            for index, text in enumerate(batch.texts):
                if index in reject_at:
                    continue
                why = check(text, batch.locator(index), violations)
                if why is not None:
                    reject_at[index] = why

            def stored(lines) -> int:
                return run_on(ctx.con, lines, insert, "lines", {"source_id": ctx.source_id})[0][0]

            counts = store_batch(ctx, batch, violations, reject_at, stored)
            records, rejected = records + counts.records, rejected + counts.rejected
        ctx.con.execute(derive, {"source_id": ctx.source_id, "first": ctx.first_line})
        return Counts(records, rejected)

    return Format(name=spec.name, tables=(table,), claims=lambda path, head: fnmatch.fnmatchcase(path.name, spec.files),
                  load=load, line_based=True, decisions_by_line=True,
                  describe=spec.description or f"declared in {spec.path.name} ({spec.files})")


def _table(spec: Spec) -> Table:
    return Table(f"{spec.name}_records", (
        Column("source_id", "BIGINT", required=True),
        Column("seq", "BIGINT", "1-based line number", required=True),
        Column("game_id", "VARCHAR", f"fields.game: {spec.fields.get('game', 'not declared')}"),
        Column("turn", "BIGINT", f"fields.turn: {spec.fields.get('turn', 'not declared')}"),
        Column("player", "VARCHAR", f"fields.player: {spec.fields.get('player', 'not declared')}"),
        Column("model", "VARCHAR", f"fields.model: {spec.fields.get('model', 'not declared')}"),
        Column("action", "VARCHAR", f"fields.action: {spec.fields.get('action', 'not declared')} (JSON text "
                                    f"where it is not text)"),
        Column("valid", "BOOLEAN", "the line meets the schema", required=True),
        Column("record", "JSON", "the line as written"),
    ), doc=f"One row per line of a {spec.name} file (declared in {spec.path.name}).")


def _fields(spec: Spec) -> str:
    """Each declared field read out of the record `j`; NULL where not declared."""
    columns = {"game": "game_id", "turn": "turn", "player": "player", "model": "model", "action": "action"}
    read = []
    for field, column in columns.items():
        dotted = spec.fields.get(field)
        if dotted is None:
            read.append(f"NULL AS {column}")
            continue
        value = f"json_extract_string(j, {_literal(_json_path(dotted))})"
        read.append(f"TRY_CAST({value} AS BIGINT) AS {column}" if column == "turn" else f"{value} AS {column}")
    return ", ".join(read)


def _json_path(dotted: str) -> str:
    """`agent.model` -> `$."agent"."model"`; a key of digits is a list's index (`moves.0`)."""
    path = "$"
    for key in dotted.split("."):
        path += f"[{key}]" if key.isdigit() else '."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return path


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _checker(schema: dict):
    """`check(text, locator, violations)`: the line's schema errors added to
    `violations`; why it is rejected (not a JSON object), or None."""
    from jsonschema import validators

    validator = validators.validator_for(schema)(schema)

    def check(text: str, locator: str, violations: list[Violation]) -> str | None:
        try:
            record = json.loads(text)
        except (ValueError, RecursionError) as exc:
            return f"not JSON: {exc}"
        if not isinstance(record, dict):
            return "not a JSON object"
        try:
            errors = list(validator.iter_errors(record))
        except (RecursionError, ValueError, TypeError, re.error) as exc:
            violations.append(Violation(locator, "error", "schema", "(record)",
                                        f"the schema could not be checked on this line: {exc}"[:MESSAGE_CHARACTERS]))
            return None
        for error in errors:
            where = list(error.absolute_path)
            missing = REQUIRED.match(error.message) if error.validator == "required" else None
            if missing:
                where.append(missing.group(1))
            violations.append(Violation(locator, "error", str(error.validator), field_path(where),
                                        _short(error.message)))
        return None

    return check


def _short(message: str) -> str:
    return message if len(message) <= MESSAGE_CHARACTERS else message[:MESSAGE_CHARACTERS - 1] + "…"
