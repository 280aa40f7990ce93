"""The workbench's DuckDB queries, as Spark SQL: each query is written once, in DuckDB's
dialect, and SQLGlot translates it.

SQLGlot's translation is taken as it is but where Spark means something else by what
it writes, or has no such function:

- `quantile_cont(x, q)` (DuckDB's interpolated quantile) becomes the same computation
  over the sorted values (`QUANTILE_CONT`): Spark's `percentile` interpolates in another
  order of operations, and differed from DuckDB's in the last digit;
- several `unnest`s in one SELECT, which DuckDB walks side by side (a shorter or NULL
  list padded with NULLs), become one `inline(arrays_zip(...))` of the lists (a NULL
  one as empty): Spark takes one generator per SELECT;
- `$name` parameters become SQL literals, written by SQLGlot.
"""

from __future__ import annotations

import functools

from workbench.errors import WorkbenchError

try:
    import sqlglot
    from sqlglot import exp
except ImportError:  # the Spark engine's extra is not installed: said when it is asked for
    sqlglot = exp = None  # type: ignore[assignment]


def _needs_sqlglot() -> None:
    if sqlglot is None:
        raise WorkbenchError("the Spark engine needs sqlglot: pip install 'workbench[spark]'")


def to_spark(sql: str, params: dict | None = None) -> str:
    """`sql` (DuckDB's dialect, `$name` parameters) as one Spark SQL statement with
    `params` in place."""
    tree: exp.Expr = _parsed(sql).copy()
    if params is not None:
        tree = tree.transform(lambda node: _literal(node, params))
    return tree.sql(dialect="spark")


def statements(sql: str) -> list[str]:
    """Each statement of a script (a format's views), as its own text."""
    return list(_statements(sql))


@functools.lru_cache(maxsize=64)
def _statements(sql: str) -> tuple[str, ...]:
    """Parsed once per script: every `open` of a tree makes the same views."""
    _needs_sqlglot()
    return tuple(tree.sql(dialect="duckdb") for tree in sqlglot.parse(sql, read="duckdb") if tree is not None)


@functools.lru_cache(maxsize=64)
def tables_read(sql: str) -> frozenset[str]:
    """The tables (or views) a query reads, but its own common table expressions."""
    tree = _parsed(sql)
    own = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    return frozenset(table.name for table in tree.find_all(exp.Table)) - own


@functools.lru_cache(maxsize=256)
def spark_type(duckdb_type: str) -> str:
    """A DuckDB column type (`VARCHAR[]`) as Spark writes it (`ARRAY<STRING>`); JSON is
    its text, as the Parquet files hold it. Translated once per type: an `open` asks it
    of every column of every table, twice."""
    if duckdb_type == "JSON":
        return "STRING"
    _needs_sqlglot()
    return exp.DataType.build(duckdb_type, dialect="duckdb").sql(dialect="spark")


@functools.lru_cache(maxsize=256)
def _parsed(sql: str) -> exp.Expression:
    """The statement as Spark's: parsed once per query text (the same query is asked with
    other parameters), with the translations above applied."""
    _needs_sqlglot()
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except sqlglot.errors.ParseError as exc:
        raise WorkbenchError(f"cannot translate a query for Spark: {str(exc).splitlines()[0]}") from None
    return tree.transform(_percentile).transform(_side_by_side_unnests)


# DuckDB's quantile_cont, as DuckDB computes it: the values as doubles, sorted; the place
# (n - 1) q; the value below it, or where the place falls between two, the two weighed
# by how near it is to each (`INTERPOLATED`). Spark's own percentile weighs them in
# another order of operations, and differed from DuckDB's in the last digit. (`sort_array`,
# not `array_sort`: the same order here, where collect_list leaves no NULL, and Spark
# sorts it natively where `array_sort` calls a comparator per pair, several times slower.)
QUANTILE_CONT = """transform(array(sort_array(collect_list(CAST({value} AS DOUBLE)), true)), v ->
  CASE WHEN size(v) = 0 THEN NULL
       WHEN floor({place}) = ceil({place}) THEN v[CAST(floor({place}) AS INT)]
       ELSE {interpolated}
  END)[0]"""
PLACE = "CAST(size(v) - 1 AS DOUBLE) * CAST({q} AS DOUBLE)"
# How DuckDB weighs the two values, `lo` and `hi`, a fraction `d` of the way: as its C++
# is written, lo * (1 - d) + hi * d, which a compiler may fuse into one multiply-add
# (DuckDB's x86-64 wheels do): Spark gives the fused one exactly with Java's Math.fma.
INTERPOLATED = {
    "fused": "CAST(reflect('java.lang.Math', 'fma', {lo}, 1.0D - {d}, {hi} * {d}) AS DOUBLE)",
    "plain": "{lo} * (1.0D - {d}) + {hi} * {d}",
    "stepped": "{lo} + ({hi} - {lo}) * {d}",
}
# Two values and a fraction for which the three ways give three answers.
_PROBE = (162.07583929394133, 2791.520536404115, 0.6607096119270353)


@functools.cache
def duckdb_interpolation() -> str:
    """Which of INTERPOLATED this DuckDB computes (asked once, of DuckDB itself)."""
    from fractions import Fraction

    import duckdb

    lo, hi, d = _PROBE
    relation = duckdb.sql(
        "SELECT quantile_cont(x, $d) FROM (SELECT unnest([$lo, $hi]::DOUBLE[]) AS x)",
        params={"lo": lo, "hi": hi, "d": d},
    )
    assert relation is not None  # a SELECT gives rows
    found = relation.fetchall()[0][0]
    ways = {
        "fused": float(Fraction(lo) * Fraction(1 - d) + Fraction(hi * d)),
        "plain": lo * (1 - d) + hi * d,
        "stepped": lo + (hi - lo) * d,
    }
    return next((way for way, value in ways.items() if value == found), "plain")


def _percentile(node: exp.Expression) -> exp.Expr:
    if isinstance(node, exp.PercentileCont) and node.expression is not None:
        place = PLACE.format(q=node.expression.sql(dialect="spark"))
        interpolated = INTERPOLATED[duckdb_interpolation()].format(
            lo=f"v[CAST(floor({place}) AS INT)]", hi=f"v[CAST(ceil({place}) AS INT)]", d=f"({place} - floor({place}))"
        )
        return sqlglot.parse_one(
            QUANTILE_CONT.format(value=node.this.sql(dialect="spark"), place=place, interpolated=interpolated),
            read="spark",
        )
    return node


def _side_by_side_unnests(node: exp.Expression) -> exp.Expression:
    """A SELECT with more than one `unnest(list)` among its columns reads the lists side
    by side: `LATERAL VIEW inline(arrays_zip(a, b)) zipped AS a_, b_`, its columns in
    their places."""
    if not isinstance(node, exp.Select):
        return node
    unnests = [
        (i, column)
        for i, column in enumerate(node.expressions)
        if isinstance(column.unalias(), (exp.Unnest, exp.Explode))
    ]
    if len(unnests) < 2:
        return node
    names, lists, columns = [], [], list(node.expressions)
    for i, column in unnests:
        inner = column.unalias()
        name = column.alias_or_name or f"unnested_{i}"
        names.append(exp.to_identifier(f"{name}_zipped"))
        listed = inner.expressions[0] if isinstance(inner, exp.Unnest) else inner.this
        lists.append(exp.func("coalesce", listed, exp.Array(expressions=[])))
        columns[i] = exp.alias_(exp.column(f"{name}_zipped", table="zipped"), name)
    lateral = exp.Lateral(
        this=exp.Anonymous(this="inline", expressions=[exp.Anonymous(this="arrays_zip", expressions=lists)]),
        view=True,
        alias=exp.TableAlias(this=exp.to_identifier("zipped"), columns=names),
    )
    zipped = node.copy()
    zipped.set("expressions", columns)
    zipped.append("laterals", lateral)
    if not (zipped.args.get("from") or zipped.args.get("from_")):  # a lateral view needs a row to start from
        zipped = zipped.from_("(SELECT 1) AS one")
    return zipped


def _literal(node: exp.Expression, params: dict) -> exp.Expr:
    if isinstance(node, (exp.Placeholder, exp.Parameter)):
        name = node.name if isinstance(node, exp.Placeholder) else node.this.name
        if name not in params:
            raise WorkbenchError(f"the query asks for ${name}, which was not given")
        return exp.convert(params[name])
    return node
