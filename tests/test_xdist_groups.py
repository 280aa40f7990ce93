"""The warning of tests/xdist_groups.py: given on a worker where a grouped test was not
renamed `<node id>@<group>`, and only there."""

import warnings
from types import SimpleNamespace

import pytest

from tests.xdist_groups import pytest_collection_modifyitems


def _item(nodeid, group=None):
    mark = pytest.mark.xdist_group(group).mark if group else None
    return SimpleNamespace(nodeid=nodeid, get_closest_marker=lambda name: mark)


def _warnings(items, worker=True, loadgroup=True):
    config = SimpleNamespace(getvalue=lambda name: loadgroup, **({"workerinput": {}} if worker else {}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pytest_collection_modifyitems(config, items)
    return [str(w.message) for w in caught]


def test_a_grouped_test_left_unnamed_is_reported():
    (message,) = _warnings([_item("tests/a.py::test_x", "spark"), _item("tests/a.py::test_y", "spark")])
    assert message.startswith("--dist loadgroup did not keep tests/a.py::test_x with its group")


def test_renamed_or_ungrouped_tests_or_no_loadgroup_say_nothing():
    assert _warnings([_item("tests/a.py::test_x@spark", "spark"), _item("tests/a.py::test_z")]) == []
    assert _warnings([_item("tests/a.py::test_x", "spark")], loadgroup=False) == []
    assert _warnings([_item("tests/a.py::test_x", "spark")], worker=False) == []
