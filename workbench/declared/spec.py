"""A declared format's TOML file, read and checked: every mistake said in one line that
names the file and the key."""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.paths import settings_text, text_of

# A format's name, written into its table's name (`<name>_records`).
NAME = re.compile(r"[a-z][a-z0-9_]{0,40}")
FIELDS = ("game", "turn", "player", "model", "action")
# A dotted path's key: any text but a dot; a key of digits is a list's index.
KEY = re.compile(r"[^.]+")
KEYS = {"name", "files", "file", "schema", "fields", "description"}
# Where declared formats are found, when $WORKBENCH_FORMATS does not say.
DEFAULT_FOLDER = Path("~/.config/workbench/formats")


@dataclass(frozen=True)
class Spec:
    """What a TOML file declares: the format's `name`, its files' glob, its record
    schema (a JSON Schema, as a dict), and per field the dotted path to it."""

    name: str
    files: str
    schema: dict
    fields: dict[str, str]
    path: Path
    description: str = ""
    # Fields a file's path gives (a regular expression whose named groups are fields),
    # where its lines do not: a log that names its model only in its file or folder name.
    file: re.Pattern | None = None

    @property
    def reading(self) -> str:
        """What the declaration says of how its files are read, as a digest: a file read
        under another declaration is read again."""
        said = {
            "files": self.files,
            "schema": self.schema,
            "fields": self.fields,
            "file": self.file.pattern if self.file is not None else None,
        }
        return hashlib.sha256(json.dumps(said, sort_keys=True).encode()).hexdigest()


def read_spec(path: str | os.PathLike) -> Spec:
    """The declaration in the TOML file at `path`, or one line saying what is wrong."""
    path = Path(path)
    where = text_of(path)
    if not os.fspath(path):
        raise WorkbenchError("a declared format's path is empty; give the TOML file's")
    try:  # a regular file of a settings file's size (a FIFO never blocks), a byte order mark skipped
        table = tomllib.loads(settings_text(path, "a declared format"))
    except tomllib.TOMLDecodeError as exc:
        raise WorkbenchError(f"{where} is not a TOML file: {exc}") from None
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise WorkbenchError(f"{where}: unknown key {unknown[0]!r}; a declared format has {', '.join(sorted(KEYS))}")
    name = _text(table, "name", where)
    if not NAME.fullmatch(name):
        raise WorkbenchError(
            f"{where}: name {name!r} must be lower-case letters, digits and _, starting with a "
            f"letter (at most 41), as it names the table <name>_records"
        )
    files = _text(table, "files", where)
    if "/" in files or os.sep in files:
        raise WorkbenchError(f"{where}: files {files!r} is a pattern of file names (`*.mygame.jsonl`), not a path")
    fields = table.get("fields", {})
    if not isinstance(fields, dict):
        raise WorkbenchError(f"{where}: [fields] must be a table of dotted paths ({', '.join(FIELDS)})")
    for key, dotted in fields.items():
        if key not in FIELDS:
            raise WorkbenchError(f"{where}: unknown field {key!r}; fields are {', '.join(FIELDS)}")
        if not isinstance(dotted, str) or not all(KEY.fullmatch(part) for part in dotted.split(".")):
            raise WorkbenchError(f'{where}: fields.{key} must be a dotted path such as "agent.model", got {dotted!r}')
    description = table.get("description", "")
    if not isinstance(description, str):
        raise WorkbenchError(f"{where}: description must be text")
    return Spec(name, files, _schema(table, path), dict(fields), path, description, _file(table, where))


def _file(table: dict, where: str) -> re.Pattern | None:
    """`file`: a regular expression searched in each file's path, its named groups fields."""
    given = table.get("file")
    if given is None:
        return None
    if not isinstance(given, str) or not given:
        raise WorkbenchError(f"{where}: file must be a regular expression with named groups ({', '.join(FIELDS)})")
    try:
        pattern = re.compile(given)
    except re.error as exc:
        raise WorkbenchError(f"{where}: file {given!r} is not a regular expression: {exc}") from None
    unknown = sorted(set(pattern.groupindex) - set(FIELDS))
    if unknown or not pattern.groupindex:
        raise WorkbenchError(
            f"{where}: file's named groups must be fields ({', '.join(FIELDS)}), got {', '.join(unknown) or 'none'}"
        )
    return pattern


def _text(table: dict, key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value:
        raise WorkbenchError(f"{where}: {key} must be given, as text")
    return value


def _schema(table: dict, path: Path) -> dict:
    """The JSON Schema: an inline table, or a file beside the TOML (checked against its
    draft's metaschema)."""
    from workbench.lean_imports import jsonschema

    jsonschema()  # loaded without a part it never needs
    from jsonschema import exceptions, validators

    where, given = text_of(path), table.get("schema")
    if isinstance(given, dict):
        schema = given
        _json_only(schema, where, "[schema]")
    elif isinstance(given, str) and given:
        file = path.parent / given
        try:
            schema = json.loads(settings_text(file, "a schema"))
        except WorkbenchError as exc:
            raise WorkbenchError(f"{where}: {exc}") from None
        except (ValueError, RecursionError) as exc:
            raise WorkbenchError(f"{where}: its schema {text_of(file)} is not JSON: {exc}") from None
    else:
        raise WorkbenchError(
            f"{where}: schema must be given: the path of a JSON Schema file (relative to its "
            f"folder), or a [schema] table"
        )
    if not isinstance(schema, dict):
        raise WorkbenchError(f"{where}: its schema must be a JSON object")
    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as exc:
        at = "/".join(map(str, exc.path)) or "(schema)"
        raise WorkbenchError(f"{where}: its schema is not a valid JSON Schema at {at}: {exc.message}") from None
    except (RecursionError, ValueError, TypeError) as exc:
        raise WorkbenchError(f"{where}: its schema cannot be read as a JSON Schema: {exc}") from None
    _checkable(schema, where)
    return schema


def _json_only(value, where: str, at: str) -> None:
    """An inline schema holds only what JSON can say: a TOML date or time, or a number
    that is not finite (`nan`, `inf`), would be compared with no line's value."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _json_only(inner, where, f"{at}.{key}")
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            _json_only(inner, where, f"{at}[{index}]")
    elif isinstance(value, (datetime.date, datetime.time)) or (isinstance(value, float) and not math.isfinite(value)):
        raise WorkbenchError(
            f"{where}: {at} is {value!r}, which JSON has no form of: a JSON Schema holds JSON values "
            f"(write a date as text)"
        )


# Keywords whose values are data, not schemas: a `$ref` inside one is a value.
DATA_KEYWORDS = {"enum", "const", "default", "examples"}


def registry_of(schema: dict):
    """The registry a declared schema is checked with: the schema alone. A `$ref` to
    anything outside it is never fetched (no network, no file): it is refused up front."""
    from referencing import Registry
    from referencing.exceptions import NoSuchResource

    def never(uri: str):
        raise NoSuchResource(uri)

    resource = _specification(schema).create_resource(schema)
    # referencing's attrs classes take their fields as keywords, which its stub's
    # `__dataclass_transform__` (not the standard `dataclass_transform`) hides from mypy.
    registry = Registry(retrieve=never)  # type: ignore[call-arg]
    return registry.with_resource(resource.id() or "", resource), resource


def _specification(schema: dict):
    import referencing.jsonschema

    from workbench.lean_imports import jsonschema

    jsonschema()  # loaded without a part it never needs
    from jsonschema import validators

    dialect = validators.validator_for(schema).META_SCHEMA.get("$schema", "")
    return referencing.jsonschema.specification_with(dialect, default=referencing.jsonschema.DRAFT202012)


def _checkable(schema: dict, where: str) -> None:
    """A schema that can check a line: each `$ref` resolves within it, and it does not
    refer to itself without end (`{"$ref": "#"}`). Either fault would fail every line,
    counted against the models though the declaration's."""
    from workbench.lean_imports import jsonschema

    jsonschema()  # loaded without a part it never needs
    from jsonschema import validators
    from referencing.exceptions import Unresolvable

    registry, resource = registry_of(schema)
    specification = _specification(schema)

    def visit(node, resolver, at: str) -> None:
        if isinstance(node, list):
            for index, inner in enumerate(node):
                visit(inner, resolver, f"{at}/{index}")
            return
        if not isinstance(node, dict):
            return
        here = specification.create_resource(node)
        if node is not schema and here.id() is not None:  # a subschema with an `$id` of its own: its refs' base
            resolver = resolver.in_subresource(here)
        if isinstance(node.get("$ref"), str):
            try:
                resolver.lookup(node["$ref"])
            except Unresolvable:
                raise WorkbenchError(
                    f"{where}: its schema's $ref {node['$ref']!r} at {at or '/'} does not lead to a "
                    f"part of the schema; a declared schema is checked alone (nothing is fetched)"
                ) from None
        for key, inner in node.items():
            if key not in DATA_KEYWORDS:
                visit(inner, resolver, f"{at}/{key}")

    visit(schema, registry.resolver(base_uri=resource.id() or ""), "")
    validator = validators.validator_for(schema)(schema, registry=registry)
    probes: tuple[object, ...] = ({}, [], "", 0, None)
    for probe in probes:
        try:
            for _ in validator.iter_errors(probe):
                pass
        except RecursionError:
            raise WorkbenchError(
                f"{where}: its schema refers to itself without end (a $ref that leads back to "
                f"where it is, checking nothing on the way)"
            ) from None
        except Unresolvable as exc:
            raise WorkbenchError(
                f"{where}: its schema's $ref {str(exc)!r} does not lead to a part of the schema"
            ) from None


def declared_folders() -> list[Path]:
    """The folders whose `*.toml` files declare formats: `$WORKBENCH_FORMATS` (folders
    separated by `os.pathsep`), else ~/.config/workbench/formats."""
    given = os.environ.get("WORKBENCH_FORMATS")
    if given is not None:
        return [Path(folder).expanduser() for folder in given.split(os.pathsep) if folder]
    return [DEFAULT_FOLDER.expanduser()]
