"""`workbench demo`: the whole loop on the built-in sample corpus."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TextIO

from workbench import catalog
from workbench.errors import OlderDatabase, WorkbenchError
from workbench.ingest import ingest
from workbench.registry import FORMATS

FIGURE_SUFFIXES = (".png", ".html")


def run_demo(data: Path = Path("data"), out: TextIO = sys.stdout, progress: bool = True) -> Path:
    """Synthesize `data/sample` if missing, ingest it into `data/workbench.duckdb`,
    write the standard figures to `data/figures/`, and print a summary."""
    started = time.perf_counter()
    sample, db, figures = data / "sample", data / "workbench.duckdb", data / "figures"
    if not (sample / "manifest.json").exists():
        from workbench.synth import synthesize

        print(f"making the sample corpus in {sample} ...", file=out)
        synthesize(sample, scale=1, seed=7)
    print(f"ingesting {sample} into {db} ...", file=out)
    try:
        report = ingest([sample], db=db, progress=progress)
    except OlderDatabase:
        # The demo's own database: rebuilt rather than refused.
        print(f"  {db} was written by an older workbench; rebuilding it", file=out)
        for stale in (db, db.with_name(db.name + ".wal")):
            stale.unlink(missing_ok=True)
        report = ingest([sample], db=db, progress=progress)
    new = sum(f.status == "ingested" for f in report.files)
    print(f"  {new} files ingested, {len(report.files) - new} already there or failed", file=out)
    for failed in report.failed:
        print(f"  failed: {failed.message}", file=out)
    written = write_figures(db, figures, out)
    con = catalog.connect(db, read_only=True)
    try:
        for line in summary(con):
            print(line, file=out)
    finally:
        con.close()
    print(f"\ndatabase: {db}\nfigures:  {figures}/ ({len(written)} files)", file=out)
    print("next: `workbench lab` to explore the notebooks, or `workbench plot emotions --game ID -o fig.svg`"
          f"  (done in {time.perf_counter() - started:.0f} s)", file=out)
    return db


def write_figures(db: Path, figures: Path, out: TextIO) -> list[Path]:
    from workbench import plots

    written = []
    con = catalog.connect(db, read_only=True)
    try:
        for kind in plots.FIGURES:
            try:
                chart = plots.figure(kind, con)
            except WorkbenchError as exc:
                print(f"  figure {kind}: skipped ({exc})", file=out)
                continue
            written += [plots.save(chart, figures / f"{kind}{suffix}") for suffix in FIGURE_SUFFIXES]
    finally:
        con.close()
    return written


def summary(con) -> list[str]:
    """One line per format (files, records, rejected, violations by severity), the
    decision-quality headline per format, and each format's own extra lines."""
    lines = ["", f"{'format':<10} {'files':>6} {'records':>9} {'rejected':>9} {'errors':>7} {'warnings':>9} {'info':>6}"]
    rows = con.execute(
        """
        SELECT s.format, count(DISTINCT s.source_id), sum(s.records), sum(s.rejected),
               coalesce(sum(v.errors), 0), coalesce(sum(v.warnings), 0), coalesce(sum(v.infos), 0)
        FROM sources s LEFT JOIN (
            SELECT source_id, count(*) FILTER (severity = 'error') AS errors,
                   count(*) FILTER (severity = 'warning') AS warnings, count(*) FILTER (severity = 'info') AS infos
            FROM violations GROUP BY source_id) v USING (source_id)
        GROUP BY s.format ORDER BY s.format
        """
    ).fetchall()
    lines += [f"{fmt:<10} {files:>6} {records:>9} {rejected:>9} {e:>7} {w:>9} {i:>6}"
              for fmt, files, records, rejected, e, w, i in rows]
    lines += ["", "decision quality (valid decisions / all, by format; best and worst model or agent):"]
    from workbench.plots import decision_headline

    for row in decision_headline(con).iter_rows(named=True):
        lines.append(
            f"  {row['format']:<10} {row['valid_rate']:6.1%} of {row['decisions']} decisions, "
            f"{row['models']} models/agents; best {row['best_model']} ({row['best_rate']:.0%}), "
            f"worst {row['worst_model']} ({row['worst_rate']:.0%})"
        )
    for fmt in FORMATS.values():
        if fmt.summary is not None:
            lines += fmt.summary(con)
    return lines
