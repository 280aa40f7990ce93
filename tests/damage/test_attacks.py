"""Who attacks whom, and what follows an attack: `attack_matrix`, `event_windows`,
`event_study` and their charts, checked against a plain-Python reading of the raw JSON
lines (a hand-written log whose answer is worked out by hand below, and the real
simulator's logs in ../shared/corpus/damage).

What counts as an attack, from seed 003 and the real simulator (simulator.py at
08ac767): an `affect_resolved` line with mode `attack_team` is written once per team,
naming its `lead_player_id` and the `assistants` who joined it; a raise carries an
`attack_plan` whose `target_player_id` it aims at.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import Counter, defaultdict
from pathlib import Path

import duckdb
import polars as pl
import pytest

import workbench
import workbench.damage
from tests.damage.events import PLAYER, event
from tests.figures import assert_rendered, spec_of, views
from workbench.damage import queries
from workbench.errors import WorkbenchError
from workbench.plots import save
from workbench.plots.attacks import attack_heatmap, event_study_chart

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / ".." / "shared" / "corpus" / "damage"
FIVE = ("fear", "anger", "shame", "confidence", "tilt")  # seed 003, section 3.1
# Seed 003 section 4.2: `emotional_intent` also takes two feelings the vector does not
# carry; the workbench measures them on their nearest carried emotion.
MEASURED_ON = {"overconfidence": "confidence", "paranoia": "fear"}
# Student t, 97.5% quantiles, from a printed table (df: value).
T_TABLE = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    10: 2.228,
    20: 2.086,
    30: 2.042,
    60: 2.000,
    120: 1.980,
}
GAME = "game_20260206T093854Z"  # the game id `event()` writes


# --- a plain-Python reading of the raw lines ---------------------------------------------------


def vectors_of(lines: list[dict]) -> dict[str, list[tuple[int, dict]]]:
    """Each player's emotion vectors in log order: player states (`players[]`,
    `final_state[]`, `player_state`) and `target_emotions` (owned by the target, else the
    actor). The before/after of a direct emoter attack are left out, as the study does."""
    found = defaultdict(list)
    for seq, line in enumerate(lines, 1):
        payload = line["payload"]
        for key in ("players", "final_state"):  # (`game_started.players` is a count)
            for state in payload[key] if isinstance(payload.get(key), list) else []:
                found[state["player_id"]].append((seq, state["emotions"]))
        if isinstance(payload.get("player_state"), dict):
            state = payload["player_state"]
            found[state.get("player_id") or payload["player_id"]].append((seq, state["emotions"]))
        if isinstance(payload.get("target_emotions"), dict):
            found[payload.get("target_player_id") or payload["player_id"]].append((seq, payload["target_emotions"]))
    return found


def attacks_in(lines: list[dict]) -> list[dict]:
    found = []
    for seq, line in enumerate(lines, 1):
        payload = line["payload"]
        if line["type"] == "affect_resolved" and payload.get("mode") == "attack_team":
            found.append(
                {
                    "seq": seq,
                    "kind": "affect",
                    "attacker": payload["lead_player_id"],
                    "target": payload["target_player_id"],
                    "emotion": payload["emotion"],
                    "assistants": payload.get("assistants") or [],
                    "intended": payload.get("raw_delta"),
                    "applied": payload.get("applied_delta"),
                }
            )
        elif line["type"] == "action_resolved" and isinstance(payload.get("attack_plan"), dict):
            plan = payload["attack_plan"]
            intent = plan["emotional_intent"]
            found.append(
                {
                    "seq": seq,
                    "kind": "raise",
                    "attacker": payload["player_id"],
                    "target": plan["target_player_id"],
                    "emotion": MEASURED_ON.get(intent, intent),
                    "assistants": [],
                    "intended": None,
                    "applied": None,
                }
            )
    return found


def counts_by_pair(lines: list[dict]) -> dict[tuple[str, str], tuple[int, int, int, int, int]]:
    """(attacker, target) -> (attacks, team_attacks, raises, assisted, assists)."""
    cells = defaultdict(lambda: [0, 0, 0, 0, 0])
    for attack in attacks_in(lines):
        cell = cells[attack["attacker"], attack["target"]]
        cell[0] += 1
        cell[1 if attack["kind"] == "affect" else 2] += 1
        cell[3] += bool(attack["assistants"])
        for assistant in attack["assistants"]:
            cells[assistant, attack["target"]][4] += 1
    return {pair: tuple(cell) for pair, cell in cells.items()}


def windows_by_hand(lines: list[dict], k: int) -> list[dict]:
    """Per attack: the target's change in the aimed-at emotion from its last vector
    before the attack to `k` vectors later, and the same-length changes of that player
    over windows holding no attack on it."""
    vectors, attacks = vectors_of(lines), attacks_in(lines)
    hit_lines = defaultdict(list)
    for attack in attacks:
        hit_lines[attack["target"]].append(attack["seq"])
    out = []
    for attack in attacks:
        series, emotion = vectors[attack["target"]], attack["emotion"]
        before = [i for i, (seq, _) in enumerate(series) if seq < attack["seq"]]
        change = None
        if before and before[-1] + k < len(series):
            change = series[before[-1] + k][1][emotion] - series[before[-1]][1][emotion]
        baseline = [
            series[j + k][1][emotion] - series[j][1][emotion]
            for j in range(len(series) - k)
            if not any(series[j][0] < s <= series[j + k][0] for s in hit_lines[attack["target"]])
        ]
        out.append({**attack, "change": change, "baseline": baseline})
    return out


def read_lines(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# --- a hand-written game -----------------------------------------------------------------------


def player(pid: str, **emotions) -> dict:
    return {**PLAYER, "player_id": pid, "emotions": {e: emotions.get(e, 0.0) for e in FIVE}}


def feel(**emotions) -> dict:
    return {e: emotions.get(e, 0.0) for e in FIVE}


def team_attack(turn, lead, assistants, target, emotion, raw, applied, after) -> dict:
    return event(
        "affect_resolved",
        {
            "turn": turn,
            "mode": "attack_team",
            "lead_player_id": lead,
            "assistants": assistants,
            "target_player_id": target,
            "emotion": emotion,
            "raw_delta": raw,
            "applied_delta": applied,
            "target_emotions": after,
        },
    )


def acted(turn, state, kind="call", plan=None) -> dict:
    return event(
        "action_resolved",
        {
            "turn": turn,
            "player_id": state["player_id"],
            "kind": kind,
            "pot": 10,
            "current_high_bet": 2,
            "player_state": state,
            "attack_plan": plan,
        },
    )


def plan(target, intent) -> dict:
    return {
        "kinetic_intent": "tempo_swing",
        "emotional_intent": intent,
        "manipulation_plan": "bait",
        "delivery_channel": "public",
        "target_player_id": target,
        "expected_behavior_shift": "folds",
        "confidence": 0.6,
    }


HAND_LOG = [
    event("game_started"),  # 1
    event(
        "hand_started",
        {"turn": 1, "pot": 6, "ante": 2, "players": [player("P1", tilt=0.1), player("P2"), player("P3")]},
    ),  # 2
    team_attack(1, "P1", ["P3"], "P2", "fear", 0.3, 0.2, feel(fear=0.2)),  # 3
    team_attack(1, "P3", [], "P1", "tilt", -0.1, -0.05, feel(tilt=0.05)),  # 4
    acted(1, player("P1", tilt=0.05), "raise", plan("P2", "tilt")),  # 5
    acted(1, player("P2", fear=0.2, tilt=0.1)),  # 6
    acted(1, player("P3", fear=0.1)),  # 7
    event(
        "hand_ended", {"turn": 1, "players": [player("P1"), player("P2", fear=0.15, tilt=0.1), player("P3", fear=0.1)]}
    ),  # 8
    event(
        "hand_started",
        {
            "turn": 2,
            "pot": 6,
            "ante": 2,
            "players": [player("P1"), player("P2", fear=0.1, tilt=0.1), player("P3", fear=0.1)],
        },
    ),  # 9
    acted(2, player("P1")),  # 10
    acted(2, player("P2", fear=0.1, tilt=0.1), "raise", plan("P3", "paranoia")),  # 11
    event("player_eliminated", {"turn": 2, "player_id": "P3", "remaining_lives": 0}),  # 12
    event("hand_ended", {"turn": 2, "players": [player("P1"), player("P2", fear=0.05, tilt=0.1)]}),  # 13
    event(
        "game_ended",
        {
            "final_state": [player("P1"), player("P2", fear=0.05, tilt=0.1)],
            "token_stats": {},
            "token_stats_by_model": {},
        },
    ),  # 14
]


@pytest.fixture
def hand(ingest_lines):
    _, con = ingest_lines("hand.events.jsonl", HAND_LOG)
    return con


def test_the_hand_written_matrix(hand):
    matrix = {(r["attacker"], r["target"]): r for r in workbench.damage.attack_matrix(hand, GAME).iter_rows(named=True)}
    # By hand: P1 led a team attack on P2's fear (P3 assisting: +0.2 at line 3 from 0 at
    # line 2) and raised at P2's tilt (0 at line 3 -> 0.1 at line 6); P3 led one on P1's
    # tilt (0.1 -> 0.05); P2 raised at P3 (paranoia), who has no vector after line 11.
    assert set(matrix) == {("P1", "P2"), ("P3", "P1"), ("P2", "P3"), ("P3", "P2")}
    p1 = matrix["P1", "P2"]
    assert (p1["attacks"], p1["team_attacks"], p1["raises"], p1["assisted"], p1["assists"]) == (2, 1, 1, 1, 0)
    assert (p1["intended_total"], p1["applied_total"], p1["measured"]) == (0.3, 0.2, 2)
    assert p1["actual_total"] == pytest.approx(0.3) and p1["actual_mean"] == pytest.approx(0.15)
    p3 = matrix["P3", "P1"]
    assert (p3["attacks"], p3["team_attacks"], p3["assists"]) == (1, 1, 0)
    assert (p3["intended_mean"], p3["applied_mean"]) == (-0.1, -0.05)
    assert p3["actual_mean"] == pytest.approx(-0.05)
    p2 = matrix["P2", "P3"]
    assert (p2["attacks"], p2["raises"], p2["measured"]) == (1, 1, 0)
    assert p2["intended_total"] is None and p2["actual_total"] is None and p2["actual_mean"] is None
    helper = matrix["P3", "P2"]  # P3 only assisted: a row of its own, no attack
    assert (helper["attacks"], helper["assists"], helper["assisted"]) == (0, 1, 0)
    # and the same as the plain-Python count of the lines
    assert {
        pair: (r["attacks"], r["team_attacks"], r["raises"], r["assisted"], r["assists"]) for pair, r in matrix.items()
    } == counts_by_pair(HAND_LOG)


def test_the_hand_written_event_study_per_attack(hand):
    rows = {r["seq"]: r for r in queries.event_windows(hand, GAME, k=2).iter_rows(named=True)}
    assert sorted(rows) == [3, 4, 5, 11]
    # Line 3 (P2's fear): from line 2 (0) two vectors on to line 6 (0.2). P2's clean
    # 2-vector fear windows start at lines 6, 8, 9, 11: -0.1, -0.05, -0.05, -0.05.
    first = rows[3]
    assert first["change"] == pytest.approx(0.2) and (first["start_seq"], first["end_seq"]) == (2, 6)
    assert first["baseline_n"] == 4 and first["baseline_mean"] == pytest.approx(-0.0625)
    assert first["baseline_sd"] == pytest.approx(0.025)
    assert first["difference"] == pytest.approx(0.2625)
    half = 3.182 * 0.025 * math.sqrt(1 + 1 / 4)  # t(3) from the table
    assert first["ci_low"] == pytest.approx(0.2625 - half, abs=1e-4)
    assert first["ci_high"] == pytest.approx(0.2625 + half, abs=1e-4)
    # Line 4 (P1's tilt): 0.1 -> 0.05; clean windows -0.05, -0.05, 0, 0, 0.
    second = rows[4]
    assert second["change"] == pytest.approx(-0.05) and second["baseline_n"] == 5
    assert second["baseline_mean"] == pytest.approx(-0.02) and second["difference"] == pytest.approx(-0.03)
    assert second["ci_high"] - second["difference"] == pytest.approx(
        2.776 * statistics.stdev([-0.05, -0.05, 0, 0, 0]) * math.sqrt(1.2), abs=1e-4
    )
    # Line 5 (the raise at P2's tilt): 0 at line 3 -> 0.1 at line 8; P2's tilt never
    # drifts in a clean window, so the interval has no width.
    third = rows[5]
    assert third["change"] == pytest.approx(0.1) and third["baseline_sd"] == 0
    assert third["ci_low"] == pytest.approx(0.1) == third["ci_high"]
    # Line 11: paranoia is measured on fear; P3 has no vector after it.
    last = rows[11]
    assert (last["emotion"], last["change"], last["difference"], last["ci_low"]) == ("fear", None, None, None)
    assert last["baseline_n"] == 2 and last["baseline_mean"] == pytest.approx(0.05)
    check_windows(rows.values(), windows_by_hand(HAND_LOG, 2))


def test_the_hand_written_event_study_per_kind(hand):
    study = {(r["kind"], r["emotion"]): r for r in queries.event_study(hand, GAME, k=2).iter_rows(named=True)}
    assert (study["affect", "fear"]["n"], study["affect", "fear"]["difference"]) == (1, pytest.approx(0.2625))
    assert study["affect", "fear"]["ci_low"] is None  # one attack: look it up per attack
    assert (study["raise", "fear"]["attacks"], study["raise", "fear"]["n"]) == (1, 0)
    by_kind = {r["kind"]: r for r in queries.event_study(hand, GAME, k=2, by=("kind",)).iter_rows(named=True)}
    affect = by_kind["affect"]
    differences = [0.2625, -0.03]
    assert (affect["attacks"], affect["n"]) == (2, 2)
    assert affect["mean_change"] == pytest.approx((0.2 - 0.05) / 2)
    assert affect["baseline_mean"] == pytest.approx((-0.0625 - 0.02) / 2)
    assert affect["difference"] == pytest.approx(statistics.mean(differences))
    half = 12.706 * statistics.stdev(differences) / math.sqrt(2)
    assert affect["ci_low"] == pytest.approx(statistics.mean(differences) - half, abs=1e-3)
    assert affect["ci_high"] == pytest.approx(statistics.mean(differences) + half, abs=1e-3)


def test_one_vector_later_is_attack_effects_actual(hand):
    windows = queries.event_windows(hand, GAME, k=1)
    actual = queries.attack_effects(hand, GAME)
    assert windows["seq"].to_list() == actual["seq"].to_list()
    for change, expected in zip(windows["change"], actual["actual"]):
        assert change == pytest.approx(expected) if expected is not None else change is None


@pytest.mark.parametrize("df", sorted(T_TABLE))
def test_t_quantile_is_the_printed_table(df):
    assert queries.t975(df) == pytest.approx(T_TABLE[df], abs=6e-4)


def check_windows(rows, expected: list[dict]) -> None:
    rows = sorted(rows, key=lambda r: r["seq"])
    assert [r["seq"] for r in rows] == [e["seq"] for e in expected]
    for row, want in zip(rows, expected):
        assert (row["attacker"], row["target"], row["emotion"]) == (want["attacker"], want["target"], want["emotion"])
        assert (row["change"] is None) == (want["change"] is None), row["seq"]
        if want["change"] is not None:
            assert row["change"] == pytest.approx(want["change"], abs=1e-12)
        assert row["baseline_n"] == len(want["baseline"]), row["seq"]
        if want["baseline"]:
            assert row["baseline_mean"] == pytest.approx(statistics.mean(want["baseline"]), abs=1e-12)
        if len(want["baseline"]) > 1:
            sd = statistics.stdev(want["baseline"])
            assert row["baseline_sd"] == pytest.approx(sd, abs=1e-12)
            if row["difference"] is not None and sd > 0:
                t = (row["ci_high"] - row["difference"]) / (sd * math.sqrt(1 + 1 / len(want["baseline"])))
                df = len(want["baseline"]) - 1
                # between the table's neighbours of df, on both sides
                below = max(d for d in T_TABLE if d <= df)
                above = min((d for d in T_TABLE if d >= df), default=None)
                assert (T_TABLE[above] if above else 1.959) - 1e-3 <= t <= T_TABLE[below] + 1e-3


# --- errors ------------------------------------------------------------------------------------


def test_unknown_game_and_game_without_attacks_are_clear_errors(ingest_lines, hand):
    with pytest.raises(WorkbenchError, match=r"no Damage game 'game_nope' in this database; games: game_2026"):
        queries.attack_matrix(hand, "game_nope")
    with pytest.raises(WorkbenchError, match="no Damage game 'game_nope'"):
        queries.event_study(hand, "game_nope")
    with pytest.raises(WorkbenchError, match="k must be a whole number"):
        queries.event_windows(hand, GAME, k=0)
    calm = [
        line
        for line in HAND_LOG
        if line["type"] != "affect_resolved"
        and not (line["type"] == "action_resolved" and line["payload"]["attack_plan"])
    ]
    _, con = ingest_lines("calm.events.jsonl", [{**line, "game_id": "game_calm"} for line in calm])
    for call in (workbench.damage.attack_matrix, queries.event_study, attack_heatmap, event_study_chart):
        with pytest.raises(
            WorkbenchError,
            match="game 'game_calm' has no attack: no affect_resolved with mode "
            "attack_team and no raise with an attack plan",
        ):
            call(con, "game_calm")


def test_charts_of_an_empty_database_are_clear_errors(tmp_path):
    con = workbench.connect(tmp_path / "empty.duckdb")
    try:
        with pytest.raises(WorkbenchError, match="no Damage game in this database"):
            attack_heatmap(con)
        with pytest.raises(WorkbenchError, match="cannot colour the attack heatmap by 'tilt'"):
            attack_heatmap(con, color="tilt")
    finally:
        con.close()


# --- charts ------------------------------------------------------------------------------------


def heatmap_cells(spec: dict) -> dict[tuple[str, str], int]:
    rect, text = views(spec)
    assert (rect.mark, text.mark) == ("rect", "text")
    assert (rect.fields["x"], rect.fields["y"], text.fields["text"]) == ("target", "attacker", "attacks")
    assert {"attacks", "assists", "actual_mean", "applied_mean", "intended_mean"} <= set(rect.tooltip)
    return {(r["attacker"], r["target"]): r["attacks"] for r in rect.rows}


def test_charts_export_and_draw_the_hand_written_numbers(hand, tmp_path):
    heat = attack_heatmap(hand, GAME)
    for suffix in (".html", ".svg"):
        save(heat, tmp_path / f"heat{suffix}")
    assert_rendered(tmp_path / "heat.svg")
    assert heatmap_cells(spec_of(tmp_path / "heat.html")) == {
        pair: counts[0] for pair, counts in counts_by_pair(HAND_LOG).items()
    }
    # colour by mean actual change: the first rect's colour field
    assert views(heat.to_dict())[0].fields["color"] == "actual_mean"
    assert views(attack_heatmap(hand, GAME, color="attacks").to_dict())[0].fields["color"] == "attacks"

    study = event_study_chart(hand, GAME, k=2)
    for suffix in (".html", ".svg"):
        save(study, tmp_path / f"study{suffix}")
    assert_rendered(tmp_path / "study.svg")
    means, _zero, bars, points = views(spec_of(tmp_path / "study.html"))
    assert (means.mark, bars.mark, points.mark) == ("point", "errorbar", "point")
    assert (bars.fields["x"], bars.fields["x2"], points.fields["x"]) == ("ci_low", "ci_high", "difference")
    # groups with a measured attack: affect on fear and tilt, the raise on tilt (by hand)
    drawn = {(r["kind"], r["emotion"]): r["difference"] for r in points.rows}
    assert drawn == {
        ("affect", "fear"): pytest.approx(0.2625),
        ("affect", "tilt"): pytest.approx(-0.03),
        ("raise", "tilt"): pytest.approx(0.1),
    }


# --- the real corpus ---------------------------------------------------------------------------


def corpus_games() -> list[Path]:
    files = sorted(p for p in CORPUS.rglob("game_*.events.jsonl")) if CORPUS.is_dir() else []
    if not files:
        pytest.skip(
            f"the real Damage corpus is not at {CORPUS.resolve()} (../shared/corpus/damage from the "
            "project root); these tests read the real simulator's game logs there"
        )
    return files


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    files = corpus_games()
    db = tmp_path_factory.mktemp("attacks") / "w.duckdb"
    report = workbench.ingest(files, db=db)
    assert [f.status for f in report.files] == ["ingested"] * len(files)
    con = duckdb.connect(str(db), read_only=True)
    yield con, {f.name.removesuffix(".events.jsonl"): read_lines(f) for f in files}
    con.close()


def test_real_attack_matrix_counts_the_lines(real):
    con, games = real
    assert len(games) >= 5
    for game, lines in games.items():
        matrix = workbench.damage.attack_matrix(con, game)
        expected = counts_by_pair(lines)
        assert {
            (r["attacker"], r["target"]): (r["attacks"], r["team_attacks"], r["raises"], r["assisted"], r["assists"])
            for r in matrix.iter_rows(named=True)
        } == expected
        applied = defaultdict(float)
        for attack in attacks_in(lines):
            if attack["applied"] is not None:
                applied[attack["attacker"], attack["target"]] += attack["applied"]
        drawn = {
            (r["attacker"], r["target"]): r["applied_total"]
            for r in matrix.iter_rows(named=True)
            if r["applied_total"] is not None
        }
        assert drawn.keys() == applied.keys()
        assert all(drawn[pair] == pytest.approx(applied[pair]) for pair in applied)


@pytest.mark.parametrize("k", [1, 5])
def test_real_event_windows_are_the_raw_lines(real, k):
    con, games = real
    for game, lines in games.items():
        check_windows(queries.event_windows(con, game, k).iter_rows(named=True), windows_by_hand(lines, k))


def test_real_event_study_groups_its_attacks(real):
    con, games = real
    game = max(games, key=lambda g: len(games[g]))
    study = queries.event_study(con, game, k=5)
    per_kind = Counter((a["kind"], a["emotion"]) for a in attacks_in(games[game]))
    assert dict(zip(zip(study["kind"], study["emotion"]), study["attacks"])) == per_kind
    measured = study.filter(pl.col("n") > 1)
    assert measured.height > 0
    assert (measured["ci_low"] <= measured["difference"]).all()
    assert (measured["difference"] <= measured["ci_high"]).all()


def test_real_heatmap_has_the_matrix_cells(real, tmp_path):
    con, games = real
    game = queries.largest_game(con)
    save(attack_heatmap(con), tmp_path / "heat.html")
    assert heatmap_cells(spec_of(tmp_path / "heat.html")) == {
        pair: counts[0] for pair, counts in counts_by_pair(games[game]).items()
    }
