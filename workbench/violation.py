"""A finding about a record: the one type every format reports through."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

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


FIELDS = ("locator", "severity", "rule", "field", "message")


class StoredViolations(Sequence):
    """Violations read back from the database as columns (`FIELDS`, as
    `fetchnumpy` gives them), made into `Violation`s on first use: a report of a
    100k-draft EC4X log holds 5,000, read in 3 ms as columns where rows and objects
    took 10-13 ms, a tenth of an append of 1,000 drafts."""

    def __init__(self, columns: dict):
        self._columns = columns

    def __len__(self) -> int:
        return len(self._columns["severity"])

    def __getitem__(self, index):
        return self._items[index]

    def __eq__(self, other) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return repr(self._items)

    def severities(self) -> list[str]:
        return self._columns["severity"].tolist()

    @cached_property
    def _items(self) -> list[Violation]:
        return [Violation(*row) for row in zip(*(self._columns[name].tolist() for name in FIELDS))]


def line_of(locator: str, line: int | None = None) -> int | None:
    """The line a finding is about: given, or read from a `line N` locator."""
    if line is not None:
        return line
    match = LINE_LOCATOR.fullmatch(locator)
    return int(match.group(1)) if match else None
