"""Whatever JSON an extractor writes, the reader reports it and the load never fails."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench
from tests.stellaris.examples import EXAMPLES
from workbench import finding_writers
from workbench.stellaris import tables
from workbench.stellaris.extractor import read

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=25,
)
TOOLS = st.sampled_from(sorted(EXAMPLES))


def mutate(value, replacement, path):
    """`value` with the item at `path` (keys and indexes, as far as they exist) replaced."""
    if not path or not isinstance(value, (dict, list)) or not value:
        return replacement
    key = path[0] % len(value)
    if isinstance(value, dict):
        name = list(value)[key]
        return {**value, name: mutate(value[name], replacement, path[1:])}
    return [*value[:key], mutate(value[key], replacement, path[1:]), *value[key + 1 :]]


def expected_counts(document) -> tuple[int, int]:
    """(records, rejected) of a bundle file: one record per tool output (keys `get_*`,
    `search`, `search_save_file`), a full briefing when it has none, a reject when the
    JSON is not an object."""
    if not isinstance(document, dict):
        return 0, 1
    tools = [key for key in document if key.startswith("get_") or key in ("search", "search_save_file")]
    return (len(tools), 0) if tools else (1, 0)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tools=st.lists(TOOLS, min_size=1, max_size=4, unique=True),
    replacement=JSON,
    path=st.lists(st.integers(min_value=0, max_value=50), max_size=4),
)
@pytest.mark.slow
def test_any_mutation_of_a_bundle_is_read_and_loads(tmp_path, tools, replacement, path):
    bundle = {tool: EXAMPLES[tool] for tool in tools}
    mutated = mutate(bundle, replacement, path)
    target = tmp_path / "fuzz.briefing.json"
    target.write_text(json.dumps(mutated))
    extraction = read(target, "fuzz")
    assert (extraction.records, extraction.rejected) == expected_counts(mutated)
    assert len(extraction.rejects) == extraction.rejected
    assert len(extraction.tool_outputs) == extraction.records
    con = workbench.connect(":memory:")
    try:
        tables.write(con, 1, extraction)
        finding_writers.add_violations(con, 1, extraction.violations)
    finally:
        con.close()
