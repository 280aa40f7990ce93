"""The `workbench` command line: a thin layer over the Python API.

Exit codes: 0 done; 1 `validate` found errors; 2 a problem with the arguments, a file
or the database, explained in one line; 3 an internal error (one line; set
WORKBENCH_DEBUG=1 for the traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import warnings
from pathlib import Path

from workbench.errors import PluginWarning, WorkbenchError, first_line, is_interrupt
from workbench.paths import check_tree
from workbench.outcomes import INGEST_DECISIONS

# The kinds of `workbench plot`: the keys of `plots.FIGURES`, named here so that the
# help is built without loading Altair (a test keeps the two lists equal).
FIGURE_KINDS = ("emotions", "economy", "budget", "scorecard", "decisions", "attacks", "attack-study", "families", "trace-steps",
                "play")

INTERRUPTED = "workbench: interrupted; the file being loaded was rolled back, nothing half-written"


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # a file name that is not UTF-8 prints as \xNN, never fails
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (Terminal(stream) if _is_a_terminal(stream) else stream for stream in streams)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _plugins_in_one_line(warnings.showwarning)
            return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _is_a_terminal(stream) -> bool:
    try:
        return stream is not None and not isinstance(stream, Terminal) and stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


# What a terminal is never sent as it is: C0 controls but the line end and tab (ESC
# starts the sequences that set a window's title or clear the screen), DEL, C1 controls
# (0x9b is CSI) and the marks that reorder text (bidirectional overrides and isolates).
_SHOWN_ESCAPED = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))
                  if code not in (0x09, 0x0A)} | {
    code: f"\\u{code:04x}" for code in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def escaped(text: str) -> str:
    """`text` as a terminal may be sent it: each character of `_SHOWN_ESCAPED` written as
    its escape (`\\x1b`); a carriage return that starts or ends the text (a progress
    bar's) kept."""
    body = text.strip("\r")
    if not body:
        return text
    start = text.index(body)
    return text[:start] + body.translate(_SHOWN_ESCAPED) + text[start + len(body):]


class Terminal:
    """A terminal's stream (standard output or error) that shows what a log, a file name
    or a model name holds escaped (`escaped`), never as a terminal would run it."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(escaped(text))

    def writelines(self, lines) -> None:
        self.stream.writelines(escaped(line) for line in lines)

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


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
        _names_are_text(args)
        return args.run(args)
    except WorkbenchError as exc:
        print(f"workbench: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_gone()
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
        print(f"workbench: internal error: {type(exc).__name__}: {exc} (set WORKBENCH_DEBUG=1 for details)",
              file=sys.stderr)
        return 3


# The arguments that name files: a file name may hold bytes that are not UTF-8. Every
# other argument is a name or value the database holds as text.
FILE_ARGUMENTS = frozenset({"paths", "db", "output", "aliases", "prices", "parquet", "out", "data", "otlp",
                            "spec", "jupyter_args"})
POSITIONAL = {"models": "MODEL", "kind": "KIND"}


def _names_are_text(args) -> None:
    """A name given on the command line that is not UTF-8 (`$'g\\xff'`, which Python
    holds as a lone surrogate) names nothing the database holds: refused in one line. A
    path given empty names no file (the system would read it as the folder here)."""
    from workbench.paths import is_text, text_of

    for dest, value in vars(args).items():
        if dest in FILE_ARGUMENTS:
            if dest != "jupyter_args" and "" in (value if isinstance(value, list) else [value]):
                raise WorkbenchError(f"{'a path' if dest == 'paths' else '--' + dest} is given empty; give a path")
            continue
        for given in value if isinstance(value, list) else [value]:
            if isinstance(given, str) and not is_text(given):
                shown = text_of(os.fsencode(given))
                raise WorkbenchError(f"{POSITIONAL.get(dest, '--' + dest.replace('_', '-'))} '{shown}' is not UTF-8 "
                                     f"text, so nothing here is named so")


def user_fault(exc: Exception) -> str | None:
    """The one line for a failure the user's machine or files cause, not the workbench:
    a file or folder that cannot be written or read (permissions, a full disk, a path
    under a file), or a database file that is damaged. None for anything else."""
    if isinstance(exc, OSError):
        return f"{exc.filename}: {exc.strerror or exc}" if exc.filename else f"{exc.strerror or exc}"
    said = first_line(exc)
    if "Corrupt database file" in said:
        return f"the database file is damaged or unreadable ({said}); restore it from a copy, or ingest into a new file (--db)"
    if type(exc).__name__ == "IOException":  # DuckDB's: a full disk, a file gone from under it
        return f"cannot read or write the database: {said}"
    return None


def _reader_gone() -> int:
    """The reader of standard output went away (`| head`): stop quietly, as `cat` does,
    with the exit status of a process ended by SIGPIPE."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's own flush at exit finds no pipe
    except (OSError, ValueError):
        pass
    return 128 + 13


class _Parser(argparse.ArgumentParser):
    """A parser whose refusal of the arguments is one line, as every user error is:
    `workbench: records: argument --valid: not allowed with argument --failed`, exit 2
    (argparse's own prints the usage first)."""

    def error(self, message: str):
        command = self.prog.removeprefix("workbench").strip()
        self.exit(2, f"workbench: {command + ': ' if command else ''}{message} (see {self.prog} --help)\n")


class _Command(_Parser):
    """A command's parser; `lists_formats`: its help ends with the formats, which are
    loaded only when the help is shown (loading every format is most of a second)."""

    def __init__(self, *args, lists_formats: bool = False, **kwargs):
        if lists_formats:
            kwargs["formatter_class"] = argparse.RawDescriptionHelpFormatter
        super().__init__(*args, **kwargs)
        self.lists_formats = lists_formats

    def format_help(self) -> str:
        if self.lists_formats:
            from workbench.registry import FORMATS

            self.epilog = "formats:\n" + "\n".join(f"  {name:<10} {fmt.describe}" for name, fmt in FORMATS.items())
        return super().format_help()


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="workbench", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Command)

    demo = commands.add_parser("demo", help="make the sample corpus, ingest it, write figures, print a summary")
    demo.add_argument("--data", default="data", help="folder for sample/, workbench.duckdb and figures/ (default: data)")
    demo.set_defaults(run=_demo)

    ingest = commands.add_parser("ingest", help="load files, folders or globs into the database", lists_formats=True)
    ingest.add_argument("paths", nargs="+", metavar="PATH")
    ingest.add_argument("--db", help="database file (default: $WORKBENCH_DB or data/workbench.duckdb)")
    ingest.add_argument("--format", help="read every file as this format (listed below); default: detect per file")
    ingest.add_argument("--spec", action="append", metavar="FILE.toml", help="a game of your own: the TOML file that declares its format (docs: Your own game); may be repeated")
    ingest.add_argument("--quiet", action="store_true", help="no progress bar, only the summary")
    ingest.add_argument("--prune", action="store_true",
                        help="remove the rows of files ingested from under the paths that are gone "
                             "(without it they are reported missing)")
    ingest.add_argument("--watch", action="store_true",
                        help="keep following the paths (new files, files that grow) until Ctrl-C")
    ingest.add_argument("--interval", type=float, default=2.0, metavar="SECONDS",
                        help="with --watch: seconds between scans, at most 86400 (default: 2)")
    _add_engine(ingest, "load with Spark's executors into the Parquet tree DIR (--parquet), not into a database")
    ingest.set_defaults(run=_ingest)

    validate = commands.add_parser("validate", help="check files against the specifications, no database",
                                   lists_formats=True)
    validate.add_argument("paths", nargs="+", metavar="PATH")
    validate.add_argument("--format", help="read every file as this format (listed below)")
    validate.add_argument("--spec", action="append", metavar="FILE.toml", help="a game of your own: the TOML file that declares its format (docs: Your own game); may be repeated")
    validate.add_argument("--json", action="store_true", help="print the report as JSON")
    validate.set_defaults(run=_validate)

    plot = commands.add_parser("plot", help="write one figure (.png .svg .pdf .html .json)")
    plot.add_argument("kind", help=f"one of: {', '.join(FIGURE_KINDS)}")
    plot.add_argument("--db", help="database file (default: $WORKBENCH_DB or data/workbench.duckdb)")
    plot.add_argument("--game", help="game id (emotions, attacks, attack-study); default: the game with the most events")
    plot.add_argument("-o", "--output", required=True, help="output file; its suffix picks the format")
    _add_aliases(plot)
    plot.set_defaults(run=_plot)

    card = commands.add_parser("scorecard", help="validity per format and model with 95%% intervals, n and games")
    card.add_argument("--db", help="database file (default: $WORKBENCH_DB or data/workbench.duckdb)")
    card.add_argument("--by", default="format,model", help="group by these, comma-separated: format, model, "
                                                          "game_id, agent_id (default: format,model)")
    _add_cluster(card)
    _add_failures(card)
    _add_prices(card)
    _add_aliases(card)
    _add_output(card)
    _add_engine(card, "ask the Parquet tree DIR (--parquet) on Spark, not a database")
    card.set_defaults(run=_scorecard)

    compare = commands.add_parser("compare", help="two models (or every pair) side by side, with a verdict")
    compare.add_argument("models", nargs="*", metavar="MODEL",
                         help="two models; none: every pair (each against the best beyond 30 models), Holm-corrected")
    compare.add_argument("--db", help="database file (default: $WORKBENCH_DB or data/workbench.duckdb)")
    compare.add_argument("--format", help="only this format")
    compare.add_argument("--all-pairs", action="store_true", help="every pair even beyond 30 models in a format")
    _add_cluster(compare)
    _add_failures(compare)
    _add_aliases(compare)
    compare.add_argument("--sequential", action="store_true",
                         help="an anytime-valid verdict (e-values on games) that may be checked after every game")
    shape = compare.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="every column of every comparison as JSON")
    shape.add_argument("--csv", action="store_true", help="every column of every comparison as CSV")
    _add_engine(compare, "ask the Parquet tree DIR (--parquet) on Spark, not a database")
    compare.set_defaults(run=_compare)

    plan = commands.add_parser("plan", help="how many games per model a comparison needs")
    plan.add_argument("--difference", type=float, required=True,
                      help="the difference in validity to detect: 0.05 for 5 points")
    plan.add_argument("--validity", type=float, help="the validity of the better model (default: the database's)")
    plan.add_argument("--per-game", type=float, metavar="M", help="decisions per game (default: the database's)")
    plan.add_argument("--icc", type=float, help="correlation of validity within a game (default: the database's)")
    plan.add_argument("--power", type=float, default=0.8, help="the chance of detecting it (default: 0.8)")
    plan.add_argument("--db", help="database file (default: $WORKBENCH_DB or data/workbench.duckdb)")
    plan.add_argument("--format", help="estimate from this format's decisions only")
    _add_output(plan)
    _add_failures(plan)
    _add_aliases(plan)
    _add_engine(plan, "ask the Parquet tree DIR (--parquet) on Spark, not a database")
    plan.set_defaults(run=_plan)

    rated = commands.add_parser("ratings", help="Damage models rated by their placements, with rank intervals and "
                                               "the groups that cannot be told apart")
    rated.add_argument("--db", help="database file (default: $WORKBENCH_DB or data/workbench.duckdb)")
    rated.add_argument("--by", choices=("model", "seat", "player"), default="model", help="who is rated (default: model)")
    rated.add_argument("--bootstrap", type=int, default=500, metavar="N",
                       help="resamples of the games the intervals are drawn from (default: 500)")
    _add_failures(rated)
    _add_aliases(rated)
    _add_output(rated)
    _add_engine(rated, "rate from the Parquet tree DIR (--parquet) on Spark, not a database")
    rated.set_defaults(run=_ratings)

    quality = commands.add_parser("quality", help="how well each model plays its Damage hands: named mistakes and "
                                                  "play statistics with 95%% intervals")
    quality.add_argument("--db", help="database file (default: $WORKBENCH_DB or data/workbench.duckdb)")
    quality.add_argument("--model", help="only this model (or an alias of it, with --aliases)")
    quality.add_argument("--game", help="only this game's decisions")
    quality.add_argument("--mistake", choices=MISTAKE_NAMES,
                         help="list the decisions with this mistake (file and line, cards, pot odds, win probability)")
    _add_aliases(quality)
    _add_output(quality)
    quality.set_defaults(run=_quality)

    found = commands.add_parser("records", help="the records behind a number: filtered, with their raw text")
    found.add_argument("--db", help="database file (default: $WORKBENCH_DB or data/workbench.duckdb)")
    found.add_argument("--format", help="only this format's records")
    found.add_argument("--model", help="only this model's (or an alias of it, with --aliases)")
    found.add_argument("--game", help="only this game's (Arena: episode)")
    found.add_argument("--rule", help="only records that break this rule")
    found.add_argument("--severity", choices=("error", "warning", "info"), help="only records with a finding of this "
                                                                                "severity")
    validity = found.add_mutually_exclusive_group()
    validity.add_argument("--valid", dest="valid", action="store_true", default=None,
                          help="only records whose decision is valid")
    validity.add_argument("--invalid", dest="valid", action="store_false",
                          help="only records whose decision is not (an answer that breaks a rule)")
    validity.add_argument("--failed", dest="outcome", action="store_const", const="failed", default=None,
                          help="only the calls that got no answer (a provider or transport error), with its words")
    found.add_argument("--text", help="only records whose raw text holds these words (any case)")
    found.add_argument("--limit", type=int, default=20, help="at most this many records, in file and line order "
                                                            "(default: 20; 0: all)")
    _add_aliases(found)
    _add_output(found)
    found.set_defaults(run=_records)

    paired = commands.add_parser("side-by-side", help="two models' decisions on the turns they shared, "
                                                       "disagreements first")
    paired.add_argument("models", nargs=2, metavar="MODEL")
    paired.add_argument("--db", help="database file (default: $WORKBENCH_DB or data/workbench.duckdb)")
    paired.add_argument("--format", help="only this format's decisions")
    paired.add_argument("--limit", type=int, default=20, help="at most this many turns (default: 20; 0: all)")
    _add_aliases(paired)
    _add_output(paired)
    paired.set_defaults(run=_side_by_side)

    report = commands.add_parser("report", help="the whole picture as one offline HTML (or Markdown) file to share")
    report.add_argument("--db", help="database file (default: $WORKBENCH_DB or data/workbench.duckdb)")
    report.add_argument("-o", "--output", required=True, help="FILE.html (self-contained) or FILE.md (figures beside it)")
    _add_prices(report)
    _add_aliases(report)
    _add_engine(report, "ask the Parquet tree DIR (--parquet) on Spark, not a database")
    report.set_defaults(run=_report)

    synth = commands.add_parser("synth", help="write a synthetic corpus of all formats with known faults")
    synth.add_argument("--out", default="data/sample", help="output folder (default: data/sample)")
    synth.add_argument("--scale", type=int, default=1, help="size multiplier (default: 1)")
    synth.add_argument("--seed", type=int, default=7, help="random seed; the same seed gives the same bytes")
    synth.set_defaults(run=_synth)

    export = commands.add_parser("export", help="write every table as Parquet partitioned by format, or every decision "
                                                 "as OpenTelemetry GenAI spans (OTLP/JSON)")
    target = export.add_mutually_exclusive_group(required=True)
    target.add_argument("--parquet", metavar="DIR", help="output folder (must be empty)")
    target.add_argument("--otlp", metavar="FILE",
                        help="every decision of every format as OTLP/JSON spans (GenAI semantic conventions "
                             "1.41.0): FILE.otlp.jsonl one export per source file, as a Collector writes; "
                             "FILE.otlp.json one export")
    export.add_argument("--db", help="database file (default: $WORKBENCH_DB or data/workbench.duckdb)")
    export.add_argument("--overwrite", action="store_true", help="replace what DIR (or FILE) holds")
    export.set_defaults(run=_export)

    compact = commands.add_parser("compact", help="merge the small parts of a Parquet tree `ingest --engine spark` "
                                                   "keeps into files of about 128 MB")
    compact.add_argument("--parquet", metavar="DIR", required=True, help="the tree")
    compact.set_defaults(run=_compact)

    formats = commands.add_parser("formats", help="list the formats: built in, from plugins, and declared in TOML "
                                                  "files")
    formats.add_argument("--spec", action="append", metavar="FILE.toml", help="a game of your own: the TOML file that declares its format (docs: Your own game); may be repeated")
    _add_output(formats)
    formats.set_defaults(run=_formats)

    lab = commands.add_parser("lab", help="open JupyterLab on the notebooks, pointed at the database",
                              description="Other options (--no-browser, --port N, ...) go to JupyterLab.")
    lab.add_argument("--db", help="database file (default: $WORKBENCH_DB or data/workbench.duckdb)")
    lab.set_defaults(run=_lab)
    return parser


def _add_engine(command: argparse.ArgumentParser, spark_does: str) -> None:
    command.add_argument("--engine", choices=("duckdb", "spark"), default="duckdb",
                         help=f"duckdb (default): the database (--db); spark: {spark_does}")
    command.add_argument("--parquet", metavar="DIR", help="with --engine spark: the Parquet tree")
    command.add_argument("--master", metavar="URL", help="with --engine spark: the cluster (spark://host:7077, yarn, "
                                                         "local[4], or Spark Connect: sc://host:15002); default: "
                                                         "$SPARK_REMOTE, else local[*]")


def _engine(args) -> str:
    """The engine asked for, with what it needs, or one line saying what is missing."""
    if args.engine == "spark":
        if not args.parquet:
            raise WorkbenchError("--engine spark works on a Parquet tree: add --parquet DIR")
        check_tree(args.parquet)
        if args.db:
            raise WorkbenchError("--engine spark reads and writes the Parquet tree (--parquet), not a database: "
                                 "drop --db")
        if args.master is not None:
            from workbench.spark.session import check_master

            check_master(args.master)
    elif args.parquet:
        raise WorkbenchError("--parquet DIR is the Spark engine's tree: add --engine spark (DuckDB reads a database: "
                             "--db, or `workbench export --parquet` writes a tree from one)")
    elif args.master:
        raise WorkbenchError("--master is the Spark cluster: add --engine spark --parquet DIR")
    return args.engine


@contextlib.contextmanager
def _source(args):
    """What an analysis asks: the database, read-only, or the Parquet tree on Spark."""
    if _engine(args) == "spark":
        from workbench import spark

        yield spark.open(args.parquet, master=args.master)
        return
    with _database(args) as con:
        yield con


@contextlib.contextmanager
def _database(args):
    """The database, read-only: what commands that read records ask (they read files too,
    so they do not run on Spark)."""
    from workbench import catalog

    con = catalog.connect(args.db, read_only=True)
    try:
        yield con
    finally:
        con.close()


def _source_label(args) -> str:
    from workbench import catalog

    return str(args.parquet) if args.engine == "spark" else str(args.db or catalog.default_db())


def _add_prices(command: argparse.ArgumentParser) -> None:
    command.add_argument("--prices", metavar="FILE", help="model prices in USD per million tokens (JSON or CSV) over "
                                                          "genai-prices' table, for costs")


def _add_aliases(command: argparse.ArgumentParser) -> None:
    command.add_argument("--aliases", metavar="FILE", help="names that are one model: JSON {\"name\": \"model\"} "
                                                           "or CSV name,model")


def _add_output(command: argparse.ArgumentParser) -> None:
    shape = command.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print every column as JSON, raw text in full")
    shape.add_argument("--csv", action="store_true", help="print every column as CSV, raw text in full")


def _add_failures(command: argparse.ArgumentParser) -> None:
    command.add_argument("--failures", choices=("exclude", "invalid"), default="exclude",
                         help="a call that got no answer (the provider's error): left out of validity and shown "
                              "beside it (exclude, the default), or counted against the model as invalid")


def _add_cluster(command: argparse.ArgumentParser) -> None:
    command.add_argument("--cluster", choices=("game", "file", "none"), default="game",
                         help="the unit decisions were sampled in, for intervals (default: game)")


def _cluster(args) -> str | None:
    return None if args.cluster == "none" else args.cluster


def _demo(args) -> int:
    from workbench.demo import run_demo

    run_demo(Path(args.data), out=sys.stdout)
    return 0


def _declared(args) -> None:
    """The formats `--spec` declares, registered for this run."""
    if args.spec:
        from workbench.registry import declare

        for path in args.spec:
            declare(path)


def _formats(args) -> int:
    import polars as pl

    from workbench.declared import declared_folders
    from workbench.paths import text_of
    from workbench.registry import BUILT_IN, DECLARED, FORMATS

    _declared(args)
    built_in = {fmt.name for fmt in BUILT_IN}
    listed = pl.DataFrame([{
        "name": name, "kind": "built in" if name in built_in else "declared" if name in DECLARED else "plugin",
        "declared_in": DECLARED.get(name), "description": fmt.describe, "tables": [t.name for t in fmt.tables],
    } for name, fmt in FORMATS.items()], schema={"name": pl.String, "kind": pl.String, "declared_in": pl.String,
                                                 "description": pl.String, "tables": pl.List(pl.String)})
    if _printed_as_data(listed, args):
        return 0
    for row in listed.iter_rows(named=True):
        kind = f"declared in {row['declared_in']}" if row["declared_in"] else row["kind"]
        print(f"{row['name']:<12} {kind}: {row['description']}")
    print(f"declared formats are read from: {os.pathsep.join(text_of(f) for f in declared_folders())} "
          f"($WORKBENCH_FORMATS)")
    return 0


def _ingest(args) -> int:
    from workbench.ingestion import ingest

    if _engine(args) == "spark":
        if args.spec:
            raise WorkbenchError("--spec declares a format in this process only; with --engine spark, put the TOML "
                                 "file in a declared-formats folder ($WORKBENCH_FORMATS), where Spark's tasks find "
                                 "it too")
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
        raise WorkbenchError("--watch follows files into a database; with --engine spark, run the ingest again "
                             "(unchanged files are skipped)")
    if not args.quiet:
        print(f"workbench: loading on Spark into {args.parquet}", file=sys.stderr, flush=True)
    report = spark.ingest(args.paths, args.parquet, format=args.format, prune=args.prune, master=args.master)
    for line in summary_lines(report):
        print(line)
    return 2 if report.failed else 0


def _newly_decided(db, decided: set) -> list[str]:
    """After a scan: each pair of models the sequential comparison has decided since the
    last (`comparison.sequential`, anytime-valid, so looking after every scan is safe)."""
    import polars as pl

    from workbench import catalog
    from workbench.comparison import sequential

    try:
        con = catalog.connect(db, read_only=True)
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


def _validate(args) -> int:
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


def summary_lines(report) -> list[str]:
    lines = []
    for file in report.files:
        if file.status in ("unchanged", "failed", "missing", "pruned"):
            lines.append(f"{file.path}: {file.status}: {file.message.removeprefix(f'{file.path}: ')}")
            continue
        counts = file.severity_counts()
        change = {"appended": f"{file.message}, ",
                  "replaced": f"replaced ({file.message}), " if file.message else "replaced, "}.get(file.status, "")
        lines.append(
            f"{file.path}: {file.format}: {change}{file.records} records, {file.rejected} rejected, "
            f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} info"
        )
    if not report.files:
        lines.append("no files of a known format found")
    return lines


def _plot(args) -> int:
    from workbench.plots.render import IMAGES, Renderer

    # An image's renderer starts first, in a process of its own, while the chart is built.
    with Renderer() if Path(args.output).suffix.lower() in IMAGES else contextlib.nullcontext() as renderer:
        from workbench import catalog, plots

        con = catalog.connect(args.db, read_only=True)
        try:
            spec = plots.figure_spec(args.kind, con, args.game, aliases=args.aliases)
        finally:
            con.close()
        path = plots.save(spec, args.output, renderer=renderer)
    print(f"wrote {path}")
    return 0


def _scorecard(args) -> int:
    from workbench.catalog import holder
    from workbench.comparison import scorecard

    with _source(args) as con:
        card = scorecard(con, by=[key.strip() for key in args.by.split(",") if key.strip()], prices=args.prices,
                         aliases=args.aliases, cluster=_cluster(args), failures=args.failures)
    if card.is_empty():
        raise WorkbenchError(f"no decisions in {holder(con)} to score; {INGEST_DECISIONS}")
    if _printed_as_data(card, args):
        return 0
    for row in card.iter_rows(named=True):
        who = " ".join(str(row[key]) for key in card.columns[:card.columns.index("decisions")] if key != "model_from")
        line = f"{who}: {_validity_said(row)}"
        if row["failed"] and args.failures == "exclude":
            line += (f"; {row['failed']} failed call{'s' if row['failed'] != 1 else ''} left out "
                     f"({row['failure_rate']:.1%} of calls, 95% CI {row['failure_low']:.1%}-{row['failure_high']:.1%})")
        elif row["failed"]:
            line += f"; {row['failed']} of them failed calls, counted as invalid"
        if row["top_rule"]:
            line += f", most broken: {row['top_rule']}"
        if row.get("cost_per_decision") is not None:
            line += f", ${row['cost_per_decision']:.5f} per decision"
            if row["cost_per_valid"] is not None:
                line += f", ${row['cost_per_valid']:.5f} per valid one"
        print(line)
    if "model" in card.columns:  # its names are the models the aliases left
        _say_look_alikes(card["model"].unique().to_list(), None)
    return 0


def _validity_said(row: dict) -> str:
    """A scorecard row's validity with its interval, n and games, in words."""
    if not row["decisions"]:
        return "no answered decision"
    games = f"{row['games']} game" + ("s" if row["games"] != 1 else "")
    return (f"{row['validity']:.1%} valid (95% CI {row['ci_low']:.1%}-{row['ci_high']:.1%}, "
            f"n={row['decisions']} in {games}{', clustered' if row['ci_method'] != 'wilson' else ''})")


def spreadsheet_safe(frame):
    """Text cells a spreadsheet would run as a formula (starting =, +, -, @, tab or
    carriage return, OWASP's CSV-injection list) get a leading apostrophe, so it shows them
    as text."""
    import polars as pl

    risky = r"^[=+\-@\t\r]"
    return frame.with_columns(
        pl.when(pl.col(name).str.contains(risky)).then("'" + pl.col(name)).otherwise(pl.col(name)).alias(name)
        for name, dtype in frame.schema.items() if dtype == pl.String)


def _compare(args) -> int:
    from workbench.comparison import compare_models, how_compared, sequential

    if len(args.models) not in (0, 2):
        raise WorkbenchError(f"compare takes two models or none, not {len(args.models)}")
    with _source(args) as con:
        run = sequential if args.sequential else compare_models
        found = run(con, *(args.models or (None, None)), format=args.format, aliases=args.aliases,
                    all_pairs=args.all_pairs, cluster=_cluster(args), failures=args.failures)
        names = _model_names(con)
    if args.json:
        print(json.dumps(found.to_dicts(), ensure_ascii=False, default=str))
        return 0
    if args.csv:
        print(spreadsheet_safe(found).write_csv(), end="")
        return 0
    if args.sequential:
        for row in found.iter_rows(named=True):
            print(f"{row['format']}: {row['a']} vs {row['b']}: {row['verdict']}")
        return 0
    for line in how_compared(found):
        print(line)
    for row in found.iter_rows(named=True):
        print(f"{row['format']}: {row['a']} vs {row['b']}: {row['verdict']} "
              f"[{row['method']}; p={row['p_value']:.3g}, Holm {row['p_holm']:.3g}]")
    _say_look_alikes(names, args.aliases)
    return 0


def _model_names(con) -> list[str]:
    """Every name a decision gives its model (or agent), as written."""
    from workbench.catalog import query_frame

    return query_frame(con, "SELECT DISTINCT coalesce(model, agent_id) AS name FROM decisions "
                            "WHERE coalesce(model, agent_id) IS NOT NULL")["name"].to_list()


def _say_look_alikes(names: list[str], aliases) -> None:
    """Names that look like one model (a dated snapshot and its base name), said once on
    stderr with the aliases that would merge them; nothing is merged unasked."""
    from workbench.naming import look_alike, look_alike_lines, read_aliases

    for line in look_alike_lines(look_alike(names, read_aliases(aliases))):
        print(f"workbench: {line}", file=sys.stderr)


# In a terminal a record's raw text is cut here; --json and --csv give it whole.
SHOWN_CHARS = 300


def _records(args) -> int:
    from workbench.records import count_records, records

    limit = _row_limit(args.limit)
    filters = {"format": args.format, "model": args.model, "game_id": args.game, "rule": args.rule,
               "severity": args.severity, "valid": args.valid, "outcome": args.outcome, "text": args.text,
               "aliases": args.aliases}
    with _database(args) as con:
        # one more than shown: whether there are more to tell of
        found = records(con, limit=None if limit is None else limit + 1, **filters)
        if found.is_empty():
            print(f"workbench: no record matches{_unknown_name(con, args)}", file=sys.stderr)
        if args.text is not None:
            _say_unsearched(con, args.format)
        total = count_records(con, **filters) if limit is not None and found.height > limit else None
    if total is not None:  # on stderr, so that JSON and CSV on stdout stay whole
        print(f"(the first {limit:,} of {total:,} records; --limit 0 shows all)", file=sys.stderr)
        found = found.head(limit)
    if _printed_as_data(found.drop("source_id"), args):
        return 0
    for row in found.iter_rows(named=True):
        where = _place(row["path"], row["locator"])
        about = [row["format"], *(f"{key} {row[key]}" for key in ("game_id", "turn", "model") if row[key] is not None)]
        if row["outcome"] == "failed":
            about.append(f"FAILED (no answer: {row['failure']})")
        elif row["valid"] is not None:
            about.append("valid" if row["valid"] else "INVALID")
        if row["rules"]:  # with the severities found, so an `info` finding does not read as the failure
            about.append(f"breaks {', '.join(row['rules'])} ({'/'.join(row['severities'])})")
        print(f"{where}: {'; '.join(about)}")
        print(f"    {_shown(row['raw'], row['line'])}")
    return 0


def _say_unsearched(con, format: str | None) -> None:
    """One line on stderr naming the files a --text search passed over, if any."""
    from workbench.records import unsearched

    passed = unsearched(con, format)
    if passed:
        print(f"workbench: {len(passed)} file{'s' if len(passed) != 1 else ''} not searched, no longer holding what "
              f"was ingested (changed, gone, or not a regular file): {', '.join(passed[:3])}"
              f"{', ...' if len(passed) > 3 else ''}", file=sys.stderr)


def _side_by_side(args) -> int:
    from workbench.records import side_by_side

    limit = _row_limit(args.limit)
    with _database(args) as con:
        paired = side_by_side(con, *args.models, format=args.format, aliases=args.aliases)
        if paired.is_empty():
            _why_no_turn_is_shared(con, args)
    turns = paired.select("format", "game_id", "turn", "disagree").unique(maintain_order=True)
    shared, disagree = turns.height, int(turns["disagree"].sum() or 0)
    if limit is not None and shared > limit:
        paired = paired.join(turns.head(limit).drop("disagree"), on=["format", "game_id", "turn"], how="semi",
                             maintain_order="left")
        print(f"(the first {limit} of {shared} turns; --limit 0 shows all)", file=sys.stderr)
    if _printed_as_data(paired, args):
        return 0
    a, b = args.models
    print(f"{a} and {b}: {shared} shared turns, {disagree} where one's answers were all valid and the other's not")
    for (fmt, game, turn, differ), rows in paired.group_by("format", "game_id", "turn", "disagree",
                                                           maintain_order=True):
        print(f"{fmt} {game} turn {turn}{': DISAGREE' if differ else ''}")
        for row in rows.iter_rows(named=True):
            for side, model in (("a", a), ("b", b)):
                if row[f"locator_{side}"] is not None:
                    print(f"    {_decision_said(row, side, model)}")
    return 0


def _decision_said(row: dict, side: str, model: str) -> str:
    """One side of a side-by-side row in words: round, model, seat, action, outcome, place."""
    rules = row[f"rules_{side}"]
    verdict = {"failed": "FAILED (no answer)", "invalid": "INVALID"}.get(row[f"outcome_{side}"], "valid")
    verdict += f" ({', '.join(rules)})" if rules else ""
    seat = f" as {row[f'agent_id_{side}']}" if row[f"agent_id_{side}"] is not None else ""
    round_ = f"{row['round']}: " if row["round"] is not None else ""
    action = row[f"action_{side}"] or "(no action)"
    return f"{round_}{model}{seat}: {action}: {verdict} at {_place(row[f'path_{side}'], row[f'locator_{side}'])}"


def _why_no_turn_is_shared(con, args) -> None:
    """One line on stderr: which model has no decision here, or that they never met."""
    from workbench.records import records

    for model in args.models:
        if records(con, format=args.format, model=model, limit=1, aliases=args.aliases).is_empty():
            print(f"workbench: no record of model {model!r} here{f' in format {args.format}' if args.format else ''}; "
                  f"`workbench scorecard` lists the models", file=sys.stderr)
            return
    print("workbench: the two models never decided the same turn of the same game", file=sys.stderr)


def _place(path: str, locator: str | None) -> str:
    """`path:N` for line N of a file, else the path and where in it."""
    if locator and locator.startswith("line ") and locator[5:].isdigit():
        return f"{path}:{locator[5:]}"
    return f"{path} ({locator})" if locator else path


# The most rows a --limit may ask for (one more is asked of the database, a BIGINT).
MOST_ROWS = 2 ** 63 - 2


def _row_limit(limit: int) -> int | None:
    if limit < 0:
        raise WorkbenchError(f"--limit must be 0 (all) or more, not {limit}")
    if limit > MOST_ROWS:
        raise WorkbenchError(f"--limit must be at most {MOST_ROWS} (or 0 for all), not {limit}")
    return limit or None


def _printed_as_data(frame, args) -> bool:
    """`frame` printed as JSON (one object per row) or CSV (lists joined by `;`, cells
    safe for a spreadsheet), as asked; False when neither was."""
    import polars as pl

    if args.json:
        print(json.dumps(frame.to_dicts(), ensure_ascii=False, default=str))
    elif args.csv:
        flat = frame.with_columns(pl.col(name).cast(pl.List(pl.String)).list.join(";")
                                  for name, dtype in frame.schema.items()
                                  if isinstance(dtype, pl.List))
        print(spreadsheet_safe(flat).write_csv(), end="")
    return bool(args.json or args.csv)


def _shown(raw: str | None, line: int | None) -> str:
    if raw is None and line is None:
        return "(no raw text: a part of a file that has no lines)"
    if raw is None:
        return "(raw text gone: the file no longer holds what was ingested)"
    return raw if len(raw) <= SHOWN_CHARS else f"{raw[:SHOWN_CHARS]}… ({len(raw) - SHOWN_CHARS} more characters; --json)"


# What `workbench records` checks a name against when nothing matches: the names the
# database knows.
KNOWN_NAMES = {"format": "SELECT DISTINCT format FROM sources", "model": "SELECT DISTINCT model FROM decisions",
               "rule": "SELECT DISTINCT rule FROM violations"}


def _unknown_name(con, args) -> str:
    """`; no model 'x' here (...)` for the first filter that names nothing the database
    knows (an alias, and the name it maps, are names too), with the name that differs
    only in case; else ``."""
    from workbench.naming import read_aliases

    for option, query in KNOWN_NAMES.items():
        given = getattr(args, option)
        if given is None:
            continue
        known = {name for (name,) in con.execute(query).fetchall() if name is not None}
        if option == "model":
            aliases = read_aliases(args.aliases)
            known |= set(aliases) | set(aliases.values())
        if given in known:
            continue
        alike = [name for name in known if name.lower() == given.lower()]
        if alike:
            hint = f"did you mean {alike[0]!r}?"
        elif option == "model":
            hint = f"{len(known)} known: `workbench scorecard` lists them"
        else:
            hint = f"known: {', '.join(sorted(known)[:8])}{', ...' if len(known) > 8 else ''}"
        return f"; no {option} {given!r} here ({hint})"
    return ""


# The most decisions per game a plan takes: no game has more.
MOST_PER_GAME = 1_000_000_000


def _plan(args) -> int:
    if not args.difference > 0:  # a difference is one size; -0.1 is not taken for 0.1
        raise WorkbenchError(f"--difference must be more than 0 and less than 1 (0.05 for 5 points), "
                             f"not {args.difference:g}")
    if args.per_game is not None and not args.per_game <= MOST_PER_GAME:
        raise WorkbenchError(f"--per-game must be from 1 to {MOST_PER_GAME:,} decisions, not {args.per_game:g}")

    given = {"validity": args.validity, "decisions_per_game": args.per_game, "icc": args.icc}
    if all(value is not None for value in given.values()) and args.db is None and args.parquet is None:
        return _planned(args, None, given)
    with _source(args) as con:
        return _planned(args, con, given)


def _planned(args, con, given: dict) -> int:
    """The plan in words, or its numbers (--json, --csv)."""
    from workbench.comparison import plan_in_words, plan_numbers

    if args.json or args.csv:
        numbers = plan_numbers(con, args.difference, power=args.power, format=args.format, aliases=args.aliases,
                               failures=args.failures, **given)
        if args.json:
            print(json.dumps(numbers, indent=1))
        else:
            import polars as pl

            print(spreadsheet_safe(pl.DataFrame([numbers])).write_csv(), end="")
        return 0
    print(plan_in_words(con, args.difference, power=args.power, format=args.format, aliases=args.aliases,
                        db_label=_source_label(args) if con is not None else "the database",
                        failures=args.failures, **given))
    return 0


# The mistakes a decision can be named by (damage.play.MISTAKES; kept here so that
# `--help` needs no poker library).
MISTAKE_NAMES = ("fold_free", "fold_ahead", "continue_behind", "showdown_long_shot")


def _quality(args) -> int:
    from workbench.analysis import play_quality, play_summary

    with _database(args) as con:
        if args.mistake:
            return _mistaken(play_quality(con, game_id=args.game), args)
        summary = play_summary(con, aliases=args.aliases, model=args.model, game_id=args.game)
    if _printed_as_data(summary, args):
        return 0
    for row in summary.iter_rows(named=True):
        for line in _quality_said(row):
            print(line)
    return 0


def _quality_said(row: dict) -> list[str]:
    """A model's play in lines: its decisions, each mistake's and statistic's share with
    its interval and n, and luck apart from skill."""
    def share(name: str, label: str) -> str:
        if row[name] is None:
            return f"{label}: none to count"
        return (f"{label} {row[name]:.1%} (95% CI {_percent(row[name + '_low'])}-{_percent(row[name + '_high'])}, "
                f"n={row[name + '_n']})")

    games = f"{row['games']} game" + ("s" if row["games"] != 1 else "")
    lines = [f"{row['model']}: {row['decisions']} betting decisions in {games}",
             "  mistakes: " + "; ".join(share(name, name) for name in MISTAKE_NAMES),
             "  play: " + "; ".join(share(name, label) for name, label in (
                 ("vpip", "VPIP"), ("pfr", "PFR"), ("aggression", "raises of calls and raises"),
                 ("fold_to_raise", "fold to a raise"), ("showdown_win_rate", "showdowns won")))]
    if row["showdowns"]:
        showdowns = f"{row['showdowns']} showdown" + ("s" if row["showdowns"] != 1 else "")
        lines.append(f"  luck apart: at {showdowns} won {row['chips_won']:+,.0f} chips, expected "
                     f"{row['chips_expected']:+,.0f} from its win probabilities; lost {row['lives_lost']} "
                     f"Lives, expected {row['lives_expected']:.1f}")
    return lines


def _percent(value, places: int = 1) -> str:
    return "?" if value is None else f"{value:.{places}%}"


def _mistaken(frame, args) -> int:
    import polars as pl

    from workbench.naming import read_aliases

    names = read_aliases(args.aliases)
    frame = frame.filter(pl.col("mistake") == args.mistake).with_columns(
        model=pl.col("model").replace(names) if names else pl.col("model"))
    if args.model:
        frame = frame.filter(pl.col("model") == args.model)
    if _printed_as_data(frame, args):
        return 0
    if frame.is_empty():
        print(f"no decision named {args.mistake}")
        return 0
    for row in frame.iter_rows(named=True):
        board = f" on {' '.join(row['board'])}" if row["board"] else ""
        where = escaped(f"{row['path']}:{row['line']}")
        print(f"{where}: "
              f"{row['game_id']} turn {row['turn']} {row['street']}, {escaped(row['player_id'])} "
              f"({escaped(row['model'] or 'no model')}) {row['action']} holding {' '.join(row['hand'])}{board}: "
              f"{row['to_call']} to call into {row['pot']} (pot odds {_percent(row['pot_odds'], 0)}), "
              f"win probability {_percent(row['win_probability'], 0)}")
    return 0


MOST_RESAMPLES = 100_000


def _ratings(args) -> int:
    from workbench.analysis import ratings
    from workbench.damage.ratings import ratings_in_words

    if not 1 <= args.bootstrap <= MOST_RESAMPLES:
        raise WorkbenchError(f"--bootstrap must be from 1 to {MOST_RESAMPLES:,} resamples, not {args.bootstrap}")
    with _source(args) as con:
        table = ratings(con, by=args.by, bootstrap=args.bootstrap, aliases=args.aliases, failures=args.failures)
    if _printed_as_data(table, args):
        return 0
    for line in ratings_in_words(table, args.by):
        print(line)
    return 0


def _report(args) -> int:
    from workbench.report import write_report

    with _source(args) as con:
        path = write_report(con, args.output, db_label=Path(_source_label(args)).name, prices=args.prices,
                            aliases=args.aliases, log=sys.stderr)
    size = path.stat().st_size
    print(f"wrote {path} ({size / 1e6:.1f} MB)" if size >= 1e5 else f"wrote {path} ({size / 1e3:.0f} kB)")
    return 0


def _synth(args) -> int:
    from workbench.synth import synthesize

    if args.scale < 1:
        raise WorkbenchError(f"--scale must be 1 or more, got {args.scale}")
    manifest = synthesize(args.out, scale=args.scale, seed=args.seed)
    faults = sum(len(f["faults"]) for f in manifest["files"])
    print(f"wrote {len(manifest['files'])} files with {faults} injected faults to {args.out} "
          f"(listed in {Path(args.out) / 'manifest.json'})")
    return 0


def _export(args) -> int:
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


def _compact(args) -> int:
    from workbench.spark.compact import compact

    for line in compact(args.parquet).lines():
        print(line)
    return 0


def _lab(args) -> int:
    from workbench.catalog import default_db
    from workbench.lab import jupyterlab_command

    notebooks = Path(__file__).resolve().parent.parent / "notebooks"
    if not notebooks.is_dir():
        raise WorkbenchError(f"no notebooks folder at {notebooks}; run from a clone of the workbench repository")
    env = dict(os.environ, WORKBENCH_DB=str(Path(args.db or default_db()).resolve()))
    extra = list(args.jupyter_args)
    # JupyterLab refuses to start as root, the usual user in a container: say so and start.
    if os.geteuid() == 0 and "--allow-root" not in extra:
        print("workbench lab: running as root (as in a container): starting JupyterLab with --allow-root",
              file=sys.stderr)
        extra.append("--allow-root")
    os.execvpe(sys.executable, jupyterlab_command(notebooks, extra), env)
    return 0


def run() -> None:
    """The `workbench` command: `main`, then exit. Once the command's work is done and
    printed, a late Ctrl-C is ignored while Python shuts down, rather than killing the
    process with a signal after its work succeeded."""
    import signal

    code = main()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A Ctrl-C that ended an `exec` of a string (a dataclass being built as a format's
    # module loads) marks the interpreter, which then ends by SIGINT at exit, though
    # `main` caught it: `python -m workbench.cli` lost its exit code (130). Each `exec`
    # of a string starts by clearing that mark.
    exec("")
    _exit(code)


def _exit(code: int) -> None:
    """End the process with `code`, skipping Python's shutdown where nothing is left for
    it to do: it would unload polars, DuckDB and pyarrow and free their objects one by
    one, 0.1-0.15 s after the command's work was done and printed. That is where the
    process is the command's own (no debugger, profiler or IPython's `%run` hosts it) and
    no thread but a daemon is alive (every command has closed its database by then);
    the exit handlers run first, then the output is flushed. Elsewhere it exits as
    Python does."""
    import atexit
    import threading

    hosted = sys.gettrace() is not None or sys.getprofile() is not None or "IPython" in sys.modules
    if hosted or any(thread.is_alive() and not thread.daemon for thread in threading.enumerate()
                     if thread is not threading.main_thread()):
        sys.exit(code)
    atexit._run_exitfuncs()  # and forgotten: a `sys.exit` below does not run them again
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # no stream: the file descriptor was closed, or pythonw
                stream.flush()
        except BrokenPipeError:  # what was left to print found its reader gone (`| head`)
            code = _reader_gone() if stream is sys.stdout else code
        except (OSError, ValueError):
            sys.exit(code)  # Python's shutdown says what it says of a stream that failed
    os._exit(code)


if __name__ == "__main__":
    run()
