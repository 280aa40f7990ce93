"""Synthetic Nim games: two models take turns on a pile of 15; one move in each game
takes more stones than the rules allow."""

from __future__ import annotations

import json
import random
from pathlib import Path

MODELS = ("model-a", "model-b")


def generate(out_dir: Path, scale: int, rng: random.Random) -> list[dict]:
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = []
    for number in range(2 * max(1, scale)):
        path = out_dir / f"game-{number}.nim.jsonl"
        lines, faults, pile = [], [], 15
        while pile > 0:
            turn = len(lines) + 1
            take = min(pile, rng.randint(1, 3))
            if turn == 3:  # the rules allow three at most
                take = 4
                faults.append({"locator": f"line {turn}", "field": "take", "rule": "less_than_equal"})
            lines.append(
                {
                    "game": f"g{number}",
                    "turn": turn,
                    "player": "AB"[turn % 2],
                    "pile": pile,
                    "take": take,
                    "model": MODELS[turn % 2],
                }
            )
            pile -= min(take, pile)
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        entries.append({"path": str(path), "format": "nim", "faults": faults})
    return entries
