"""The bulk path must find exactly what pydantic finds on each draft line: the screen
passes only lines pydantic passes, and the lines it refuses get pydantic's own
violations. The oracle here is pydantic itself, line by line, over drafts mutated the
ways a model breaks them (and a few ways it does not break them, but writes them)."""

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.ec4x.conftest import VALID_DRAFT, ingest_drafts
from workbench.ec4x import orders, reader
from workbench.jsonl import LineBatch, check_lines

# Values tried at every field of the draft: each is valid somewhere and wrong elsewhere.
VALUES = [
    None,
    True,
    0,
    -1,
    1.0,
    1e3,
    2**70,
    "",
    "7",
    [],
    [1],
    {},
    {"x": 1},
    "move",
    "Move",
    "MOVE",
    "mOvE",
    "m-o-v-e",
    "mоve",  # the last with a Cyrillic o
    "join_fleet",
    "JoinFleet",
    "patrol",
    "Patrol",
    "counter-intel-sweep",
    "CounterIntelSweep",
    "psyops-campaign",
    "fighter",
    "Fighter",
    "infrastructure",
    "none",
    "marines",
    "Colonists",
    "ship",
]


def _mutants() -> list[dict]:
    """The valid draft with one field set to each value, left out, or given a neighbour."""
    drafts = []

    def walk(node, setter_paths, path):
        if isinstance(node, dict):
            for key in list(node):
                walk(node[key], setter_paths, (*path, key))
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, setter_paths, (*path, i))
        setter_paths.append(path)

    paths: list[tuple] = []
    walk(VALID_DRAFT, paths, ())
    for path in paths:
        if not path:
            continue
        for value in [*VALUES, "drop"]:
            draft = copy.deepcopy(VALID_DRAFT)
            parent = draft
            for part in path[:-1]:
                parent = parent[part]
            if value == "drop":
                if isinstance(parent, dict):
                    del parent[path[-1]]
                else:
                    continue
            else:
                parent[path[-1]] = value
            drafts.append(draft)
    # Rules across commands: a fleet given two commands, four operations against a house.
    twice = copy.deepcopy(VALID_DRAFT)
    twice["fleetCommands"].append({"fleetId": 101, "commandType": "hold"})
    spies = copy.deepcopy(VALID_DRAFT)
    spies["espionageActions"] = [{"operation": "tech-theft", "targetHouseId": 2}] * 4
    three = copy.deepcopy(VALID_DRAFT)
    three["espionageActions"] = [{"operation": "Tech_Theft", "targetHouseId": 2}] * 3
    return [*drafts, twice, spies, three]


MUTANTS = _mutants()


def _pydantic_findings(texts: list[str]) -> set[tuple]:
    batch = LineBatch(numbers=list(range(1, len(texts) + 1)), texts=texts)
    found, rejects = check_lines(batch, orders.LINES, reader._draft_violation)
    assert not rejects
    return {(v.locator, v.rule, v.field, v.message) for v in found}


def test_the_mutants_cover_valid_and_invalid_drafts():
    texts = [json.dumps(d) for d in MUTANTS]
    with_errors = {locator for locator, *_ in _pydantic_findings(texts)}
    assert len(MUTANTS) > 1500
    assert 0.2 * len(texts) < len(with_errors) < 0.95 * len(texts)
    # The screen passes most of the valid ones itself (drift spellings included).
    passed = sum(_screen_passes(text) for text in texts)
    assert 0.8 * (len(texts) - len(with_errors)) <= passed <= len(texts) - len(with_errors)


def _screen_passes(text: str) -> bool:
    try:
        reader.order_screen().decode(text)
        return True
    except Exception:
        return False


def test_every_mutant_gets_exactly_pydantics_violations(tmp_path):
    texts = [json.dumps(d) for d in MUTANTS]
    found, _, rejects = ingest_drafts(texts, tmp_path)
    assert rejects == []
    assert {(v.locator, v.rule, v.field, v.message) for v in found} == _pydantic_findings(texts)


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(VALID_DRAFT).replace('"move"', '"mOvE"'),  # a spelling the screen does not list
        json.dumps(VALID_DRAFT).replace('"move"', '"m\\u043eve"'),  # non-ASCII: pydantic decides
    ],
)
def test_a_spelling_the_screen_does_not_know_is_left_to_pydantic(text):
    assert not _screen_passes(text)


@settings(max_examples=400, deadline=None)
@given(fleets=st.lists(st.integers(100, 103), max_size=6), houses=st.lists(st.integers(1, 3), max_size=8))
def test_the_screen_passes_a_draft_only_within_the_limits_across_commands(fleets, houses):
    # Seed 004: one command per fleet per turn, up to three operations per target house.
    # pydantic is the oracle; the screen settles the usual case without a count.
    draft = {
        "turn": 1,
        "houseId": 1,
        "fleetCommands": [{"fleetId": fleet, "commandType": "hold"} for fleet in fleets],
        "espionageActions": [{"operation": "tech-theft", "targetHouseId": house} for house in houses],
    }
    text = json.dumps(draft)
    within = len(set(fleets)) == len(fleets) and all(houses.count(house) <= 3 for house in houses)
    assert _screen_passes(text) == within
    assert (not _pydantic_findings([text])) == within
