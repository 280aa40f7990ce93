"""Shared helpers for the benchmarks: timing, peak memory, corpus building."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path

from workbench.synth.damage import play_game

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


def damage_log(events: int, seed: int = 1) -> Path:
    """A replay log of about `events` events: synthetic games one after another."""
    path = WORK / f"damage_{events}.events.jsonl"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    start = datetime(2026, 2, 6, tzinfo=timezone.utc)
    written = 0
    with open(path.with_suffix(".tmp"), "w") as out:
        while written < events:
            game = play_game(rng, start + timedelta(hours=written // 1000), 8, 40, inject=True)
            text = game.text()
            out.write(text)
            written += text.count("\n")
    path.with_suffix(".tmp").rename(path)
    return path


def peak_rss_mb_of(code: str) -> tuple[float, float]:
    """Run `code` in a fresh Python; return (wall seconds, peak RSS in MB).

    The peak is the child's own VmHWM: `getrusage` would report the parent's peak too,
    since Linux carries `ru_maxrss` across fork and exec.
    """
    probe = "\nprint([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])"
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code + probe], check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - start, int(out.split()[-1]) / 1024


def machine() -> str:
    import os
    import platform

    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"

