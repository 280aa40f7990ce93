"""A finding about a record: the one type every format reports through."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

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


def line_of(locator: str, line: int | None = None) -> int | None:
    """The line a finding is about: given, or read from a `line N` locator."""
    if line is not None:
        return line
    match = LINE_LOCATOR.fullmatch(locator)
    return int(match.group(1)) if match else None
