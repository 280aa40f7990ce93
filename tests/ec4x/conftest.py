"""Helpers for the EC4X tests: a valid draft to start from, line checks without a
database, and ingesting hand-made files."""

import copy
import json

import pytest

from workbench.ec4x import reader
from workbench.jsonl import LineBatch

VALID_DRAFT = {
    "turn": 12, "houseId": 1,
    "fleetCommands": [{"fleetId": 101, "commandType": "move", "targetSystemId": 22, "targetFleetId": None, "roe": 6}],
    "buildCommands": [{"colonyId": 12, "buildType": "ship", "shipClass": "destroyer", "facilityClass": None,
                       "groundClass": None, "quantity": 1}],
    "zeroTurnCommands": [{"commandType": "reactivate", "sourceFleetId": 101, "targetFleetId": None, "shipIndices": [],
                          "fighterShipIds": [], "carrierShipId": None, "sourceCarrierShipId": None,
                          "targetCarrierShipId": None, "cargoType": None, "quantity": None}],
    "populationTransfers": [{"sourceColonyId": 12, "destColonyId": 13, "ptuAmount": 1}],
    "terraformCommands": [{"colonyId": 12}],
    "colonyManagement": [{"colonyId": 12, "taxRate": 20, "autoRepair": True, "autoLoadMarines": False,
                          "autoLoadFighters": False}],
    "espionageActions": [{"operation": "tech-theft", "targetHouseId": 2, "targetSystemId": None}],
    "diplomaticCommand": {"targetHouseId": 2, "action": "declare-hostile", "proposalId": None, "proposedState": None},
    "researchAllocation": {"economic": 20, "science": 10, "fields": {"cst": 5, "wep": 5}},
    "ebpInvestment": 0, "cipInvestment": 0,
}


@pytest.fixture
def draft():
    """A fresh copy of the seed's own examples assembled into one valid draft."""
    return copy.deepcopy(VALID_DRAFT)


def check(kind, records) -> tuple[list, list, dict]:
    texts = [r if isinstance(r, str) else json.dumps(r) for r in records]
    batch = LineBatch(numbers=list(range(1, len(texts) + 1)), texts=texts)
    return reader.check_batch(batch, kind)


@pytest.fixture
def draft_violations():
    """(violations, drift findings) of one draft."""
    def run(record):
        found, drift, rejects = check(reader.ORDER_DRAFTS, [record])
        assert not rejects
        return found, [v for _, v in drift]
    return run


@pytest.fixture
def check_draft(draft_violations):
    """(errors, drift) of one draft, each as a set of (rule, field)."""
    def run(record):
        found, drift = draft_violations(record)
        return {(v.rule, v.field) for v in found}, {(v.rule, v.field) for v in drift}
    return run


@pytest.fixture
def check_trace_line():
    """The (rule, field) violations of one bot-trace line."""
    def run(record):
        found, _, rejects = check(reader.BOT_TRACE, [record])
        assert not rejects
        return {(v.rule, v.field) for v in found}
    return run

