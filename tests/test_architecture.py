"""The package's shape, checked from its source against ARCHITECTURE.md: every module
in the layer the diagram puts it in, arrows that point down only, no import cycles, a
core that imports no format, formats that do not import each other, and inserts into
the shared tables that name their columns."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.registry import BUILT_IN_FOLDERS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "workbench"
# Every format folder: the built-in ones, and the one that reads a game declared in TOML.
FORMATS = (*BUILT_IN_FOLDERS, "declared")
CORE = (
    "catalog",
    "schema",
    "violation",
    "formats",
    "validation",
    "jsonl",
    "paths",
    "errors",
    "screen",
    "outcomes",
    "content",
    "bulk",
)
# The diagram's layers, top to bottom; Spark is a second engine beside loading.
RANKS = {"commands": 6, "view": 5, "charts": 4, "questions": 3, "loading": 2, "on Spark": 2, "formats": 1, "core": 0}


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


def graph() -> dict[str, set[str]]:
    """Who imports whom. The registry imports each built-in format by its folder's name."""
    found = {name: imports_of(path) - {name} for name, path in MODULES.items()}
    found["workbench.registry"] |= {f"workbench.{folder}" for folder in BUILT_IN_FOLDERS}
    return found


GRAPH = graph()


# --- the layers, as ARCHITECTURE.md draws them ---------------------------------------------

DIAGRAM_ROW = re.compile(r"^ (commands|view|charts|questions|loading|on Spark|formats|core)?\s{2,}(.*)$")
# `cli.py`, `plots/`, `<format>/queries.py`, `damage/ratings.py`, and `plugin.py`
DIAGRAM_NAME = re.compile(r"(?<![\w.`])((?:<format>/|[a-z0-9_]+/)?[a-z0-9_]+\.py|[a-z0-9_]+/)(?![\w])")


def diagram(text: str) -> dict[str, str]:
    """The layer of each name the diagram of ARCHITECTURE.md lists: `x.py` (a module),
    `x/` (a folder: every module in it), `f/x.py` (a module of a folder), `<format>/x.py`
    (that module in every format folder)."""
    block = text.split("```")[1]
    layers, layer, depth = {}, None, 0
    for row in block.splitlines():
        match = DIAGRAM_ROW.match(row)
        if not match:
            continue
        layer = match.group(1) or layer
        # what the diagram says in parentheses (over one row or several) describes; it names nothing
        named = []
        for char in match.group(2):
            depth += (char == "(") - (char == ")")
            named.append(char if depth == 0 and char != ")" else " ")
        for name in DIAGRAM_NAME.findall("".join(named)):
            layers.setdefault(name, layer)
    return layers


def layer_of(module: str, layers: dict[str, str]) -> str | None:
    """The layer of a module: its own entry, else its format's `<format>/x.py`, else its
    folder's (the nearest one)."""
    parts = module.split(".")[1:] or ["__init__"]
    path = "/".join(parts)
    candidates = [f"{path}.py", f"{path}/"]
    if len(parts) > 1 and parts[0] in FORMATS:
        candidates.append(f"<format>/{parts[-1]}.py")
    candidates += [f"{'/'.join(parts[:i])}/" for i in range(len(parts) - 1, 0, -1)]
    return next((layers[c] for c in candidates if c in layers), None)


def wrong_way(graph: dict[str, set[str]], layers: dict[str, str]) -> list[str]:
    """Every import from a module to one of a higher layer. A format's folder is its own
    slice through the layers: its modules may import one another (its FORMAT names its
    summary query)."""
    found = []
    for source, targets in graph.items():
        for target in targets:
            if format_of(source) and format_of(source) == format_of(target):
                continue
            upward = RANKS[layers_of(target, layers)] > RANKS[layers_of(source, layers)]
            if upward:
                found.append(f"{source} ({layers_of(source, layers)}) imports {target} ({layers_of(target, layers)})")
    return sorted(found)


def layers_of(module: str, layers: dict[str, str]) -> str:
    return "commands" if module == "workbench" else layer_of(module, layers) or "unlisted"


LAYERS = diagram((ROOT / "ARCHITECTURE.md").read_text())


def test_the_diagram_gives_every_module_a_layer():
    unlisted = sorted(m for m in MODULES if m != "workbench" and layer_of(m, LAYERS) is None)
    assert unlisted == [], f"ARCHITECTURE.md's diagram names no layer for {unlisted}"


def test_every_name_the_diagram_lists_is_a_module_or_folder():
    def exists(name: str) -> bool:
        if name.startswith("<format>/"):
            return any((PACKAGE / f / name.removeprefix("<format>/")).exists() for f in FORMATS)
        return (PACKAGE / name).exists()

    assert [name for name in LAYERS if not exists(name)] == []


def test_arrows_point_down_only():
    assert wrong_way(GRAPH, LAYERS) == []


@pytest.mark.parametrize("upper, lower", [(high, low) for high in RANKS for low in RANKS if RANKS[high] > RANKS[low]])
def test_an_arrow_up_between_any_two_layers_is_found(upper, lower):
    low = next(m for m in sorted(MODULES) if layers_of(m, LAYERS) == lower and not format_of(m))
    high = next(m for m in sorted(MODULES) if layers_of(m, LAYERS) == upper)
    assert wrong_way({low: {high}, high: set()}, LAYERS) == [f"{low} ({lower}) imports {high} ({upper})"]
    assert wrong_way({high: {low}, low: set()}, LAYERS) == []


def test_the_diagram_is_read_as_written():
    text = """```
 commands     cli.py (thin: parse,
              call) · demo.py
              report.py
 charts       plots/  — vega.py
 questions    <format>/queries.py · damage/ratings.py
 core         schema.py
```"""
    assert diagram(text) == {
        "cli.py": "commands",
        "demo.py": "commands",
        "report.py": "commands",
        "plots/": "charts",
        "vega.py": "charts",
        "<format>/queries.py": "questions",
        "damage/ratings.py": "questions",
        "schema.py": "core",
    }
    layers = diagram(text)
    assert layer_of("workbench.ec4x.queries", layers) == "questions"
    assert layer_of("workbench.plots.budget", layers) == "charts"
    assert layer_of("workbench.damage.ratings", layers) == "questions"
    assert layer_of("workbench.damage.reader", layers) is None


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
                return path[path.index(target) :] + [target]
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
        for source, targets in GRAPH.items()
        for target in targets
        if format_of(source) and format_of(target) and format_of(source) != format_of(target)
    ]
    assert crossings == []


def test_only_the_registry_imports_every_format():
    importers = {source for source, targets in GRAPH.items() if {f"workbench.{f}" for f in BUILT_IN_FOLDERS} <= targets}
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
        f"{{*{FORMATS!r}, 'registry'}}))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# The modules users import by name: the API reference's, the plugin API, the questions
# and what they read with, and the figures' and the report's. Each has a test file named
# after it (`test_<name>.py`, or `test_<name>s.py`), in the folder of its package.
PUBLIC = (
    "analysis",
    "ingestion",
    "notebook",
    "widgets",
    "plugin",
    "display",
    "records",
    "comparison",
    "stats",
    "prices",
    "naming",
    "validation",
    "formats",
    "report",
    "registry",
    "otel.reader",
    "plots.validity",
    "damage.quality",
    "damage.ratings",
)


@pytest.mark.parametrize("module", PUBLIC)
def test_each_public_module_has_a_test_file_named_after_it(module):
    *folders, name = module.split(".")
    place = ROOT.joinpath("tests", *folders)
    assert (place / f"test_{name}.py").exists() or (place / f"test_{name}s.py").exists()


# A synthetic corpus is data written as code (`<format>/synth.py`): the one place a long file is allowed.
MOST_LINES = 600


def test_no_module_of_the_package_is_over_600_lines():
    long = {
        name: len(path.read_text().splitlines())
        for name, path in MODULES.items()
        if path.name != "synth.py" and len(path.read_text().splitlines()) > MOST_LINES
    }
    assert long == {}
