"""Which tests are slow, by what they took: `tests/durations.json` holds the seconds
(setup, call and teardown) of every test that took SLOW_SECONDS or more in a recorded run
on 2 cores, and each of them is marked `slow`, as are the long checks marked in their
own files. `-m "not slow"` leaves them out; CI runs them all.

A run records the tests it ran and keeps what the list says of the others. A module's
shared fixture is paid by the first of its tests to run, which is another test when the
slow ones are left out: after adding tests, or making one faster, record the whole suite,
then the quick loop.

    .venv/bin/python -m pytest -q --record-durations
    .venv/bin/python -m pytest -q --record-durations -m "not slow"
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

DURATIONS = Path(__file__).with_name("durations.json")
SLOW_SECONDS = 0.5


def recorded() -> dict[str, float]:
    return json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--record-durations",
        action="store_true",
        help=f"write the tests that take {SLOW_SECONDS} s or more to {DURATIONS.name}, "
        "which marks them slow (run the whole suite)",
    )


_times: defaultdict[str, float] = defaultdict(float)  # node id: seconds, in this run
_skipped: set[str] = set()  # node ids skipped in this run


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by mark
def pytest_collection_modifyitems(config, items) -> None:
    slow = recorded()
    for item in items:
        if slow.get(item.nodeid, 0.0) >= SLOW_SECONDS:
            item.add_marker(pytest.mark.slow)


def pytest_runtest_logreport(report) -> None:
    # On xdist's controller every worker's reports arrive here, so one process sums them.
    # A test skipped here (no Java, no Chromium, no corpus) keeps the time listed for it.
    if report.skipped:
        _skipped.add(node_id(report.nodeid))
    _times[node_id(report.nodeid)] += report.duration


def node_id(reported: str) -> str:
    """The test's node id, without the `@<group>` that `--dist loadgroup` appends to a
    grouped test's (a `@` inside its parameters' brackets stays)."""
    head, at, tail = reported.rpartition("@")
    return head if at and "]" not in tail and "::" not in tail else reported


def pytest_sessionfinish(session, exitstatus) -> None:
    config = session.config
    if not config.getoption("record_durations") or hasattr(config, "workerinput"):
        return  # written by the controller only
    if exitstatus != 0:
        print(f"\n{DURATIONS.name} is left as it was: record it from a run where every test passed")
        return
    ran = {node: seconds for node, seconds in _times.items() if node not in _skipped}
    DURATIONS.write_text(json.dumps(merged(recorded(), ran), indent=0, ensure_ascii=False) + "\n")


def merged(listed: dict[str, float], ran: dict[str, float]) -> dict[str, float]:
    """The list after a run: the tests it ran that took SLOW_SECONDS or more, and the
    listed tests it did not run (left out by `-m`, `-k` or a path), as listed."""
    slow = {node: seconds for node, seconds in listed.items() if node not in ran}
    slow.update({node: round(seconds, 1) for node, seconds in ran.items() if seconds >= SLOW_SECONDS})
    return dict(sorted(slow.items()))
