"""The daily loop as it is run: `workbench plot emotions -o x.png` and `workbench report
-o x.html` on the demo database, each timed as a whole process from its start to its
exit, against `python -c "import altair"` timed in the same run, in turn with them
(aims: the figure <= 1.5 s, the report <= 3 s). Neither command imports Altair: the
figures are Vega-Lite specs written as data (docs/performance.md, "Figures without Altair").

    python -m bench.commands [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, WORK, machine

AIMS = {"plot": 1.5, "report": 3.0}


def demo_db() -> Path:
    """The database `workbench demo` builds (the sample corpus of every format, seed 7),
    made once under data/bench/demo, without the demo's figures."""
    folder = WORK / "demo"
    db = folder / "workbench.duckdb"
    if not db.exists():
        import workbench
        from workbench.synth import synthesize

        synthesize(folder / "sample", scale=1, seed=7)
        workbench.ingest([folder / "sample"], db=folder / "building.duckdb", progress=False)
        (folder / "building.duckdb").rename(db)
    return db


def seconds(command: list[str]) -> float:
    """Wall seconds of `command` as a process of its own, run from the repository, with
    bytecode cached as an installed package has it (an environment that sets
    PYTHONDONTWRITEBYTECODE would make every run compile the workbench's modules again,
    while site-packages were compiled at install)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=ROOT, env=env)
    return time.perf_counter() - start


def main(argv=None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args(argv).runs
    db = demo_db()
    with tempfile.TemporaryDirectory() as tmp:
        workbench_cli = [sys.executable, "-m", "workbench.cli"]
        commands = {
            "import altair": [sys.executable, "-c", "import altair"],
            "plot": [*workbench_cli, "plot", "emotions", "--db", str(db), "-o", str(Path(tmp) / "x.png")],
            "report": [*workbench_cli, "report", "--db", str(db), "-o", str(Path(tmp) / "x.html")],
        }
        for command in commands.values():  # a warm-up: files in the OS cache, the report's Vega bundle cached
            seconds(command)
        times = {name: [] for name in commands}
        for _ in range(runs):  # in turn, so a change in the machine's speed reaches them all
            for name, command in commands.items():
                times[name].append(seconds(command))
    best = {name: min(values) for name, values in times.items()}
    baseline = best["import altair"]
    print(f"whole commands on the demo database, on {machine()}; best of {runs}")
    print(f"  python -c 'import altair': {baseline:.2f} s")
    for name, aim in AIMS.items():
        print(f"  workbench {name}: {best[name]:.2f} s, {best[name] / baseline:.2f}x import altair  (aim <= {aim} s)")
    print(f"  reproduce: python -m bench.commands --runs {runs}")
    return {**best, **{f"ratio {name}": best[name] / baseline for name in AIMS}}


if __name__ == "__main__":
    main()
