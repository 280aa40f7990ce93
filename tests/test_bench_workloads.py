"""The benchmarks' own workloads are what they say they are: the Agent Arena decision
log `bench.append` grows is read as one, and the faults it plants come back as the
seed's rules name them. No timing is asserted."""

import workbench
from bench.arena_log import decisions_log
from tests.conftest import rows


def test_the_arena_benchmark_log_is_a_decision_log_with_its_faults_found(tmp_path):
    log = decisions_log(2000, tmp_path)
    (report,) = workbench.ingest([log], db=tmp_path / "w.duckdb").files
    assert (report.format, report.records + report.rejected) == ("arena", 2000)
    assert report.rejected > 0  # its cut lines
    found = {(v.rule, v.field) for v in report.violations}
    assert {
        ("float_type", "params.radius"),
        ("unknown_tool", "tool"),
        ("required_key", "params.target_name"),
        ("param_spelling", "params.target_position"),
        ("undocumented_error_code", "last_action_result.error_code"),
    } <= found
    # Every decision but each agent's last has its outcome, from the agent's next one.
    assert rows(tmp_path / "w.duckdb", "SELECT count(*) - count(success) FROM arena_decisions") == [(4,)]
