"""A finding about a record: the one type every format reports through."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np

SEVERITIES = ("error", "warning", "info")
LINE_LOCATOR = re.compile(r"line (\d+)")


@dataclass(frozen=True)
class Violation:
    """One finding: where (`locator`, `field`), how bad (`severity`), which `rule`, and why."""

    locator: str
    severity: str
    rule: str
    field: str
    message: str
    # The line the finding is about, where the locator does not say it (`response r-12`).
    line: int | None = dataclasses.field(default=None, compare=False)
    # A row that counts the findings of its rule past the first ones listed: how many.
    count: int | None = dataclasses.field(default=None, compare=False)


# What a finding says, as the `violations` table stores it and reports show it (its
# `line` is a column of its own there, and the locator says it in a report).
FIELDS = ("locator", "severity", "rule", "field", "message")


class StoredViolations:
    """Violations read back from the database as columns (`FIELDS`, as `fetchnumpy`
    gives them), which is several times faster than rows made into objects, a good part
    of a small append (docs/performance.md). A report makes them a list of `Violation`s
    when first asked for."""

    def __init__(self, columns: dict):
        self._columns = columns

    def _counts(self) -> np.ndarray:
        """Per row: the findings it counts, 0 for a row that is one finding itself."""
        return np.ma.filled(np.ma.asarray(self._columns["count"]), 0).astype(np.int64)

    def severities(self) -> list[str]:
        """One severity per finding: a row that counts many stands for as many."""
        counts = self._counts()
        if not counts.any():
            return self._columns["severity"].tolist()
        return np.repeat(self._columns["severity"], np.maximum(counts, 1)).tolist()

    def to_list(self) -> list[Violation]:
        listed = zip(*(self._columns[name].tolist() for name in FIELDS), self._counts())
        return [
            Violation(locator, severity, rule, field, message, count=int(count) or None)
            for locator, severity, rule, field, message, count in listed
        ]


def line_of(locator: str, line: int | None = None) -> int | None:
    """The line a finding is about: given, or read from a `line N` locator."""
    if line is not None:
        return line
    match = LINE_LOCATOR.fullmatch(locator)
    return int(match.group(1)) if match else None
