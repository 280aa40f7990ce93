"""The six logs written by the real Damage simulator (../shared/corpus/damage, from
domjancik/damage-game at commit 08ac767), and what that program is known to write.

Expected values are transcribed from the real program's source (event_log.py,
token_monitor.py, simulator.py, tournament.py at 08ac767), from seed 003, or from the
corpus README; none is computed by the code under test. The emotion vectors are checked
against a small independent walk over the JSON of each line.
"""

import json
import re
from collections import Counter
from datetime import datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest

import workbench
from tests.conftest import rows

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / ".." / "shared" / "corpus" / "damage"

DRAW5 = "game_20261123T135533274249Z_d74231.events.jsonl"
HOLDEM = "game_20261123T135537354772Z_ab3780.events.jsonl"
TABLES = [
    "game_20261123T135540946924Z_3eb85a.events.jsonl",
    "game_20261123T135541065800Z_f9d1f5.events.jsonl",
    "game_20261123T135541183644Z_e8d16f.events.jsonl",
]
TOURNAMENT = "tournament_20261123T135540946302Z_823b5a.events.jsonl"
FILES = [DRAW5, HOLDEM, *(f"tournament/{name}" for name in [*TABLES, TOURNAMENT])]
# corpus README: a draw5 game of 965 lines and a hold'em game of 1,775 lines
LINES_STATED = {DRAW5: 965, HOLDEM: 1775}

# Every event type the real program writes (EventLogger.write calls in simulator.py and
# tournament.py at 08ac767).
SIMULATOR_TYPES = {
    "action_rejected",
    "action_resolved",
    "action_submitted",
    "affect_intent",
    "affect_resolved",
    "affect_unpaired_assist",
    "avatar_selected",
    "backstory_created",
    "bankroll_eliminated",
    "blinds_posted",
    "chatter_evaluated",
    "chatter_posted",
    "community_revealed",
    "direct_emoter_attack_resolved",
    "direct_emoter_attack_skipped",
    "fold_saved_life",
    "game_ended",
    "game_started",
    "hand_ended",
    "hand_started",
    "image_generation_completed",
    "image_generation_failed",
    "image_generation_started",
    "life_lost",
    "lives_disabled",
    "model_assignment_warning",
    "offturn_regulation_resolved",
    "phase_changed",
    "player_eliminated",
    "player_joined",
    "provider_call",
    "showdown",
    "thinking",
    "turn_summary",
}
TOURNAMENT_TYPES = {
    "tournament_started",
    "round_started",
    "table_spawned",
    "table_result",
    "round_ended",
    "tournament_ended",
}
# Seed 003, section 5: the documented types; the others are `info`, never errors.
DOCUMENTED = {
    "game_started",
    "hand_started",
    "phase_changed",
    "thinking",
    "affect_intent",
    "affect_resolved",
    "provider_call",
    "action_submitted",
    "action_resolved",
    "fold_saved_life",
    "life_lost",
    "player_eliminated",
    "showdown",
    "hand_ended",
    "turn_summary",
    "game_ended",
    "model_assignment_warning",
    "affect_unpaired_assist",
}
# EventLogger.write: exactly these envelope keys, schema_version "0.1", ts from
# datetime.now(timezone.utc).isoformat(): `+00:00`, microseconds only when not 0.
ENVELOPE = {"schema_version", "type", "game_id", "ts", "payload"}
TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00\Z")
FIVE = ("fear", "anger", "shame", "confidence", "tilt")  # seed 003, section 3.1
# True findings: real lines that break seed 003 (file, line, field, rule, clause). The
# only errors the workbench used to report, `int_type` on `payload.token_stats.calls`
# (written as `36.0` by TokenMonitor.stats), were not: section 5.14 lists the keys of
# `token_stats` without a type.
TRUE_FINDINGS: set[tuple[str, str, str, str]] = set()


def corpus() -> Path:
    if not all((CORPUS / name).is_file() for name in FILES):
        pytest.skip(
            f"the real Damage corpus is not at {CORPUS.resolve()} (../shared/corpus/damage from the "
            "project root); these tests read the six logs of the real simulator there"
        )
    return CORPUS


def lines_of(name: str) -> list[dict]:
    with open(corpus() / name, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="module")
def validated():
    report = workbench.validate([corpus() / name for name in FILES])
    return {Path(f.path).resolve(): f for f in report.files}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("real") / "w.duckdb"
    report = workbench.ingest([corpus() / name for name in FILES], db=path)
    assert [f.status for f in report.files] == ["ingested"] * len(FILES), [f.message for f in report.files]
    return path


@pytest.mark.parametrize("name", FILES)
def test_every_real_file_validates(validated, name):
    path = corpus() / name
    file = validated[path.resolve()]
    non_blank = sum(1 for line in open(path, encoding="utf-8") if line.strip())
    assert LINES_STATED.get(name, non_blank) == non_blank
    assert (file.format, file.records + file.rejected, file.rejected) == ("damage", non_blank, 0)
    errors = {(name, v.locator, v.field, v.rule) for v in file.violations if v.severity == "error"}
    assert errors == {f[:4] for f in TRUE_FINDINGS if f[0] == name}


@pytest.mark.parametrize("name", FILES)
def test_what_the_real_program_writes_beyond_the_seed_is_info(validated, name):
    file = validated[(corpus() / name).resolve()]
    types = {line["type"] for line in lines_of(name)}
    flagged = {
        re.search(r"'(\w+)'", v.message).group(1) for v in file.violations if v.rule == "undocumented_event_type"
    }
    assert flagged == types - DOCUMENTED
    assert all(v.severity == "info" for v in file.violations if v.rule.startswith("undocumented"))


def test_discussion_phase_is_an_extra_enum_value(validated):
    # simulator.py writes phase_changed `discussion` when the discussion layer is on
    for name in [DRAW5, HOLDEM]:
        file = validated[(corpus() / name).resolve()]
        assert any(
            v.rule == "undocumented_value" and v.field == "payload.phase" and "'discussion'" in v.message
            for v in file.violations
        )


@pytest.mark.parametrize("name", FILES)
def test_envelope_as_the_event_logger_writes_it(name):
    for line in lines_of(name):
        assert set(line) == ENVELOPE  # no turn, no sequence number: the line number is the order
        assert line["schema_version"] == "0.1"
        assert TS.match(line["ts"]), line["ts"]
        ts = datetime.fromisoformat(line["ts"])
        assert ("." in line["ts"]) == (ts.microsecond != 0)
        assert line["type"] in (TOURNAMENT_TYPES if name.startswith("tournament/tournament_") else SIMULATOR_TYPES)


@pytest.mark.parametrize("name", [DRAW5, HOLDEM, *(f"tournament/{t}" for t in TABLES)])
def test_token_stats_calls_are_floats(name):
    # TokenMonitor.stats / stats_by_model: "calls": float(len(samples))
    summaries = [line["payload"] for line in lines_of(name) if line["type"] in ("turn_summary", "game_ended")]
    assert summaries
    for payload in summaries:
        assert type(payload["token_stats"]["calls"]) is float
        assert all(type(stats["calls"]) is float for stats in payload["token_stats_by_model"].values())


def test_game_ended_has_no_turn(db):
    # one game_ended per game file (two games, three tables), none with a turn
    assert rows(db, "SELECT count(*), count(turn) FROM damage_events WHERE type = 'game_ended'") == [(5, 0)]


def test_hands_are_draw5_and_holdem():
    # corpus README: a draw5 game and a hold'em game (2 hole cards, with blinds)
    for name, cards in [(DRAW5, {5}), (HOLDEM, {2})]:
        lines = lines_of(name)
        assert {len(p["hand"]) for x in lines if x["type"] == "hand_started" for p in x["payload"]["players"]} == cards
    assert any(x["type"] == "blinds_posted" for x in lines_of(HOLDEM))


def test_tournament_links_each_table_to_its_game(db):
    linked = rows(
        db,
        "SELECT t.payload->>'game_id' FROM damage_events t WHERE t.type = 'table_result' "
        "AND t.payload->>'game_id' IN (SELECT game_id FROM damage_events) ORDER BY 1",
    )
    assert [game for (game,) in linked] == sorted(name.removesuffix(".events.jsonl") for name in TABLES)


# --- emotion vectors ------------------------------------------------------------------


def walk(node, path=""):
    """(path, object) for every object with the five keys, `[]` for array elements."""
    if isinstance(node, dict):
        if all(key in node for key in FIVE):
            yield path, node
        for key, value in node.items():
            yield from walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for value in node:
            yield from walk(value, f"{path}[]")


def expected_vectors(name: str) -> Counter:
    return Counter(
        (seq, line["type"] + path) for seq, line in enumerate(lines_of(name), 1) for path, _ in walk(line["payload"])
    )


@pytest.mark.parametrize("name", [DRAW5, HOLDEM, *(f"tournament/{t}" for t in TABLES)])
def test_every_vector_of_every_line_is_in_damage_emotions(db, name):
    game = name.rsplit("/", 1)[-1].removesuffix(".events.jsonl")
    found = Counter(rows(db, "SELECT seq, origin FROM damage_emotions WHERE game_id = ?", [game]))
    assert found == expected_vectors(name)
    assert rows(db, "SELECT count(*) FROM damage_emotions WHERE game_id = ? AND player_id IS NULL", [game]) == [(0,)]


def test_holdem_vectors_per_origin(db):
    # The places the real program puts a vector (simulator.py: _public_player_state in
    # hand_started / action_resolved / hand_ended / game_ended, target_emotions in
    # affect_resolved (self_regulate, assist_direct, attack_team), chatter_evaluated and
    # offturn_regulation_resolved, before / after in direct_emoter_attack_resolved).
    per_origin = Counter()
    for (_, origin), count in expected_vectors(HOLDEM).items():
        per_origin[origin] += count
    assert set(per_origin) <= {
        "hand_started.players[].emotions",
        "action_resolved.player_state.emotions",
        "hand_ended.players[].emotions",
        "game_ended.final_state[].emotions",
        "affect_resolved.target_emotions",
        "chatter_evaluated.target_emotions",
        "offturn_regulation_resolved.target_emotions",
        "direct_emoter_attack_resolved.before",
        "direct_emoter_attack_resolved.after",
    }
    assert per_origin["direct_emoter_attack_resolved.before"] > 0
    game = HOLDEM.removesuffix(".events.jsonl")
    assert dict(
        rows(db, "SELECT origin, count(*) FROM damage_emotions WHERE game_id = ? GROUP BY origin", [game])
    ) == dict(per_origin)


def whose(line: dict, path: str) -> str:
    """Whose vector, as the real program means it: a player state's own player; the
    target of an attack, assist, chatter or direct emoter attack; the actor of a
    self-regulation (offturn_regulation_resolved has only `player_id`)."""
    payload = line["payload"]
    if path.endswith(".emotions"):
        holder = payload
        for part in path.removesuffix(".emotions").strip(".").split("."):
            holder = holder[part.removesuffix("[]")]
        return holder  # a list of player states, or one
    return payload.get("target_player_id") or payload["player_id"]


def test_holdem_vectors_belong_to_the_right_players(db):
    game = HOLDEM.removesuffix(".events.jsonl")
    stored = rows(
        db,
        f"SELECT seq, origin, player_id, {', '.join(FIVE)} FROM damage_emotions WHERE game_id = ? ORDER BY seq, rowid",
        [game],
    )
    expected = []
    for seq, line in enumerate(lines_of(HOLDEM), 1):
        for path, vector in walk(line["payload"]):
            owner = whose(line, path)
            if isinstance(owner, list):
                owner = next(p["player_id"] for p in owner if p["emotions"] is vector)
            elif isinstance(owner, dict):
                owner = owner["player_id"]
            expected.append((seq, line["type"] + path, owner, *(vector[k] for k in FIVE)))
    assert sorted(stored) == sorted(expected)


def test_direct_emoter_attack_before_then_after_of_the_target(db):
    game = HOLDEM.removesuffix(".events.jsonl")
    lines = lines_of(HOLDEM)
    attacks = [(seq, x["payload"]) for seq, x in enumerate(lines, 1) if x["type"] == "direct_emoter_attack_resolved"]
    assert attacks
    for seq, payload in attacks:
        # simulator.py: {turn, attacker_id, target_player_id, emotion, before, after}
        assert set(payload) == {"turn", "attacker_id", "target_player_id", "emotion", "before", "after"}
        got = rows(
            db,
            "SELECT player_id, origin, fear, tilt FROM damage_emotions WHERE game_id = ? AND seq = ? ORDER BY rowid",
            [game, seq],
        )
        target = payload["target_player_id"]
        assert got == [
            (target, "direct_emoter_attack_resolved.before", payload["before"]["fear"], payload["before"]["tilt"]),
            (target, "direct_emoter_attack_resolved.after", payload["after"]["fear"], payload["after"]["tilt"]),
        ]


# --- seed 003, section 5.14: the keys of token_stats are listed, their values untyped --


@pytest.mark.parametrize("calls", [36.0, 36, 0, "36", None])
def test_token_stats_values_are_untyped(calls):
    from tests.damage.events import event
    from workbench.damage.models import LINES, SCREEN

    record = event("turn_summary")
    record["payload"]["token_stats"]["calls"] = calls
    record["payload"]["token_stats_by_model"]["m1"]["calls"] = calls
    text = json.dumps(record)
    LINES.validate_python([text])
    assert SCREEN.passes([text]) == [True]


@pytest.mark.parametrize(
    "change",
    [
        lambda p: p["token_stats"].pop("calls"),  # a listed key is missing
        lambda p: p["token_stats_by_model"].update(m1=5),  # "same stats subset": an object
    ],
)
def test_token_stats_keys_are_still_the_seeds(change):
    from pydantic import ValidationError

    from tests.damage.events import event
    from workbench.damage.models import LINES, SCREEN

    record = event("turn_summary")
    change(record["payload"])
    text = json.dumps(record)
    with pytest.raises(ValidationError):
        LINES.validate_python([text])
    assert SCREEN.passes([text]) == [False]


def rejected_calls(name: str) -> list[tuple[str, str, int, str, str]]:
    """(locator, player, turn, model, detail) of each `action_rejected` line of a file, its
    model read off the player's latest `thinking` start of that turn that names no stage
    (the simulator writes it just before the betting call, and no `provider_call` for a
    call that failed), its detail as the simulator wrote it."""
    started, found = {}, []
    with open(corpus() / name, encoding="utf-8") as handle:
        for number, text in enumerate(handle, 1):
            if not text.strip():
                continue
            line = json.loads(text)
            payload, key = (
                line["payload"],
                (line["game_id"], line["payload"].get("turn"), line["payload"].get("player_id")),
            )
            if line["type"] == "thinking" and payload.get("status") == "start" and "stage" not in payload:
                started[key] = payload["model"]
            elif line["type"] == "action_rejected":
                assert payload["reason"] == "provider_failure"  # the real simulator's only reason
                found.append((f"line {number}", payload["player_id"], payload["turn"], started[key], payload["detail"]))
    return found


def test_a_failed_betting_call_is_a_failed_decision_of_its_model(db):
    # The real simulator writes `action_rejected` (reason `provider_failure`) when the
    # betting call raises, before any answer exists, then applies a forced `call`: the
    # model was asked and no answer came back. A failed call, in the provider's words;
    # not the model's invalid move, so it has no validity.
    con = duckdb.connect(str(db), read_only=True)
    try:
        for name in FILES:
            expected = rejected_calls(name)
            got = con.execute(
                """
                SELECT d.locator, d.agent_id, d.turn, d.model, d.failure, d.valid, d.action, d.outcome FROM decisions d
                JOIN sources s USING (source_id) WHERE s.path = ? AND d.locator IN (
                    SELECT 'line ' || seq FROM damage_events e WHERE e.source_id = d.source_id
                    AND e.type = 'action_rejected') ORDER BY d.locator""",
                [str((corpus() / name).resolve())],
            ).fetchall()
            assert sorted(got) == sorted((*call, None, None, "failed") for call in expected), name
        assert (
            sum(len(rejected_calls(name)) for name in FILES) == 13
        )  # 2 in the draw5 game, 10 in hold'em, 1 at a table
        assert {call[4] for name in FILES for call in rejected_calls(name)} == {
            'provider HTTP error 500: {"error": "mock overload"}'
        }
    finally:
        con.close()


def test_every_answered_decision_of_the_real_logs_is_valid_and_every_failed_one_is_shown(db):
    # Both models answered validly every time they answered: the 13 failures alone set
    # the old scores (93.8%, 94.7%). Now: 0 invalid, 13 failed (2, 10, 1 by game), and
    # counting failures against the model gives the old scores back.
    from workbench import analysis

    con = duckdb.connect(str(db), read_only=True)
    try:
        card = analysis.scorecard(con, by=("model",))
        assert card["valid"].to_list() == card["decisions"].to_list()
        assert card["failed"].sum() == 13
        by_game = analysis.scorecard(con, by=("game_id",)).filter(pl.col("failed") > 0)
        assert sorted(by_game["failed"].to_list()) == [1, 2, 10]
        charged = analysis.scorecard(con, by=("model",), failures="invalid")
        # mistral: 121 answered + 8 failed; qwen: 89 + 5 (counted from the lines by hand)
        assert [round(v * 100, 1) for v in charged["validity"].to_list()] == [93.8, 94.7]
        assert analysis.records(con, valid=False, limit=None).is_empty()
        assert analysis.records(con, outcome="failed", limit=None).height == 13
    finally:
        con.close()


@pytest.mark.parametrize("name", [DRAW5, HOLDEM])
def test_a_decision_is_each_action_submitted_and_each_call_rejected_not_the_forced_call(db, name):
    with open(corpus() / name, encoding="utf-8") as handle:
        kinds = {f"line {number}": json.loads(text)["type"] for number, text in enumerate(handle, 1) if text.strip()}
    expected = {locator for locator, kind in kinds.items() if kind in ("action_submitted", "action_rejected")}
    con = duckdb.connect(str(db), read_only=True)
    try:
        locators = [
            locator
            for (locator,) in con.execute(
                "SELECT d.locator FROM decisions d JOIN sources s USING (source_id) WHERE s.path = ?",
                [str((corpus() / name).resolve())],
            ).fetchall()
        ]
    finally:
        con.close()
    assert sorted(locators) == sorted(expected) and len(locators) == len(set(locators))
