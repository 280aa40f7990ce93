"""Drift findings (`info`): what real Agent Arena logs write beyond seed 002.

Found in SQL over a file's rows and reported once per file and kind of drift, at the
first line it appears on, with how many lines carry it.
"""

from __future__ import annotations

import duckdb

from workbench.arena import tables
from workbench.arena.models import ERROR_CODES, RUNTIME_TARGET
from workbench.validation import drift_finding
from workbench.violation import Violation


def findings(con: duckdb.DuckDBPyConnection, source_id: int) -> list[Violation]:
    params = {"source_id": source_id}
    found = []
    [(count, first)] = con.execute(tables.RUNTIME_TARGETS, params).fetchall()
    if count:
        found.append(
            drift_finding(
                "param_spelling",
                f"params.{RUNTIME_TARGET}",
                f"`{RUNTIME_TARGET}` is the real runtime's spelling of move_to's target; did you mean `target`? "
                "The seed takes `target` [x, y, z] or target_x/y/z; accepted as the target",
                count,
                first,
            )
        )
    for key, code, count, first in con.execute(tables.UNDOCUMENTED_CODES, params).fetchall():
        found.append(
            drift_finding(
                "undocumented_error_code",
                f"{key}.error_code",
                f"error code {code!r} is not among the seed's codes ({', '.join(ERROR_CODES)}); kept, and counted "
                "under its own name in arena_error_rates",
                count,
                first,
            )
        )
    for key, count, first in con.execute(tables.EXTRA_KEYS, params).fetchall():
        found.append(
            drift_finding(
                "undocumented_key",
                key,
                f"key `{key}` is not part of a decision line ({', '.join(tables.DECISION_KEYS)}); kept in "
                "arena_decisions.extra",
                count,
                first,
            )
        )
    return found


def trace_findings(con: duckdb.DuckDBPyConnection, params: dict) -> list[Violation]:
    """What a trace file holds beyond the runtime's own trace records: keys it does not
    write, steps without their stamps (the SDK's debug-trace shape), and records of
    another episode than the file is named after. `params`: source_id and the episode
    of the file's name."""
    source = {"source_id": params["source_id"]}
    found = []
    [(count, first, episode)] = con.execute(tables.EPISODE_MISMATCH, params).fetchall()
    if count:
        found.append(
            drift_finding(
                "episode_mismatch",
                "episode_id",
                f"episode_id {episode!r} is not the file's name ({params['episode']!r}.jsonl), which the runtime names "
                "after the episode; the record's episode_id is the one joined to decisions",
                count,
                first,
            )
        )
    [(count, first, step, keys)] = con.execute(tables.DEFAULTED_STAMPS, source).fetchall()
    if count:
        found.append(
            Violation(
                f"line {first}",
                "warning",
                "step_stamp_missing",
                f"steps[{step}].{keys[0]}",
                f"a step leaves out {' and '.join(f'`{k}`' for k in keys)}, which the runtime writes on every step "
                "(and its trace reader requires); taken from the step's record "
                f"({count} step{'s' if count != 1 else ''}, first line {first})",
            )
        )
    for key, count, first in con.execute(tables.TRACE_EXTRA_KEYS, source).fetchall():
        found.append(
            drift_finding(
                "undocumented_key",
                key,
                f"key `{key}` is not part of a trace record ({', '.join(tables.TRACE_KEYS)}); kept in "
                "arena_traces.extra",
                count,
                first,
            )
        )
    for key, count, first, step in con.execute(tables.STEP_EXTRA_KEYS, source).fetchall():
        found.append(
            drift_finding(
                "undocumented_key",
                f"steps[{step}].{key}",
                f"key `{key}` is not part of a trace step ({', '.join(tables.STEP_KEYS)}); kept in "
                "arena_trace_steps.extra",
                count,
                first,
            )
        )
    return found
