"""Every benchmark, each measured against its baseline in the same run, on real program
output (../shared/corpus), not on the workbench's own generator's.

    python -m bench.run            # the full set
    python -m bench.run --quick    # smaller sizes, for a first look

1. replay ingest of a 300,000-event log vs DuckDB's read_json      (aim <= 2.0)
2. the same vs a per-line pydantic validate_json loop, batched inserts (aim >= 10x faster)
3. the real Stellaris save to snapshot + resources vs unzipping it (aim <= 3.0)
4. scale: 10k, 100k, 1M events, time and peak memory vs read_json  (aim: linear, < 1 GB)
5. replay scrubber step vs one DuckDB query per step               (aim: mean < 50 ms, p95 < 100 ms);
   figure export vs a one-point chart
6. a log grown by 1%, re-ingested, vs ingesting the whole file     (aim <= 0.1)
7. 100,000 EC4X order drafts vs DuckDB's read_json                 (aim <= 3.0)
8. `workbench plot` (PNG) and `workbench report` as whole processes
   vs `python -c "import altair"`                                  (aims: <= 1.5 s, <= 3 s)
9. finding records among 1M events vs one-table queries and grep  (printed; no aim set)
10. export --otlp of 400,000 decisions, ingest of a 196 MB *.otlp.json,
   each vs a baseline                                              (aim: peak memory < 1 GB each)
11. Damage play judged: the real corpus, 100,000 decisions, vs
   ranking each deal's hands one at a time                         (aims: <= 2 s, <= 30 s, >= 10x)

Where the time of 1 and 7 goes, step by step: python -m bench.steps
"""

from __future__ import annotations

import argparse
import time

from bench import (
    append,
    commands,
    damage_ingest,
    ec4x_drafts,
    figures,
    otlp,
    play,
    records,
    scale,
    scrubber,
    stellaris_save,
)
from bench.common import machine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer runs")
    quick = parser.parse_args().quick
    started = time.perf_counter()
    print(f"workbench benchmarks on {machine()}\n")
    ingest = damage_ingest.main(["--events", "30000" if quick else "300000", "--runs", "1" if quick else "3"])
    print()
    save = stellaris_save.main(["--runs", "3" if quick else "7"])
    print()
    curve = scale.main(["--sizes", "10000", "100000"] if quick else None)
    print()
    steps = scrubber.main(["--events", "5000"] if quick else [])
    print()
    exports = figures.main([])
    print()
    grown = append.main(
        ["--events", "30000", "--drafts", "10000", "--decisions", "10000", "--runs", "1"] if quick else ["--runs", "3"]
    )
    print()
    drafts = ec4x_drafts.main(["--drafts", "20000" if quick else "100000", "--runs", "1" if quick else "3"])
    print()
    loop = commands.main(["--runs", "2" if quick else "5"])
    print()
    found = records.main(["--events", "100000" if quick else "1000000", "--runs", "1" if quick else "3"])
    print()
    traces = otlp.main(["--decisions", "40000", "--json-mb", "20"] if quick else [])
    print()
    judging = play.main(["--decisions", "10000"] if quick else [])
    print("\nsummary")
    print(f"  1. ingest / read_json:        {ingest['ratio']:.2f}  (aim <= 2.0)")
    print(f"  2. speed-up vs per-line loop: {ingest['speedup']:.1f}x  (aim >= 10x)")
    if save:
        print(f"  3. save extraction / unzip:   {save['ratio']:.2f}  (aim <= 3.0)")
    print(f"  4. peak memory at {curve[-1][0]:,} events: {curve[-1][2]:.0f} MB  (aim < 1024 MB)")
    print(
        f"  5. scrubber step: mean {steps['mean_ms']:.2f} ms, p95 {steps['p95_ms']:.2f} ms  "
        f"(aims 50 / 100 ms; {steps['mean_ms'] / steps['baseline_ms']:.2f} of a query per step); "
        f"slowest figure export {max(exports.values()):.2f} s"
    )
    print(
        "  6. 1% appended / whole ingest: "
        + ", ".join(f"{name.removeprefix('ratio ')} {ratio:.3f}" for name, ratio in grown.items() if name != "ratio")
        + "  (aim <= 0.1 each)"
    )
    print(f"  7. EC4X drafts / read_json:   {drafts['ratio']:.2f}  (aim <= 3.0)")
    print(
        f"  8. plot PNG {loop['plot']:.2f} s, report {loop['report']:.2f} s; import altair "
        f"{loop['import altair']:.2f} s  (aims <= 1.5 s, <= 3 s)"
    )
    print("  9. records / baseline: " + ", ".join(f"{name} {ratio:.1f}" for name, ratio in found.items()))
    print(
        f" 10. OTLP peak memory: export {traces['export']:.0f} MB, ingest of *.otlp.json {traces['ingest']:.0f} MB  "
        f"(aim < 1024 MB each)"
    )
    print(
        f" 11. play judged: real corpus {judging['corpus']:.2f} s, {judging['decisions']:,} decisions "
        f"{judging['seconds']:.1f} s, {judging['speedup']:.1f}x the one-at-a-time loop  "
        "(aims <= 2 s, <= 30 s, >= 10x)"
    )
    print(f"\nall in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
