"""Where an ingest's time goes, for the workloads of goals 1 and 7: the ingest again and
again with one more step taken out each time, against DuckDB's own `read_json` of the
same file, all measured in the same run, with the CPU seconds each used (all threads).

A step taken out costs nothing, so each line is a floor for any design of the steps
still in: if the ingest without drift is already above the aim, no drift design meets
it. The databases written without a step are incomplete; this measures, it does not
ingest.

    python -m bench.steps [--events 300000] [--drafts 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import functools
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

import pyarrow as pa

import workbench
from bench import ec4x_drafts
from bench.common import damage_log, machine, read_json_plain
from workbench import bulk
from workbench.ec4x import drift as ec4x_drift
from workbench.ec4x.orders import OrderDraft
from workbench.screen import model_screen


def _nothing(*args, **kwargs) -> None:
    return None


def _all_valid(*args, **kwargs) -> bulk.Checked:
    return bulk.Checked()


def _none_refused(*args, **kwargs) -> list[int]:
    return []


def _no_drift(*args, **kwargs) -> pa.Table:
    return ec4x_drift.NO_OCCURRENCES


# Per workload, the steps in the order they are taken out, each as the names it is
# reached by and what stands in for it.
DAMAGE_STEPS = (
    ("drift", {"workbench.damage.drift.DriftTally.add_chunk": _nothing}),
    ("screen and pydantic", {"workbench.damage.reader.check_chunk": _all_valid}),
    ("emotions", {"workbench.damage.emotions.insert_vectors": _nothing}),
    (
        "calls and decisions",
        {"workbench.damage.tables.keep_calls": _nothing, "workbench.damage.tables.derive_decisions": _nothing},
    ),
)
EC4X_STEPS = (
    (
        "drift",
        {
            "workbench.ec4x.reader.order_screen": functools.cache(lambda: model_screen(OrderDraft)),
            "workbench.ec4x.reader.walked": _no_drift,
            "workbench.ec4x.drift.DriftWatch.occurrences": _no_drift,
        },
    ),
    ("screen and pydantic", {"workbench.bulk.screened": _none_refused, "workbench.bulk.check": _all_valid}),
    ("decisions", {"workbench.ec4x.tables.insert_decisions": _nothing}),
)


@contextmanager
def without(steps) -> Iterator[None]:
    """Every step of `steps` (label, {name: stand-in}) taken out while the block runs."""
    with ExitStack() as patches:
        for _, replaced in steps:
            for target, new in replaced.items():
                patches.enter_context(mock.patch(target, new))
        yield


def timed(runs: int, fn) -> tuple[float, float]:
    """(wall, CPU) seconds of the fastest of `runs` calls of `fn`."""
    best = (float("inf"), 0.0)
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        best = min(best, (time.perf_counter() - wall, time.process_time() - cpu))
    return best


def ingest(path: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        report = workbench.ingest([path], db=Path(tmp) / "w.duckdb")
        assert report.files[0].status == "ingested", report.files[0].message


def ladder(name: str, path: Path, baseline, steps, aim: float, runs: int) -> list[tuple[str, float, float]]:
    """Print the ingest of `path` with `steps` taken out one after another, against
    `baseline`; return (label, wall, CPU) of each line."""
    base_wall, base_cpu = timed(runs, baseline)
    print(f"{name}; best of {runs} on {machine()}")
    print(f"  {'':44s} {'wall':>6s} {'CPU':>6s}  ratio")
    print(f"  {'DuckDB read_json':44s} {base_wall:5.2f}s {base_cpu:5.2f}s")
    lines = [("ingest", *timed(runs, lambda: ingest(path)))]
    with ExitStack() as taken_out:
        for count, step in enumerate(steps, 1):
            taken_out.enter_context(without([step]))
            names = ", ".join(name for name, _ in steps[:count])
            lines.append((f"without {names}", *timed(runs, lambda: ingest(path))))
    previous = None
    for label, wall, cpu in lines:
        cost = "" if previous is None else f"   (that step: {previous[0] - wall:+.2f}s, {previous[1] - cpu:+.2f} CPU-s)"
        print(f"  {label:44s} {wall:5.2f}s {cpu:5.2f}s  {wall / base_wall:5.2f}{cost}")
        previous = (wall, cpu)
    cores = os.cpu_count() or 1
    budget = aim * base_wall
    print(
        f"  aim {aim}: {budget:.2f} s of wall time, in which {cores} cores give at most "
        f"{budget * cores:.2f} CPU-s; the ingest uses {lines[0][2]:.2f}"
    )
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--drafts", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    events = damage_log(args.events)

    def read_events() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            read_json_plain(events, Path(tmp) / "b.duckdb")

    ladder(f"damage ingest, {args.events:,} real events", events, read_events, DAMAGE_STEPS, 2.0, args.runs)
    print()
    drafts = ec4x_drafts.drafts_log(args.drafts)
    ladder(
        f"EC4X ingest, {args.drafts:,} order drafts",
        drafts,
        lambda: ec4x_drafts.duckdb_read_json(drafts),
        EC4X_STEPS,
        3.0,
        args.runs,
    )
    print(f"\n  reproduce: python -m bench.steps --events {args.events} --drafts {args.drafts} --runs {args.runs}")


if __name__ == "__main__":
    main()
