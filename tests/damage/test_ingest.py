"""Damage logs through `workbench.ingest`: tables, conservation, atomicity, idempotency."""

import json
import sys

import duckdb
import pytest

import workbench
from tests.conftest import rows, write_lines
from tests.damage.events import PAYLOADS, event
from workbench import bulk
from workbench.damage import reader


def damage_files(manifest):
    return [f for f in manifest["files"] if f["format"] == "damage"]


def test_every_manifest_fault_is_found_where_it_was_put(tmp_path, sample, manifest):
    db = tmp_path / "w.duckdb"
    workbench.ingest([sample / "damage"], db=db)
    found = set(
        rows(
            db,
            "SELECT s.path, v.locator, v.field, v.rule FROM violations v JOIN sources s "
            "USING (source_id) WHERE v.severity = 'error'",
        )
    )
    expected = {
        (str(sample / f["path"]), x["locator"], x["field"], x["rule"])
        for f in damage_files(manifest)
        for x in f["faults"]
    }
    assert expected and expected <= found
    # and nothing else is an error: the generator's clean events are valid
    assert found == expected


def test_records_plus_rejected_equals_non_blank_lines(tmp_path, sample, manifest):
    db = tmp_path / "w.duckdb"
    report = workbench.ingest([sample / "damage"], db=db)
    for file in report.files:
        lines = [line for line in open(file.path, encoding="utf-8") if line.strip()]
        assert file.records + file.rejected == len(lines)
        stored = rows(db, "SELECT count(*) FROM damage_events WHERE source_id = ?", [file.source_id])[0][0]
        rejected = rows(db, "SELECT count(*) FROM rejects WHERE source_id = ?", [file.source_id])[0][0]
        assert (stored, rejected) == (file.records, file.rejected)


def test_sample_has_a_long_game_and_a_tournament(tmp_path, sample):
    db = tmp_path / "w.duckdb"
    workbench.ingest([sample / "damage"], db=db)
    assert rows(db, "SELECT max(n) FROM (SELECT count(*) n FROM damage_events GROUP BY game_id)")[0][0] >= 2000
    linked = rows(
        db,
        "SELECT count(*) FROM damage_events t JOIN (SELECT DISTINCT game_id FROM damage_events) g "
        "ON t.payload->>'game_id' = g.game_id WHERE t.type = 'table_result'",
    )[0][0]
    assert linked >= 3


def test_truncated_line_is_a_reject_with_its_raw_text(tmp_path):
    path = tmp_path / "g.events.jsonl"
    path.write_text(json.dumps(event("game_started")) + "\n\n" + json.dumps(event("phase_changed"))[:40])
    db = tmp_path / "w.duckdb"
    (file,) = workbench.ingest([path], db=db).files
    assert (file.records, file.rejected) == (1, 1)
    assert rows(db, "SELECT locator, raw FROM rejects") == [("line 3", json.dumps(event("phase_changed"))[:40])]
    assert ("line 3", "error", "not_a_json_object") in {(v.locator, v.severity, v.rule) for v in file.violations}


def test_emotions_come_from_every_place_they_appear(tmp_path):
    chatter = event(
        "phase_changed",
        {"turn": 1, "target_player_id": "P2", "target_emotions": PAYLOADS["affect_resolved"]["target_emotions"]},
        type="chatter_evaluated",
    )
    regulate = event(
        "affect_resolved",
        {
            "turn": 1,
            "mode": "self_regulate",
            "player_id": "P1",
            "target_emotions": PAYLOADS["affect_resolved"]["target_emotions"],
        },
    )
    path = write_lines(
        tmp_path / "g.events.jsonl",
        [
            event("hand_started"),
            event("affect_resolved"),
            event("action_resolved"),
            chatter,
            regulate,
            event("hand_ended"),
            event("game_ended"),
        ],
    )
    db = tmp_path / "w.duckdb"
    workbench.ingest([path], db=db)
    assert rows(db, "SELECT seq, player_id, origin, fear FROM damage_emotions ORDER BY seq") == [
        (1, "P1", "hand_started.players[].emotions", 0.1),
        (2, "P2", "affect_resolved.target_emotions", 0.3),
        (3, "P1", "action_resolved.player_state.emotions", 0.1),
        (4, "P2", "chatter_evaluated.target_emotions", 0.3),
        (5, "P1", "affect_resolved.target_emotions", 0.3),
        (6, "P1", "hand_ended.players[].emotions", 0.1),
        (7, "P1", "game_ended.final_state[].emotions", 0.1),
    ]


def test_decisions_carry_the_matching_provider_call(tmp_path):
    other_call = event("provider_call", {**PAYLOADS["provider_call"], "player_id": "P2", "latency_ms": 5.0})
    invalid = event("action_submitted")
    invalid["payload"]["action"]["attack_plan"] = None
    path = write_lines(
        tmp_path / "g.events.jsonl",
        [
            event("provider_call"),
            other_call,
            event("action_submitted"),
            invalid,
            event("action_submitted", {**PAYLOADS["action_submitted"], "turn": 2}),
        ],
    )
    db = tmp_path / "w.duckdb"
    workbench.ingest([path], db=db)
    assert rows(
        db, "SELECT locator, agent_id, turn, action, valid, model, latency_ms, tokens FROM decisions ORDER BY locator"
    ) == [
        ("line 3", "P1", 1, "raise", True, "m1", 812.5, 120),
        ("line 4", "P1", 1, "raise", False, "m1", 812.5, 120),
        ("line 5", "P1", 2, "raise", True, None, None, None),  # no provider call in turn 2
    ]


def test_a_provider_call_with_figures_written_as_text_still_times_its_decision(tmp_path):
    # A string latency or token count breaks the schema (reported), but the figure it
    # spells is still the call's: the decision keeps it.
    call = event(
        "provider_call",
        {
            **PAYLOADS["provider_call"],
            "latency_ms": "703.8",
            "usage": {**PAYLOADS["provider_call"]["usage"], "total_tokens": "3982"},
        },
    )
    path = write_lines(tmp_path / "g.events.jsonl", [call, event("action_submitted")])
    db = tmp_path / "w.duckdb"
    workbench.ingest([path], db=db)
    assert rows(db, "SELECT latency_ms, tokens FROM decisions") == [(703.8, 3982)]
    assert rows(db, "SELECT locator, field FROM violations WHERE severity = 'error' ORDER BY field") == [
        ("line 1", "payload.latency_ms"),
        ("line 1", "payload.usage.total_tokens"),
    ]


def test_reingest_adds_nothing_and_says_so(tmp_path, sample):
    db = tmp_path / "w.duckdb"
    first = workbench.ingest([sample / "damage"], db=db)
    counts = rows(db, "SELECT (SELECT count(*) FROM damage_events), (SELECT count(*) FROM violations)")
    again = workbench.ingest([sample / "damage"], db=db)
    assert {f.status for f in again.files} == {"unchanged"}
    assert all("already ingested" in f.message for f in again.files)
    assert rows(db, "SELECT (SELECT count(*) FROM damage_events), (SELECT count(*) FROM violations)") == counts
    assert len(first.files) == len(again.files)


def test_a_failing_file_leaves_nothing_behind(tmp_path, monkeypatch):
    good = write_lines(tmp_path / "a.events.jsonl", [event("game_started")])
    bad = write_lines(tmp_path / "b.events.jsonl", [event("hand_started"), event("phase_changed")])
    db = tmp_path / "w.duckdb"
    real_derive = reader.tables.derive_decisions

    def derive_then_fail(con, source_id, first, failed_from):
        real_derive(con, source_id, first, failed_from)
        if source_id == 2:
            raise duckdb.IOException("disk full")

    monkeypatch.setattr(reader.tables, "derive_decisions", derive_then_fail)
    report = workbench.ingest([good, bad], db=db)
    assert [f.status for f in report.files] == ["ingested", "failed"]
    assert "disk full" in report.files[1].message
    for table in ("sources", "damage_events", "damage_emotions", "violations", "rejects", "decisions"):
        assert rows(db, f"SELECT count(*) FROM {table} WHERE source_id = 2") == [(0,)], table
    monkeypatch.setattr(reader.tables, "derive_decisions", real_derive)
    assert workbench.ingest([bad], db=db).files[0].status == "ingested"


def test_many_chunks_keep_line_numbers(tmp_path, monkeypatch):
    import workbench.jsonl

    monkeypatch.setattr(workbench.jsonl, "CHUNK_BYTES", 300)  # a line or two a chunk
    records = [event("phase_changed", {"turn": t, "phase": "betting"}) for t in range(10)]
    records[7]["payload"]["turn"] = "x"
    path = write_lines(tmp_path / "g.events.jsonl", records)
    (file,) = workbench.validate([path]).files
    assert [(v.locator, v.field) for v in file.violations] == [("line 8", "payload.turn")]
    assert file.records == 10


def test_a_line_only_duckdb_refuses_becomes_a_reject(tmp_path, monkeypatch):
    def accept_everything(chunk, suspects, lines, found_at, checked):
        pass

    monkeypatch.setattr(reader.bulk, "validate", accept_everything)
    path = tmp_path / "g.events.jsonl"
    path.write_text(json.dumps(event("game_started")) + "\n{broken\n" + json.dumps(event("phase_changed")) + "\n")
    db = tmp_path / "w.duckdb"
    (file,) = workbench.ingest([path], db=db).files
    assert (file.records, file.rejected) == (2, 1)
    assert rows(db, "SELECT seq FROM damage_events ORDER BY seq") == [(1,), (3,)]
    assert rows(db, "SELECT locator, raw FROM rejects") == [("line 2", "{broken")]


@pytest.mark.parametrize("own", [0.005, 0.0002])
def test_a_load_hands_the_gil_over_within_a_millisecond_and_restores_the_setting(tmp_path, monkeypatch, own):
    # CPython lets a thread waiting for the GIL in only after the switch interval (5 ms by
    # default); the screen and the thread running DuckDB both need it during a load.
    seen = []
    screened = bulk.screened
    monkeypatch.setattr(bulk, "screened", lambda *args: seen.append(sys.getswitchinterval()) or screened(*args))
    previous = sys.getswitchinterval()
    sys.setswitchinterval(own)
    try:
        log = write_lines(tmp_path / "g.events.jsonl", [event("game_started"), event("hand_started")])
        report = workbench.ingest([log], db=tmp_path / "w.duckdb")
        assert report.files[0].records == 2
        assert seen and all(interval <= 0.001 + 1e-9 for interval in seen)
        assert min(seen) == pytest.approx(min(own, 0.001), abs=2e-6)  # a setting already lower is kept
        assert sys.getswitchinterval() == pytest.approx(own, abs=2e-6)  # CPython keeps microseconds
    finally:
        sys.setswitchinterval(previous)


def test_loads_that_overlap_in_threads_give_the_interpreter_its_setting_back():
    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    try:
        first, second = bulk.quick_gil_handoff(), bulk.quick_gil_handoff()
        first.__enter__()
        second.__enter__()  # a second load starts while the first runs
        first.__exit__(None, None, None)
        assert sys.getswitchinterval() == pytest.approx(0.001, abs=2e-6)  # one load still runs
        second.__exit__(None, None, None)
        assert sys.getswitchinterval() == pytest.approx(0.005, abs=2e-6)
    finally:
        sys.setswitchinterval(previous)
