"""`workbench demo`: the whole loop on the built-in sample corpus."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TextIO

from workbench import connection
from workbench.errors import OlderDatabase, WorkbenchError
from workbench.ingestion import ingest
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
    con = connection.connect(db, read_only=True)
    try:
        for line in summary(con):
            print(line, file=out)
    finally:
        con.close()
    print(f"\ndatabase: {db}\nfigures:  {figures}/ ({len(written)} files)", file=out)
    # the commands as typed from here: --db where the demo's database is not the default
    db_option = "" if Path(db).resolve() == Path(connection.default_db()).resolve() else f" --db {db}"
    print(
        f"next: `workbench lab{db_option}` to explore the notebooks, `workbench records{db_option} --invalid` to "
        f"read the failing records, `workbench report{db_option} -o report.html` to share it all, or "
        f"`workbench plot emotions{db_option} --game ID -o fig.svg`"
        f"  (done in {time.perf_counter() - started:.0f} s)",
        file=out,
    )
    return db


def write_figures(db: Path, figures: Path, out: TextIO) -> list[Path]:
    from workbench import plots

    written = []
    con = connection.connect(db, read_only=True)
    try:
        for kind in plots.FIGURES:
            try:
                spec = plots.figure_spec(kind, con)
            except WorkbenchError as exc:
                print(f"  figure {kind}: skipped ({exc})", file=out)
                continue
            written += [plots.save(spec, figures / f"{kind}{suffix}") for suffix in FIGURE_SUFFIXES]
    finally:
        con.close()
    return written


def summary(con) -> list[str]:
    """One line per format (files, records, rejected, violations by severity), the
    decision-quality headline per format, and each format's own extra lines."""
    lines = [
        "",
        f"{'format':<10} {'files':>6} {'records':>9} {'rejected':>9} {'errors':>7} {'warnings':>9} {'info':>6}",
    ]
    lines += [
        f"{r['format']:<10} {r['files']:>6} {r['records']:>9} {r['rejected']:>9} {r['errors']:>7} "
        f"{r['warnings']:>9} {r['info']:>6}"
        for r in connection.format_summary(con).iter_rows(named=True)
    ]
    lines += [
        "",
        "scorecard (valid decisions, 95% interval clustered by game, n; best and worst model or agent by validity):",
    ]
    lines += scorecard_headline(con)
    for fmt in FORMATS.values():
        if fmt.summary is not None:
            lines += fmt.summary(con)
    return lines


def scorecard_headline(con) -> list[str]:
    """Per format: all answered decisions' validity, and its best and worst model, each
    with its 95% interval clustered by game and n, so a small sample reads as one; and
    the calls that got no answer, left out of it."""
    import polars as pl

    from workbench.comparison import scorecard

    lines = []
    formats = {row["format"]: row for row in scorecard(con, by="format").iter_rows(named=True)}
    for fmt, card in scorecard(con).group_by("format", maintain_order=True):
        ranked = card.filter(pl.col("decisions") > 0).sort(["validity", "decisions"], descending=[True, True])
        best, worst = ranked.row(0, named=True), ranked.row(-1, named=True)
        failed = formats[fmt[0]]["failed"]
        lines.append(
            f"  {fmt[0]:<10} {_rate(formats[fmt[0]])}; best {best['model']} {_rate(best)}, "
            f"worst {worst['model']} {_rate(worst)}"
            + (f"; {failed} failed calls left out (no answer came back)" if failed else "")
        )
    return lines


def _rate(row: dict) -> str:
    games = f"{row['games']} game" + ("s" if row["games"] != 1 else "")
    return f"{row['validity']:.1%} ({row['ci_low']:.0%}-{row['ci_high']:.0%}, n={row['decisions']} in {games})"
