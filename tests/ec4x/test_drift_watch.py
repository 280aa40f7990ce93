"""Drift in order drafts is found two ways: the order screen's watchers note it as
msgspec decodes the drafts the screen passes (`drift.DriftWatch`), and the drafts it
refuses are read by Python's parser and walked (`drift.walked`). Both must find the
same drift in the same draft, reading a repeated key by its last value as pydantic
does; and the watch must give each line its own drift, whatever lines the screen
refuses around it, in whatever thread it runs."""

import copy
import json
import sys
import threading

import duckdb
import numpy as np
import pytest

import workbench
from tests.conftest import write_lines
from tests.ec4x.conftest import VALID_DRAFT, ingest_drafts
from tests.ec4x.test_draft_screen import MUTANTS
from workbench import bulk, jsonl
from workbench.ec4x import drift, reader


def _repeating(text: str, written: str, first: str) -> str:
    """`text` with the key-value pair `written` given a first value too (`first`): DuckDB
    reads that one, pydantic the last."""
    assert written in text, written
    return text.replace(written, f"{first}, {written}", 1)


VALID = json.dumps(VALID_DRAFT)
PATROL = VALID.replace('"move"', '"patrol"')
MOVE = VALID.replace('"move"', '"Move"')
REPEATED = [
    _repeating(VALID, '"commandType": "move"', '"commandType": "Move"'),  # last in the seed's spelling
    _repeating(MOVE, '"commandType": "Move"', '"commandType": "move"'),
    _repeating(PATROL, '"targetSystemId": 22', '"targetSystemId": null'),
    _repeating(
        PATROL.replace('"targetSystemId": 22', '"targetSystemId": null'),
        '"targetSystemId": null',
        '"targetSystemId": 22',
    ),
    _repeating(VALID, '"turn": 12', '"repairCommands": [{"fleetId": 101}], "repairCommands": null'),
    _repeating(VALID, '"espionageActions": [', '"espionageActions": [{"operation": "TechTheft", "targetHouseId": 2}]'),
    VALID[:-1] + ', "espionageActions": [{"operation": "TechTheft", "targetHouseId": 2}]}',
    _repeating(PATROL, '"targetSystemId": 22', '"targetSystemId": 21'),
]


def _spelled() -> list[str]:
    """The valid draft with each place's enum field in some of the spellings the screen
    knows, with and without the fields the compiler watches there."""
    texts = []
    for place in drift.PLACES:
        if place.field is None:
            continue
        for spelling in place.enum.spellings()[::7]:
            draft = copy.deepcopy(VALID_DRAFT)
            command = draft[place.key][0] if place.listed else draft[place.key]
            command[place.field] = spelling
            texts.append(json.dumps(draft))
            for name in place.watched:
                command.pop(name, None)
            texts.append(json.dumps(draft))
    return texts


TEXTS = [json.dumps(draft) for draft in MUTANTS] + _spelled() + REPEATED


def _chunk(folder, texts) -> jsonl.LineChunk:
    folder.mkdir(exist_ok=True)
    (chunk,) = jsonl.read_chunks(write_lines(folder / "drafts.orders.jsonl", texts))
    return chunk


def _rows(table) -> set[tuple]:
    return set(zip(*(table[name].to_pylist() for name in table.column_names)))


def _watched(chunk, skip=(), watch=None) -> tuple[list[int], set[tuple]]:
    """(refused positions, drift occurrences seen) of the order screen over a chunk."""
    watch = watch or drift.DriftWatch()
    refused = bulk.screened(chunk, list(skip), reader.order_screen(), threading.Event(), watch)
    return refused, _rows(watch.occurrences(chunk))


@pytest.mark.parametrize("run_lines", [bulk.SCREEN_LINES, 7])
def test_the_watch_sees_in_the_drafts_the_screen_passes_what_the_walk_finds(tmp_path, monkeypatch, run_lines):
    # Runs of 7 lines: many runs, refused lines at every place in them.
    monkeypatch.setattr(bulk, "SCREEN_LINES", run_lines)
    chunk = _chunk(tmp_path, TEXTS)
    refused, seen = _watched(chunk)
    passed = sorted(set(range(len(chunk))) - set(refused))
    walked = _rows(drift.walked(chunk.numbers[passed].tolist(), chunk.texts(passed)))
    assert seen == walked
    # Both sides are large, and every kind of drift is there.
    assert len({seq for seq, *_ in seen}) > 100 and len(refused) > 150
    assert {drift.PLACES[place].field is None for _, _, place, _, _ in seen} == {True, False}
    assert any(lacks for *_, lacks in seen) and any(value != value.lower() for *_, value, _ in seen)


def test_drift_is_read_at_a_repeated_keys_last_value(tmp_path):
    _, found, _ = ingest_drafts(REPEATED, tmp_path)
    assert sorted((v.locator, v.rule, v.field) for v in found) == [
        ("line 2", "enum_spelling", "fleetCommands[0].commandType"),
        ("line 4", "compiler_requires_field", "fleetCommands[0].targetSystemId"),
        ("line 5", "compiler_only_field", "repairCommands"),
        ("line 7", "enum_spelling", "espionageActions[0].operation"),
    ]
    # Lines 5 to 8 repeat a key the screen takes as pydantic does: the watch reads them.
    refused, _ = _watched(_chunk(tmp_path, REPEATED))
    assert not {4, 5, 6, 7} & set(refused)


def test_a_refused_draft_lends_its_commands_to_no_line_after_it(tmp_path):
    broken = json.loads(MOVE)
    broken["houseId"] = "three"  # refused, after its Move command was decoded
    chunk = _chunk(tmp_path, [MOVE, json.dumps(broken), VALID, VALID, MOVE])
    refused, seen = _watched(chunk)
    assert refused == [1]
    move = next(
        n for n, place in enumerate(drift.PLACES) if place.field == "commandType" and place.key == "fleetCommands"
    )
    assert seen == {(1, 0, move, "Move", ""), (5, 0, move, "Move", "")}


def test_an_equal_command_of_a_refused_draft_changes_no_finding(tmp_path):
    # Line 1 is refused after its Move command was decoded; line 2 holds an equal one.
    broken = json.loads(MOVE)
    broken["houseId"] = "three"
    path = write_lines(tmp_path / "game.orders.jsonl", [broken, json.loads(MOVE)])
    db = tmp_path / "w.duckdb"
    workbench.ingest([path], db=db)
    con = duckdb.connect(str(db), read_only=True)
    messages = [m for (m,) in con.execute("SELECT message FROM violations WHERE rule = 'enum_spelling'").fetchall()]
    con.close()
    assert len(messages) == 1 and messages[0].endswith("(2 lines, first line 1)")


def test_lines_screened_again_from_the_start_are_seen_once(tmp_path):
    chunk = _chunk(tmp_path, [MOVE, VALID])
    watch = drift.DriftWatch()
    stop = threading.Event()
    early = bulk.screened_before_parse(chunk, reader.order_screen(), stop, watch)
    # As if DuckDB could not read line 2, which ends like an object: all is screened again.
    bulk.screened_once_parsed(chunk, early, [1], reader.order_screen(), stop, watch)
    assert watch.occurrences(chunk).num_rows == 1


def test_a_watch_hears_only_its_own_screen_in_threads_side_by_side(tmp_path, monkeypatch):
    # Small runs, and threads switched every 10 µs: the two screens interleave.
    monkeypatch.setattr(bulk, "SCREEN_LINES", 3)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        chunks = [
            _chunk(tmp_path / name, texts)
            for name, texts in (("a", [MOVE, VALID, PATROL] * 2000), ("b", [VALID, REPEATED[1], REPEATED[4]] * 2000))
        ]
        alone = [_watched(chunk)[1] for chunk in chunks]
        side_by_side = [None, None]

        def screen(i):
            side_by_side[i] = _watched(chunks[i])[1]

        threads = [threading.Thread(target=screen, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert side_by_side == alone and all(alone)


def test_a_watch_hears_nothing_once_its_screen_is_done(tmp_path):
    chunk = _chunk(tmp_path, [MOVE])
    watch = drift.DriftWatch()
    _watched(chunk, watch=watch)
    reader.order_screen().decode(MOVE)  # decoded in this thread, outside any watch
    watch.accepted(np.array([0, 1]))
    assert watch.occurrences(chunk).num_rows == 1


def test_where_drafts_and_lines_do_not_match_the_watch_walks_the_lines(tmp_path):
    # Two drafts decoded for the one line the screen says it passed (a line refused
    # after its draft was built): which is whose cannot be told, so the line is walked.
    chunk = _chunk(tmp_path, [VALID, VALID, VALID, VALID, MOVE])
    watch = drift.DriftWatch()
    with watch:
        reader.order_screen().decode(PATROL.replace('"targetSystemId": 22', '"targetSystemId": null'))
        reader.order_screen().decode(VALID)
    watch.accepted(np.array([4]))
    assert [row[:2] for row in _rows(watch.occurrences(chunk))] == [(5, 0)]
    assert {value for *_, value, _ in _rows(watch.occurrences(chunk))} == {"Move"}


@pytest.mark.parametrize(
    "text,found",
    [
        (MOVE.replace('"houseId": 1', '"houseId": "three"'), {"Move"}),  # an invalid draft keeps its drift
        (MOVE[:-1] + ', "x": [1,]}', set()),  # Python's parser cannot read it: no record, no drift
        ("[" + MOVE + "]", set()),  # not an object
    ],
)
def test_the_walk_reads_the_drafts_the_screen_refuses(text, found):
    assert {value for *_, value, _ in _rows(drift.walked([1], [text]))} == found
