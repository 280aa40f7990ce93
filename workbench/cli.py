"""The `workbench` command line: a thin layer over the Python API.

Exit codes: 0 done; 1 `validate` found errors; 2 a problem with the arguments, a file
or the database, explained in one line; 3 an internal error (one line; set
WORKBENCH_DEBUG=1 for the traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from workbench import cli_conclusions, cli_files, cli_records, exiting
from workbench.cli_conclusions import MISTAKE_NAMES
from workbench.cli_options import (
    Command,
    Parser,
    add_aliases,
    add_cluster,
    add_db,
    add_engine,
    add_failures,
    add_output,
    add_prices,
    add_spec,
    names_are_text,
)
from workbench.errors import PluginWarning, WorkbenchError, first_line, is_interrupt
from workbench.terminal import Terminal, is_a_terminal

INTERRUPTED = "workbench: interrupted; the file being loaded was rolled back, nothing half-written"


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # a file name that is not UTF-8 prints as \xNN, never fails
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (Terminal(stream) if is_a_terminal(stream) else stream for stream in streams)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _plugins_in_one_line(warnings.showwarning)
            return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _plugins_in_one_line(show):
    """`show` (how warnings are shown), but a plugin left out is told in one line:
    `workbench: format plugin NAME (VALUE) left out: why`."""

    def said(message, category, *where, **more) -> None:
        if issubclass(category, PluginWarning):
            print(f"workbench: {message}", file=sys.stderr)
        else:
            show(message, category, *where, **more)

    return said


def _main(argv: list[str] | None) -> int:
    try:
        parser = _parser()
        args, extra = parser.parse_known_args(argv)
        if extra and args.command != "lab":  # only `lab` passes options on (to JupyterLab)
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.jupyter_args = extra
        names_are_text(args)
        return args.run(args)
    except WorkbenchError as exc:
        print(f"workbench: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except BrokenPipeError:
        return exiting.reader_gone()
    except Exception as exc:  # never a traceback for the user, unless asked for
        if is_interrupt(exc):  # Ctrl-C that reached a DuckDB query outside a file's load
            print(INTERRUPTED, file=sys.stderr)
            return 130
        if os.environ.get("WORKBENCH_DEBUG"):
            raise
        told = user_fault(exc)
        if told is not None:
            print(f"workbench: {told}", file=sys.stderr)
            return 2
        print(
            f"workbench: internal error: {type(exc).__name__}: {exc} (set WORKBENCH_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return 3


def user_fault(exc: Exception) -> str | None:
    """The one line for a failure the user's machine or files cause, not the workbench:
    a file or folder that cannot be written or read (permissions, a full disk, a path
    under a file), or a database file that is damaged. None for anything else."""
    if isinstance(exc, OSError):
        return f"{exc.filename}: {exc.strerror or exc}" if exc.filename else f"{exc.strerror or exc}"
    said = first_line(exc)
    if "Corrupt database file" in said:
        return (
            f"the database file is damaged or unreadable ({said}); restore it from a copy, or ingest into a new "
            "file (--db)"
        )
    if type(exc).__name__ == "IOException":  # DuckDB's: a full disk, a file gone from under it
        return f"cannot read or write the database: {said}"
    return None


def run() -> None:
    """The `workbench` command: `main`, then the process ends with its exit code
    (`exiting.end`: quickly, and never by a late Ctrl-C)."""
    exiting.end(main())


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="workbench", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Command)
    for add in (
        _demo_arguments,
        _ingest_arguments,
        _validate_arguments,
        _plot_arguments,
        _scorecard_arguments,
        _compare_arguments,
        _plan_arguments,
        _ratings_arguments,
        _quality_arguments,
        _records_arguments,
        _side_by_side_arguments,
        _report_arguments,
        _synth_arguments,
        _export_arguments,
        _compact_arguments,
        _formats_arguments,
        _lab_arguments,
    ):
        add(commands)  # in this order in `workbench --help`
    return parser


def _demo_arguments(commands) -> None:
    demo = commands.add_parser("demo", help="make the sample corpus, ingest it, write figures, print a summary")
    demo.add_argument(
        "--data", default="data", help="folder for sample/, workbench.duckdb and figures/ (default: data)"
    )
    demo.set_defaults(run=cli_files.demo_command)


def _ingest_arguments(commands) -> None:
    ingest = commands.add_parser(
        "ingest",
        help="load files, folders or globs into the database",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        completes_help=_list_formats,
    )
    ingest.add_argument("paths", nargs="+", metavar="PATH")
    add_db(ingest)
    ingest.add_argument("--format", help="read every file as this format (listed below); default: detect per file")
    add_spec(ingest)
    ingest.add_argument("--quiet", action="store_true", help="no progress bar, only the summary")
    ingest.add_argument(
        "--prune",
        action="store_true",
        help="remove the rows of files ingested from under the paths that are gone "
        "(without it they are reported missing)",
    )
    ingest.add_argument(
        "--watch", action="store_true", help="keep following the paths (new files, files that grow) until Ctrl-C"
    )
    ingest.add_argument(
        "--interval",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="with --watch: seconds between scans, at most 86400 (default: 2)",
    )
    add_engine(ingest, "load with Spark's executors into the Parquet tree DIR (--parquet), not into a database")
    ingest.set_defaults(run=cli_files.ingest_command)


def _validate_arguments(commands) -> None:
    validate = commands.add_parser(
        "validate",
        help="check files against the specifications, no database",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        completes_help=_list_formats,
    )
    validate.add_argument("paths", nargs="+", metavar="PATH")
    validate.add_argument("--format", help="read every file as this format (listed below)")
    add_spec(validate)
    validate.add_argument("--json", action="store_true", help="print the report as JSON")
    validate.set_defaults(run=cli_files.validate_command)


def _list_formats(command: argparse.ArgumentParser) -> None:
    """The end of the help of `ingest` and `validate`: the formats (loading them all is
    most of a second)."""
    from workbench.registry import FORMATS

    command.epilog = "formats:\n" + "\n".join(f"  {name:<10} {fmt.describe}" for name, fmt in FORMATS.items())


def _plot_arguments(commands) -> None:
    plot = commands.add_parser(
        "plot", help="write one figure (.png .svg .pdf .html .json)", completes_help=_name_the_figures
    )
    plot.add_argument("kind")
    add_db(plot)
    plot.add_argument("--game")
    plot.add_argument("-o", "--output", required=True, help="output file; its suffix picks the format")
    add_aliases(plot)
    plot.set_defaults(run=cli_conclusions.plot_command)


def _name_the_figures(plot: argparse.ArgumentParser) -> None:
    """The help of `plot`'s KIND and --game: the kinds of figure (`plots.kinds`), and
    those of one game. Finding them loads every figure's module with polars and DuckDB,
    which `workbench plot` loads only once its renderer has started (docs/performance.md)."""
    from workbench.plots.kinds import figures

    found = figures()
    of_one_game = ", ".join(kind for kind, figure in found.items() if figure.takes_game)
    helps = {
        "kind": f"one of: {', '.join(found)}",
        "game": f"game id ({of_one_game}); default: the game with the most events",
    }
    for action in plot._actions:
        action.help = helps.get(action.dest, action.help)


def _scorecard_arguments(commands) -> None:
    card = commands.add_parser("scorecard", help="validity per format and model with 95%% intervals, n and games")
    add_db(card)
    card.add_argument(
        "--by",
        default="format,model",
        help="group by these, comma-separated: format, model, game_id, agent_id (default: format,model)",
    )
    add_cluster(card)
    add_failures(card)
    add_prices(card)
    add_aliases(card)
    add_output(card)
    add_engine(card, "ask the Parquet tree DIR (--parquet) on Spark, not a database")
    card.set_defaults(run=cli_conclusions.scorecard_command)


def _compare_arguments(commands) -> None:
    compare = commands.add_parser("compare", help="two models (or every pair) side by side, with a verdict")
    compare.add_argument(
        "models",
        nargs="*",
        metavar="MODEL",
        help="two models; none: every pair (each against the best beyond 30 models), Holm-corrected",
    )
    add_db(compare)
    compare.add_argument("--format", help="only this format")
    compare.add_argument("--all-pairs", action="store_true", help="every pair even beyond 30 models in a format")
    add_cluster(compare)
    add_failures(compare)
    add_aliases(compare)
    compare.add_argument(
        "--sequential",
        action="store_true",
        help="an anytime-valid verdict (e-values on games) that may be checked after every game",
    )
    shape = compare.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="every column of every comparison as JSON")
    shape.add_argument("--csv", action="store_true", help="every column of every comparison as CSV")
    add_engine(compare, "ask the Parquet tree DIR (--parquet) on Spark, not a database")
    compare.set_defaults(run=cli_conclusions.compare_command)


def _plan_arguments(commands) -> None:
    plan = commands.add_parser("plan", help="how many games per model a comparison needs")
    plan.add_argument(
        "--difference", type=float, required=True, help="the difference in validity to detect: 0.05 for 5 points"
    )
    plan.add_argument("--validity", type=float, help="the validity of the better model (default: the database's)")
    plan.add_argument("--per-game", type=float, metavar="M", help="decisions per game (default: the database's)")
    plan.add_argument("--icc", type=float, help="correlation of validity within a game (default: the database's)")
    plan.add_argument("--power", type=float, default=0.8, help="the chance of detecting it (default: 0.8)")
    add_db(plan)
    plan.add_argument("--format", help="estimate from this format's decisions only")
    add_output(plan)
    add_failures(plan)
    add_aliases(plan)
    add_engine(plan, "ask the Parquet tree DIR (--parquet) on Spark, not a database")
    plan.set_defaults(run=cli_conclusions.plan_command)


def _ratings_arguments(commands) -> None:
    rated = commands.add_parser(
        "ratings",
        help="Damage models rated by their placements, with rank intervals and the groups that cannot be told apart",
    )
    add_db(rated)
    rated.add_argument(
        "--by", choices=("model", "seat", "player"), default="model", help="who is rated (default: model)"
    )
    rated.add_argument(
        "--bootstrap",
        type=int,
        default=500,
        metavar="N",
        help="resamples of the games the intervals are drawn from (default: 500)",
    )
    add_failures(rated)
    add_aliases(rated)
    add_output(rated)
    add_engine(rated, "rate from the Parquet tree DIR (--parquet) on Spark, not a database")
    rated.set_defaults(run=cli_conclusions.ratings_command)


def _quality_arguments(commands) -> None:
    quality = commands.add_parser(
        "quality",
        help="how well each model plays its Damage hands: named mistakes and play statistics with 95%% intervals",
    )
    add_db(quality)
    quality.add_argument("--model", help="only this model (or an alias of it, with --aliases)")
    quality.add_argument("--game", help="only this game's decisions")
    quality.add_argument(
        "--mistake",
        choices=MISTAKE_NAMES,
        help="list the decisions with this mistake (file and line, cards, pot odds, win probability)",
    )
    add_aliases(quality)
    add_output(quality)
    quality.set_defaults(run=cli_conclusions.quality_command)


def _records_arguments(commands) -> None:
    found = commands.add_parser("records", help="the records behind a number: filtered, with their raw text")
    add_db(found)
    found.add_argument("--format", help="only this format's records")
    found.add_argument("--model", help="only this model's (or an alias of it, with --aliases)")
    found.add_argument("--game", help="only this game's (Arena: episode)")
    found.add_argument("--rule", help="only records that break this rule")
    found.add_argument(
        "--severity", choices=("error", "warning", "info"), help="only records with a finding of this severity"
    )
    validity = found.add_mutually_exclusive_group()
    validity.add_argument(
        "--valid", dest="valid", action="store_true", default=None, help="only records whose decision is valid"
    )
    validity.add_argument(
        "--invalid",
        dest="valid",
        action="store_false",
        help="only records whose decision is not (an answer that breaks a rule)",
    )
    validity.add_argument(
        "--failed",
        dest="outcome",
        action="store_const",
        const="failed",
        default=None,
        help="only the calls that got no answer (a provider or transport error), with its words",
    )
    found.add_argument("--text", help="only records whose raw text holds these words (any case)")
    found.add_argument(
        "--limit", type=int, default=20, help="at most this many records, in file and line order (default: 20; 0: all)"
    )
    add_aliases(found)
    add_output(found)
    found.set_defaults(run=cli_records.records_command)


def _side_by_side_arguments(commands) -> None:
    paired = commands.add_parser(
        "side-by-side", help="two models' decisions on the turns they shared, disagreements first"
    )
    paired.add_argument("models", nargs=2, metavar="MODEL")
    add_db(paired)
    paired.add_argument("--format", help="only this format's decisions")
    paired.add_argument("--limit", type=int, default=20, help="at most this many turns (default: 20; 0: all)")
    add_aliases(paired)
    add_output(paired)
    paired.set_defaults(run=cli_records.side_by_side_command)


def _report_arguments(commands) -> None:
    report = commands.add_parser("report", help="the whole picture as one offline HTML (or Markdown) file to share")
    add_db(report)
    report.add_argument(
        "-o", "--output", required=True, help="FILE.html (self-contained) or FILE.md (figures beside it)"
    )
    add_prices(report)
    add_aliases(report)
    add_engine(report, "ask the Parquet tree DIR (--parquet) on Spark, not a database")
    report.set_defaults(run=cli_conclusions.report_command)


def _synth_arguments(commands) -> None:
    synth = commands.add_parser("synth", help="write a synthetic corpus of all formats with known faults")
    synth.add_argument("--out", default="data/sample", help="output folder (default: data/sample)")
    synth.add_argument("--scale", type=int, default=1, help="size multiplier (default: 1)")
    synth.add_argument("--seed", type=int, default=7, help="random seed; the same seed gives the same bytes")
    synth.set_defaults(run=cli_files.synth_command)


def _export_arguments(commands) -> None:
    export = commands.add_parser(
        "export",
        help="write every table as Parquet partitioned by format, or every decision "
        "as OpenTelemetry GenAI spans (OTLP/JSON)",
    )
    target = export.add_mutually_exclusive_group(required=True)
    target.add_argument("--parquet", metavar="DIR", help="output folder (must be empty)")
    target.add_argument(
        "--otlp",
        metavar="FILE",
        help="every decision of every format as OTLP/JSON spans (GenAI semantic conventions "
        "1.41.0): FILE.otlp.jsonl one export per source file, as a Collector writes; "
        "FILE.otlp.json one export",
    )
    add_db(export)
    export.add_argument("--overwrite", action="store_true", help="replace what DIR (or FILE) holds")
    export.set_defaults(run=cli_files.export_command)


def _compact_arguments(commands) -> None:
    compact = commands.add_parser(
        "compact",
        help="merge the small parts of a Parquet tree `ingest --engine spark` keeps into files of about 128 MB",
    )
    compact.add_argument("--parquet", metavar="DIR", required=True, help="the tree")
    compact.set_defaults(run=cli_files.compact_command)


def _formats_arguments(commands) -> None:
    formats = commands.add_parser(
        "formats", help="list the formats: built in, from plugins, and declared in TOML files"
    )
    add_spec(formats)
    add_output(formats)
    formats.set_defaults(run=cli_files.formats_command)


def _lab_arguments(commands) -> None:
    lab = commands.add_parser(
        "lab",
        help="open JupyterLab on the notebooks, pointed at the database",
        description="Other options (--no-browser, --port N, ...) go to JupyterLab.",
    )
    add_db(lab)
    lab.set_defaults(run=cli_files.lab_command)


if __name__ == "__main__":
    run()
