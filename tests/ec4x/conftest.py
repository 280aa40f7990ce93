"""Helpers for the EC4X tests: a valid draft to start from, the findings of draft lines
(through a whole ingest: DuckDB, the screen, pydantic and the drift queries), and bot
trace lines checked without a database."""

import copy
import itertools
import json
import re

import duckdb
import pytest

import workbench
from tests.conftest import write_lines
from workbench.ec4x import reader, trace
from workbench.jsonl import LineBatch, check_lines
from workbench.violation import Violation

VALID_DRAFT = {
    "turn": 12,
    "houseId": 1,
    "fleetCommands": [{"fleetId": 101, "commandType": "move", "targetSystemId": 22, "targetFleetId": None, "roe": 6}],
    "buildCommands": [
        {
            "colonyId": 12,
            "buildType": "ship",
            "shipClass": "destroyer",
            "facilityClass": None,
            "groundClass": None,
            "quantity": 1,
        }
    ],
    "zeroTurnCommands": [
        {
            "commandType": "reactivate",
            "sourceFleetId": 101,
            "targetFleetId": None,
            "shipIndices": [],
            "fighterShipIds": [],
            "carrierShipId": None,
            "sourceCarrierShipId": None,
            "targetCarrierShipId": None,
            "cargoType": None,
            "quantity": None,
        }
    ],
    "populationTransfers": [{"sourceColonyId": 12, "destColonyId": 13, "ptuAmount": 1}],
    "terraformCommands": [{"colonyId": 12}],
    "colonyManagement": [
        {"colonyId": 12, "taxRate": 20, "autoRepair": True, "autoLoadMarines": False, "autoLoadFighters": False}
    ],
    "espionageActions": [{"operation": "tech-theft", "targetHouseId": 2, "targetSystemId": None}],
    "diplomaticCommand": {"targetHouseId": 2, "action": "declare-hostile", "proposalId": None, "proposedState": None},
    "researchAllocation": {"economic": 20, "science": 10, "fields": {"cst": 5, "wep": 5}},
    "ebpInvestment": 0,
    "cipInvestment": 0,
}


@pytest.fixture
def draft():
    """A fresh copy of the seed's own examples assembled into one valid draft."""
    return copy.deepcopy(VALID_DRAFT)


def ingest_drafts(records, folder, db=None) -> tuple[list[Violation], list[Violation], list]:
    """(errors, drift, rejects) of draft lines, read back from an ingest of them into
    `db` (a new one in `folder` by default). Drift messages lose their count of lines
    (`(1 line, first line 1)`)."""
    path = write_lines(folder / "game.orders.jsonl", records)
    db = db or folder / "drafts.duckdb"
    (file,) = workbench.ingest([path], db=db).files
    assert file.status == "ingested", file.message
    con = duckdb.connect(str(db), read_only=True)
    try:
        found = [
            Violation(*row)
            for row in con.execute(
                "SELECT locator, severity, rule, field, message FROM violations WHERE source_id = ? AND line IS NOT NULL "
                "AND rule <> 'not_a_json_object' ORDER BY line",
                [file.source_id],
            ).fetchall()
        ]
        drift = [
            Violation(locator, severity, rule, field, re.sub(r" \(\d+ lines?, first line \d+\)$", "", message))
            for locator, severity, rule, field, message in con.execute(
                "SELECT locator, severity, rule, field, message FROM violations WHERE source_id = ? AND line IS NULL",
                [file.source_id],
            ).fetchall()
        ]
        rejects = con.execute("SELECT locator, raw FROM rejects WHERE source_id = ?", [file.source_id]).fetchall()
    finally:
        con.close()
    return found, drift, rejects


@pytest.fixture(scope="session")
def drafts_db(tmp_path_factory):
    """One database for the drafts of every rule's test in this process: each draft is a
    file of its own, its findings read by its `source_id`, and an ingest into a database
    already made takes half the time of one that makes it."""
    return tmp_path_factory.mktemp("drafts") / "drafts.duckdb"


@pytest.fixture
def draft_violations(tmp_path, drafts_db):
    """(violations, drift findings) of one draft."""
    calls = itertools.count()

    def run(record):
        folder = tmp_path / f"draft{next(calls)}"
        folder.mkdir()
        found, drift, rejects = ingest_drafts([record], folder, drafts_db)
        assert not rejects
        return found, drift

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
        batch = LineBatch(numbers=[1], texts=[record if isinstance(record, str) else json.dumps(record)])
        found, rejects = check_lines(batch, trace.LINES, reader._trace_violation)
        assert not rejects
        return {(v.rule, v.field) for v in found}

    return run
