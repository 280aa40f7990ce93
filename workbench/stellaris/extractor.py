"""Extractor outputs: `get_<tool>.json` (one output of the tool the file names) and
bundles `*.briefing.json` (`{"get_resources": {...}, ...}`, or a full briefing).

One record is one tool output. Each is checked against its model (`findings.py`), the
outputs of one file together against the invariants (`invariants.py`), and a file
whose outputs carry a valid date also gives a snapshot with its economy.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from workbench.jsonl import lone_surrogate
from workbench.paths import text_of
from workbench.schema import check_paths
from workbench.stellaris import invariants
from workbench.stellaris.dates import day_number
from workbench.stellaris.findings import check_output, tool_locator
from workbench.stellaris.invariants import dig
from workbench.stellaris.models import TOOLS
from workbench.stellaris.tables import SNAPSHOTS, Extraction, resource_rows, snapshot_row, status_figures
from workbench.violation import Violation

TOOL_FILE = re.compile(r"(?:^|.*[._-])(get_[a-z0-9_]+|search|search_save_file)\.json$", re.IGNORECASE)
BUNDLE_SUFFIX = ".briefing.json"
BUNDLE_LOCATOR = "bundle"
# Where a full briefing holds the `get_player_status` figures it shares.
BRIEFING_FIGURES = {
    "player_id": "meta.player_id",
    "empire_name": "meta.empire_name",
    "military_power": "military.military_power",
    "fleet_count": "military.fleet_count",
    "fleet_size": "military.fleet_size",
    "economy_power": "economy.economy_power",
    "tech_power": "economy.tech_power",
}
check_paths(TOOLS["get_full_briefing"], BRIEFING_FIGURES, "briefing figure")


def tool_named_by(path: Path) -> str | None:
    """`get_planets.json`, `2312.01.01.get_planets.json` -> "get_planets"."""
    match = TOOL_FILE.match(path.name)
    return match.group(1).lower() if match else None


def is_bundle(path: Path) -> bool:
    return path.name.lower().endswith(BUNDLE_SUFFIX)


def claims(path: Path) -> bool:
    return is_bundle(path) or tool_named_by(path) is not None


def read(path: Path, series: str) -> Extraction:
    """A file named by a tool holds that tool's output; any other (a bundle, or a file
    read with `--format stellaris`) holds tool outputs by name or a full briefing."""
    tool = None if is_bundle(path) else tool_named_by(path)
    whole = tool_locator(tool) if tool else BUNDLE_LOCATOR
    document, problem = _parse(path.read_bytes())
    if problem:
        return _rejected(
            whole,
            document,
            "invalid_json",
            f"expected a JSON document; found a file that cannot be read: {problem}; kept in `rejects`",
        )
    if tool:
        return _check({tool: document}, [], path, series)
    if not isinstance(document, dict):
        return _rejected(
            whole,
            json.dumps(document),
            "not_a_bundle",
            f"expected a JSON object of tool outputs or a full briefing; found a JSON "
            f"{type(document).__name__}; kept in `rejects`",
        )
    outputs, drift = _split_bundle(document)
    return _check(outputs, drift, path, series)


def _parse(raw: bytes):
    """(document, None) or (the raw text, why it is not JSON)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        why = f"it is not UTF-8 text ({exc.reason} at byte {exc.start})"
        return raw.decode("utf-8", errors="backslashreplace"), why
    try:
        document = strict_json(text)
    except json.JSONDecodeError as exc:
        return text, f"it is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    except ValueError as exc:
        return text, f"it is not valid JSON ({exc})"
    except RecursionError:
        return text, "it is nested too deeply to parse"
    if found := lone_surrogate(text):
        return text, f"it holds a lone UTF-16 surrogate ({found}): legal JSON, but not text"
    return document, None


def strict_json(text: str):
    """`json.loads` without the extensions JSON does not have (NaN, Infinity)."""
    return json.loads(text, parse_constant=_not_json)


def _not_json(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _rejected(locator: str, raw: str, rule: str, message: str) -> Extraction:
    return Extraction(
        violations=[Violation(locator, "error", rule, "(record)", message)],
        rejects=[(locator, raw)],
        records=0,
        rejected=1,
    )


def _split_bundle(document: dict) -> tuple[dict, list[Violation]]:
    """A bundle's tool outputs by tool name. A bundle without tool keys is a full
    briefing; other keys beside tool outputs are drift."""
    tool_keys = [k for k in document if k in TOOLS or k.startswith("get_")]
    if not tool_keys:
        return {"get_full_briefing": document}, []
    drift = [
        Violation(BUNDLE_LOCATOR, "info", "undocumented_key", key, f"bundle key `{key}` names no tool; kept")
        for key in document
        if key not in tool_keys
    ]
    return {k: document[k] for k in tool_keys}, drift


def _check(outputs: dict, violations: list[Violation], path: Path, series: str) -> Extraction:
    extraction = Extraction(violations=violations, records=len(outputs))
    add_outputs(extraction, outputs, "extractor")
    known = {tool: payload for tool, payload in outputs.items() if tool in TOOLS}
    extraction.violations += invariants.check_bundle(known)
    _add_snapshot(extraction, known, path, series)
    return extraction


def add_outputs(extraction: Extraction, outputs: dict, origin: str) -> None:
    """Each tool's output checked against its schema: its findings, and its row of
    `stellaris_tool_outputs` read from `origin` (`extractor`, `save`)."""
    for tool, payload in outputs.items():
        valid, found = check_output(tool, payload)
        extraction.violations += found
        extraction.tool_outputs.append(
            {
                "locator": tool_locator(tool),
                "tool": tool,
                "origin": origin,
                "known": tool in TOOLS,
                "valid": valid,
                "payload": json.dumps(payload),
            }
        )


def _add_snapshot(extraction: Extraction, outputs: dict, path: Path, series: str) -> None:
    """A snapshot (and its economy) when the outputs say which date they describe."""
    status = outputs.get("get_player_status")
    briefing = outputs.get("get_full_briefing") or outputs.get("get_snapshot")
    date = _first_valid_date(dig(status, "date", None), dig(briefing, "meta.date", None))
    if date is None:
        return
    tool = None if is_bundle(path) else tool_named_by(path)
    locator = tool_locator(tool) if tool else BUNDLE_LOCATOR
    wars = dig(outputs.get("get_wars"), "wars", None)
    extraction.snapshots.append(
        snapshot_row(
            locator,
            "extractor",
            series,
            text_of(path.name),
            date,
            **_figures(status, briefing),
            wars_count=len(wars) if isinstance(wars, list) else None,
            at_war=bool(wars) if isinstance(wars, list) else None,
        )
    )
    resources = outputs.get("get_resources")
    extraction.resources += resource_rows(
        locator,
        date,
        income=dig(resources, "monthly_income", None),
        expenses=dig(resources, "monthly_expenses", None),
        net=dig(resources, "net_monthly", None) or dig(briefing, "economy.net_monthly", None),
        stockpiles=dig(resources, "stockpiles", None),
    )


def _figures(status, briefing) -> dict:
    """The snapshot's `get_player_status` figures, each taken from the full briefing
    where the status lacks it (or holds no value of its column's type)."""
    return {
        name: _first(SNAPSHOTS.column(name).type, value, _briefing_figure(briefing, name))
        for name, value in status_figures(status).items()
    }


def _briefing_figure(briefing, name: str):
    return dig(briefing, BRIEFING_FIGURES[name], None) if name in BRIEFING_FIGURES else None


def _first(duck_type: str, *candidates):
    if duck_type == "VARCHAR":
        return _text(*candidates)
    return _int(*candidates) if duck_type == "BIGINT" else _float(*candidates)


def _first_valid_date(*candidates) -> str | None:
    return next((c for c in candidates if isinstance(c, str) and day_number(c) is not None), None)


def _number(*candidates) -> float | None:
    return next((c for c in candidates if isinstance(c, (int, float)) and not isinstance(c, bool)), None)


def _int(*candidates) -> int | None:
    value = _number(*candidates)
    return int(value) if value is not None else None


def _float(*candidates) -> float | None:
    value = _number(*candidates)
    return float(value) if value is not None else None


def _text(*candidates) -> str | None:
    return next((c for c in candidates if isinstance(c, str)), None)
