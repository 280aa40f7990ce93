"""Helpers for the Agent Arena tests: line checks without a database, and ingesting
hand-made files."""

import json

import duckdb
import pytest

import workbench
from workbench.arena import reader
from workbench.jsonl import LineBatch


@pytest.fixture
def arena_violations():
    """The violations of one decision line."""
    def run(record):
        text = record if isinstance(record, str) else json.dumps(record)
        found, rejects = reader.check_batch(LineBatch(numbers=[1], texts=[text]))
        assert not rejects
        return found
    return run


@pytest.fixture
def check_decision(arena_violations):
    """The (rule, field) violations of a decision of `tool` with `params`."""
    def run(tool, params, **values):
        record = {"agent_id": "agent_001", "tick": 4, "tool": tool, "params": params, **values}
        return {(v.rule, v.field) for v in arena_violations(record)}
    return run


@pytest.fixture
def ingest_arena(tmp_path):
    """Write lines to a file named `name`, ingest it; returns (file report, connection)."""
    connections = []

    def run(name, lines):
        path = tmp_path / name
        path.write_text("\n".join(l if isinstance(l, str) else json.dumps(l) for l in lines) + "\n")
        db = tmp_path / "x.duckdb"
        (file,) = workbench.ingest([path], db=db).files
        assert file.status == "ingested", file.message
        con = duckdb.connect(str(db))
        connections.append(con)
        return file, con

    yield run
    for con in connections:
        con.close()
