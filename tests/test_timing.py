"""The tests recorded as slow in tests/durations.json still exist, and the ones recorded at
a second or more, only they, are marked slow."""

from types import SimpleNamespace

from tests.conftest import ROOT
from tests.timing import SLOW_SECONDS, merged, pytest_collection_modifyitems, recorded


def test_every_recorded_test_is_still_there():
    durations = recorded()
    assert durations, "tests/durations.json is empty: record it with --record-durations"
    for node, seconds in durations.items():
        path, _, name = node.partition("::")
        function = name.split("[")[0].split("::")[-1]
        assert f"def {function}(" in (ROOT / path).read_text(), f"{node} is gone: record the durations again"
        assert seconds >= SLOW_SECONDS, node


def test_a_recorded_test_is_marked_slow_and_another_is_not():
    slow_node = next(iter(recorded()))
    items = [SimpleNamespace(nodeid=node, marks=[]) for node in (slow_node, "tests/test_x.py::test_quick")]
    for item in items:
        item.add_marker = item.marks.append
    pytest_collection_modifyitems(None, items)
    assert [[mark.name for mark in item.marks] for item in items] == [["slow"], []]


def test_a_run_lists_what_it_ran_by_its_time_and_keeps_the_rest_as_listed():
    listed = {"t.py::test_left_out": 4.0, "t.py::test_now_quick": 2.0, "t.py::test_still_slow": 1.0}
    ran = {"t.py::test_now_quick": SLOW_SECONDS - 0.01, "t.py::test_still_slow": 3.04,
           "t.py::test_new": SLOW_SECONDS, "t.py::test_quick": 0.01}
    assert merged(listed, ran) == {"t.py::test_left_out": 4.0, "t.py::test_new": round(SLOW_SECONDS, 1),
                                   "t.py::test_still_slow": 3.0}
