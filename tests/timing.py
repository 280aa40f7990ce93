"""Which tests are slow, by what they took: `tests/durations.json` holds the seconds
(setup, call and teardown) of every test that took SLOW_SECONDS or more in a full run
on 2 cores, and each of them is marked `slow`, as are the long checks marked in their
own files. `-m "not slow"` leaves them out; CI runs them all.

After adding tests, or making one faster, record the times again with a full run:

    .venv/bin/python -m pytest -q --record-durations
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

DURATIONS = Path(__file__).with_name("durations.json")
SLOW_SECONDS = 1.0


def recorded() -> dict[str, float]:
    return json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}


def pytest_addoption(parser) -> None:
    parser.addoption("--record-durations", action="store_true",
                     help=f"write the tests that take {SLOW_SECONDS} s or more to {DURATIONS.name}, "
                          "which marks them slow (run the whole suite)")


_times: defaultdict[str, float] = defaultdict(float)  # node id: seconds, in this run


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by mark
def pytest_collection_modifyitems(config, items) -> None:
    slow = recorded()
    for item in items:
        if slow.get(item.nodeid, 0.0) >= SLOW_SECONDS:
            item.add_marker(pytest.mark.slow)


def pytest_runtest_logreport(report) -> None:
    # On xdist's controller every worker's reports arrive here, so one process sums them.
    # `--dist loadgroup` names a grouped test `<node id>@<group>`; the list keeps the node id.
    _times[re.sub(r"@\w+$", "", report.nodeid)] += report.duration


def pytest_sessionfinish(session, exitstatus) -> None:
    config = session.config
    if not config.getoption("record_durations") or hasattr(config, "workerinput"):
        return  # written by the controller only
    if exitstatus != 0:
        print(f"\n{DURATIONS.name} is left as it was: record it from a run where every test passed")
        return
    slow = {node: round(seconds, 1) for node, seconds in sorted(_times.items()) if seconds >= SLOW_SECONDS}
    DURATIONS.write_text(json.dumps(slow, indent=0, ensure_ascii=False) + "\n")
