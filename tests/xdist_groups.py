"""An `xdist_group` shares a costly session (the notebook runs, JupyterLab and its browser,
Spark) and must run on one worker: spread over the workers, each would build it again and
the suite would take twice as long. pytest-xdist 3.8 groups a test by renaming it
`<node id>@<group>`, which pytest 9.2 no longer allows (pyproject.toml keeps pytest below
it); this plugin warns, from a worker, when a grouped test was not renamed."""

import warnings

import pytest


@pytest.hookimpl(trylast=True)  # after xdist has renamed the grouped tests
def pytest_collection_modifyitems(config, items) -> None:
    if not (hasattr(config, "workerinput") and config.getvalue("loadgroup")):  # xdist sets it on workers
        return
    for item in items:
        group = item.get_closest_marker("xdist_group")
        if group and not item.nodeid.endswith(f"@{group.args[0]}"):
            warnings.warn(pytest.PytestConfigWarning(
                f"--dist loadgroup did not keep {item.nodeid} with its group, so every worker builds "
                "its session: this pytest and pytest-xdist do not work together (install the "
                "versions of pyproject.toml's dev extras)"))
            return
