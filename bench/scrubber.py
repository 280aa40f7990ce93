"""Per-step latency of the replay scrubber on a long game (aim: mean < 50 ms, p95 < 100 ms).

A step is `scrubber.position = i` with the widget built: the state lookup, the table
and event views re-rendered, the slider moved and the chart's cursor parameter set.
Measured in this process, without a browser: what the kernel does per step (the comm
messages to a browser add their transport, not a rebuild).

    python -m bench.scrubber [--events 20000] [--steps 2000] [--seed 1]
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import workbench
from workbench.synth.damage import play_game
from workbench.widgets import ReplayScrubber

AIM_MEAN_MS, AIM_P95_MS = 50.0, 100.0


def long_game_lines(events: int, seed: int) -> list[dict]:
    """One game of exactly `events` events: synthetic games played one after another
    under the first one's id, turns numbered on, so the lives run out many times over."""
    rng = random.Random(seed)
    start = datetime(2026, 2, 6, tzinfo=timezone.utc)
    first = play_game(rng, start, 8, 400, inject=False)
    lines = [e for e in first.lines if e["type"] != "game_ended"]
    ending = first.lines[-1]
    segment = 1
    while len(lines) < events - 1:
        more = play_game(rng, start + timedelta(hours=3 * segment), 8, 400, inject=False)
        offset = max(e["payload"].get("turn") or 0 for e in lines if isinstance(e["payload"].get("turn"), int))
        for event in more.lines:
            turn = event["payload"].get("turn")
            if event["type"] == "game_ended":
                ending = event
            elif isinstance(turn, int) and turn >= 1:  # later games' setup events are left out
                event["game_id"] = first.game_id
                event["payload"]["turn"] = turn + offset
                lines.append(event)
        segment += 1
    ending["game_id"] = first.game_id
    return lines[: events - 1] + [ending]


def write_game(folder: Path, events: int, seed: int) -> tuple[Path, str]:
    import json

    lines = long_game_lines(events, seed)
    path = folder / f"{lines[0]['game_id']}.events.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path, lines[0]["game_id"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def time_steps(scrubber: ReplayScrubber, positions: list[int]) -> list[float]:
    """Milliseconds per `scrubber.position = i`."""
    times = []
    for position in positions:
        started = time.perf_counter()
        scrubber.position = position
        times.append((time.perf_counter() - started) * 1000)
    return times


def report(name: str, times: list[float]) -> dict[str, float]:
    mean, p95 = statistics.fmean(times), percentile(times, 0.95)
    ok = mean < AIM_MEAN_MS and p95 < AIM_P95_MS
    print(f"  {name:<28} mean {mean:7.3f} ms   p95 {p95:7.3f} ms   max {max(times):7.2f} ms   "
          f"({len(times)} steps) {'ok' if ok else 'OVER AIM'}")
    return {"mean_ms": mean, "p95_ms": p95, "ok": ok}


def main(argv=None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--steps", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(f"replay scrubber, {args.events} events — {platform.machine()}, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        path, game_id = write_game(Path(tmp), args.events, args.seed)
        report_ = workbench.ingest([path], db=Path(tmp) / "bench.duckdb")
        assert report_.files[0].status == "ingested", report_.files[0].message
        print(f"  game written and ingested in {time.perf_counter() - started:.1f} s")

        started = time.perf_counter()
        scrubber = ReplayScrubber(Path(tmp) / "bench.duckdb", game_id)
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        scrubber.widget
        built = time.perf_counter() - started
    print(f"  {len(scrubber)} events, {len(scrubber.replay.players)} players; load + precompute + chart "
          f"{loaded:.2f} s, widget {built:.2f} s (once)")
    rng = random.Random(args.seed)
    last = len(scrubber) - 1
    forward = list(range(1, min(args.steps, last) + 1))
    random_jumps = [rng.randint(0, last) for _ in range(args.steps)]
    time_steps(scrubber, random_jumps[:50])  # warm-up
    report("steps forward (play)", time_steps(scrubber, forward))
    result = report("random positions (slider)", time_steps(scrubber, random_jumps))
    print(f"  reproduce: python -m bench.scrubber --events {args.events} --steps {args.steps} --seed {args.seed}")
    return result


if __name__ == "__main__":
    sys.exit(0 if main()["ok"] else 1)
