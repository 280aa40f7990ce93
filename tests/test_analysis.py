"""`workbench.analysis`: one public path per name (the implementations themselves, not
copies), no format loaded by importing it, and `sample_size`'s two documented forms."""

import inspect
import json
import subprocess
import sys
import typing

import numpy as np
import pytest

import workbench
from tests.conftest import ROOT
from workbench import analysis, comparison, connection, notebook, records, registry, stats
from workbench.errors import WorkbenchError


def test_the_questions_are_the_implementations_not_copies():
    assert analysis.scorecard is comparison.scorecard
    assert analysis.compare_models is comparison.compare_models
    assert analysis.sample_size is comparison.sample_size
    assert analysis.records is records.records
    assert analysis.side_by_side is records.side_by_side
    assert analysis.format_summary is connection.format_summary
    # every name it lists is there, and the interface's names are among them
    assert all(hasattr(analysis, name) for name in analysis.__all__)
    assert {
        "scorecard",
        "compare_models",
        "ratings",
        "sample_size",
        "records",
        "side_by_side",
        "play_quality",
        "play_summary",
        "attack_outcomes",
    } <= set(analysis.__all__)


def test_the_notebooks_plumbing_is_the_notebook_module_s():
    for name in ("notebook_database", "figures_dir", "read_only"):
        assert not hasattr(analysis, name) and name in notebook.__all__
    assert notebook.read_only is connection.reading


def test_importing_the_analysis_loads_no_format():
    probe = (
        "import json, sys, workbench.analysis; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('workbench.'))))"
    )
    loaded = json.loads(
        subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    )
    formats = {*registry.BUILT_IN_FOLDERS, "declared", "registry"}
    assert not [m for m in loaded if m.split(".")[1] in formats]


def test_the_sql_of_the_decisions_says_who_and_which_cluster():
    sql = comparison.decisions_sql({"a-2024": "a"}, cluster="file", failures="invalid")
    assert "AS who" in sql and "'file ' || source_id AS cluster" in sql and "coalesce(valid, false) AS valid" in sql
    with pytest.raises(WorkbenchError, match="cannot cluster by 'turn'"):
        comparison.decisions_sql(cluster="turn")


# --- sample_size: numbers, or a connection to estimate them from -------------------------------


def episode(path, valid_by_model: dict[str, int], n: int = 10):
    """One Agent Arena episode: each model's agent decides `n` ticks, the first `valid` validly."""
    lines = [
        json.dumps(
            {
                "agent_id": f"agent_{model}",
                "tick": tick,
                "tool": "idle" if tick < valid else "fly",
                "params": {},
                "model": model,
            }
        )
        for model, valid in valid_by_model.items()
        for tick in range(n)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def con(tmp_path):
    paths = [
        episode(tmp_path / f"ep{i}.decisions.jsonl", {"m-a": a, "m-b": b})
        for i, (a, b) in enumerate([(10, 7), (9, 8), (6, 8), (10, 5)])
    ]
    assert not workbench.ingest(paths, db=tmp_path / "w.duckdb").failed
    opened = connection.connect(tmp_path / "w.duckdb", read_only=True)
    yield opened
    opened.close()


class Tree:
    """A source that is not a DuckDB connection but answers `frame`, as a Parquet tree open
    on Spark does."""

    def __init__(self, con):
        self.con = con

    def frame(self, sql, params=None):
        return self.con.sql(sql, params=params or {}).pl()


def test_sample_size_from_numbers_positionally_or_by_keyword():
    by_hand = stats.games_needed(0.1, 0.85, 40, 0.2)
    assert analysis.sample_size(0.1, 0.85, 40, 0.2) == by_hand == 59
    assert analysis.sample_size(difference=0.1, validity=0.85, decisions_per_game=40, icc=0.2) == by_hand
    assert analysis.sample_size(np.float64(0.1), 0.85, 40, 0.2, 0.8, 0.95) == by_hand  # a numpy number is a number
    assert analysis.sample_size(0.1, 0.85, 40, 0.2, power=0.9) > by_hand


def test_sample_size_from_a_connection_estimates_what_is_not_given(con):
    planned = comparison.plan(con)
    estimated = stats.games_needed(0.1, planned.validity, planned.decisions_per_game, planned.planning_icc)
    assert analysis.sample_size(con, difference=0.1) == estimated
    assert analysis.sample_size(0.1, con=con) == analysis.sample_size(difference=0.1, con=con) == estimated
    # a value given replaces its estimate
    assert analysis.sample_size(con, difference=0.1, icc=0.0) == stats.games_needed(
        0.1, planned.validity, planned.decisions_per_game, 0.0
    )
    # a Parquet tree open on Spark is a connection too
    assert analysis.sample_size(Tree(con), difference=0.1) == estimated


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda con: analysis.sample_size("data/workbench.duckdb", difference=0.1),
            "takes a connection or the difference to detect first, not str 'data/workbench.duckdb'",
        ),
        (lambda con: analysis.sample_size(True, 0.85, 40, 0.2), "not bool True"),
        (lambda con: analysis.sample_size([0.1], 0.85, 40, 0.2), "not list"),
        (
            lambda con: analysis.sample_size(con, 0.1),
            r"takes the difference by name: sample_size\(con, difference=0.1\)",
        ),
        (lambda con: analysis.sample_size(con, difference=0.1, con=con), "one connection"),
        (
            lambda con: analysis.sample_size(0.1, difference=0.2, validity=0.5, decisions_per_game=4, icc=0),
            "given difference twice",
        ),
        (lambda con: analysis.sample_size(con=con), "needs the difference"),
        (lambda con: analysis.sample_size(0.1), "needs validity, decisions_per_game, icc"),
        (lambda con: analysis.sample_size(con, difference=0.1, failures="all"), "failures must be one of"),
    ],
)
def test_sample_size_refuses_what_is_neither_form(con, call, message):
    with pytest.raises(WorkbenchError, match=message):
        call(con)


def test_each_form_of_sample_size_is_typed():
    connection, numbers, estimated = (
        inspect.signature(form).parameters for form in typing.get_overloads(comparison.sample_size)
    )
    # sample_size(con, *, difference, ...): the connection first, the difference by name
    assert list(connection)[:2] == ["con", "difference"]
    assert connection["con"].kind is inspect.Parameter.POSITIONAL_ONLY
    assert connection["difference"].kind is inspect.Parameter.KEYWORD_ONLY
    assert connection["difference"].default is inspect.Parameter.empty
    # sample_size(difference, validity, decisions_per_game, icc, power=0.8, level=0.95): every number needed
    assert list(numbers) == ["difference", "validity", "decisions_per_game", "icc", "power", "level"]
    assert [p.default for p in numbers.values()][-2:] == [0.8, 0.95]
    assert all(p.default is inspect.Parameter.empty for p in list(numbers.values())[:4])
    # sample_size(difference, con=con): the numbers not given are estimated
    assert estimated["con"].kind is inspect.Parameter.KEYWORD_ONLY and estimated["validity"].default is None
