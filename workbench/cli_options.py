"""The parts of `workbench`'s parser that its commands share: the parser classes (a
refusal of the arguments in one line; a help completed when it is shown), the options
several commands take (--db, --spec, --engine, --prices, --aliases, --json/--csv,
--failures, --cluster), and the check of every name and path given (`names_are_text`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from workbench.errors import WorkbenchError


class Parser(argparse.ArgumentParser):
    """A parser whose refusal of the arguments is one line, as every user error is:
    `workbench: records: argument --valid: not allowed with argument --failed`, exit 2
    (argparse's own prints the usage first)."""

    def error(self, message: str):
        command = self.prog.removeprefix("workbench").strip()
        self.exit(2, f"workbench: {command + ': ' if command else ''}{message} (see {self.prog} --help)\n")


class Command(Parser):
    """A command's parser; `completes_help`, given the parser, completes its help when
    the help is shown: with what only loading modules tells, which a command run without
    `--help` does not wait for."""

    def __init__(self, *args, completes_help: Callable[[argparse.ArgumentParser], None] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.completes_help = completes_help

    def format_help(self) -> str:
        if self.completes_help is not None:
            self.completes_help(self)
        return super().format_help()


def add_db(command: argparse.ArgumentParser) -> None:
    command.add_argument("--db", help="database file (default: $WORKBENCH_DB or data/workbench.duckdb)")


def add_spec(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--spec",
        action="append",
        metavar="FILE.toml",
        help="a game of your own: the TOML file that declares its format (docs: Your own game); may be repeated",
    )


def add_engine(command: argparse.ArgumentParser, spark_does: str) -> None:
    command.add_argument(
        "--engine",
        choices=("duckdb", "spark"),
        default="duckdb",
        help=f"duckdb (default): the database (--db); spark: {spark_does}",
    )
    command.add_argument("--parquet", metavar="DIR", help="with --engine spark: the Parquet tree")
    command.add_argument(
        "--master",
        metavar="URL",
        help="with --engine spark: the cluster (spark://host:7077, yarn, "
        "local[4], or Spark Connect: sc://host:15002); default: "
        "$SPARK_REMOTE, else local[*]",
    )


def add_prices(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--prices",
        metavar="FILE",
        help="model prices in USD per million tokens (JSON or CSV) over genai-prices' table, for costs",
    )


def add_aliases(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--aliases", metavar="FILE", help='names that are one model: JSON {"name": "model"} or CSV name,model'
    )


def add_output(command: argparse.ArgumentParser) -> None:
    shape = command.add_mutually_exclusive_group()
    shape.add_argument("--json", action="store_true", help="print every column as JSON, raw text in full")
    shape.add_argument("--csv", action="store_true", help="print every column as CSV, raw text in full")


def add_failures(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--failures",
        choices=("exclude", "invalid"),
        default="exclude",
        help="a call that got no answer (the provider's error): left out of validity and shown "
        "beside it (exclude, the default), or counted against the model as invalid",
    )


def add_cluster(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--cluster",
        choices=("game", "file", "none"),
        default="game",
        help="the unit decisions were sampled in, for intervals (default: game)",
    )


# The arguments that name files: a file name may hold bytes that are not UTF-8. Every
# other argument is a name or value the database holds as text.
FILE_ARGUMENTS = frozenset(
    {"paths", "db", "output", "aliases", "prices", "parquet", "out", "data", "otlp", "spec", "jupyter_args"}
)
POSITIONAL = {"models": "MODEL", "kind": "KIND"}


def names_are_text(args) -> None:
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
                shown = text_of(given)
                raise WorkbenchError(
                    f"{POSITIONAL.get(dest, '--' + dest.replace('_', '-'))} '{shown}' is not UTF-8 "
                    f"text, so nothing here is named so"
                )
