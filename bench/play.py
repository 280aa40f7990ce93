"""Judging Damage play: every answered betting decision's win probability, hindsight and
mistake, on the real simulator's games, against a baseline measured in the same run:

  1. the whole real corpus (../shared/corpus/damage)                   (aim: <= 2 s)
  2. about 100,000 decisions: the real games copied under fresh game ids, each copy's
     cards dealt anew (one permutation of the deck per copy, so no copy repeats another's
     situations), the lines play does not read left out         (aim: <= 30 s on 2 cores)
  3. the baseline: the loop a user would write, each decision's Monte Carlo deals ranked
     one hand at a time by eval7 (400 deals, as the workbench), timed on 300 decisions
     of the same workload and given per decision                (aim: >= 10x faster)

    python -m bench.play [--decisions 100000] [--runs 1]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import time
from pathlib import Path

import eval7

import workbench
from bench.common import CORPUS, WORK, fresh_ids, machine, real_damage_logs, written
from workbench.damage import cards
from workbench.damage.play import judged

# The lines judging reads (and the decisions need); the rest of a real log is talk.
KEPT = {
    "game_started",
    "hand_started",
    "blinds_posted",
    "community_revealed",
    "provider_call",
    "thinking",
    "action_submitted",
    "action_resolved",
    "action_rejected",
    "direct_emoter_attack_resolved",
    "showdown",
    "hand_ended",
    "game_ended",
}
CARD = re.compile(r'"([2-9TJQKA][CDHS])"')
BASELINE_DECISIONS = 300


def workload(decisions: int) -> Path:
    """About `decisions` answered betting decisions of real games, dealt anew per copy."""
    path = WORK / f"real_play_{decisions}.events.jsonl"
    if path.exists():
        return path
    logs = real_damage_logs("game_*.events.jsonl")
    games = [[line for line in log.read_text().splitlines() if json.loads(line)["type"] in KEPT] for log in logs]
    per_copy = sum(json.loads(line)["type"] == "action_submitted" for game in games for line in game)
    rng = random.Random(0)
    with written(path) as out:
        for copy in range(-(-decisions // per_copy)):
            dealt = dict(zip(cards.DECK, rng.sample(cards.DECK, len(cards.DECK))))
            for game in games:
                for line in game:
                    out.write(CARD.sub(lambda m, dealt=dealt: f'"{dealt[m.group(1)]}"', fresh_ids(line, copy)) + "\n")
    return path


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def one_at_a_time(frame, samples: int = cards.SAMPLES) -> None:
    """The baseline: each decision's deals, each hand ranked by eval7 from Python."""
    deck = {name: eval7.Card(name[0] + name[1].lower()) for name in cards.DECK}
    for hand, board, opponents, style in frame.select("hand", "board", "opponents", "card_style").iter_rows():
        rng = random.Random(0)
        seen = set(hand) | set(board)
        unseen = [deck[c] for c in cards.DECK if c not in seen]
        mine, table = [deck[c] for c in hand], [deck[c] for c in board]
        to_come, each = (5 - len(board), 2) if style == "holdem" else (0, 5)
        for _ in range(samples):
            dealt = rng.sample(unseen, to_come + each * len(opponents))
            full = table + dealt[:to_come]
            own = eval7.evaluate(mine + full)
            for seat in range(len(opponents)):
                if eval7.evaluate(dealt[to_come + seat * each : to_come + (seat + 1) * each] + full) > own:
                    break


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=100_000)
    args = parser.parse_args(argv)
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        real = Path(tmp) / "real.duckdb"
        workbench.ingest(sorted((CORPUS / "damage").rglob("*.events.jsonl")), db=real)
        with workbench.connect(real, read_only=True) as con:
            corpus, frame = timed(lambda: judged(con))
        print(f"real corpus: {frame.height} decisions judged in {corpus:.2f} s (aim <= 2 s)")

        big = Path(tmp) / "big.duckdb"
        source = workload(args.decisions)
        start = time.perf_counter()
        workbench.ingest([source], db=big)
        print(f"workload: {source.name} ingested in {time.perf_counter() - start:.0f} s (not timed below)")
        with workbench.connect(big, read_only=True) as con:
            seconds, frame = timed(lambda: judged(con))
        per_decision = seconds / frame.height
        print(
            f"{frame.height:,} decisions judged in {seconds:.1f} s (aim <= 30 s for 100,000), "
            f"{per_decision * 1e3:.3f} ms a decision"
        )
        sample = frame.sample(min(BASELINE_DECISIONS, frame.height), seed=0)
        baseline, _ = timed(lambda: one_at_a_time(sample))
        per_baseline = baseline / sample.height
        print(
            f"baseline, one hand at a time: {per_baseline * 1e3:.3f} ms a decision "
            f"({sample.height} decisions); the workbench {per_baseline / per_decision:.1f}x faster (aim >= 10x)"
        )
    return {"corpus": corpus, "decisions": frame.height, "seconds": seconds, "speedup": per_baseline / per_decision}


if __name__ == "__main__":
    main()
