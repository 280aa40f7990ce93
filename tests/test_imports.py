"""What a command loads. `import workbench` loads nothing but itself and its errors; no command loads
Altair (a second and more of every run: the figures are Vega-Lite specs written as
data), only the commands that draw load vl-convert, and a figure loads only its own
format. Each command runs in a child interpreter, in-process there
(`cli.main`), so the modules listed are the command's own."""

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from workbench.registry import BUILT_IN_FOLDERS

DRAWING = ("altair", "vl_convert")
SPARK = ("pyspark", "py4j", "sqlglot")
FORMATS = BUILT_IN_FOLDERS

# Runs `workbench ARGS...` (JSON in argv[1]) and prints its exit code and the top-level
# packages and workbench modules it loaded.
PROBE = """
import contextlib, io, json, sys
from workbench import cli
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = cli.main(json.loads(sys.argv[1]))
print(json.dumps([code, sorted(sys.modules)]))
"""


def loaded_by(*args: str) -> tuple[int, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(args))], capture_output=True, text=True, cwd=ROOT, check=True
    )
    code, modules = json.loads(done.stdout)
    return code, set(modules)


def drawing(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in DRAWING)


def spark(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in SPARK)


def formats(modules: set[str]) -> list[str]:
    return sorted({m.split(".")[1] for m in modules if m.startswith("workbench.") and m.split(".")[1] in FORMATS})


def test_import_workbench_and_its_plots_package_load_no_altair():
    probe = "import json, sys, workbench, workbench.plots; print(json.dumps(sorted(sys.modules)))"
    modules = set(
        json.loads(
            subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True).stdout
        )
    )
    assert "workbench.plots" in modules and drawing(modules) == []
    # nor DuckDB, polars or the ingest: `workbench plot` starts its renderer before they load
    ours = {m for m in modules if m.split(".")[0] == "workbench"}
    assert ours == {"workbench", "workbench.errors", "workbench.plots"}
    assert not {"duckdb", "polars", "pyarrow", "pydantic"} & {m.split(".")[0] for m in modules}


def test_ingest_and_validate_are_the_package_s_own_names():
    import workbench
    from workbench import ingestion

    assert workbench.ingest is ingestion.ingest and workbench.validate is ingestion.validate
    from workbench import ingest, validate

    assert (ingest, validate) == (ingestion.ingest, ingestion.validate)
    assert {"connect", "ingest", "validate", "plots", "analysis", "widgets"} <= set(dir(workbench))


def test_the_command_line_loads_no_figure_before_one_is_drawn():
    # `workbench plot` starts its renderer before polars and the figures' modules load
    probe = (
        "import json, sys; from workbench import cli; cli._parser().parse_args(['plot', 'emotions', '-o', 'x.png']);"
        " print(json.dumps(sorted(sys.modules)))"
    )
    modules = set(
        json.loads(
            subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True).stdout
        )
    )
    assert not {m for m in modules if m.startswith("workbench.plots")}
    assert not {"duckdb", "polars", "pyarrow"} & {m.split(".")[0] for m in modules}


def test_finding_the_figures_loads_no_format_no_analysis_and_no_altair():
    probe = (
        "import json, sys; from workbench.plots.kinds import figures; assert figures();"
        " print(json.dumps(sorted(sys.modules)))"
    )
    modules = set(
        json.loads(
            subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True).stdout
        )
    )
    assert formats(modules) == [] and drawing(modules) == []
    assert not {"workbench.registry", "workbench.comparison", "scipy"} & modules


@pytest.fixture(scope="module")
def db(sample, tmp_path_factory):
    """The sample corpus, ingested by `workbench ingest` in a child: what it loaded is checked here too."""
    path = tmp_path_factory.mktemp("imports") / "w.duckdb"
    code, modules = loaded_by("ingest", str(sample), "--db", str(path), "--quiet")
    assert code == 0 and drawing(modules) == [] and spark(modules) == []
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["scorecard"],
        ["compare"],
        ["plan", "--difference", "0.1"],
        ["export", "--parquet", "{tmp}/parquet"],
    ],
)
def test_commands_reading_the_database_load_no_altair(db, tmp_path, command):
    code, modules = loaded_by(*[part.format(tmp=tmp_path) for part in command], "--db", str(db))
    assert code == 0 and drawing(modules) == [] and spark(modules) == []  # the Spark engine's only with --engine spark


def test_validate_and_synth_load_no_altair(sample, tmp_path):
    code, modules = loaded_by("validate", str(sample / "damage"))
    assert code == 1 and drawing(modules) == []  # 1: the sample's planted errors
    code, modules = loaded_by("synth", "--out", str(tmp_path / "synth"))
    assert code == 0 and drawing(modules) == []


def test_a_figure_loads_no_altair_and_only_its_own_format(db, tmp_path):
    code, modules = loaded_by("plot", "emotions", "--db", str(db), "-o", str(tmp_path / "e.json"))
    assert code == 0 and drawing(modules) == []  # a spec is written as data
    assert formats(modules) == ["damage"] and "workbench.registry" not in modules
    code, modules = loaded_by("plot", "budget", "--db", str(db), "-o", str(tmp_path / "b.png"))
    assert code == 0 and formats(modules) == ["stellaris"]
    assert "altair" not in modules and (tmp_path / "b.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("suffix", [".html", ".md"])
def test_the_report_loads_no_altair(db, tmp_path, suffix):
    code, modules = loaded_by("report", "--db", str(db), "-o", str(tmp_path / f"r{suffix}"))
    assert code == 0 and "altair" not in modules and spark(modules) == []
