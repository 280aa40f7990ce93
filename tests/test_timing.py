"""The tests recorded as slow in tests/durations.json still exist, the ones recorded at
SLOW_SECONDS or more, only they, are marked slow, and a run records them as it should."""

import subprocess
import sys
from types import SimpleNamespace

import pytest

from tests.conftest import ROOT
from tests.timing import SLOW_SECONDS, merged, node_id, pytest_collection_modifyitems, recorded


@pytest.mark.slow  # collects the whole suite in a process of its own
def test_every_recorded_test_is_still_there():
    durations = recorded()
    assert durations, "tests/durations.json is empty: record it with --record-durations"
    assert all(seconds >= SLOW_SECONDS for seconds in durations.values())
    # Every node id exactly as pytest collects it: a renamed test or parameter is not
    # found, and is run in the quick loop however slow it is.
    collected = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
            "-o",
            "addopts=",
            "tests",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    ids = set(collected.stdout.splitlines())
    gone = [node for node in durations if node not in ids]
    assert gone == [], f"{len(gone)} listed tests are gone, first {gone[0]!r}: record the durations again"


def test_a_recorded_test_is_marked_slow_and_another_is_not():
    slow_node = next(iter(recorded()))
    items = [SimpleNamespace(nodeid=node, marks=[]) for node in (slow_node, "tests/test_x.py::test_quick")]
    for item in items:
        item.add_marker = item.marks.append
    pytest_collection_modifyitems(None, items)
    assert [[mark.name for mark in item.marks] for item in items] == [["slow"], []]


def test_a_run_lists_what_it_ran_by_its_time_and_keeps_the_rest_as_listed():
    listed = {"t.py::test_left_out": 4.0, "t.py::test_now_quick": 2.0, "t.py::test_still_slow": 1.0}
    ran = {
        "t.py::test_now_quick": SLOW_SECONDS - 0.01,
        "t.py::test_still_slow": 3.04,
        "t.py::test_new": SLOW_SECONDS,
        "t.py::test_quick": 0.01,
    }
    assert merged(listed, ran) == {
        "t.py::test_left_out": 4.0,
        "t.py::test_new": round(SLOW_SECONDS, 1),
        "t.py::test_still_slow": 3.0,
    }


def test_a_grouped_test_is_listed_under_its_node_id():
    assert node_id("tests/t.py::test_x[1]@spark") == "tests/t.py::test_x[1]"
    assert node_id("tests/t.py::test_x@spark-docs_notebooks") == "tests/t.py::test_x"
    assert node_id("tests/t.py::test_x[a@b]") == "tests/t.py::test_x[a@b]"
    assert node_id("tests/a@b/t.py::test_x") == "tests/a@b/t.py::test_x"
