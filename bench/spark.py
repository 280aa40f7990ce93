"""The Spark engine against DuckDB on one machine: the same files of real Damage logs
(10M events by default: ten files of the real simulator's output, each game under a
fresh id) through `workbench ingest --engine spark` (local mode, every core; then a
standalone cluster of a master and two workers of one core each, started here) and
through the DuckDB ingest, each in a fresh process tree; wall time, and peak memory of
the whole tree (the JVM and its Python workers included; the cluster's own JVMs are
not in it), sampled every 0.2 s. Then the scorecard from each, timed the same way (and
through a Spark Connect server started here, as a lab keeps one running), and the
tree's files: how many, and their sizes.

    python -m bench.spark [--events 10000000] [--files 10] [--no-cluster]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from unittest import mock

import psutil

from bench.common import ROOT, WORK, damage_log, machine

SPARK_INGEST = "workbench ingest {logs} --engine spark --parquet {tree} --quiet"
DUCKDB_INGEST = "workbench ingest {logs} --db {db} --quiet"
SPARK_CARD = "workbench scorecard --parquet {tree} --engine spark"
CLUSTER_INGEST = "workbench ingest {logs} --engine spark --parquet {cluster_tree} --master {master} --quiet"
CLUSTER_CARD = "workbench scorecard --parquet {cluster_tree} --engine spark --master {master}"
CONNECT_CARD = "workbench scorecard --parquet {tree} --engine spark --master {server}"
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
    parser.add_argument("--no-cluster", action="store_true", help="local mode only")
    args = parser.parse_args(argv)
    folder = logs(args.events, args.files)
    size = sum(p.stat().st_size for p in folder.glob("*.jsonl"))
    print(
        f"Spark (local mode) against DuckDB on {machine()}: {args.events:,} real Damage events in "
        f"{args.files} files ({size / 1e9:.1f} GB)"
    )
    results = {}
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        places = {
            "logs": folder,
            "tree": Path(tmp) / "lake",
            "db": Path(tmp) / "w.duckdb",
            "cluster_tree": Path(tmp) / "cluster-lake",
        }
        for name, command in (
            ("duckdb ingest", DUCKDB_INGEST),
            ("spark ingest", SPARK_INGEST),
            ("duckdb scorecard", DUCKDB_CARD),
            ("spark scorecard", SPARK_CARD),
        ):
            results[name] = _timed(name, command.format(**places))
        if not args.no_cluster:
            results.update(_on_a_cluster(places))
            results.update(_on_a_connect_server(places))
        sizes = sorted(p.stat().st_size for p in places["tree"].rglob("*.parquet"))
        print(
            f"  the tree: {sum(sizes) / 1e6:.0f} MB of Parquet in {len(sizes)} files (median "
            f"{statistics.median(sizes) / 1e6:.1f} MB, largest {sizes[-1] / 1e6:.0f} MB); the database: "
            f"{places['db'].stat().st_size / 1e6:.0f} MB"
        )
        _same_rows(places)
    for engine in ("spark", "cluster", "connect"):
        for step in ("ingest", "scorecard"):
            if f"{engine} {step}" not in results:
                continue
            (spark_s, spark_mb), (duck_s, duck_mb) = results[f"{engine} {step}"], results[f"duckdb {step}"]
            print(f"  {step}, {engine}: / DuckDB = {spark_s / duck_s:.2f}x time, {spark_mb / duck_mb:.2f}x peak memory")
    print(f"  reproduce: python -m bench.spark --events {args.events} --files {args.files}")
    return results


def _timed(name: str, command: str) -> tuple[float, float]:
    seconds, peak = run(command)
    print(f"  {name:<25} {seconds:7.1f} s, peak memory {peak:7.0f} MB")
    return seconds, peak


def _on_a_cluster(places: dict) -> dict:
    """The ingest and the scorecard on a standalone cluster started here (a master, two
    workers of one core and 1 GB each), the driver in the command's process."""
    sys.path.insert(0, str(ROOT))
    from tests import spark_cluster

    results = {}
    driver = {"PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": spark_cluster.HOST}  # the commands' environment
    with spark_cluster.standalone() as master, mock.patch.dict(os.environ, driver):
        for name, command in (("cluster ingest", CLUSTER_INGEST), ("cluster scorecard", CLUSTER_CARD)):
            results[name] = _timed(name, command.format(master=master, **places))
    return results


def _on_a_connect_server(places: dict) -> dict:
    """The scorecard through a Spark Connect server started here (`local[*]`), as a lab
    keeps one running: the command is a thin client, Spark's start and its first
    queries' warming are the server's. Its first scorecard, then the next (timed)."""
    sys.path.insert(0, str(ROOT))
    from tests import spark_cluster

    with spark_cluster.connect_server(master="local[*]", memory="4g") as server:
        _timed("connect scorecard, first", CONNECT_CARD.format(server=server, **places))
        return {"connect scorecard": _timed("connect scorecard", CONNECT_CARD.format(server=server, **places))}


def _same_rows(places: dict) -> None:
    """Each tree holds the database's rows, table by table (read by DuckDB itself)."""
    import duckdb

    with duckdb.connect(str(places["db"]), read_only=True) as con:
        for table in ("damage_events", "decisions", "violations", "sources"):
            in_db = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
            for tree in ("tree", "cluster_tree"):
                if places[tree].is_dir():
                    in_tree = con.execute(
                        f"SELECT count(*) FROM read_parquet('{places[tree] / table}/**/*.parquet')"
                    ).fetchall()[0][0]
                    if in_tree != in_db:
                        raise SystemExit(f"{tree} holds {in_tree} rows of {table}, the database {in_db}")
    print("  every tree holds the database's rows of damage_events, decisions, violations and sources")


if __name__ == "__main__":
    main()
