"""A Ctrl-C wherever it lands in the thread that drives a load: the load ends, no task is
left running on its connection, and nothing hangs.

CPython runs a signal's handler, and so raises KeyboardInterrupt, where it checks for
pending events: as a function starts, after a call returns and at the end of a loop's
turn. These tests raise it at each such point in turn (from a trace function, which then
is removed), in a thread of its own so that a hang fails the test instead of blocking
the run."""

import dis
import gc
import os
import signal
import sys
import threading
import time
import traceback
import types
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import workbench
from workbench import bulk, catalog, connection, worker
from workbench.content import FileHash

pytestmark = pytest.mark.slow

HANG = 10  # seconds: a scenario that takes this long is stuck


# Instructions after which CPython 3.11 checks for a pending signal (and at `RESUME`, as
# a function starts). A Python function called directly returns without a check; the
# trace cannot tell it from one called through C, so this counts a few points more.
CHECKED_AFTER = {dis.opmap[name] for name in ("CALL", "CALL_FUNCTION_EX", "JUMP_BACKWARD")}
RESUME = dis.opmap["RESUME"]


def interrupted_at(step: int, scenario) -> str:
    """Run `scenario` with a KeyboardInterrupt raised at its `step`th point where a
    signal can land (counted across every Python function it calls in its thread).
    Returns "interrupted", or "finished N" when it ran to the end with N such points."""
    points = 0
    outcome, where = [], []
    previous = {}  # frame: the instruction it ran last

    def trace(frame, event, arg):
        nonlocal points
        frame.f_trace_opcodes = True
        if event != "opcode":
            return trace
        code = frame.f_code.co_code
        now, before = code[frame.f_lasti], previous.get(frame)
        previous[frame] = now
        if now == RESUME or before in CHECKED_AFTER:
            points += 1
            if points == step:
                where.append(f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})")
                raise KeyboardInterrupt
        return trace

    def driver():
        sys.settrace(trace)
        try:
            scenario()
            outcome.append("finished")
        except KeyboardInterrupt:
            outcome.append("interrupted")
        except BaseException as error:  # noqa: BLE001 - reported below
            outcome.append(error)
        finally:
            sys.settrace(None)
            previous.clear()

    # A test library's garbage-collection callback (hypothesis keeps one once its tests ran)
    # runs in whichever thread collects: the trace would raise inside it, where no code of
    # ours runs and CPython can only report the exception as unraisable.
    callbacks = gc.callbacks[:]
    gc.callbacks.clear()
    thread = threading.Thread(target=driver, daemon=True)
    try:
        thread.start()
        thread.join(HANG)
    finally:
        gc.callbacks.extend(callbacks)
    if thread.is_alive():
        stacks = "".join("".join(traceback.format_stack(frame)) for frame in sys._current_frames().values())
        pytest.fail(f"a Ctrl-C at point {step}, {where}, left the load hanging:\n{stacks}")
    if isinstance(outcome[0], BaseException):
        pytest.fail(f"a Ctrl-C at point {step}, {where}, ended the load with {outcome[0]!r}")
    return outcome[0] if outcome[0] == "interrupted" else f"finished {points}"


def every_step(scenario, check) -> int:
    """Interrupt `scenario` at each point in turn, calling `check(outcome)` after each;
    returns how many points it has uninterrupted."""
    total = int(interrupted_at(0, scenario).split()[1])
    check("finished")
    interrupted = 0
    for step in range(1, total + 1):
        outcome = interrupted_at(step, scenario)
        interrupted += outcome == "interrupted"
        check(outcome)
    assert interrupted > total // 2  # the interrupts did land
    return total


def test_a_load_interrupted_at_any_point_ends_with_its_connection_free():
    con = duckdb.connect()
    running = []

    def query(sql):
        running.append(sql)
        try:
            return con.execute(sql).fetchall()
        finally:
            running.remove(sql)

    def load():
        with bulk.duckdb_worker(types.SimpleNamespace(con=con)) as (run, stop):
            assert run(query, "SELECT 1") == [(1,)]
            bulk.go_on(stop)
            run(query, "SELECT sum(range) FROM range(1000)")

    def check(outcome):
        assert not running, f"{outcome}: a task still runs on the connection"
        assert con.execute("SELECT 42").fetchall() == [(42,)]

    try:
        every_step(load, check)
    finally:
        con.close()


def test_a_ctrl_c_anywhere_in_a_quick_gil_handoff_gives_the_interpreter_its_own_interval_back():
    """A load hands the GIL over within 1 ms, and the interpreter's own setting is back
    once no load runs: a notebook or `ingest --watch` goes on after a Ctrl-C."""
    own = sys.getswitchinterval()

    def handed_over():
        with bulk.quick_gil_handoff():
            assert sys.getswitchinterval() == pytest.approx(bulk.SWITCH_INTERVAL, abs=2e-6)

    def state():
        return bulk._handoff["loads"], sys.getswitchinterval()

    given_back = (0, pytest.approx(own, abs=2e-6))

    def check(outcome):
        if state() != given_back:
            gc.collect()  # a Ctrl-C as the block begins leaves the generator to its collection
        assert state() == given_back, outcome

    try:
        every_step(handed_over, check)
    finally:
        sys.setswitchinterval(own)


def test_a_ctrl_c_anywhere_in_an_ingest_connection_leaves_the_file_free_and_no_connection_its_own(tmp_path):
    """`connection.commits_write_the_file` sets only a connection `bulk_connection` attached
    to an instance of its own: none may stay marked as such after a Ctrl-C."""
    db = tmp_path / "w.duckdb"

    def opened():
        with connection.bulk_connection(db) as con:
            con.execute("SELECT 1")

    def free() -> bool:
        try:
            duckdb.connect(str(db)).close()
        except duckdb.Error:
            return False
        return True

    def check(outcome):
        # A collection takes 30-100 ms here: made only where something is left to collect.
        is_free = free()
        if connection._HOSTED or not is_free:
            gc.collect()
            is_free = free()
        assert not connection._HOSTED, outcome
        assert is_free, outcome  # and the file is free

    every_step(opened, check)


def test_a_hash_interrupted_at_any_point_ends(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a": 1}\n' * 1000)
    stop = threading.Event()

    def hashed():
        with worker.Worker() as hasher:
            content = FileHash(path, path.stat().st_size, hasher, stop)
            content.expect(None)
            assert content.result().complete_lines == 1000

    every_step(hashed, lambda outcome: None)


def test_a_task_not_begun_when_the_block_raises_does_not_run():
    ran = []
    with pytest.raises(ZeroDivisionError):
        with worker.Worker() as thread:
            thread.submit(time.sleep, 0.2)
            later = thread.submit(ran.append, 1)
            1 / 0
    assert not ran
    with pytest.raises(worker.Cancelled):
        later.result()


@pytest.mark.parametrize("closed", [False, True])
def test_a_worker_dropped_unclosed_runs_no_further_task_and_one_closed_runs_them_all(closed):
    # A Ctrl-C as a worker's block begins or ends leaves it unclosed: once collected,
    # its thread is told to end. One closed without waiting (a hash begun apart) runs
    # what it was handed.
    release = threading.Event()
    thread = worker.Worker()
    thread.submit(release.wait, 10)
    later = thread.submit(int, "7")
    if closed:
        thread.close(wait=False)
    del thread
    gc.collect()
    release.set()
    if closed:
        assert later.result() == 7
    else:
        with pytest.raises(worker.Cancelled):
            later.result()


def test_a_task_error_is_raised_by_its_result():
    with worker.Worker() as thread:
        pending = thread.submit(int, "x")
        with pytest.raises(ValueError):
            pending.result()
        assert thread.submit(int, "7").result() == 7


def test_a_closed_worker_refuses_a_task_rather_than_never_running_it():
    thread = worker.Worker()
    thread.close()
    with pytest.raises(RuntimeError, match="closed worker"):
        thread.submit(int, "7")


def test_ctrl_c_reaches_a_wait_for_a_task_though_another_thread_takes_the_signal():
    # The system hands a process's SIGINT to any thread that does not block it. Blocked
    # in the main thread here, it lands on another one: a wait with no timeout would
    # only wake once the task ended; `result` raises while the task still runs.
    release = threading.Event()
    with worker.Worker() as thread:
        pending = thread.submit(release.wait, 10)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
            with pytest.raises(KeyboardInterrupt):
                pending.result()
            assert not pending.done()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
            release.set()


def test_a_transaction_a_ctrl_c_left_unentered_is_collected_quietly_once_closed(monkeypatch):
    # A Ctrl-C as `with transaction(con)` began its block: the with never holds its
    # exit, so the transaction's generator is closed when collected, after the ingest
    # closed the connection (which rolled the transaction back).
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    con = duckdb.connect()
    began = catalog.transaction(con)
    began.__enter__()
    con.close()
    del began
    gc.collect()
    assert not unraisable


def test_a_ctrl_c_in_python_code_duckdb_runs_stops_the_file_as_any_ctrl_c():
    # DuckDB reads an Arrow table's schema through Python: a Ctrl-C there came back as
    # an "Invalid Input Error", so the file was reported failed and the run went on.
    class Interrupted:
        def __arrow_c_stream__(self, requested_schema=None):
            raise KeyboardInterrupt

    rows = Interrupted()  # noqa: F841 - read by the statement, by its name
    con = duckdb.connect()
    con.execute("CREATE TABLE t (n INTEGER)")
    with pytest.raises(KeyboardInterrupt):
        with catalog.transaction(con):
            con.execute("INSERT INTO t VALUES (1)")
            con.execute("INSERT INTO t SELECT * FROM rows")
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(0,)]


@pytest.mark.parametrize("call", range(1, 9))
def test_a_ctrl_c_while_duckdb_finds_or_reads_a_bound_table_is_a_ctrl_c(call):
    # DuckDB calls Python code to find `rows` and read it as Arrow; a Ctrl-C at its
    # `call`th such call came back as "no table named rows" or an "Invalid Input Error",
    # which a file's load reported as the file failing.
    from workbench.schema import run_on

    seen = 0

    def trace(frame, event, arg):
        nonlocal seen
        if event == "call" and frame.f_back is not None and frame.f_back.f_code.co_name == "_rows":
            seen += 1
            if seen == call:
                raise KeyboardInterrupt

    con = duckdb.connect()
    sys.settrace(trace)
    try:
        assert run_on(con, pa.table({"n": [1, 2, 3]}), "SELECT sum(n) FROM rows", name="rows") == [(6,)]
    except KeyboardInterrupt:
        pass
    finally:
        sys.settrace(None)
    assert seen >= min(call, 6)  # the calls were made (6 or 7 of them, as the scan goes)


def test_an_ingest_interrupted_at_any_point_leaves_its_file_whole_or_absent(tmp_path, sample, monkeypatch):
    # Every 31st point of the calling thread's ingest of a small log (about 120 of them).
    # Every point passes too: all 4,559 of an ingest of the real corpus's first 50 lines.
    log = tmp_path / "game.events.jsonl"
    game = sorted((sample / "damage").glob("game_*.events.jsonl"))[0]
    log.write_bytes(b"".join(game.read_bytes().splitlines(keepends=True)[:50]))
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    dbs = iter(tmp_path / f"w{n}.duckdb" for n in range(100_000))
    db = None

    def ingest():
        workbench.ingest([log], db=db)

    def stored() -> tuple[int, int, int]:
        """Files, their records and the events in `db`."""
        with duckdb.connect(str(db), read_only=True) as con:
            if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'sources'").fetchone()[0]:
                return 0, 0, 0
            files, records = con.execute("SELECT count(*), coalesce(sum(records), 0) FROM sources").fetchone()
            (events,) = con.execute("SELECT count(*) FROM damage_events").fetchone()
            return files, records, events

    db = next(dbs)
    ingest()  # the formats' modules imported: what is left is what every ingest runs
    db = next(dbs)
    total = int(interrupted_at(0, ingest).split()[1])
    assert stored() == (1, 50, 50)
    interrupted = 0
    for step in range(1, total + 1, 31):
        db = next(dbs)
        outcome = interrupted_at(step, ingest)
        interrupted += outcome == "interrupted"
        assert not Path(f"{db}.wal").exists(), (step, outcome)
        if db.exists():
            assert stored() in [(0, 0, 0), (1, 50, 50)], (step, outcome)
        workbench.ingest([log], db=db)  # and the next ingest loads it
        assert stored() == (1, 50, 50), (step, outcome)
        assert not unraisable, (step, [hook.exc_value for hook in unraisable])
    assert interrupted > total // 31 // 2
