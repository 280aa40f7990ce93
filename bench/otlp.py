"""OpenTelemetry out and in at scale: peak memory (and wall time) of `workbench export
--otlp` of 400,000 decisions, and of ingesting a `*.otlp.json` export of about 196 MB,
each in a fresh process, each against a baseline measured in the same run (aims: both
under 1 GB, and a peak that grows with the largest record, not with the file).

- export: the decisions of an Agent Arena log (`bench.arena_log`) as `*.otlp.jsonl`,
  against the same export of a quarter of them (a bounded export has about the same
  peak) and against `export --parquet` of the same database (DuckDB's own writer).
- ingest: the `*.otlp.json` export (one JSON object) of enough decisions for --json-mb,
  against ingesting the same spans as `*.otlp.jsonl` (one export a line: the JSONL
  formats' bound).

    python -m bench.otlp [--decisions 400000] [--json-mb 196]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench.arena_log import decisions_log
from bench.common import WORK, machine, peak_rss_mb_of

INGEST = """
import workbench
report = workbench.ingest([{path!r}], db={db!r})
assert [f.status for f in report.files] == ["ingested"], report.files[0].message
assert report.files[0].rejected == 0, report.files[0].rejected
"""
EXPORT_OTLP = """
from workbench.otel.writer import export_otlp
export_otlp({out!r}, db={db!r}, overwrite=True)
"""
EXPORT_PARQUET = """
from workbench.parquet_tree import export_parquet
export_parquet({out!r}, db={db!r}, overwrite=True)
"""
# Bytes of OTLP/JSON a decision of the Arena log comes to, about: to size the export.
SPAN_BYTES = 850


def database(decisions: int) -> Path:
    """A database of the `decisions` lines of an Arena log (kept for the next run)."""
    db = WORK / f"otlp_{decisions}.duckdb"
    if not db.exists():
        log = decisions_log(decisions)
        partial = db.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        peak_rss_mb_of(
            INGEST.format(path=str(log), db=str(partial)).replace(
                "assert report.files[0].rejected == 0, report.files[0].rejected\n", ""
            )
        )
        partial.rename(db)
    return db


def exported(db: Path, name: str) -> Path:
    """The OTLP export of `db` as `name` (kept for the next run)."""
    out = WORK / name
    if not out.exists():
        peak_rss_mb_of(EXPORT_OTLP.format(out=str(out), db=str(db)))
    return out


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser()
    parser.add_argument("--decisions", type=int, default=400_000, help="decisions exported (default: 400,000)")
    parser.add_argument("--json-mb", type=float, default=196, help="size of the *.otlp.json ingested (default: 196)")
    args = parser.parse_args(argv)
    print(f"OpenTelemetry export and ingest at scale on {machine()}")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        db, quarter = database(args.decisions), database(args.decisions // 4)
        seconds, peak = peak_rss_mb_of(EXPORT_OTLP.format(out=f"{tmp}/all.otlp.jsonl", db=str(db)))
        size = Path(f"{tmp}/all.otlp.jsonl").stat().st_size
        small_s, small_peak = peak_rss_mb_of(EXPORT_OTLP.format(out=f"{tmp}/quarter.otlp.jsonl", db=str(quarter)))
        floor_s, floor_peak = peak_rss_mb_of(EXPORT_PARQUET.format(out=f"{tmp}/tree", db=str(db)))
        results["export"] = peak
        print(
            f"  export --otlp of {args.decisions:,} decisions ({size / 1e6:.0f} MB): {seconds:.1f} s, peak memory "
            f"{peak:.0f} MB  (aim < 1024 MB)"
        )
        print(
            f"    vs a quarter of them: {small_s:.1f} s, {small_peak:.0f} MB; peak ratio {peak / small_peak:.2f} "
            f"(1.0: bounded)"
        )
        print(
            f"    vs export --parquet of the same database: {floor_s:.1f} s, {floor_peak:.0f} MB; peak ratio "
            f"{peak / floor_peak:.2f}"
        )

        spans = int(args.json_mb * 1e6 / SPAN_BYTES)
        source = database(spans)
        one, lines = exported(source, f"otlp_{spans}.otlp.json"), exported(source, f"otlp_{spans}.otlp.jsonl")
        seconds, peak = peak_rss_mb_of(INGEST.format(path=str(one), db=f"{tmp}/one.duckdb"))
        floor_s, floor_peak = peak_rss_mb_of(INGEST.format(path=str(lines), db=f"{tmp}/lines.duckdb"))
        results["ingest"] = peak
        print(
            f"  ingest of a *.otlp.json of {one.stat().st_size / 1e6:.0f} MB ({spans:,} spans): {seconds:.1f} s, "
            f"peak memory {peak:.0f} MB  (aim < 1024 MB)"
        )
        print(
            f"    vs the same spans as *.otlp.jsonl ({lines.stat().st_size / 1e6:.0f} MB): {floor_s:.1f} s, "
            f"{floor_peak:.0f} MB; peak ratio {peak / floor_peak:.2f} (1.0: the JSONL formats' bound)"
        )
    print(f"  reproduce: python -m bench.otlp --decisions {args.decisions} --json-mb {args.json_mb:g}")
    return results


if __name__ == "__main__":
    main()
