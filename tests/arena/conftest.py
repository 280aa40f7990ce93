"""Helpers for the Agent Arena tests: line checks without a database, and ingesting
hand-made files."""

import json

import pytest

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
