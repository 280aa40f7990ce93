"""Shared helpers for the benchmarks: timing, peak memory, corpus building."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "data" / "bench"


@contextmanager
def timer(results: dict, name: str):
    start = time.perf_counter()
    yield
    results[name] = time.perf_counter() - start


def best_of(runs: int, fn) -> float:
    """The fastest of `runs` timings of `fn()`: the least disturbed by the machine."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


CORPUS = ROOT.parent / "shared" / "corpus"


def fresh_ids(text: str, copy: int) -> str:
    """Real Damage lines with their game and tournament ids made those of copy `copy`."""
    return re.sub(r'"(game|tournament)_(\w+?)_([0-9a-f]{6})"', rf'"\1_\2_\3c{copy}"', text)


def real_damage_logs(pattern: str = "*.events.jsonl") -> list[Path]:
    """The real Damage simulator's logs (../shared/corpus/damage) named like `pattern`;
    SystemExit when the corpus is absent."""
    logs = sorted((CORPUS / "damage").rglob(pattern))
    if not logs:
        raise SystemExit(f"the real Damage corpus is absent ({CORPUS / 'damage'}); the benchmarks read it")
    return logs


@contextmanager
def written(path: Path):
    """A text file to write a workload to, renamed to `path` once whole: a run stopped
    halfway leaves no workload the next run would take as made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".tmp"), "w") as out:
        yield out
    path.with_suffix(".tmp").rename(path)


def damage_log(events: int) -> Path:
    """About `events` lines of the real Damage simulator's logs (../shared/corpus/damage),
    copied game after game under fresh game ids: the real program's shapes (every event
    type, extra keys, float token counts), not the workbench's own generator's."""
    path = WORK / f"real_damage_{events}.events.jsonl"
    if path.exists():
        return path
    texts = [log.read_text() for log in real_damage_logs()]
    lines, copy = 0, 0
    with written(path) as out:
        while lines < events:
            for text in texts:
                copy += 1
                renamed = fresh_ids(text, copy)
                out.write(renamed)
                lines += renamed.count("\n")
    return path


def read_json_plain(path: Path, db: Path) -> None:
    """The floor: DuckDB's own reader of the same file into a table with the envelope's
    columns and the payload as JSON (explicit columns: no schema inference)."""
    import duckdb

    con = duckdb.connect(str(db))
    con.execute(
        "CREATE TABLE events AS SELECT * FROM read_json(?, format = 'newline_delimited', ignore_errors = true, "
        "columns = {schema_version: 'VARCHAR', type: 'VARCHAR', game_id: 'VARCHAR', ts: 'VARCHAR', "
        "payload: 'JSON'})",
        [str(path)],
    )
    con.close()


# Code that prints the peak RSS of the Python running it, in kB: its own VmHWM.
# `getrusage` would report the parent's peak too, since Linux carries `ru_maxrss`
# across fork and exec (a test run from a 1 GB pytest measured 1,025 MB).
PRINT_PEAK_KB = "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])"


def peak_rss_mb_of(code: str) -> tuple[float, float]:
    """Run `code` in a fresh Python; return (wall seconds, peak RSS in MB: PRINT_PEAK_KB)."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code + "\n" + PRINT_PEAK_KB], check=True, capture_output=True, text=True, cwd=ROOT
    ).stdout
    return time.perf_counter() - start, int(out.split()[-1]) / 1024


def machine() -> str:
    import os
    import platform

    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
