"""The error contract, input by input: every fault a user can cause gives one line and
exit 2 (or what the table says), never a traceback and never exit 3. Each row is a hostile
or unlucky input: how to make it, the command, the exit and the line expected. The
commands run as a user runs them, as `python -m workbench.cli` in a process of its own."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

import workbench
from tests.conftest import SHARED, write_lines

SAVE = SHARED / "corpus" / "stellaris" / "autosave_2312.01.01.sav"


def decisions(path: Path, ticks=range(3)) -> Path:
    return write_lines(path, [{"agent_id": "a1", "tick": t, "tool": "idle", "params": {}, "model": "m"} for t in ticks])


def database(folder: Path) -> Path:
    db = folder / "w.duckdb"
    assert not workbench.ingest([decisions(folder / "ep1.decisions.jsonl")], db=db).failed
    return db


def empty_database(folder: Path) -> Path:
    db = folder / "empty.duckdb"
    workbench.connect(db).close()
    return db


def damaged_database(folder: Path) -> Path:
    """A database whose data block of `decisions` fails its checksum when a query reads it."""
    db = database(folder)
    with duckdb.connect(str(db), read_only=True) as con:
        [(block,)] = con.execute(
            "SELECT min(block_id) FROM pragma_storage_info('decisions') WHERE block_id >= 0"
        ).fetchall()
        [(size,)] = con.execute("SELECT block_size FROM pragma_database_size()").fetchall()
    with open(db, "r+b") as handle:  # blocks follow the 3 header blocks of 4 KiB
        handle.seek(3 * 4096 + block * size + 64)
        handle.write(b"\x13\x37" * 64)
    return db


def truncated_database(folder: Path) -> Path:
    db = database(folder)
    db.write_bytes(db.read_bytes()[:100_000])
    return db


def sqlite_file(folder: Path) -> Path:
    path = folder / "history.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (x)")
    return path


def a_file(folder: Path) -> Path:
    path = folder / "afile"
    path.write_text("not a folder")
    return path


def symlink_loop(folder: Path) -> Path:
    (folder / "loop1").symlink_to(folder / "loop2")
    (folder / "loop2").symlink_to(folder / "loop1")
    return folder / "loop1"


def zip_bomb(folder: Path) -> Path:
    """510 KB that unpacks to 500 MB of `a=1` lines: no gamestate begins so."""
    path = folder / "bomb.sav"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("meta", 'date="2200.01.01"\n')
        archive.writestr("gamestate", b"a=1\n" * (125 << 20))
    return path


def headed_zip_bomb(folder: Path) -> Path:
    """The same, behind the first keys of a real gamestate: packed 1000 to 1."""
    path = folder / "headed.sav"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("meta", 'date="2200.01.01"\n')
        archive.writestr(
            "gamestate", b'version="Phoenix v4.0.1"\nname="x"\ndate="2200.01.01"\n' + b"a=1\n" * (60 << 20)
        )
    return path


@dataclass
class Case:
    name: str
    argv: Callable[[Path], list[str]]
    exit: int
    line: str  # a regular expression the one line matches
    # Where the line is: stderr for a command refused; stdout for a file that failed,
    # which `ingest` and `validate` list with the others, each in one line.
    stream: str = "stderr"


CASES = [
    Case(
        "symlink loop named",
        lambda d: ["ingest", str(symlink_loop(d)), "--db", str(d / "x.duckdb")],
        2,
        r"loop1: a symbolic link that leads back to itself",
    ),
    Case(
        "report under a file",
        lambda d: ["report", "--db", str(database(d)), "-o", str(a_file(d) / "r.html")],
        2,
        r"cannot write .*afile/r\.html: .*afile is a file, not a folder",
    ),
    Case(
        "report where nothing can be written",
        lambda d: ["report", "--db", str(database(d)), "-o", "/proc/workbench-report.html"],
        2,
        r"cannot write /proc/workbench-report\.html: ",
    ),
    Case(
        "plot under a file",
        lambda d: ["plot", "scorecard", "--db", str(database(d)), "-o", str(a_file(d) / "x.png")],
        2,
        r"afile is a file, not a folder",
    ),
    Case(
        "export under a file",
        lambda d: ["export", "--parquet", str(a_file(d) / "pq"), "--db", str(database(d))],
        2,
        r"cannot export to .*afile",
    ),
    Case(
        "export to a file",
        lambda d: ["export", "--parquet", str(a_file(d)), "--db", str(database(d))],
        2,
        r"cannot export to .*afile: it is a file, not a folder",
    ),
    Case(
        "truncated database",
        lambda d: ["scorecard", "--db", str(truncated_database(d))],
        2,
        r"cannot open database .*w\.duckdb",
    ),
    Case(
        "database with a damaged block",
        lambda d: ["scorecard", "--db", str(damaged_database(d))],
        2,
        r"the database file is damaged or unreadable \(Corrupt database file.*\); restore it",
    ),
    Case(
        "ingest into a damaged database",
        lambda d: ["ingest", str(decisions(d / "new.decisions.jsonl")), "--db", str(damaged_database(d)), "--quiet"],
        2,
        r"damaged or unreadable",
    ),
    Case(
        "a SQLite file as the database",
        lambda d: ["scorecard", "--db", str(sqlite_file(d))],
        2,
        r"history\.db is not a DuckDB database \(it is a SQLite database",
    ),
    Case(
        "ingest into a SQLite file",
        lambda d: ["ingest", str(decisions(d / "e.decisions.jsonl")), "--db", str(sqlite_file(d))],
        2,
        r"is not a DuckDB database",
    ),
    *(
        Case(
            f"--interval {value}",
            lambda d, value=value: ["ingest", str(d), "--watch", "--interval", value],
            2,
            r"--interval must be a number of seconds more than 0 and at most 86,400 \(a day\), got ",
        )
        for value in ("nan", "inf", "0", "-1", "1e308")
    ),
    *(
        Case(
            f"a tree's path with {what}",
            lambda d, argv=argv, name=name: [*argv, str(d / name)],
            2,
            rf"the tree's path .* {said}: choose another folder",
        )
        for what, name, said in (
            ("a backslash", "la\\ke", "holds a backslash, which DuckDB takes for a folder separator"),
            ("a byte not UTF-8", os.fsdecode(b"lake\xff"), "is not UTF-8 text, which Spark and DuckDB name files in"),
        )
        for argv in (
            ["ingest", "--engine", "spark", "--quiet", str(Path(__file__)), "--parquet"],
            ["export", "--parquet"],
        )
    ),
    Case(
        "scorecard of no decisions",
        lambda d: ["scorecard", "--db", str(empty_database(d))],
        2,
        r"no decisions in this database to score",
    ),
    Case(
        "compare of no decisions",
        lambda d: ["compare", "--db", str(empty_database(d))],
        2,
        r"no decisions in this database to compare",
    ),
    Case(
        "plot families of nothing",
        lambda d: ["plot", "families", "--db", str(empty_database(d)), "-o", str(d / "f.png")],
        2,
        r"no EC4X order drafts or bot traces",
    ),
    Case(
        "plot trace-steps of nothing",
        lambda d: ["plot", "trace-steps", "--db", str(empty_database(d)), "-o", str(d / "t.png")],
        2,
        r"no timed reasoning-trace step",
    ),
    Case(
        "a zip bomb as a save",
        lambda d: ["validate", str(zip_bomb(d))],
        2,
        r"bomb\.sav: failed: .*refused before unpacking: `gamestate` would unpack to 1,0\d\d times its packed size",
        "stdout",
    ),
    Case(
        "a zip bomb behind a gamestate's first keys",
        lambda d: ["validate", str(headed_zip_bomb(d))],
        2,
        r"headed\.sav: failed: .*refused before unpacking: `gamestate` would unpack to",
        "stdout",
    ),
    Case(
        "records of a damaged database",
        lambda d: ["records", "--db", str(damaged_database(d))],
        2,
        r"the database file is damaged or unreadable",
    ),
    Case(
        "records with an aliases file that is a device",
        lambda d: ["records", "--db", str(database(d)), "--model", "m", "--aliases", "/dev/zero"],
        2,
        r"cannot read aliases from /dev/zero: it is a character device, not a file",
    ),
    Case(
        "side by side of one model",
        lambda d: ["side-by-side", "m", "m", "--db", str(database(d))],
        2,
        r"side by side needs two different models, not 'm' twice",
    ),
    Case(
        "a prices file that is a device",
        lambda d: ["scorecard", "--db", str(database(d)), "--prices", "/dev/zero"],
        2,
        r"it is a character device, not a file",
    ),
    # A name that is not UTF-8 ($'g\xff': Python holds it as a lone surrogate) names nothing.
    *(
        Case(
            f"a name that is not UTF-8: {argv[0]} {option}",
            lambda d, argv=argv: [*argv, "--db", str(database(d))],
            2,
            rf"{option} 'g\\xff' is not UTF-8 text, so nothing here is named so",
        )
        for argv, option in (
            (["records", "--model", "g\udcff"], "--model"),
            (["records", "--text", "g\udcff"], "--text"),
            (["side-by-side", "g\udcff", "m"], "MODEL"),
            (["plan", "--difference", "0.05", "--format", "g\udcff"], "--format"),
            (["compare", "--format", "g\udcff"], "--format"),
            (["plot", "emotions", "-o", "x.svg", "--game", "g\udcff"], "--game"),
        )
    ),
    Case(
        "records of more than a BIGINT counts",
        lambda d: ["records", "--db", str(database(d)), "--limit", str(2**63 - 1)],
        2,
        r"--limit must be at most 9223372036854775806 \(or 0 for all\), not 9223372036854775807",
    ),
    Case(
        "a plan for a difference below a double's reach",
        lambda d: ["plan", "--difference", "1e-17", "--validity", "0.9", "--per-game", "10", "--icc", "0.1"],
        2,
        r"a difference of 1e-17 is too small to plan for at a validity of 0\.9: no number of games shows it",
    ),
    Case(
        "a plan for a difference below a double's reach, from a database",
        lambda d: ["plan", "--difference", "1e-17", "--db", str(database(d))],
        2,
        r"a difference of 1e-17 is too small",
    ),
    Case(
        "a plan of 1e308 decisions a game",
        lambda d: ["plan", "--difference", ".05", "--validity", ".5", "--per-game", "1e308", "--icc", ".1"],
        2,
        r"--per-game must be from 1 to 1,000,000,000 decisions, not 1e\+308",
    ),
    Case(
        "a plan for a negative difference",
        lambda d: ["plan", "--difference", "-0.1", "--db", str(database(d))],
        2,
        r"--difference must be more than 0 and less than 1 \(0\.05 for 5 points\), not -0\.1",
    ),
    Case(
        "aliases nested 100,000 deep",
        lambda d: [
            "scorecard",
            "--db",
            str(database(d)),
            "--aliases",
            str(settings(d / "a.json", "[" * 100_000 + "]" * 100_000)),
        ],
        2,
        r"cannot read aliases from .*a\.json: nested too deeply; give a JSON object",
    ),
    Case(
        "prices nested 100,000 deep",
        lambda d: [
            "scorecard",
            "--db",
            str(database(d)),
            "--prices",
            str(settings(d / "p.json", '{"m":' * 100_000 + "1" + "}" * 100_000)),
        ],
        2,
        r"cannot read prices from .*p\.json: nested too deeply",
    ),
    Case(
        "aliases naming a lone surrogate",
        lambda d: ["scorecard", "--db", str(database(d)), "--aliases", str(settings(d / "a.json", '{"m": "\\ud800"}'))],
        2,
        r"aliases in .*a\.json: 'm' -> '\\ud800': each name and model must be non-empty text",
    ),
    *(
        Case(
            f"aliases in a circle, to {command}",
            lambda d, command=command: [
                command,
                "--db",
                str(database(d)),
                "--aliases",
                str(settings(d / "a.json", '{"m": "n", "n": "o", "o": "m"}')),
                *(["m", "x"] if command == "side-by-side" else []),
            ],
            2,
            r"aliases in .*a\.json: 'm' -> 'n' -> 'o' -> 'm' goes round in a circle; map each name to the one model it is",
        )
        for command in ("scorecard", "compare", "side-by-side", "records")
    ),
    Case(
        "a scorecard by one key twice",
        lambda d: ["scorecard", "--db", str(database(d)), "--by", "model,model"],
        2,
        r"a scorecard is grouped by each of format, model, game_id, agent_id once, not by model, model",
    ),
    # Refused before a JVM starts (no Java needed), whose refusal was a Java stack.
    *(
        Case(
            f"--master {master} to {command}",
            lambda d, master=master, command=command: [
                command,
                *([str(decisions(d / "e.decisions.jsonl"))] if command == "ingest" else []),
                "--engine",
                "spark",
                "--parquet",
                str(d / "lake"),
                "--master",
                master,
            ],
            2,
            rf"--master {re.escape(master)}: {said}",
        )
        for master, said in (
            ("bogus://x", "not a Spark master; give local\\[N\\], local\\[\\*\\], spark://HOST:PORT"),
            ("local[0]", "local mode with no thread runs nothing"),
        )
        for command in ("ingest", "scorecard")
    ),
    # Found by the second red team.
    Case(
        "an aliases CSV of a field past csv's limit",
        lambda d: [
            "scorecard",
            "--db",
            str(database(d)),
            "--aliases",
            str(settings(d / "a.csv", "name,model\n" + "a" * 200_000 + ",m\n")),
        ],
        2,
        r"cannot read aliases from .*a\.csv: field larger than field limit",
    ),
    Case(
        "a prices CSV of a field past csv's limit",
        lambda d: [
            "scorecard",
            "--db",
            str(database(d)),
            "--prices",
            str(settings(d / "p.csv", "model,usd_per_mtok\n" + "a" * 200_000 + ",1\n")),
        ],
        2,
        r"cannot read prices from .*p\.csv: field larger than field limit",
    ),
    Case(
        "arguments argparse refuses",
        lambda d: ["records", "--db", str(database(d)), "--failed", "--valid"],
        2,
        r"^workbench: records: argument --valid: not allowed with argument --failed \(see workbench records --help\)$",
    ),
    Case("no command", lambda d: [], 2, r"^workbench: the following arguments are required: COMMAND"),
    Case(
        "a price past what a cost can hold",
        lambda d: ["scorecard", "--db", str(database(d)), "--prices", str(settings(d / "p.json", '{"m": 1e308}'))],
        2,
        r"the price of 'm' must be a finite number of US dollars per million tokens, from 0 to 1,000,000, "
        r"not 1e\+308",
    ),
]


def settings(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_each_fault_is_one_line_and_its_exit(case: Case, tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "workbench.cli", *case.argv(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    said = run.stderr if case.stream == "stderr" else run.stdout
    lines = [line for line in said.splitlines() if not line.startswith(("workbench report:", "  ["))]
    assert run.returncode == case.exit, run.stderr
    assert len(lines) == 1, said
    assert lines[0].startswith("workbench: ") or case.stream == "stdout", said
    assert re.search(case.line, lines[0]), lines[0]
    assert "Traceback" not in run.stderr


def test_a_reader_that_goes_away_stops_the_output_quietly(tmp_path):
    # `workbench validate ... | head -1`: as `cat` does, no message and the exit of SIGPIPE
    log = write_lines(
        tmp_path / "bad.decisions.jsonl",
        [{"agent_id": "a", "tick": -1, "tool": "fly", "params": {}} for _ in range(20_000)],
    )
    child = subprocess.Popen(
        [sys.executable, "-m", "workbench.cli", "validate", str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert child.stdout.readline()
    child.stdout.close()
    assert child.wait(timeout=120) == 141
    assert child.stderr.read() == b""


def test_a_reader_gone_before_the_last_flush_is_quiet_too(tmp_path):
    # Output small enough to wait in the buffer until the command ends, its reader gone by then.
    log = decisions(tmp_path / "ep.decisions.jsonl")
    child = subprocess.Popen(
        [sys.executable, "-m", "workbench.cli", "validate", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=buffered(),
    )
    child.stdout.close()
    assert child.wait(timeout=120) == 141
    assert child.stderr.read() == b""


def buffered() -> dict:
    """This environment, with Python's output buffered as a terminal user's is."""
    import os

    return {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}


# `workbench.cli.run` as the console script runs it, with an exit handler that prints.
WITH_AN_EXIT_HANDLER = """
import atexit, sys
atexit.register(lambda: print("said by an exit handler"))
sys.argv = ["workbench", *sys.argv[1:]]
from workbench.cli import run
run()
"""


def test_what_exit_handlers_print_is_written_and_the_exit_is_the_command_s(tmp_path):
    log = decisions(tmp_path / "ep.decisions.jsonl")
    out = tmp_path / "out.txt"
    with out.open("w") as stdout:
        code = subprocess.run(
            [sys.executable, "-c", WITH_AN_EXIT_HANDLER, "validate", str(log)],
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=buffered(),
            timeout=120,
        ).returncode
    assert code == 0 and out.read_text().splitlines()[-1] == "said by an exit handler"
    assert "ep.decisions.jsonl" in out.read_text()


@pytest.mark.parametrize("closed", ["stdout", "stderr"])
def test_a_closed_output_stream_changes_nothing_of_the_exit(tmp_path, closed):
    # `workbench synth ... >&-`: Python then has no sys.stdout at all
    fd = 1 if closed == "stdout" else 2
    done = subprocess.run(
        f"{sys.executable} -m workbench.cli synth --out {tmp_path / 'synth'} {fd}>&-",
        shell=True,
        env=buffered(),
        timeout=300,
        capture_output=closed == "stdout",
    )
    assert done.returncode == 0 and (tmp_path / "synth" / "manifest.json").exists()


def test_a_profiled_command_ends_as_python_does(tmp_path):
    # Where a profiler (or a debugger, or IPython's %run) hosts the command, its own exit
    # still follows: here, cProfile writes its profile.
    profile = tmp_path / "validate.prof"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cProfile",
            "-o",
            str(profile),
            "-m",
            "workbench.cli",
            "validate",
            str(decisions(tmp_path / "ep.decisions.jsonl")),
        ],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0 and profile.stat().st_size > 0


def test_a_command_run_in_ipython_leaves_ipython_running(tmp_path):
    pytest.importorskip("IPython")
    log = decisions(tmp_path / "ep.decisions.jsonl")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "IPython",
            "--quick",
            "--no-banner",
            "-c",
            f"%run -m workbench.cli validate {log}\nprint('still here')",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "0 errors" in done.stdout and done.stdout.rstrip().endswith("still here"), done.stdout + done.stderr


def test_duckdb_never_installs_or_loads_an_extension_on_its_own(tmp_path):
    con = workbench.connect(tmp_path / "w.duckdb")
    try:
        assert con.execute(
            "SELECT current_setting('autoinstall_known_extensions'), current_setting('autoload_known_extensions')"
        ).fetchall() == [(False, False)]
    finally:
        con.close()
    from workbench import connection

    with connection.bulk_connection(tmp_path / "w.duckdb") as con:  # an ingest's, on its kept instance
        assert con.execute("SELECT current_setting('autoload_known_extensions')").fetchall() == [(False,)]


def test_an_empty_workbench_db_is_taken_as_not_set(tmp_path):
    """`WORKBENCH_DB= workbench ingest ...` named `.`, a folder ("Is a directory")."""
    log = tmp_path / "a.decisions.jsonl"
    decisions(log)
    run = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "ingest", str(log), "--quiet"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "WORKBENCH_DB": ""},
    )
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "data" / "workbench.duckdb").is_file()
