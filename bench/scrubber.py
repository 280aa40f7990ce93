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
from pathlib import Path

import duckdb

import workbench
import workbench.plots  # noqa: F401 - Altair loads once per process, outside the timed load
from bench.common import CORPUS
from workbench.widgets import ReplayScrubber

AIM_MEAN_MS, AIM_P95_MS = 50.0, 100.0
HOLDEM = CORPUS / "damage" / "game_20261123T135537354772Z_ab3780.events.jsonl"


def long_game_lines(events: int) -> list[dict]:
    """One game of exactly `events` events, from the real simulator's hold'em game
    (../shared/corpus): its set-up once, then its turns again and again with the turns
    numbered on, then its ending."""
    import json

    real = [json.loads(line) for line in HOLDEM.read_text().splitlines()]
    setup = [e for e in real if not isinstance(e["payload"].get("turn"), int) and e["type"] != "game_ended"]
    turns = [e for e in real if isinstance(e["payload"].get("turn"), int)]
    ending = next(e for e in real if e["type"] == "game_ended")
    last_turn = max(e["payload"]["turn"] for e in turns)
    lines, offset = list(setup), 0
    while len(lines) < events - 1:
        for event in turns:
            copy = json.loads(json.dumps(event))
            copy["payload"]["turn"] = event["payload"]["turn"] + offset
            lines.append(copy)
        offset += last_turn
    return lines[: events - 1] + [ending]


def write_game(folder: Path, events: int) -> tuple[Path, str]:
    import json

    lines = long_game_lines(events)
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
    print(
        f"  {name:<28} mean {mean:7.3f} ms   p95 {p95:7.3f} ms   max {max(times):7.2f} ms   "
        f"({len(times)} steps) {'ok' if ok else 'OVER AIM'}"
    )
    return {"mean_ms": mean, "p95_ms": p95, "ok": ok}


NAIVE_STEP = """
SELECT player_id, arg_max(fear, seq), arg_max(anger, seq), arg_max(shame, seq), arg_max(confidence, seq),
       arg_max(tilt, seq)
FROM damage_emotions WHERE game_id = ? AND seq <= ? GROUP BY player_id
"""


def naive_steps(db: Path, game_id: str, seqs: list[int]) -> list[float]:
    """The baseline: a step as one DuckDB query for every player's latest emotions (what
    a notebook without precomputed state does), on an open read-only connection."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        times = []
        for seq in seqs:
            started = time.perf_counter()
            con.execute(NAIVE_STEP, [game_id, seq]).fetchall()
            times.append((time.perf_counter() - started) * 1000)
        return times
    finally:
        con.close()


def main(argv=None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--steps", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    print(f"replay scrubber, {args.events} events — {platform.machine()}, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        path, game_id = write_game(Path(tmp), args.events)
        report_ = workbench.ingest([path], db=Path(tmp) / "bench.duckdb")
        assert report_.files[0].status == "ingested", report_.files[0].message
        print(f"  game written and ingested in {time.perf_counter() - started:.1f} s")
        rng = random.Random(args.seed)
        probe = [rng.randint(1, args.events) for _ in range(200)]
        naive = statistics.fmean(naive_steps(Path(tmp) / "bench.duckdb", game_id, probe))

        started = time.perf_counter()
        scrubber = ReplayScrubber(Path(tmp) / "bench.duckdb", game_id)
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        _ = scrubber.widget  # built on first use: what is timed
        built = time.perf_counter() - started
    print(
        f"  {len(scrubber)} events, {len(scrubber.replay.players)} players; load + precompute + chart "
        f"{loaded:.2f} s, widget {built:.2f} s (once)"
    )
    rng = random.Random(args.seed)
    last = len(scrubber) - 1
    forward = list(range(1, min(args.steps, last) + 1))
    random_jumps = [rng.randint(0, last) for _ in range(args.steps)]
    time_steps(scrubber, random_jumps[:50])  # warm-up
    report("steps forward (play)", time_steps(scrubber, forward))
    result = report("random positions (slider)", time_steps(scrubber, random_jumps))
    result["baseline_ms"] = naive
    print(
        f"  baseline, one DuckDB query per step: mean {naive:.3f} ms; scrubber step / baseline "
        f"{result['mean_ms'] / naive:.2f}"
    )
    print(f"  reproduce: python -m bench.scrubber --events {args.events} --steps {args.steps} --seed {args.seed}")
    return result


if __name__ == "__main__":
    sys.exit(0 if main()["ok"] else 1)
