"""What an ingest or a validation says of each file: its status, counts and findings
(`FileReport`), and of the whole run (`Report`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench import catalog
from workbench.violation import FIELDS, StoredViolations, Violation


@dataclass
class FileReport:
    path: str
    format: str | None
    status: str  # ingested | appended | replaced | unchanged | failed | missing | pruned
    records: int = 0
    rejected: int = 0
    violations: list[Violation] = field(default_factory=list)
    source_id: int | None = None
    message: str = ""
    lines_added: int = 0  # when appended: lines read after the ones already in

    def stored(self, violations: StoredViolations) -> FileReport:
        """This report, its violations those read back from the database: kept as
        columns until `violations` is first read, then a list like any other."""
        del self.violations
        self._stored = violations
        return self

    def __getattr__(self, name: str):
        # Only reached for an attribute not set: `violations` while they are stored.
        stored = self.__dict__.get("_stored")
        if name != "violations" or stored is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self.violations = stored.to_list()
        del self._stored
        return self.violations

    def severities(self) -> list[str]:
        """The severity of each violation, without making stored ones objects."""
        stored = self.__dict__.get("_stored")
        if stored is not None and "violations" not in self.__dict__:
            return stored.severities()
        return [v.severity for v in self.violations for _ in range(v.count or 1)]

    def severity_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(catalog.SEVERITIES, 0)
        for severity in self.severities():
            counts[severity] += 1
        return counts

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "format": self.format,
            "status": self.status,
            "records": self.records,
            "rejected": self.rejected,
            "message": self.message,
            # The documented keys (`FIELDS`): `line` is said by the locator already.
            "violations": [
                {**{name: getattr(v, name) for name in FIELDS}, "count": v.count or 1} for v in self.violations
            ],
            "lines_added": self.lines_added,
        }


@dataclass
class Report:
    files: list[FileReport] = field(default_factory=list)

    @property
    def failed(self) -> list[FileReport]:
        return [f for f in self.files if f.status == "failed"]

    def has_errors(self) -> bool:
        return any("error" in f.severities() for f in self.files)

    def to_dict(self) -> dict:
        return {"files": [f.to_dict() for f in self.files]}
