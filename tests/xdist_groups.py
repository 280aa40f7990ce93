"""An `xdist_group` shares a costly session (the notebook runs, JupyterLab and its browser,
Spark) and must run on one worker: spread over the workers, each would build it again and
the suite would take twice as long. pytest-xdist 3.8 groups a test by renaming it
`<node id>@<group>`, which pytest 9.2 no longer allows (pyproject.toml keeps pytest below
it); this plugin warns, from a worker, when a grouped test was not renamed."""

import warnings

import pytest


def group_suffix(item) -> str:
    """`@<group>` as xdist 3.8 names a grouped test: every group of its marks, sorted and
    joined by `_` (a mark's name given as its argument or as `name=`); "" if it has none."""
    names = {
        str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        for mark in item.iter_markers("xdist_group")
    }
    return "@" + "_".join(sorted(names)) if names else ""


@pytest.hookimpl(trylast=True)  # after xdist has renamed the grouped tests
def pytest_collection_modifyitems(config, items) -> None:
    if not (hasattr(config, "workerinput") and config.getvalue("loadgroup")):  # xdist sets it on workers
        return
    for item in items:
        suffix = group_suffix(item)
        if suffix and not item.nodeid.endswith(suffix):
            warnings.warn(
                pytest.PytestConfigWarning(
                    f"--dist loadgroup did not keep {item.nodeid} with its group, so every worker builds "
                    "its session: this pytest and pytest-xdist do not work together (install the "
                    "versions of pyproject.toml's dev extras)"
                ),
                stacklevel=2,
            )
            return
