"""`python -m bench.steps` takes steps out of an ingest by the names they are reached by:
each name must still exist, and the ingest without them must still run end to end (it
measures nothing otherwise). No timing is asserted."""

import json
import random
from pkgutil import resolve_name

import pytest

import workbench
from bench import ec4x_drafts, steps
from tests.conftest import ROOT, rows

REAL_DAMAGE = ROOT / ".." / "shared" / "corpus" / "damage"


def _targets(ladder):
    return [target for _, replaced in ladder for target in replaced]


@pytest.mark.parametrize("target", _targets(steps.DAMAGE_STEPS) + _targets(steps.EC4X_STEPS))
def test_every_step_the_benchmark_takes_out_is_there(target):
    module, _, name = target.rpartition(".")
    assert hasattr(resolve_name(module), name), target


def _without(ladder, path, db):
    """The report of ingesting `path` with every step of `ladder` taken out."""
    with steps.without(ladder):
        return workbench.ingest([path], db=db).files[0]


def test_an_order_log_ingests_with_every_step_taken_out(tmp_path):
    rng = random.Random(1)
    log = tmp_path / "g.orders.jsonl"
    log.write_text("".join(json.dumps(ec4x_drafts.draft(rng, 1 + n // 10)) + "\n" for n in range(200)))
    report = _without(steps.EC4X_STEPS, log, tmp_path / "w.duckdb")
    assert (report.status, report.records) == ("ingested", 200)
    assert rows(tmp_path / "w.duckdb", "SELECT count(*) FROM ec4x_orders") == [(200,)]
    assert rows(tmp_path / "w.duckdb", "SELECT count(*) FROM decisions") == [(0,)]  # taken out


def test_a_real_damage_log_ingests_with_every_step_taken_out(tmp_path):
    logs = sorted(REAL_DAMAGE.glob("*.events.jsonl"))
    if not logs:
        pytest.skip(f"the real Damage corpus is not at {REAL_DAMAGE.resolve()}")
    lines = sum(1 for line in open(logs[0], "rb") if line.strip())
    report = _without(steps.DAMAGE_STEPS, logs[0], tmp_path / "w.duckdb")
    assert (report.status, report.records + report.rejected) == ("ingested", lines)
    assert rows(tmp_path / "w.duckdb", "SELECT count(*) FROM damage_emotions") == [(0,)]  # taken out
