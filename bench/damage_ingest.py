"""Damage replay ingest (all tables, full validation) of real simulator output, against
baselines measured in the same run:
  1. DuckDB's own `read_json` of the same file into a table with the envelope's columns
     and the payload as JSON                                      (aim: ratio <= 2.0)
  2. the loop a user would write: each line validated with pydantic's `validate_json`,
     its envelope columns and payload kept, rows inserted in batches of 20,000 through
     Arrow, over the whole file                                     (aim: >= 10x faster)

    python -m bench.damage_ingest [--events 300000] [--runs 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import duckdb
import pyarrow as pa
from pydantic import TypeAdapter, ValidationError

import workbench
from bench.common import best_of, damage_log, machine, read_json_plain
from workbench.damage.models import Event

LOOP_BATCH = 20_000


def workbench_ingest(path: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        report = workbench.ingest([path], db=Path(tmp) / "w.duckdb")
        assert report.files[0].status == "ingested", report.files[0].message


def duckdb_read_json(path: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        read_json_plain(path, Path(tmp) / "b.duckdb")


def per_line_loop(path: Path) -> None:
    """The straightforward program: each line validated with pydantic's
    `validate_json`, its envelope's columns and payload (as JSON) kept with its first
    error, and each 20,000 rows inserted at once (no drift, emotions or decisions)."""
    adapter = TypeAdapter(Event)
    columns = ("seq", "game_id", "type", "ts", "turn", "payload", "error")
    with tempfile.TemporaryDirectory() as tmp:
        con = duckdb.connect(str(Path(tmp) / "n.duckdb"))
        con.execute(
            "CREATE TABLE events (seq BIGINT, game_id VARCHAR, type VARCHAR, ts TIMESTAMP, turn BIGINT, "
            "payload JSON, error VARCHAR)"
        )
        rows: dict[str, list] = {name: [] for name in columns}

        def flush() -> None:
            batch = pa.table(rows)  # noqa: F841 - read by name below
            con.execute("INSERT INTO events SELECT * FROM batch")
            for column in rows.values():
                column.clear()

        with open(path, "rb") as handle:
            for seq, line in enumerate(handle, 1):
                try:
                    event = adapter.validate_json(line)
                except ValidationError as exc:
                    values = (seq, None, None, None, None, None, str(exc.errors(include_url=False)[0]["msg"]))
                else:
                    payload = event.payload
                    turn = getattr(payload, "turn", None)
                    values = (
                        seq,
                        event.game_id,
                        event.type,
                        event.ts,
                        turn if type(turn) is int else None,
                        payload.model_dump_json(),
                        None,
                    )
                for name, value in zip(columns, values):
                    rows[name].append(value)
                if len(rows["seq"]) == LOOP_BATCH:
                    flush()
        flush()
        con.close()


def main(argv=None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    path = damage_log(args.events)
    lines = sum(1 for _ in open(path, "rb"))
    size_mb = path.stat().st_size / 1e6
    ours = best_of(args.runs, lambda: workbench_ingest(path))
    baseline = best_of(args.runs, lambda: duckdb_read_json(path))
    start = time.perf_counter()
    per_line_loop(path)
    naive = time.perf_counter() - start
    print(f"damage ingest, {lines:,} real events ({size_mb:.0f} MB) on {machine()}; best of {args.runs}")
    print(f"  workbench ingest (all tables, full validation): {ours:6.2f} s")
    print(f"  DuckDB read_json, envelope columns + payload JSON: {baseline:6.2f} s")
    print(f"  per-line pydantic validate_json loop, batched inserts (whole file, once): {naive:6.1f} s")
    print(f"  ratio vs read_json: {ours / baseline:.2f}  (aim <= 2.0)")
    print(f"  speed-up vs per-line loop: {naive / ours:.1f}x  (aim >= 10x)")
    print(f"  reproduce: python -m bench.damage_ingest --events {args.events} --runs {args.runs}")
    return {"ratio": ours / baseline, "speedup": naive / ours}


if __name__ == "__main__":
    main()
