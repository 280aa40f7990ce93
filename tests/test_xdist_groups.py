"""The warning of tests/xdist_groups.py: given on a worker where a grouped test was not
renamed `<node id>@<group>`, and only there."""

import warnings
from types import SimpleNamespace

import pytest

from tests.xdist_groups import group_suffix, pytest_collection_modifyitems


def _item(nodeid, *marks):
    return SimpleNamespace(nodeid=nodeid, iter_markers=lambda name: [m.mark for m in marks])


def _group(name):
    return pytest.mark.xdist_group(name)


def _warnings(items, worker=True, loadgroup=True):
    config = SimpleNamespace(getvalue=lambda name: loadgroup, **({"workerinput": {}} if worker else {}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pytest_collection_modifyitems(config, items)
    return [str(w.message) for w in caught]


def test_a_grouped_test_left_unnamed_is_reported():
    (message,) = _warnings([_item("tests/a.py::test_x", _group("spark")), _item("tests/a.py::test_y", _group("spark"))])
    assert message.startswith("--dist loadgroup did not keep tests/a.py::test_x with its group")


def test_renamed_or_ungrouped_tests_or_no_loadgroup_say_nothing():
    assert _warnings([_item("tests/a.py::test_x@spark", _group("spark")), _item("tests/a.py::test_z")]) == []
    assert _warnings([_item("tests/a.py::test_x", _group("spark"))], loadgroup=False) == []
    assert _warnings([_item("tests/a.py::test_x", _group("spark"))], worker=False) == []


def test_the_suffix_is_xdists_every_group_sorted_and_a_name_given_by_keyword():
    both = _item("tests/a.py::test_x@a_b", _group("b"), pytest.mark.xdist_group(name="a"))
    assert group_suffix(both) == "@a_b"
    assert _warnings([both]) == []
    assert group_suffix(_item("tests/a.py::test_x")) == ""
