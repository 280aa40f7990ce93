"""The Spark engine against DuckDB on one machine: the same files of real Damage logs
(10M events by default: ten files of the real simulator's output, each game under a
fresh id) through `workbench ingest --engine spark` (local mode, every core) and
through the DuckDB ingest, each in a fresh process tree; wall time, and peak memory of
the whole tree (the JVM and its Python workers included), sampled every 0.2 s. Then
the scorecard from each, timed the same way.

    python -m bench.spark [--events 10000000] [--files 10]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from bench.common import ROOT, WORK, damage_log, machine

SPARK_INGEST = "workbench ingest {logs} --engine spark --parquet {tree} --quiet"
DUCKDB_INGEST = "workbench ingest {logs} --db {db} --quiet"
SPARK_CARD = "workbench scorecard --parquet {tree} --engine spark"
DUCKDB_CARD = "workbench scorecard --db {db}"


def logs(events: int, files: int) -> Path:
    """`files` files of `events / files` real events each, every game renamed per file."""
    folder = WORK / f"spark_{events}_{files}"
    if folder.is_dir() and len(list(folder.glob("*.events.jsonl"))) == files:
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    text = damage_log(events // files).read_text()
    for number in range(files):
        renamed = re.sub(r'"(game|tournament)_(\w+?)_([0-9a-f]{6})(c\d+)"', rf'"\1_\2_\3\4f{number}"', text)
        (folder / f"part{number:02}.events.jsonl").write_text(renamed)
    return folder


def run(command: str) -> tuple[float, float]:
    """Wall seconds and peak MB of the resident memory summed over the command's
    process tree."""
    executable = Path(sys.executable).with_name("workbench")
    argv = [str(executable), *command.split()[1:]]
    start = time.perf_counter()
    process = psutil.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            try:
                tree = [process, *process.children(recursive=True)]
                peak[0] = max(peak[0], sum(p.memory_info().rss for p in tree if p.is_running()))
            except psutil.Error:
                pass
            time.sleep(0.2)

    sampler = threading.Thread(target=sample)
    sampler.start()
    _, err = process.communicate()
    done.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{command} failed: {err.decode()[-500:]}")
    return time.perf_counter() - start, peak[0] / 1e6


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--files", type=int, default=10)
    args = parser.parse_args(argv)
    folder = logs(args.events, args.files)
    size = sum(p.stat().st_size for p in folder.glob("*.jsonl"))
    print(f"Spark (local mode) against DuckDB on {machine()}: {args.events:,} real Damage events in "
          f"{args.files} files ({size / 1e9:.1f} GB)")
    results = {}
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        places = {"logs": folder, "tree": Path(tmp) / "lake", "db": Path(tmp) / "w.duckdb"}
        for name, command in (("duckdb ingest", DUCKDB_INGEST), ("spark ingest", SPARK_INGEST),
                              ("duckdb scorecard", DUCKDB_CARD), ("spark scorecard", SPARK_CARD)):
            results[name] = run(command.format(**places))
            seconds, peak = results[name]
            print(f"  {name:<17} {seconds:7.1f} s, peak memory {peak:7.0f} MB")
        tree_mb = sum(p.stat().st_size for p in places["tree"].rglob("*.parquet")) / 1e6
        print(f"  the tree: {tree_mb:.0f} MB of Parquet; the database: {places['db'].stat().st_size / 1e6:.0f} MB")
    for step in ("ingest", "scorecard"):
        (spark_s, spark_mb), (duck_s, duck_mb) = results[f"spark {step}"], results[f"duckdb {step}"]
        print(f"  {step}: Spark / DuckDB = {spark_s / duck_s:.2f}x time, {spark_mb / duck_mb:.2f}x peak memory")
    print(f"  reproduce: python -m bench.spark --events {args.events} --files {args.files}")
    return results


if __name__ == "__main__":
    main()
