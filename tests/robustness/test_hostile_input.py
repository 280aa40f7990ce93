"""Hostile and odd input, one case per kind: no crash, no aborted run, no line lost.

Each test names what a user meets; the promise is the same throughout: every line ends
as a record or a reject with its text, a file that cannot be read is refused in one
line, and the other files of the run still load."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

import workbench
from bench.common import PRINT_PEAK_KB
from tests.conftest import ROOT, rows, write_lines
from workbench.cli import INTERRUPTED, main
from workbench.jsonl import MAX_LINE_BYTES

CLI = [sys.executable, "-m", "workbench.cli"]
TS = "2026-03-01T10:00:00+00:00"


def damage_line(text: str = "hello", turn: int = 1) -> dict:
    return {
        "schema_version": "0.1",
        "type": "chatter_posted",
        "game_id": "g1",
        "ts": TS,
        "payload": {"turn": turn, "player_id": "P1", "text": text},
    }


# One valid line per line-based kind of file, with a string field to blow up.
def arena_line(text: str = "why") -> dict:
    return {"agent_id": "a1", "tick": 1, "tool": "idle", "params": {}, "reasoning": text}


def trace_line(text: str = "none") -> dict:
    return {
        "timestamp": "2026-03-01T11:00:00+01:00",
        "gameId": "g1",
        "turn": 1,
        "ok": True,
        "errorClass": "success",
        "attempts": 1,
        "errors": [text],
        "featureTags": [],
        "trace": [],
    }


def order_line(text: str = "x") -> dict:
    return {"turn": 1, "houseId": 1, "fleetCommands": [], "buildCommands": [], "notes": text}


def gm_line(text: str = "The saloon is quiet.") -> dict:
    return {"id": "r1", "text": text}


LINE_KINDS = {
    "damage": ("g.events.jsonl", damage_line),
    "arena": ("e.decisions.jsonl", arena_line),
    "trace": ("bot_trace_g1.jsonl", trace_line),
    "orders": ("g1.orders.jsonl", order_line),
    "gm": ("s.gm.jsonl", gm_line),
}


def ingest_one(path: Path, db: Path):
    (file,) = workbench.ingest([path], db=db).files
    return file


# --- lone UTF-16 surrogates: legal JSON, not text -------------------------------------------


@pytest.mark.parametrize("kind", list(LINE_KINDS))
def test_a_lone_surrogate_line_is_a_reject_and_the_run_goes_on(tmp_path, kind):
    name, make = LINE_KINDS[kind]
    surrogate = json.dumps(make("before \ud800 after"))  # json.dumps writes it as \ud800
    assert "\\ud800" in surrogate
    paired = json.dumps(make("a face \U0001f600"))  # a valid pair (\ud83d\ude00) is text
    path = tmp_path / name
    path.write_text(f"{surrogate}\n{paired}\n")
    other = write_lines(tmp_path / "after.events.jsonl", [damage_line()])
    report = workbench.ingest([path, other], db=tmp_path / "w.duckdb")
    file = report.files[0]
    assert [f.status for f in report.files] == ["ingested", "ingested"]
    assert (file.records, file.rejected) == (1, 1)
    [(raw, locator)] = rows(tmp_path / "w.duckdb", "SELECT raw, locator FROM rejects")
    assert raw == surrogate and locator == "line 1"
    assert any("lone UTF-16 surrogate (\\ud800)" in v.message for v in file.violations)


def test_an_escaped_backslash_before_u_is_not_a_surrogate(tmp_path):
    # The text holds a backslash followed by "ud800": plain text, a record.
    path = write_lines(tmp_path / "g.events.jsonl", [damage_line("C:\\ud800\\file")])
    assert "\\\\ud800" in path.read_text()
    file = ingest_one(path, tmp_path / "w.duckdb")
    assert (file.records, file.rejected) == (1, 0)


def test_a_stellaris_output_with_a_lone_surrogate_is_kept_as_a_reject(tmp_path):
    path = tmp_path / "get_empire.json"
    path.write_text('{"name": "Empire \\udfff"}')
    file = ingest_one(path, tmp_path / "w.duckdb")
    assert file.status == "ingested" and (file.records, file.rejected) == (0, 1)
    assert rows(tmp_path / "w.duckdb", "SELECT raw FROM rejects") == [('{"name": "Empire \\udfff"}',)]


# --- format detection never fails a run ------------------------------------------------------


def test_a_deeply_nested_stray_file_is_skipped_and_the_rest_loads(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a_stray.jsonl").write_text("[" * 1000 + "]" * 1000 + "\n")
    (folder / "b_stray.jsonl").write_text('{"a":' * 1000 + "1" + "}" * 1000 + "\n")
    write_lines(folder / "c.events.jsonl", [damage_line()])
    report = workbench.ingest([folder], db=tmp_path / "w.duckdb")
    assert [(Path(f.path).name, f.status) for f in report.files] == [("c.events.jsonl", "ingested")]


def test_a_named_stray_file_is_reported_in_one_line(tmp_path, capsys):
    stray = tmp_path / "stray.jsonl"
    stray.write_text("[" * 1000 + "]" * 1000 + "\n")
    assert main(["ingest", str(stray), "--db", str(tmp_path / "w.duckdb"), "--quiet"]) == 2
    assert capsys.readouterr().out.strip() == (
        f"{stray}: failed: unknown format; pass --format (stellaris, ec4x, arena, gm, otel, damage), declare your "
        f"game's in a TOML file (--spec FILE.toml; docs: Your own game), or write OpenTelemetry GenAI traces "
        f"(*.otlp.jsonl)"
    )


# --- long lines: a documented limit, on both sides --------------------------------------------


def padded(make, size: int) -> str:
    """A line of exactly `size` bytes."""
    short = json.dumps(make(""))
    return json.dumps(make("x" * (size - len(short))))


@pytest.mark.parametrize("kind", list(LINE_KINDS))
def test_a_line_at_the_limit_is_a_record_and_one_byte_more_a_reject(tmp_path, kind):
    name, make = LINE_KINDS[kind]
    at_limit, over = padded(make, MAX_LINE_BYTES), padded(make, MAX_LINE_BYTES + 1)
    assert (len(at_limit), len(over)) == (8 * 1024 * 1024, 8 * 1024 * 1024 + 1)
    path = tmp_path / name
    path.write_text(f"{json.dumps(make())}\n{at_limit}\n{over}\n")
    file = ingest_one(path, tmp_path / "w.duckdb")
    assert file.status == "ingested", file.message
    assert (file.records, file.rejected) == (2, 1)
    [(locator, kept)] = rows(tmp_path / "w.duckdb", "SELECT locator, length(raw) FROM rejects")
    assert (locator, kept) == ("line 3", len(over))  # kept whole
    assert any(v.locator == "line 3" and "over the 8 MiB" in v.message for v in file.violations)


def test_an_11_mb_line_loses_nothing_else(tmp_path):
    lines = [damage_line(), damage_line("y" * 11_000_000, 2), damage_line("after", 3)]
    path = write_lines(tmp_path / "g.events.jsonl", lines)
    file = ingest_one(path, tmp_path / "w.duckdb")
    assert (file.records, file.rejected) == (2, 1)
    assert rows(tmp_path / "w.duckdb", "SELECT seq FROM damage_events ORDER BY seq") == [(1,), (3,)]


# --- paths ---------------------------------------------------------------------------------


def test_an_existing_path_with_glob_characters_is_that_file(tmp_path):
    path = write_lines(tmp_path / "game[1].events.jsonl", [damage_line()])
    assert ingest_one(path, tmp_path / "w.duckdb").status == "ingested"
    # A pattern that names no file is still a glob.
    report = workbench.ingest([str(tmp_path / "game*.events.jsonl")], db=tmp_path / "w.duckdb")
    assert [f.status for f in report.files] == ["unchanged"]


def test_a_file_name_that_is_not_utf8_loads_and_prints_escaped(tmp_path, capsys):
    folder = os.fsencode(tmp_path / "logs")
    os.mkdir(folder)
    name = os.path.join(folder, b"g\xff.events.jsonl")
    with open(name, "wb") as handle:
        handle.write(json.dumps(damage_line()).encode() + b"\n")
    db = str(tmp_path / "w.duckdb")
    assert main(["ingest", os.fsdecode(folder), "--db", db, "--quiet"]) == 0
    assert "g\\xff.events.jsonl: damage: 1 records" in capsys.readouterr().out
    [(stored,)] = rows(db, "SELECT path FROM sources")
    assert stored == os.fsdecode(folder) + "/g\\xff.events.jsonl"
    assert main(["ingest", os.fsdecode(name), "--db", db, "--quiet"]) == 0
    assert "unchanged" in capsys.readouterr().out


def test_a_fifo_or_a_device_is_refused_in_one_line(tmp_path):
    fifo = tmp_path / "pipe.events.jsonl"
    os.mkfifo(fifo)
    good = write_lines(tmp_path / "good.events.jsonl", [damage_line()])
    for special in (fifo, Path("/dev/zero")):
        done = subprocess.run(
            [
                *CLI,
                "ingest",
                str(special),
                str(good),
                "--db",
                str(tmp_path / "w.duckdb"),
                "--format",
                "damage",
                "--quiet",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2
        kind = "a FIFO" if special == fifo else "a character device"
        assert f"{special}: failed: not a regular file ({kind}); only files are read" in done.stdout
        assert "good.events.jsonl: " in done.stdout
    # Inside a folder, a FIFO is not a file: passed over.
    report = workbench.ingest([tmp_path], db=tmp_path / "w2.duckdb")
    assert [Path(f.path).name for f in report.files] == ["good.events.jsonl"]


# --- what a file is: path, format and content ----------------------------------------------


def test_wrong_format_then_the_right_one_loads(tmp_path):
    path = write_lines(tmp_path / "g.events.jsonl", [damage_line(), damage_line("two", 2)])
    db = tmp_path / "w.duckdb"
    (wrong,) = workbench.ingest([path], db=db, format="gm").files
    assert wrong.format == "gm" and wrong.rejected == 2
    (right,) = workbench.ingest([path], db=db).files
    # the same file, read as another format now: replaced, nothing left under the old one
    assert (right.status, right.format, right.records) == ("replaced", "damage", 2)
    assert right.message == "read as damage now, no longer as gm"
    assert rows(db, "SELECT count(*) FROM damage_events") == [(2,)]
    assert rows(db, "SELECT format, count(*) FROM sources GROUP BY ALL") == [("damage", 1)]
    assert rows(db, "SELECT count(*) FROM rejects") == [(0,)] == rows(db, "SELECT count(*) FROM gm_responses")


# --- line endings and byte order marks ----------------------------------------------------


def test_a_byte_order_mark_is_skipped(tmp_path):
    path = tmp_path / "g.events.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(damage_line()).encode() + b"\n")
    file = ingest_one(path, tmp_path / "w.duckdb")
    assert (file.records, file.rejected) == (1, 0)


def test_crlf_is_read_as_lines_and_cr_alone_is_refused_with_the_way_out(tmp_path, capsys):
    lines = [json.dumps(damage_line()), json.dumps(damage_line("two", 2))]
    crlf = tmp_path / "crlf.events.jsonl"
    crlf.write_bytes("\r\n".join(lines).encode() + b"\r\n")
    assert ingest_one(crlf, tmp_path / "w.duckdb").records == 2
    cr = tmp_path / "cr.events.jsonl"
    cr.write_bytes("\r".join(lines).encode() + b"\r")
    assert main(["ingest", str(cr), "--db", str(tmp_path / "w.duckdb"), "--quiet"]) == 2
    out = capsys.readouterr().out
    assert "its lines end with CR alone, not LF" in out and "tr '\\r' '\\n'" in out


# --- saves that are not saves ------------------------------------------------------------


@pytest.mark.slow
def test_a_save_of_zeros_is_refused_early_with_bounded_memory(tmp_path):
    bomb = tmp_path / "zeros.sav"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("meta", 'version="4.0.1"\nname="Zeros"\n')
        with archive.open("gamestate", "w", force_zip64=True) as member:
            block = bytes(1 << 20)
            for _ in range(490):
                member.write(block)
    assert bomb.stat().st_size < 1 << 20
    probe = (
        "import sys, workbench; r = workbench.ingest([sys.argv[1]], db=sys.argv[2]); "
        "print(r.files[0].status, r.files[0].message); " + PRINT_PEAK_KB
    )
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", probe, str(bomb), str(tmp_path / "w.duckdb")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    elapsed = time.monotonic() - start
    message, peak_kb = done.stdout.splitlines()
    # packed over 1,000 to 1: refused before a byte is unpacked
    assert message.startswith("failed ") and "refused before unpacking: `gamestate` would unpack to" in message
    assert "times its packed size" in message
    assert int(peak_kb) < 1024 * 1024  # the memory goal: under 1 GB
    assert elapsed < 60, "refused as soon as the start is read, not after unpacking 490 MB"


# --- Ctrl-C ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def long_log(tmp_path_factory, sample) -> Path:
    """About 150,000 events: long enough to interrupt at many points."""
    games = sorted((sample / "damage").glob("game_*.events.jsonl"))
    path = tmp_path_factory.mktemp("long") / "long.events.jsonl"
    with open(path, "wb") as out:
        written = 0
        while written < 150_000:
            for game in games:
                data = game.read_bytes()
                out.write(data)
                written += data.count(b"\n")
    return path


def test_a_ctrl_c_that_ends_an_exec_of_a_string_still_exits_130(tmp_path):
    # Dataclasses build their methods with `exec`: a Ctrl-C there, as a format's module
    # loaded, marked the interpreter, which then ended by SIGINT (-2), not with 130.
    (tmp_path / "interrupted_cli.py").write_text(
        "from workbench import cli\n"
        "def parser():\n"
        "    exec('raise KeyboardInterrupt')\n"
        "cli._parser = parser\n"
        "cli.run()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "interrupted_cli", "ingest", "x.jsonl"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert (proc.returncode, proc.stderr) == (130, INTERRUPTED + "\n")


@pytest.fixture(scope="module")
def long_order_log(tmp_path_factory) -> Path:
    """100,000 EC4X drafts (5% broken), whose drift is found on a connection of its own
    beside the file's transaction: long enough to interrupt at many points."""
    import random

    from bench.ec4x_drafts import broken, draft

    rng = random.Random(4)
    path = tmp_path_factory.mktemp("long") / "long.orders.jsonl"
    with open(path, "w") as out:
        for number in range(100_000):
            record = draft(rng, 1 + number // 50)
            out.write((broken(rng, record) if rng.random() < 0.05 else json.dumps(record)) + "\n")
    return path


@pytest.mark.parametrize("log", ["long_log", "long_order_log"])
@pytest.mark.slow
def test_ctrl_c_always_exits_130_in_one_line_and_leaves_the_database_consistent(tmp_path, log, request):
    long_log = request.getfixturevalue(log)
    table = {"long_log": "damage_events", "long_order_log": "ec4x_orders"}[log]
    interrupted = 0
    for attempt, delay in enumerate([0.0, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.3, 1.6]):
        copy, db = tmp_path / f"copy{attempt}{long_log.name}", tmp_path / f"w{attempt}.duckdb"
        shutil.copyfile(long_log, copy)
        wal = Path(f"{db}.wal")
        proc = subprocess.Popen(
            [*CLI, "ingest", str(copy), "--db", str(db), "--quiet"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # The ingest has begun once a new database is open for writing: creating its
        # tables starts its write-ahead log.
        end = time.monotonic() + 60
        while not wal.exists() and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.01)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        if proc.returncode == 0:  # it finished first: nothing to interrupt
            continue
        interrupted += 1
        assert proc.returncode == 130, (delay, out, err)
        assert err.strip().count("\n") == 0 and err.startswith("workbench: interrupted"), err
        # The file is in whole or not at all (Ctrl-C may come after its commit, or
        # before the tables were made).
        if rows(db, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'sources'") == [(1,)]:
            (records,) = rows(db, "SELECT coalesce(sum(records), 0) FROM sources")[0]
            assert rows(db, f"SELECT count(*) FROM {table}") == [(records,)]
    assert interrupted >= 5, "the log is too short to interrupt: make it longer"


# --- aliases ------------------------------------------------------------------------------


def test_a_chain_of_aliases_is_followed_to_its_end(tmp_path, capsys):
    from workbench.naming import read_aliases

    assert read_aliases({"a": "b", "b": "c", "c": "c"}) == {"a": "c", "b": "c", "c": "c"}
    db = tmp_path / "w.duckdb"
    logs = [
        write_lines(
            tmp_path / f"{model}.decisions.jsonl",
            [{"agent_id": "a1", "tick": t, "tool": "idle", "params": {}, "model": model} for t in range(2)],
        )
        for model in "abc"
    ]
    workbench.ingest(logs, db=db)
    (tmp_path / "aliases.json").write_text('{"a": "b", "b": "c"}')
    assert main(["scorecard", "--db", str(db), "--aliases", str(tmp_path / "aliases.json")]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert line.startswith("arena c: 100.0% valid") and "n=6 in 3 games" in line


# --- what a glob covers, and a FIFO where a file was ----------------------------------------


def put(path: Path, records) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_lines(path, records)


@pytest.mark.parametrize("prune", [False, True])
def test_a_glob_covers_what_it_matches_not_the_whole_folder_before_it(tmp_path, prune):
    folder = tmp_path / "p"
    logs = {
        name: put(folder / name, [gm_line()])
        for name in ("b1.gm.jsonl", "b2.gm.jsonl", "sub/b3.gm.jsonl", "c.gm.jsonl", "run1/deep/d.gm.jsonl")
    }
    db = tmp_path / "w.duckdb"
    workbench.ingest([folder], db=db)
    for log in logs.values():
        log.unlink()
    put(folder / "b1.gm.jsonl", [gm_line("Written again.")])
    said = {
        Path(f.path).relative_to(folder).as_posix(): f.status
        for f in workbench.ingest([str(folder / "b*.gm.jsonl"), str(folder / "run*")], db=db, prune=prune).files
    }
    gone = "pruned" if prune else "missing"
    assert said == {"b1.gm.jsonl": "replaced", "b2.gm.jsonl": gone, "run1/deep/d.gm.jsonl": gone}
    # sub/b3 and c were never matched: their rows are kept, and nothing is said of them
    assert rows(db, "SELECT count(*) FROM sources") == [(5 - 2 * prune,)]


def test_a_recursive_glob_covers_every_folder_under_it(tmp_path):
    from workbench.paths import Pattern

    pattern = Pattern(str(tmp_path / "**" / "x[!0-9]?.jsonl"))
    assert pattern.covers(str(tmp_path / "xab.jsonl")) and pattern.covers(str(tmp_path / "a" / "b" / "xab.jsonl"))
    assert not pattern.covers(str(tmp_path / "x1b.jsonl")) and not pattern.covers(str(tmp_path / "xab.jsonl.gz"))
    assert Pattern(str(tmp_path / "a*")).covers(str(tmp_path / "ab" / "c" / "d.jsonl"))
    assert not Pattern(str(tmp_path / "a*")).covers(str(tmp_path / "b" / "ab.jsonl"))


def test_records_passes_over_a_fifo_put_where_a_file_was_and_says_so(tmp_path):
    folder = tmp_path / "f"
    put(folder / "g.gm.jsonl", [gm_line("The sheriff waits.")])
    (folder / "e.gm.jsonl").write_bytes(b"")
    db = str(tmp_path / "w.duckdb")
    assert subprocess.run([*CLI, "ingest", str(folder), "--db", db, "--quiet"], timeout=60).returncode == 0
    (folder / "e.gm.jsonl").unlink()
    os.mkfifo(folder / "e.gm.jsonl")
    for argv in (["records", "--db", db, "--text", "sheriff"], ["records", "--db", db]):
        done = subprocess.run([*CLI, *argv], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "The sheriff waits." in done.stdout
    assert done.stderr == ""
    searched = subprocess.run(
        [*CLI, "records", "--db", db, "--text", "sheriff"], capture_output=True, text=True, timeout=60
    )
    assert searched.stderr.splitlines() == [
        f"workbench: 1 file not searched, no longer holding what was ingested (changed, gone, or not a regular file): "
        f"{folder / 'e.gm.jsonl'}"
    ]


@pytest.mark.parametrize("named", [True, False])
def test_a_watched_file_replaced_by_a_fifo_is_said_once_and_never_waited_on(tmp_path, monkeypatch, named):
    from workbench import watch as watching

    folder = tmp_path / "w"
    log = put(folder / "a.gm.jsonl", [gm_line()])
    scans = []

    class Stop(Exception):
        pass

    def sleep(seconds):
        if len(scans) == 1:  # after the first scan, a FIFO takes the file's place
            log.unlink()
            os.mkfifo(log)
        if sum(1 for _ in scans) >= 2 and getattr(sleep, "idle", 0) >= 3:
            raise Stop
        sleep.idle = getattr(sleep, "idle", 0) + (len(scans) >= 2)

    monkeypatch.setattr(watching.time, "sleep", sleep)
    with pytest.raises(Stop):
        for scan in watching.watch([log if named else folder], db=tmp_path / "w.duckdb", interval=0.01):
            scans.append([(Path(f.path).name, f.status, f.message) for f in scan.files])
    assert scans[0] == [("a.gm.jsonl", "ingested", "")]
    assert scans[1:] == (
        [[("a.gm.jsonl", "failed", f"{log}: not a regular file (a FIFO); only files are read")]]
        if named
        else [[("a.gm.jsonl", "missing", scans[1][0][2])]]
    )


def test_a_scorecard_by_a_list_with_a_trailing_comma_groups_by_what_it_names(tmp_path, capsys):
    db = tmp_path / "w.duckdb"
    workbench.ingest([write_lines(tmp_path / "a.decisions.jsonl", [{**arena_line(), "model": "m"}])], db=db)
    capsys.readouterr()
    assert main(["scorecard", "--db", str(db), "--by", "model,"]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert line.startswith("m: 100.0% valid")


def test_ctrl_c_while_the_command_loads_is_one_line_and_exit_130(tmp_path):
    """The installed `workbench` command, interrupted at several moments of its start-up,
    from as soon as the interpreter has started itself (before that, a Ctrl-C is
    Python's own: "Fatal Python error: init_import_site"), through the command line's
    imports, to the command's work: one line, exit 130, or done."""
    command = Path(sys.executable).with_name("workbench")
    subprocess.run([str(command), "--help"], check=True, capture_output=True)  # its files read once: in the cache
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    python = max(time.monotonic() - started, 0.02)  # the interpreter's own start, on this machine now
    db = tmp_path / "w.duckdb"
    workbench.ingest(
        [
            write_lines(
                tmp_path / "a.decisions.jsonl",
                [{"agent_id": "a1", "tick": 1, "tool": "idle", "params": {}, "model": "m"}],
            )
        ],
        db=db,
    )
    seen = []
    for delay in [2 * python + 0.01 * step for step in range(0, 30, 3)]:
        proc = subprocess.Popen(
            [str(command), "scorecard", "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        if proc.returncode == 0:
            continue  # done first
        seen.append(delay)
        assert proc.returncode == 130 and err.count("\n") == 1 and err.startswith("workbench: interrupted"), (
            delay,
            proc.returncode,
            err[-2000:],
        )
    assert seen  # some were interrupted


def test_a_ctrl_c_while_a_compiled_module_loads_is_an_interrupt(tmp_path, monkeypatch, capsys):
    """A Ctrl-C that lands while DuckDB's or Polars' compiled module initialises comes back
    as an ImportError caused by it: it said "internal error", exit 3."""
    from workbench import cli_conclusions

    def loading(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise ImportError("Encountered an error while initializing the extension.") from interrupt

    monkeypatch.setattr(cli_conclusions, "scorecard_command", loading)
    assert main(["scorecard", "--db", str(tmp_path / "w.duckdb")]) == 130
    assert capsys.readouterr().err == INTERRUPTED + "\n"
