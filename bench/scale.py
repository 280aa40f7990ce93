"""Scale curve of replay ingest of real simulator output: 10k, 100k and 1M events, wall
time and peak memory, each in a fresh process, against DuckDB's `read_json` of the same
file in a fresh process (aims: time linear in events, peak memory under 1 GB at 1M).

    python -m bench.scale [--sizes 10000 100000 1000000]
"""

from __future__ import annotations

import argparse
import tempfile

from bench.common import damage_log, machine, peak_rss_mb_of

INGEST = """
import workbench
report = workbench.ingest([{path!r}], db={db!r})
assert report.files[0].status == "ingested", report.files[0].message
"""
READ_JSON = """
from pathlib import Path
from bench.common import read_json_plain
read_json_plain(Path({path!r}), Path({db!r}))
"""


def measure(events: int, code: str = INGEST) -> tuple[float, float, int]:
    path = damage_log(events)
    with tempfile.TemporaryDirectory() as tmp:
        seconds, peak_mb = peak_rss_mb_of(code.format(path=str(path), db=f"{tmp}/w.duckdb"))
    return seconds, peak_mb, path.stat().st_size


def main(argv=None) -> list[tuple[int, float, float]]:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    args = parser.parse_args(argv)
    print(f"scale curve of replay ingest on {machine()}")
    rows = []
    for events in args.sizes:
        seconds, peak_mb, size = measure(events)
        floor_s, floor_mb, _ = measure(events, READ_JSON)
        rows.append((events, seconds, peak_mb))
        print(
            f"  {events:>9,} events ({size / 1e6:5.0f} MB): {seconds:6.1f} s, peak memory {peak_mb:5.0f} MB; "
            f"read_json {floor_s:5.1f} s, {floor_mb:5.0f} MB; ratio {seconds / floor_s:.1f} time, "
            f"{peak_mb / floor_mb:.1f} memory"
        )
    first, last = rows[0], rows[-1]
    growth = (last[1] / first[1]) / (last[0] / first[0])
    print(
        f"  time per event at {last[0]:,} vs {first[0]:,}: {growth:.2f}x  (1.0 = linear; process start-up "
        f"makes small sizes look slow)"
    )
    print(f"  peak memory at {last[0]:,} events: {last[2]:.0f} MB  (aim < 1024 MB)")
    print("  reproduce: python -m bench.scale --sizes", *args.sizes)
    return rows


if __name__ == "__main__":
    main()
