"""Damage replay ingest (all tables, full validation) against baselines measured in
the same run:
  1. DuckDB's own `read_json` of the same file into a table   (aim: ratio <= 2.0)
  2. the per-line loop a user would write: pydantic `model_validate_json` per line
     and an INSERT per row                                      (aim: >= 5x faster)

    python -m bench.damage_ingest [--events 300000]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import duckdb

from bench.common import best_of, damage_log, machine
import workbench
from pydantic import TypeAdapter

from workbench.damage.models import Event


def workbench_ingest(path: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        report = workbench.ingest([path], db=Path(tmp) / "w.duckdb")
        assert report.files[0].status == "ingested", report.files[0].message


def duckdb_read_json(path: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        con = duckdb.connect(str(Path(tmp) / "b.duckdb"))
        con.execute(f"CREATE TABLE events AS SELECT * FROM read_json('{path}', format='newline_delimited', "
                    "ignore_errors=true)")
        con.close()


def per_line_loop(path: Path, limit: int) -> float:
    """Seconds per line of the naive loop, measured on the first `limit` lines."""
    import time

    adapter = TypeAdapter(Event)
    with tempfile.TemporaryDirectory() as tmp:
        con = duckdb.connect(str(Path(tmp) / "n.duckdb"))
        con.execute("CREATE TABLE events (seq BIGINT, type VARCHAR, payload JSON, error VARCHAR)")
        start = time.perf_counter()
        with open(path) as handle:
            for seq, line in enumerate(handle, 1):
                if seq > limit:
                    break
                try:
                    adapter.validate_json(line)
                    error = None
                except Exception as exc:  # noqa: BLE001 - the naive loop keeps going
                    error = str(exc)[:200]
                con.execute("INSERT INTO events VALUES (?, json_extract_string(?, '$.type'), "
                            "json_extract(?, '$.payload'), ?)", [seq, line, line, error])
        elapsed = time.perf_counter() - start
        con.close()
    return elapsed / min(limit, seq)


def main(argv=None) -> dict[str, float]:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    path = damage_log(args.events)
    lines = sum(1 for _ in open(path))
    size_mb = path.stat().st_size / 1e6
    ours = best_of(args.runs, lambda: workbench_ingest(path))
    baseline = best_of(args.runs, lambda: duckdb_read_json(path))
    naive = per_line_loop(path, limit=20_000) * lines
    print(f"damage ingest, {lines:,} events ({size_mb:.0f} MB) on {machine()}")
    print(f"  workbench ingest (all tables, full validation): {ours:6.2f} s")
    print(f"  DuckDB read_json into a table:                  {baseline:6.2f} s")
    print(f"  per-line pydantic + INSERT loop (extrapolated from 20,000 lines): {naive:6.1f} s")
    print(f"  ratio vs read_json: {ours / baseline:.2f}  (aim <= 2.0)")
    print(f"  speed-up vs per-line loop: {naive / ours:.1f}x  (aim >= 5x)")
    print("  reproduce: python -m bench.damage_ingest --events", args.events)
    return {"ingest_s": ours, "read_json_s": baseline, "ratio": ours / baseline, "speedup": naive / ours}


if __name__ == "__main__":
    main()
