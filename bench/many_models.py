"""`workbench compare` and `workbench report` over 1,000 models, against the same decisions
played by 10 models (the baseline, in the same run).

    python -m bench.many_models [--models 1000] [--games 750] [--runs 3]

The decisions are the real Damage simulator's (../shared/corpus/damage), its games copied
under fresh game ids, each player's served model renamed so that `--models` models share
the games (a player of copy c is `model-<(c * 7 + seat) mod models>`). Beyond 30 models a
format's comparisons are each model against the best, so the work grows with the models,
not with their pairs. Aim: each command under 10 s with 1,000 models.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

from bench.common import WORK, machine, real_damage_logs, written

AIM_SECONDS = 10.0


def many_models_log(models: int, games: int) -> Path:
    """About `games` real Damage games, their provider calls' served models renamed."""
    path = WORK / f"real_damage_{models}_models_{games}_games.events.jsonl"
    if path.exists():
        return path
    texts = [log.read_text() for log in real_damage_logs("game_*.events.jsonl")]
    with written(path) as out:
        for copy in range(games):
            text = re.sub(r'"game_(\w+?)_([0-9a-f]{6})"', rf'"game_\1_\2m{copy}"', texts[copy % len(texts)])
            out.write(
                re.sub(
                    r'"player_id": "[A-Z]?(\d+)", "requested_model": "[^"]*", "resolved_model": "[^"]*"',
                    lambda m, copy=copy: _renamed(m, copy, models),
                    text,
                )
            )
    return path


def _renamed(match: re.Match, copy: int, models: int) -> str:
    seat = int(match.group(1))
    name = f"model-{(copy * 7 + seat) % models:04d}"
    player = match.group(0).split('"player_id": ')[1].split(",")[0]
    return f'"player_id": {player}, "requested_model": "{name}", "resolved_model": "{name}"'


def database(models: int, games: int) -> Path:
    db = WORK / f"models_{models}_{games}.duckdb"
    if not db.exists():
        import workbench

        report = workbench.ingest([many_models_log(models, games)], db=db, progress=False)
        if report.failed:
            raise SystemExit(f"could not build {db}: {report.failed[0].message}")
    return db


def command_seconds(argv: list[str], runs: int) -> float:
    """The fastest of `runs` wall times of `workbench ARGV` as a process of its own."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "workbench.cli", *argv], check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--games", type=int, default=750)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    many, few = database(args.models, args.games), database(10, args.games)
    results = {}
    print(f"compare and report: {args.models} models vs 10 over the same {args.games} real Damage games ({machine()})")
    for name, argv_of in (
        ("compare", lambda db: ["compare", "--db", str(db)]),
        ("report", lambda db: ["report", "--db", str(db), "-o", str(WORK / "models_report.html")]),
    ):
        baseline, measured = command_seconds(argv_of(few), args.runs), command_seconds(argv_of(many), args.runs)
        results[name] = measured
        results[f"ratio {name}"] = measured / baseline
        verdict = "holds" if measured < AIM_SECONDS else "MISSES"
        print(
            f"  {name:<8} {args.models} models {measured:6.2f} s, 10 models {baseline:6.2f} s: "
            f"ratio {measured / baseline:.2f}; aim < {AIM_SECONDS:.0f} s {verdict}"
        )
    return results


if __name__ == "__main__":
    main()
