"""Drift findings (`info`): what real Agent Arena logs write beyond seed 002.

Found in SQL over a file's rows and reported once per file and kind of drift, at the
first line it appears on, with how many lines carry it.
"""

from __future__ import annotations

from workbench.arena import tables
from workbench.arena.models import ERROR_CODES, RUNTIME_TARGET
from workbench.violation import Violation
from workbench.validation import line_count


def findings(con, source_id: int) -> list[Violation]:
    params = {"source_id": source_id}
    found = []
    count, first = con.execute(tables.RUNTIME_TARGETS, params).fetchone()
    if count:
        found.append(Violation(
            f"line {first}", "info", "param_spelling", f"params.{RUNTIME_TARGET}",
            f"`{RUNTIME_TARGET}` is the real runtime's spelling of move_to's target; did you mean `target`? "
            f"The seed takes `target` [x, y, z] or target_x/y/z; accepted as the target ({line_count(count)}, "
            f"first line {first})",
        ))
    for key, code, count, first in con.execute(tables.UNDOCUMENTED_CODES, params).fetchall():
        found.append(Violation(
            f"line {first}", "info", "undocumented_error_code", f"{key}.error_code",
            f"error code {code!r} is not among the seed's codes ({', '.join(ERROR_CODES)}); kept, and counted "
            f"under its own name in arena_error_rates ({line_count(count)}, first line {first})",
        ))
    for key, count, first in con.execute(tables.EXTRA_KEYS, params).fetchall():
        found.append(Violation(
            f"line {first}", "info", "undocumented_key", key,
            f"key `{key}` is not part of a decision line ({', '.join(tables.DECISION_KEYS)}); kept in "
            f"arena_decisions.extra ({line_count(count)}, first line {first})",
        ))
    return found

