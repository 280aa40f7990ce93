"""Tables declared once, as data: every table of the package, shared or per format.

A `Column` is a name, a DuckDB type (its Arrow type follows), a doc and, for a column
read out of a record, the `path` of its value in the record as written. A `Table` is
its columns plus the pydantic model its records are validated with. From a `Table`
come its DDL, the Arrow schema of bulk inserts, inserts that name their columns, and
the SQL that reads each column out of a JSON record. When a table is declared, every
path is checked against the model, so renaming a field in a model fails at import with
a message naming the column that reads it.
"""

from __future__ import annotations

import builtins
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Annotated, Any

import duckdb
import pyarrow as pa
from pydantic import Field

from workbench.errors import is_interrupt

ARROW_TYPES = {
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "VARCHAR": pa.string(),
    "JSON": pa.string(),  # JSON text; cast to JSON on insert
    "TIMESTAMP": pa.timestamp("us"),
    "VARCHAR[]": pa.list_(pa.string()),
    "BIGINT[]": pa.list_(pa.int64()),
    "DOUBLE[]": pa.list_(pa.float64()),
}


class SchemaError(Exception):
    """A table declaration that does not match its model (raised at import)."""


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # DuckDB type, one of ARROW_TYPES
    doc: str = ""
    # Where the value is in a record, as written: keys joined by `.`, `[]` for each
    # element of a list (`trace[].stage`). None: the loader computes the value.
    path: str | None = None
    required: bool = False  # NOT NULL
    primary_key: bool = False
    default: str | None = None  # SQL expression
    check: str | None = None  # SQL condition
    # Read the value's text and cast it (`"703.8"` -> 703.8, `7` -> '7') instead of
    # giving NULL for a value of another JSON type: for figures a notebook shows,
    # where a writer's wrong type is already reported and the value is still useful.
    lenient: bool = False
    # The models that must each hold `path` (the table's model is a union of record
    # types: a column read from one of them names it, so a rename there is caught).
    of: tuple = ()

    def __post_init__(self) -> None:
        if self.type not in ARROW_TYPES:
            raise SchemaError(f"column {self.name}: unknown type {self.type}; one of {', '.join(ARROW_TYPES)}")

    @property
    def arrow(self) -> pa.DataType:
        return ARROW_TYPES[self.type]

    def ddl(self) -> str:
        text = f"{self.name} {self.type}"
        if self.type == "JSON":
            # A JSON column holds records as written, the bulk of a database: zstd writes
            # them at a commit faster than DuckDB's default string compression, and
            # smaller (docs/performance.md).
            text += " USING COMPRESSION zstd"
        if self.primary_key:
            text += " PRIMARY KEY"
        if self.required:
            text += " NOT NULL"
        if self.default:
            text += f" DEFAULT {self.default}"
        if self.check:
            text += f" CHECK ({self.check})"
        return text

    def read_from(self, record: str = "j") -> str:
        """SQL for the value at `path` in the JSON `record`; NULL where the value has
        another JSON type (its violation is recorded), never a cast that fails the file."""
        if self.path is None:
            raise SchemaError(f"column {self.name} has no path to read")
        if "[]" in self.path:
            head, _, rest = self.path.partition("[]")
            each = f"'$.{head}[*]{rest}'"
            if self.type == "VARCHAR[]":
                return f"json_extract_string({record}, {each})"
            if self.type.endswith("[]"):
                return f"TRY_CAST(json_extract({record}, {each}) AS {self.type})"
            # A number summed over the list (`trace[].llmRequestMs` -> their total).
            return f"list_sum(TRY_CAST(json_extract({record}, {each}) AS {self.type}[]))"
        value = f"json_extract({record}, '{json_path(self.path)}')"
        return self.typed(value)

    def typed(self, value: str) -> str:
        """The JSON `value` as this column's type (see `lenient`)."""
        if self.lenient and self.type in ("VARCHAR", "DOUBLE", "BIGINT", "BOOLEAN"):
            text = f"json_extract_string({value}, '$')"
            return text if self.type == "VARCHAR" else f"TRY_CAST({text} AS {self.type})"
        return typed(value, self.type)


def json_path(path: str) -> str:
    """`payload.action.kind` -> `$."payload"."action"."kind"` (keys quoted: any name works)."""
    return "$." + ".".join(f'"{key}"' for key in path.split("."))


def values_at(record: str, paths: Iterable[str]) -> str:
    """SQL: the values at the dotted `paths` in the JSON `record`, as a list read in one parse."""
    return f"json_extract({record}, {sql_literal([json_path(p) for p in paths])})"


def once(expr: str) -> str:
    """SQL: `expr`, computed once per row even where a filter on its value follows.
    DuckDB pushes such a filter below the projection that computes the value by
    copying the expression into it, so a JSON parse filtered on would run twice; no
    filter passes an UNNEST. (Damage's insert: 0.88 -> 0.66 CPU-s per 300k lines.)"""
    return f"unnest([{expr}])"


def read_values(values: str, columns: Iterable[Column]) -> str:
    """`<value> AS <column>, ...`: each column's value out of the list `values` (see
    `values_at`), whose first items are the columns' paths, in order."""
    return ", ".join(f"{c.typed(f'{values}[{n}]')} AS {c.name}" for n, c in enumerate(columns, 1))


def typed(expr: str, duck_type: str) -> str:
    """The JSON value `expr` as `duck_type`, NULL when it has another JSON type."""
    if duck_type == "BIGINT":
        return f"CASE WHEN json_type({expr}) IN ('UBIGINT', 'BIGINT') THEN TRY_CAST({expr} AS BIGINT) END"
    if duck_type == "DOUBLE":
        return f"CASE WHEN json_type({expr}) IN ('UBIGINT', 'BIGINT', 'DOUBLE') THEN TRY_CAST({expr} AS DOUBLE) END"
    if duck_type == "BOOLEAN":
        return f"CASE WHEN json_type({expr}) = 'BOOLEAN' THEN TRY_CAST({expr} AS BOOLEAN) END"
    if duck_type == "VARCHAR":
        return f"CASE WHEN json_type({expr}) = 'VARCHAR' THEN json_extract_string({expr}, '$') END"
    if duck_type == "TIMESTAMP":
        return f"TRY_CAST(TRY_CAST({typed(expr, 'VARCHAR')} AS TIMESTAMPTZ) AS TIMESTAMP)"
    if duck_type.endswith("[]"):
        return f"CASE WHEN json_type({expr}) = 'ARRAY' THEN TRY_CAST({expr} AS {duck_type}) END"
    return expr  # JSON: as written


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    doc: str = ""
    # The pydantic model (or union of models) a record of this table is validated with;
    # every column `path` must name a field of it.
    model: Any = None
    # For fields the model leaves untyped (`payload: Any`): the models they may hold.
    within: Mapping[str, Any] = field(default_factory=dict)
    unique: tuple[str, ...] = ()
    temporary: bool = False
    # Columns added after the table was first released: older databases get them.
    added: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = [c.name for c in self.columns]
        if len(set(names)) != len(names):
            raise SchemaError(f"table {self.name}: a column is declared twice")
        for column in self.columns:
            if column.path is not None:
                if self.model is None:
                    raise SchemaError(
                        f"column {self.name}.{column.name} reads `{column.path}` but the table "
                        f"names no model to check it against"
                    )
                for model in (self.model, *column.of):
                    check_paths(model, {f"{self.name}.{column.name}": column.path}, "column", self.within)
                    problem = (
                        unbounded_integer(model, column.path, self.within) if column.type in INTEGER_TYPES else None
                    )
                    if problem:
                        raise SchemaError(f"column {self.name}.{column.name}: {problem}")

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(f"{self.name} has no column {name}")

    @cached_property
    def arrow_schema(self) -> pa.Schema:
        return pa.schema([(c.name, c.arrow) for c in self.columns])

    def ddl(self) -> str:
        entries = [(c.ddl(), c.doc) for c in self.columns]
        if self.unique:
            entries.append((f"UNIQUE ({', '.join(self.unique)})", ""))
        lines = []
        for number, (text, doc) in enumerate(entries, 1):
            comma = "," if number < len(entries) else ""
            lines.append(f"    {text}{comma}" + (f"  -- {doc}" if doc else ""))
        kind = "TEMP TABLE" if self.temporary else "TABLE"
        ddl = f"CREATE {kind} IF NOT EXISTS {self.name} (\n" + "\n".join(lines) + "\n);\n"
        for name in self.added:
            ddl += f"ALTER TABLE {self.name} ADD COLUMN IF NOT EXISTS {self.column(name).ddl()};\n"
        return ddl

    def insert(self, select: str) -> str:
        """INSERT of a SELECT whose output columns are matched to this table's by name:
        a column the SELECT does not name is NULL (or its default), one this table does
        not have is an error."""
        return f"INSERT INTO {self.name} BY NAME {select}"

    def select_paths(self, record: str = "j", names: list[str] | None = None) -> str:
        """`<value> AS <column>, ...` for the columns read out of the JSON `record`."""
        chosen = [self.column(n) for n in names] if names is not None else [c for c in self.columns if c.path]
        return ", ".join(f"{c.read_from(record)} AS {c.name}" for c in chosen)

    def insert_rows(self, con: duckdb.DuckDBPyConnection, rows: pa.Table | Mapping[str, list]) -> None:
        """Bulk insert of column lists (any subset of the columns, in any order)."""
        if not isinstance(rows, pa.Table):
            rows = pa.table(
                {name: values for name, values in rows.items()},
                schema=pa.schema([self.arrow_schema.field(name) for name in rows]),
            )
        if not rows.num_rows:
            return
        selected = ", ".join(
            f"CAST({name} AS JSON) AS {name}" if self.column(name).type == "JSON" else name
            for name in rows.column_names
        )
        run_on(con, rows, f"{self.insert(f'SELECT {selected} FROM rows')}", name="rows")


def run_on(
    con: duckdb.DuckDBPyConnection, table: pa.Table, sql: str, name: str, params: Mapping[str, Any] | None = None
) -> list[tuple]:
    """Run `sql`, which reads the Arrow `table` under `name`, and return all its rows.

    DuckDB looks a table name it does not know up in the namespace of the Python code
    that runs the statement. The statement runs here in a namespace that holds only
    `table`, under `name`: the binding is explicit, nothing else can be picked up, and
    it ends with the statement, so a batch is not kept in memory until the file's
    transaction ends (as a registered view would be). `params` are prepared-statement
    parameters (`$source_id`). It is planned once, where a relation is planned twice
    (see `relation_on`; docs/performance.md).
    """
    return _bound(_ROWS, con, table, sql, name, params)


def relation_on(
    con: duckdb.DuckDBPyConnection, table: pa.Table, sql: str, name: str, params: Mapping[str, Any] | None = None
) -> duckdb.DuckDBPyRelation:
    """The SELECT `sql` over `table` (bound as in `run_on`) as a relation, for reading
    it as Arrow without DuckDB's warning on an Arrow read of a DB-API result. A
    relation plans its SELECT twice, when made and when read; a statement whose rows
    are read as tuples takes `run_on`."""
    return _bound(_RELATION, con, table, sql, name, params)


# Every name a statement of the core reads a bound table under (`run_on`); a format
# adds its loader's own (`Format.bound_names`, `bound_names()`). DuckDB looks in Python
# only for a name its catalog does not hold: a table or view of the database by one of
# these names would be read instead, so an ingest refuses a database that holds one
# (`catalog.create_schema`). None starts with `_`, the namespace's own names.
BOUND_NAMES = frozenset({"rows", "lines", "refused", "marked", "invalid"})
_BOUND_BY_FORMATS: set[str] = set()


def bind_names(names: Iterable[str]) -> None:
    """Let statements bind batches under `names` (a format's, as its `Format` is made)."""
    for name in names:
        if name.startswith("_") or not name.isidentifier():
            raise ValueError(f"a batch is bound under a plain name not starting with _, not {name!r}")
        _BOUND_BY_FORMATS.add(name)


def bound_names() -> frozenset[str]:
    """Every name a batch may be bound under: the core's and the formats' made so far."""
    return BOUND_NAMES | _BOUND_BY_FORMATS


def _bound(
    code: types.CodeType,
    con: duckdb.DuckDBPyConnection,
    table: pa.Table,
    sql: str,
    name: str,
    params: Mapping[str, Any] | None,
):
    """Run `code` (`_ROWS` or `_RELATION`) in a namespace of its own holding
    only `table`, under `name` (see `run_on`)."""
    if name not in BOUND_NAMES and name not in _BOUND_BY_FORMATS:
        raise ValueError(f"a table is bound under a name of schema.BOUND_NAMES or a Format's bound_names, not {name!r}")
    # DuckDB may import a module while it runs the statement, which needs builtins there.
    namespace = {"__builtins__": builtins, "_con": con, "_sql": sql, "_params": dict(params or {}), name: table}
    try:
        return types.FunctionType(code, namespace)()
    except duckdb.Error as exc:
        # DuckDB runs Python code to find and read `table`: a Ctrl-C there comes back as
        # an error naming it, or, in the lookup, as no table of that name (bound above).
        if is_interrupt(exc) or f"Table with name {name} does not exist" in str(exc):
            raise KeyboardInterrupt from None
        raise


def _rows():
    # Runs with a namespace of its own as globals (see run_on): the names are bound there.
    return _con.execute(_sql, _params).fetchall()  # noqa: F821


def _relation():
    # As `_rows`, made into a relation.
    return _con.sql(_sql, params=_params)  # noqa: F821


_ROWS = _rows.__code__
_RELATION = _relation.__code__


def sql_literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(sql_literal(v) for v in value) + "]"
    raise TypeError(f"no SQL literal for {type(value).__name__}")


# -- checking a path against a pydantic model -------------------------------------------


def check_paths(model: Any, paths: Mapping[str, str], what: str, within: Mapping[str, Any] | None = None) -> None:
    """Raise (at import) when one of `paths` (name -> path) is not a field of `model`:
    the check of every column path, and of paths a module reads outside a table."""
    for name, path in paths.items():
        problem = missing_field(model, path, within)
        if problem:
            raise SchemaError(f"{what} {name} reads `{path}`: {problem}")


def missing_field(model: Any, path: str, within: Mapping[str, Any] | None = None) -> str | None:
    """None when `path` names a field of `model` (through lists, optionals and unions:
    a union holds the path when any of its members does); else what is missing."""
    keys = path.replace("[]", "").split(".")
    return _walk([model], keys, within or {}, "")


def _walk(types_: list, keys: list[str], within: Mapping[str, Any], seen: str) -> str | None:
    if not keys:
        return None
    key, rest = keys[0], keys[1:]
    here = f"{seen}.{key}" if seen else key
    models = [t for t in _flatten(types_) if _is_model(t)]
    if not models:
        return f"`{seen or '(record)'}` is not an object with fields"
    found = []
    for model in models:
        for name, info in model.model_fields.items():
            if key in (name, info.alias, info.validation_alias):
                annotation = info.annotation
                if annotation is Any or annotation is object:
                    annotation = within.get(here, Any)
                found.append(annotation)
    if not found:
        owners = ", ".join(sorted({m.__name__ for m in models}))
        return f"no field `{key}` in {owners}"
    if any(t is Any for t in found):
        return None  # an untyped value: nothing below it can be checked
    return _walk(found, rest, within, here)


INT64 = (-(2**63), 2**63 - 1)
INTEGER_TYPES = ("BIGINT", "BIGINT[]")
# An int a BIGINT column stores: a larger one breaks its record's rule, as any value out
# of its range does, and its line is kept; DuckDB would make it NULL.
Int64 = Annotated[int, Field(ge=INT64[0], le=INT64[1])]


def unbounded_integer(model: Any, path: str, within: Mapping[str, Any] | None = None) -> str | None:
    """For a column stored as BIGINT: None when every integer the field at `path` may
    hold is bounded to BIGINT's range by its model (a larger one is then a violation of
    its own, not a value DuckDB turns into NULL); else the field that is not."""
    keys = path.replace("[]", "").split(".")
    for info in _field_infos([model], keys, within or {}, ""):
        for _, metadata in _integers(info.annotation, list(info.metadata)):
            low = max(
                [m.ge for m in metadata if hasattr(m, "ge") and m.ge is not None]
                + [m.gt + 1 for m in metadata if hasattr(m, "gt") and m.gt is not None],
                default=None,
            )
            high = min(
                [m.le for m in metadata if hasattr(m, "le") and m.le is not None]
                + [m.lt - 1 for m in metadata if hasattr(m, "lt") and m.lt is not None],
                default=None,
            )
            if low is None or high is None or low < INT64[0] or high > INT64[1]:
                return f"`{path}` is an int not bounded to [-2**63, 2**63 - 1] (use schema.Int64)"
    return None


def _field_infos(types_: list, keys: list[str], within: Mapping[str, Any], seen: str) -> list:
    """The FieldInfos that `keys` lead to (through lists, optionals and unions)."""
    key, rest = keys[0], keys[1:]
    here = f"{seen}.{key}" if seen else key
    infos = [
        info
        for model in _flatten(types_)
        if _is_model(model)
        for name, info in model.model_fields.items()
        if key in (name, info.alias, info.validation_alias)
    ]
    if not rest:
        return infos
    return _field_infos(
        [within.get(here, Any) if info.annotation in (Any, object) else info.annotation for info in infos],
        rest,
        within,
        here,
    )


def _integers(annotation: Any, metadata: list) -> list[tuple]:
    """The int types an annotation may hold, each with the constraints on it."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *more = typing.get_args(annotation)
        found = [m for item in more for m in getattr(item, "metadata", [item])]
        return _integers(inner, metadata + found)
    if origin in (typing.Union, types.UnionType):
        return [pair for a in typing.get_args(annotation) for pair in _integers(a, metadata)]
    if origin in (list, tuple, set):
        return [pair for a in typing.get_args(annotation) if a is not Ellipsis for pair in _integers(a, [])]
    return [(annotation, metadata)] if annotation is int else []


def _flatten(annotations: list) -> list:
    """Unwrap Optional, unions, Annotated and lists down to their member types."""
    out = []
    for annotation in annotations:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            out += _flatten([typing.get_args(annotation)[0]])
        elif origin in (typing.Union, types.UnionType) or origin in (list, tuple, set):
            out += _flatten([a for a in typing.get_args(annotation) if a is not type(None) and a is not Ellipsis])
        elif isinstance(annotation, (list, tuple)):
            out += _flatten(list(annotation))
        else:
            out.append(annotation)
    return out


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and hasattr(annotation, "model_fields")
