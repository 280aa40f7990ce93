"""Growing logs: re-ingesting each after it grew by 1% against ingesting the whole file
into a new database, both measured in the same run (aim: ratio <= 0.1 for every one).

The workloads are not the workbench's own generator's: a replay log made of the real
Damage simulator's logs (../shared/corpus/damage) repeated under fresh game ids, and
an EC4X order-draft log and an Agent Arena decision log written by the benchmarks with
the real programs' shapes (`bench.ec4x_drafts`, `bench.arena_log`).

    python -m bench.append [--events 300000] [--drafts 100000] [--decisions 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import workbench
from bench.arena_log import decisions_log
from bench.common import damage_log, machine
from bench.ec4x_drafts import drafts_log


def main(argv=None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--drafts", type=int, default=100_000)
    parser.add_argument("--decisions", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    logs = {
        "Damage replay": damage_log(args.events),
        "EC4X order drafts": drafts_log(args.drafts),
        "Arena decisions": decisions_log(args.decisions),
    }
    print(f"growing logs, 1% appended, on {machine()}; best of {args.runs}")
    ratios = {name: grown(name, log, args.runs) for name, log in logs.items()}
    worst = max(ratios, key=ratios.get)
    print(f"  ratio, the worst of them: {ratios[worst]:.3f} ({worst})  (aim <= 0.1)")
    print(
        f"  reproduce: python -m bench.append --events {args.events} --drafts {args.drafts} "
        f"--decisions {args.decisions} --runs {args.runs}"
    )
    return {"ratio": ratios[worst], **{f"ratio {name}": ratio for name, ratio in ratios.items()}}


def grown(name: str, source: Path, runs: int) -> float:
    """The ratio of re-ingesting `source` after its last 1% was written to ingesting it
    whole; prints both times."""
    content = source.read_bytes()
    cut = content.index(b"\n", int(len(content) * 0.99)) + 1
    whole, appended = [], []
    with tempfile.TemporaryDirectory() as tmp:
        log, db, start_db = Path(tmp) / source.name, Path(tmp) / "w.duckdb", Path(tmp) / "start.duckdb"
        log.write_bytes(content[:cut])
        workbench.ingest([log], db=start_db)
        for _ in range(runs):
            log.write_bytes(content)
            db.unlink(missing_ok=True)
            whole.append(_timed(log, db, "ingested"))
            log.write_bytes(content[:cut])
            shutil.copyfile(start_db, db)
            log.write_bytes(content)
            appended.append(_timed(log, db, "appended"))
    lines, added = content.count(b"\n"), content[cut:].count(b"\n")
    ours, baseline = min(appended), min(whole)
    print(
        f"  {name}, {lines:,} lines ({len(content) / 1e6:.0f} MB): whole {baseline:5.2f} s; "
        f"after {added:,} more lines {ours:5.2f} s; ratio {ours / baseline:.3f}"
    )
    return ours / baseline


def _timed(log: Path, db: Path, expected: str) -> float:
    start = time.perf_counter()
    (file,) = workbench.ingest([log], db=db).files
    elapsed = time.perf_counter() - start
    assert file.status == expected, (file.status, file.message)
    return elapsed


if __name__ == "__main__":
    main()
