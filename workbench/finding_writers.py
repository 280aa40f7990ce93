"""Writing a file's findings: its violations (the first ones of each rule listed, the
rest counted in one row), its rejects, and taking out the decisions of lines read again."""

from __future__ import annotations

from workbench.catalog import REJECTS, VIOLATIONS, VIOLATIONS_PER_RULE
from workbench.violation import FIELDS, Violation, line_of


def add_violations(con, source_id: int, violations: list[Violation], whole_file: bool = False) -> None:
    """Store findings. A finding about the whole file (drift counted over all its lines)
    has no line: an append recomputes those, and keeps the ones about lines."""
    if not violations:
        return
    columns = {name: [getattr(v, name) for v in violations] for name in FIELDS}
    columns["line"] = [None if whole_file else line_of(v.locator, v.line) for v in violations]
    VIOLATIONS.insert_rows(con, {"source_id": [source_id] * len(violations), **columns})


def listed_per_rule(con, source_id: int) -> dict[str, int]:
    """How many rows of findings about lines each rule has in this file, listed one by one."""
    return dict(
        con.execute(
            "SELECT rule, count(*) FROM violations WHERE source_id = ? AND line IS NOT NULL "
            "AND count IS NULL GROUP BY rule",
            [source_id],
        ).fetchall()
    )


def add_counted(con, source_id: int, rule: str, severity: str, found: list[tuple[str, int | None, str]]) -> None:
    """The findings of `rule` past the first VIOLATIONS_PER_RULE of this file, each found
    (locator, line, field), counted in one row with those it counted before (an append's
    are added to the row of the lines before it, as one ingest of the whole file has)."""
    earlier = con.execute(
        "SELECT locators, lines, fields FROM violations WHERE source_id = ? AND rule = ? "
        "AND severity = ? AND count IS NOT NULL",
        [source_id, rule, severity],
    ).fetchall()
    if earlier:
        con.execute(
            "DELETE FROM violations WHERE source_id = ? AND rule = ? AND severity = ? AND count IS NOT NULL",
            [source_id, rule, severity],
        )
        found = [place for locators, lines, fields in earlier for place in zip(locators, lines, fields)] + found
    lines = [line for _, line, _ in found if line is not None]
    span = f"lines {min(lines)}-{max(lines)}" if lines else f"{len(found)} places"
    VIOLATIONS.insert_rows(
        con,
        {
            "source_id": [source_id],
            "locator": [span],
            "severity": [severity],
            "rule": [rule],
            "field": ["(many)"],
            "line": [min(lines) if lines else None],
            "count": [len(found)],
            "message": [
                f"{len(found):,} more findings of this rule ({span}); the first {VIOLATIONS_PER_RULE:,} of the "
                f"file are listed one by one"
            ],
            "locators": [[locator for locator, _, _ in found]],
            "lines": [[line for _, line, _ in found]],
            "fields": [[field for _, _, field in found]],
        },
    )


def add_rejects(con, source_id: int, rejects: list[tuple]) -> None:
    """`rejects` holds (locator, raw text) pairs, or (locator, raw text, line) where the
    locator does not name the line."""
    if not rejects:
        return
    REJECTS.insert_rows(
        con,
        {
            "source_id": [source_id] * len(rejects),
            "locator": [r[0] for r in rejects],
            "raw": [r[1] for r in rejects],
            "line": [line_of(r[0], r[2] if len(r) > 2 else None) for r in rejects],
        },
    )


def forget_decisions_from(con, source_id: int, line: int) -> None:
    """Remove a file's decisions located at its lines from `line` on (`line N`)."""
    con.execute(f"DELETE FROM decisions WHERE source_id = ? AND {DECISION_LINE} >= ?", [source_id, line])


# The line of a decision located `line N` (NULL for any other locator).
DECISION_LINE = "CASE WHEN starts_with(locator, 'line ') THEN TRY_CAST(substr(locator, 6) AS BIGINT) END"
