"""The event study of play finds an effect planted in Damage games (after an attack, P3
folds its winning hands at 40% against 10%), and finds none where none was planted: its
false differences stay at or under 5% in a small simulation."""

import polars as pl
import pytest

import workbench
from tests.conftest import write_lines
from tests.damage import planted
from workbench.damage.quality import attack_effects, event_study


def ingested(tmp_path, after: float, before: float, games: int = 16):
    paths = [
        write_lines(
            tmp_path / f"game_2026030{g % 10}T10000{g % 10}Z_{g:06x}.events.jsonl",
            planted.game_lines(f"game_planted_{g}", seed=g, after=after, before=before),
        )
        for g in range(games)
    ]
    db = tmp_path / "w.duckdb"
    assert not workbench.ingest(paths, db=db).failed
    return workbench.connect(db, read_only=True)


def winning_folds(table: pl.DataFrame) -> dict:
    [row] = table.filter(pl.col("measure") == "winning_fold_rate").iter_rows(named=True)
    return row


def test_a_planted_effect_is_found_through_the_real_ingest(tmp_path):
    con = ingested(tmp_path, after=0.4, before=0.1)
    row = winning_folds(attack_effects(con, by="plan"))
    assert row["group"] == "bait"
    assert row["after"] == pytest.approx(0.4, abs=0.15) and row["unattacked"] == pytest.approx(0.1, abs=0.08)
    assert row["ci_low"] > 0 and row["p"] < 0.05
    # the judged decisions the study read are P3's, and its folds of winning hands
    judged = workbench.analysis.play_quality(con).filter(pl.col("player_id") == "P3")
    assert judged.height == 16 * 30 and judged["won_at_showdown"].null_count() == 0


def test_no_effect_planted_none_found_through_the_real_ingest(tmp_path):
    con = ingested(tmp_path, after=0.1, before=0.1)
    row = winning_folds(attack_effects(con, by="all"))
    assert row["ci_low"] <= 0 <= row["ci_high"] and row["p"] >= 0.05


def test_false_differences_in_a_small_simulation_stay_at_most_five_percent():
    replicates, found = 200, 0
    for seed in range(replicates):
        choices, attacks = planted.frames(games=12, seed=seed, after=0.1, before=0.1)
        found += winning_folds(event_study(choices, attacks, k=planted.WINDOW))["p"] < 0.05
    assert found / replicates <= 0.05, f"{found} of {replicates} found a difference"


def test_the_simulation_finds_the_planted_effect_most_of_the_time():
    replicates, found = 100, 0
    for seed in range(replicates):
        choices, attacks = planted.frames(games=12, seed=1000 + seed, after=0.4, before=0.1)
        found += winning_folds(event_study(choices, attacks, k=planted.WINDOW))["p"] < 0.05
    assert found / replicates >= 0.8, f"found in {found} of {replicates}"
