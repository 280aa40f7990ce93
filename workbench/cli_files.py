"""The commands of `workbench` that take files in or write them: ingest (and its
--watch), validate, formats, synth, export, compact, demo and lab. Each takes the parsed
arguments (`workbench.cli`), calls the package, prints, and returns the exit code."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from workbench.cli_io import engine, printed_as_data
from workbench.errors import WorkbenchError, is_interrupt
from workbench.paths import check_tree


def ingest_command(args) -> int:
    from workbench.ingestion import ingest

    if engine(args) == "spark":
        if args.spec:
            raise WorkbenchError(
                "--spec declares a format in this process only; with --engine spark, put the TOML "
                "file in a declared-formats folder ($WORKBENCH_FORMATS), where Spark's tasks find "
                "it too"
            )
        return _ingest_on_spark(args)
    _declared(args)
    if args.watch:
        return _watch(args)
    report = ingest(args.paths, db=args.db, format=args.format, progress=not args.quiet, prune=args.prune)
    for line in summary_lines(report):
        print(line)
    return 2 if report.failed else 0


def _ingest_on_spark(args) -> int:
    from workbench import spark

    if args.watch:
        raise WorkbenchError(
            "--watch follows files into a database; with --engine spark, run the ingest again "
            "(unchanged files are skipped)"
        )
    if not args.quiet:
        print(f"workbench: loading on Spark into {args.parquet}", file=sys.stderr, flush=True)
    report = spark.ingest(args.paths, args.parquet, format=args.format, prune=args.prune, master=args.master)
    for line in summary_lines(report):
        print(line)
    return 2 if report.failed else 0


def _watch(args) -> int:
    from workbench.watch import watch

    scans = watch(args.paths, db=args.db, format=args.format, interval=args.interval, prune=args.prune)
    decided: set = set()  # the pairs a sequential comparison has decided, said once
    print(f"workbench: watching {' '.join(args.paths)} every {args.interval:g} s; Ctrl-C to stop", flush=True)
    try:
        for scan in scans:
            if isinstance(scan, WorkbenchError):
                print(f"workbench: {scan}; trying again in {args.interval:g} s", file=sys.stderr, flush=True)
                continue
            scan.files = [f for f in scan.files if f.status != "unchanged"]
            for line in summary_lines(scan) if scan.files else []:
                print(line, flush=True)
            if scan.files:
                for line in _newly_decided(args.db, decided):
                    print(line, flush=True)
    except Exception as exc:
        if not is_interrupt(exc):
            raise
    except KeyboardInterrupt:
        pass
    print("workbench: stopped watching; every file read so far is in the database", flush=True)
    return 0


def _newly_decided(db, decided: set) -> list[str]:
    """After a scan: each pair of models the sequential comparison has decided since the
    last (`comparison.sequential`, anytime-valid, so looking after every scan is safe)."""
    import polars as pl

    from workbench import connection
    from workbench.comparison import sequential

    try:
        con = connection.connect(db, read_only=True)
    except Exception as exc:  # the database busy or gone: ask again after the next scan
        if is_interrupt(exc):  # Ctrl-C while connecting: stop watching
            raise
        return []
    try:
        found = sequential(con)
    except WorkbenchError:  # nothing to compare yet
        return []
    finally:
        con.close()
    lines = []
    for row in found.filter(pl.col("decided")).iter_rows(named=True):
        key = (row["format"], row["a"], row["b"])
        if key not in decided:
            decided.add(key)
            lines.append(f"workbench: decided: {row['format']}: {row['a']} vs {row['b']}: {row['verdict']}")
    return lines


def summary_lines(report) -> list[str]:
    lines = []
    for file in report.files:
        if file.status in ("unchanged", "failed", "missing", "pruned"):
            lines.append(f"{file.path}: {file.status}: {file.message.removeprefix(f'{file.path}: ')}")
            continue
        counts = file.severity_counts()
        change = {
            "appended": f"{file.message}, ",
            "replaced": f"replaced ({file.message}), " if file.message else "replaced, ",
        }.get(file.status, "")
        lines.append(
            f"{file.path}: {file.format}: {change}{file.records} records, {file.rejected} rejected, "
            f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} info"
        )
    if not report.files:
        lines.append("no files of a known format found")
    return lines


def validate_command(args) -> int:
    from workbench.ingestion import validate

    _declared(args)
    report = validate(args.paths, format=args.format)
    if args.json:
        print(json.dumps({"files": [_validate_json(f) for f in report.files]}, indent=1))
    else:
        for file in report.files:
            for v in file.violations:
                print(f"{file.path}: {v.locator}: {v.severity}: {v.rule}: {v.field}: {v.message}")
        for line in summary_lines(report):
            print(line)
    if report.failed:
        return 2
    return 1 if report.has_errors() else 0


def _validate_json(file) -> dict:
    data = file.to_dict()
    return {key: data[key] for key in ("path", "format", "records", "rejected", "status", "message", "violations")}


def _declared(args) -> None:
    """The formats `--spec` declares, registered for this run."""
    if args.spec:
        from workbench.registry import declare

        for path in args.spec:
            declare(path)


def formats_command(args) -> int:
    import polars as pl

    from workbench.declared import declared_folders
    from workbench.paths import text_of
    from workbench.registry import BUILT_IN, DECLARED, FORMATS

    _declared(args)
    built_in = {fmt.name for fmt in BUILT_IN}
    listed = pl.DataFrame(
        [
            {
                "name": name,
                "kind": "built in" if name in built_in else "declared" if name in DECLARED else "plugin",
                "declared_in": DECLARED.get(name),
                "description": fmt.describe,
                "tables": [t.name for t in fmt.tables],
            }
            for name, fmt in FORMATS.items()
        ],
        schema={
            "name": pl.String,
            "kind": pl.String,
            "declared_in": pl.String,
            "description": pl.String,
            "tables": pl.List(pl.String),
        },
    )
    if printed_as_data(listed, args):
        return 0
    for row in listed.iter_rows(named=True):
        kind = f"declared in {row['declared_in']}" if row["declared_in"] else row["kind"]
        print(f"{row['name']:<12} {kind}: {row['description']}")
    print(
        f"declared formats are read from: {os.pathsep.join(text_of(f) for f in declared_folders())} "
        f"($WORKBENCH_FORMATS)"
    )
    return 0


def synth_command(args) -> int:
    from workbench.synth import synthesize

    if args.scale < 1:
        raise WorkbenchError(f"--scale must be 1 or more, got {args.scale}")
    manifest = synthesize(args.out, scale=args.scale, seed=args.seed)
    faults = sum(len(f["faults"]) for f in manifest["files"])
    print(
        f"wrote {len(manifest['files'])} files with {faults} injected faults to {args.out} "
        f"(listed in {Path(args.out) / 'manifest.json'})"
    )
    return 0


def export_command(args) -> int:
    if args.otlp:
        from workbench.otel.writer import export_otlp

        print(f"wrote {export_otlp(args.otlp, db=args.db, overwrite=args.overwrite)} decisions as spans to {args.otlp}")
        return 0
    from workbench.parquet_tree import export_parquet

    check_tree(args.parquet)

    written = export_parquet(args.parquet, db=args.db, overwrite=args.overwrite)
    for table, rows in written.items():
        print(f"{table}: {rows} rows")
    print(f"wrote {len(written)} tables to {args.parquet}")
    return 0


def compact_command(args) -> int:
    from workbench.spark.compact import compact

    for line in compact(args.parquet).lines():
        print(line)
    return 0


def demo_command(args) -> int:
    from workbench.demo import run_demo

    run_demo(Path(args.data), out=sys.stdout)
    return 0


def lab_command(args) -> int:
    from workbench.connection import default_db
    from workbench.lab import jupyterlab_command

    notebooks = Path(__file__).resolve().parent.parent / "notebooks"
    if not notebooks.is_dir():
        raise WorkbenchError(f"no notebooks folder at {notebooks}; run from a clone of the workbench repository")
    env = dict(os.environ, WORKBENCH_DB=str(Path(args.db or default_db()).resolve()))
    extra = list(args.jupyter_args)
    # JupyterLab refuses to start as root, the usual user in a container: say so and start.
    if os.geteuid() == 0 and "--allow-root" not in extra:
        print(
            "workbench lab: running as root (as in a container): starting JupyterLab with --allow-root", file=sys.stderr
        )
        extra.append("--allow-root")
    os.execvpe(sys.executable, jupyterlab_command(notebooks, extra), env)
    return 0
