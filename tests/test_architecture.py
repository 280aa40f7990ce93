"""The package's shape, checked from its source: no import cycles, a core that imports
no format, formats that do not import each other, and inserts into the shared tables
that name their columns."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "workbench"
FORMATS = ("damage", "stellaris", "ec4x", "arena", "gm")
CORE = ("catalog", "schema", "violation", "formats", "validation", "jsonl", "paths", "errors", "screen", "outcomes")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(path: Path) -> set[str]:
    """Every workbench module `path` imports, at module level or inside a function.
    `from a import b` is an import of `a.b` when that is a module, else of `a`."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(name if name in MODULES else node.module)
    return {name for name in found if name in MODULES}


GRAPH = {name: imports_of(path) - {name} for name, path in MODULES.items()}


def format_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in FORMATS else None


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_cycle_finder_finds_a_cycle_and_accepts_a_tree():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_imports_are_read_at_every_depth(tmp_path):
    # the graph must see imports inside functions, and `from workbench import catalog`
    assert "workbench.registry" in GRAPH["workbench"]
    assert "workbench.catalog" in GRAPH["workbench.registry"]
    assert "workbench.ingestion" in GRAPH["workbench"]


def test_the_package_has_no_import_cycle():
    assert find_cycle(GRAPH) is None, " -> ".join(find_cycle(GRAPH))


@pytest.mark.parametrize("core", CORE)
def test_the_core_imports_no_format(core):
    module = f"workbench.{core}"
    reached, todo = set(), [module]
    while todo:  # everything the module loads, directly or not
        for target in GRAPH[todo.pop()]:
            if target not in reached:
                reached.add(target)
                todo.append(target)
    formats = sorted({format_of(m) for m in reached} - {None})
    assert formats == [], f"{module} loads the formats {formats}"


def test_no_format_imports_another():
    crossings = [
        f"{source} imports {target}"
        for source, targets in GRAPH.items() for target in targets
        if format_of(source) and format_of(target) and format_of(source) != format_of(target)
    ]
    assert crossings == []


def test_only_the_registry_imports_every_format():
    importers = {source for source, targets in GRAPH.items()
                 if {f"workbench.{f}" for f in FORMATS} <= targets}
    assert importers == {"workbench.registry"}


SHARED = ("sources", "violations", "rejects", "decisions")
INSERT = re.compile(r"INSERT\s+INTO\s+(\w+)\s*(BY\s+NAME|\()?", re.IGNORECASE)


def test_every_insert_into_a_shared_table_names_its_columns():
    positional = []
    for name, path in MODULES.items():
        for match in INSERT.finditer(path.read_text()):
            if match.group(1).lower() in SHARED and not match.group(2):
                positional.append(f"{name}: {match.group(0).strip()}")
    assert positional == []


def test_no_sql_reads_a_python_local_by_name():
    # the old way of handing a batch to DuckDB: a local that SQL happened to name
    hits = [name for name, path in MODULES.items() if "noqa: F841" in path.read_text()]
    assert hits == []


def test_import_and_a_read_only_connection_load_no_format(tmp_path):
    db = tmp_path / "w.duckdb"
    subprocess.run([sys.executable, "-c", f"import workbench; workbench.connect({str(db)!r}).close()"], check=True)
    probe = (
        "import sys, workbench\n"
        f"con = workbench.connect({str(db)!r}, read_only=True)\n"
        "con.sql('SELECT count(*) FROM sources').fetchall()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[:2][-1] in "
        "{'damage', 'stellaris', 'ec4x', 'arena', 'gm', 'registry'}))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
