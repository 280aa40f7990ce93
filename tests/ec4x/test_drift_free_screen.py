"""The drift SQL reads only the drafts the drift-free screen refuses. So the screen must
pass no draft that holds drift as pydantic reads it (a repeated key's last value), and
no draft pydantic refuses. The oracle is the drift SQL itself run over every draft (with
its own handling of repeated keys), and pydantic."""

import copy
import json

import pyarrow as pa
import pytest

from tests.ec4x.conftest import VALID_DRAFT, ingest_drafts
from tests.ec4x.test_draft_screen import MUTANTS, _pydantic_findings
from workbench.ec4x import drift, orders, reader


def _passes(decoder, text: str) -> bool:
    try:
        decoder.decode(text)
        return True
    except Exception:
        return False


def _repeating(text: str, written: str, first: str) -> str:
    """`text` with the key-value pair `written` given a first value too (`first`): DuckDB
    reads that one, pydantic the last."""
    assert written in text, written
    return text.replace(written, f"{first}, {written}", 1)


VALID = json.dumps(VALID_DRAFT)
PATROL = VALID.replace('"move"', '"patrol"')
REPEATED = [
    _repeating(VALID, '"commandType": "move"', '"commandType": "Move"'),  # last in the seed's spelling
    _repeating(VALID.replace('"move"', '"Move"'), '"commandType": "Move"', '"commandType": "move"'),
    _repeating(PATROL, '"targetSystemId": 22', '"targetSystemId": null'),
    _repeating(PATROL.replace('"targetSystemId": 22', '"targetSystemId": null'), '"targetSystemId": null',
               '"targetSystemId": 22'),
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


def _drafts_with_drift(con, texts) -> set[int]:
    """The lines whose drift the SQL finds when it reads every draft."""
    every = pa.table({"seq": pa.array(range(1, len(texts) + 1), pa.int64()), "raw": texts})
    occurrences = drift.occurrences_in(con, every)
    meanings, _ = drift.DriftTally._meanings(occurrences)
    return set(occurrences.join(meanings, ["place", "value", "lacks"], join_type="inner")["seq"].to_pylist())


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    import duckdb
    folder = tmp_path_factory.mktemp("drift_free")
    _, found, _ = ingest_drafts(TEXTS, folder)
    con = duckdb.connect(str(folder / "drafts.duckdb"))
    yield con, found
    con.close()


def test_a_draft_the_drift_free_screen_passes_holds_no_drift_and_no_error(ingested):
    con, _ = ingested
    with_drift = _drafts_with_drift(con, TEXTS)
    passed = {n for n, text in enumerate(TEXTS, 1) if _passes(drift.DRIFT_FREE_SCREEN, text)}
    # Both sides are large: the test means something.
    assert len(with_drift) > 200 and len(passed) > 150
    assert passed & with_drift == set()
    with_errors = {int(locator.split()[1]) for locator, *_ in _pydantic_findings(TEXTS)}
    assert passed & with_errors == set()
    assert all(_passes(reader.ORDER_SCREEN, TEXTS[n - 1]) for n in passed)


def test_skipping_the_drafts_it_passes_loses_no_drift(ingested):
    con, found = ingested
    # Every draft that is a record, as the ingest read them all with the screen skipped.
    records = [seq for (seq,) in con.execute("SELECT seq FROM ec4x_orders ORDER BY seq").fetchall()]
    tally = drift.DriftTally()
    tally.add(drift.occurrences_in(con, pa.table({"seq": pa.array(records, pa.int64()),
                                                  "raw": [TEXTS[seq - 1] for seq in records]})))
    every = [(v.locator, v.rule, v.field, v.message.rsplit(" (", 1)[0]) for v in tally.findings()]
    assert sorted(every) == sorted((v.locator, v.rule, v.field, v.message) for v in found)
    assert {v.rule for v in found} == {"enum_spelling", "compiler_requires_field", "compiler_only_field"}


@pytest.mark.parametrize("text,passes", [
    (VALID, True),
    (VALID.replace('"move"', '"Move"'), False),  # the compiler's spelling: drift
    (VALID.replace('"destroyer"', '"Destroyer"'), False),  # an enum field that tags no variant
    (PATROL, True),
    (PATROL.replace('"targetSystemId": 22', '"targetSystemId": null'), False),  # the compiler requires it
    (VALID.replace('"targetHouseId": 2, "targetSystemId"', '"targetHouseId": null, "targetSystemId"'), False),
    (VALID.replace('"turn": 12', '"turn": 12, "scrapCommands": null'), False),  # a list only the compiler reads
    (VALID.replace('"turn": 12', '"turn": 12, "orders": []'), False),  # unknown: an error
    *((text, text is REPEATED[-1]) for text in REPEATED),
])
def test_what_the_drift_free_screen_passes(text, passes):
    # The seed's own spellings and requirements pass; every kind of drift is refused.
    # msgspec checks each value of a repeated key (a variant's tag must repeat the same
    # value), so a draft repeating one passes only when every value is free of drift.
    assert _passes(drift.DRIFT_FREE_SCREEN, text) == passes
    if passes:
        assert _pydantic_findings([text]) == set()


def test_drift_in_drafts_the_screen_refuses_is_found_at_the_last_value(tmp_path):
    _, found, _ = ingest_drafts(REPEATED, tmp_path)
    assert sorted((v.locator, v.rule, v.field) for v in found) == [
        ("line 2", "enum_spelling", "fleetCommands[0].commandType"),
        ("line 4", "compiler_requires_field", "fleetCommands[0].targetSystemId"),
        ("line 5", "compiler_only_field", "repairCommands"),
        ("line 7", "enum_spelling", "espionageActions[0].operation"),
    ]
