"""A growing replay log: re-ingesting it after it grew by 1% against ingesting the whole
file into a new database, both measured in the same run (aim: ratio <= 0.1).

The workload is made of the real Damage simulator's logs (../shared/corpus/damage),
repeated under fresh game ids up to the size asked for, so its shapes are the real
program's, not the workbench's own generator's.

    python -m bench.append [--events 300000] [--runs 3]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import workbench
from bench.common import damage_log, machine


def main(argv=None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    source = damage_log(args.events)
    content = source.read_bytes()
    cut = content.index(b"\n", int(len(content) * 0.99)) + 1
    whole, grown = [], []
    with tempfile.TemporaryDirectory() as tmp:
        log, db, start_db = Path(tmp) / source.name, Path(tmp) / "w.duckdb", Path(tmp) / "start.duckdb"
        log.write_bytes(content[:cut])
        workbench.ingest([log], db=start_db)
        for _ in range(args.runs):
            log.write_bytes(content)
            db.unlink(missing_ok=True)
            whole.append(_timed(log, db, "ingested"))
            log.write_bytes(content[:cut])
            shutil.copyfile(start_db, db)
            log.write_bytes(content)
            grown.append(_timed(log, db, "appended"))
    lines = content.count(b"\n")
    ours, baseline = min(grown), min(whole)
    print(f"growing log, {lines:,} real events ({len(content) / 1e6:.0f} MB), 1% appended, on {machine()}")
    print(f"  ingest of the whole file into a new database: {baseline:6.2f} s")
    added = content[cut:].count(b"\n")
    print(f"  re-ingest after it grew by 1% ({added:,} lines): {ours:6.2f} s")
    print(f"  ratio: {ours / baseline:.3f}  (aim <= 0.1)")
    return {"ratio": ours / baseline, "append_s": ours, "whole_s": baseline}


def _timed(log: Path, db: Path, expected: str) -> float:
    start = time.perf_counter()
    (file,) = workbench.ingest([log], db=db).files
    elapsed = time.perf_counter() - start
    assert file.status == expected, (file.status, file.message)
    return elapsed


if __name__ == "__main__":
    main()
