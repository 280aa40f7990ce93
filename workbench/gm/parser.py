"""Raw game-master text -> the parts of a response, before any validation.

A response is one of four kinds:
- `json`: the whole text is a JSON object (`narrative`, `location`, `suggestedActions`, ...);
- `character`: the whole text is a character-generation object (`name`, `attributes`);
- `mixed`: narrative and markers with a `"playerDecision": {...}` object after them;
- `markers`: narrative with the markers LOCATION, ACQUIRED_ITEMS, REMOVED_ITEMS,
  SUGGESTED_ACTIONS and COMBAT, on their own lines or inline inside sentences.

Markers are found with one regular expression and read left to right, each value
ending where its brackets close, its line ends or the next marker starts, so a
response is read in a single pass. Everything a marker consumed is cut from the
narrative; a sentence interrupted by markers is rejoined with one space
(`Dusty ACQUIRED_ITEMS: REMOVED_ITEMS: misses the shopkeeper!` -> `Dusty misses the
shopkeeper!`).

A missing marker leaves its field out, and validation applies the defaults of
`GmResponse`: no location (NULL: the game keeps the player where they were), no
combat, empty item lists, no suggested actions, no decision.

Malformed JSON is repaired with json-repair; each repair (or failure to repair) is
recorded as a `JsonProblem` for the rules to report.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import json_repair

from workbench.gm.models import Character, GmResponse, known_keys

MARKER_FIELDS = {
    "LOCATION": "location",
    "ACQUIRED_ITEMS": "acquired_items",
    "REMOVED_ITEMS": "removed_items",
    "SUGGESTED_ACTIONS": "suggested_actions",
    "COMBAT": "combat_opponent",
    "playerDecision": "player_decision",
}
ITEM_FIELDS = ("acquired_items", "removed_items")  # one line each; several markers add up
JSON_FIELDS = ("suggested_actions", "player_decision")  # may span lines
NAME_FIELDS = ("location", "combat_opponent")

# `**LOCATION:**` is how some models write a marker in Markdown. The decision key
# counts only when an object follows it.
MARKER = re.compile(
    r"(?<![A-Za-z0-9_])(?:\*\*)?(?P<name>LOCATION|ACQUIRED_ITEMS|REMOVED_ITEMS|SUGGESTED_ACTIONS|COMBAT)"
    r"(?:\*\*)?[ \t]*:(?:\*\*)?"
    r'|"?(?P<decision>playerDecision)"?[ \t]*:(?=\s*\{)'
)
SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
STARTS_WITH_PUNCTUATION = re.compile(r"[.,;:!?)]")
FENCE_LINE = re.compile(r"^\s*```[\w-]*\s*$")
NOTHING = {"", "none", "nothing", "n/a", "-", "[]"}
RESPONSE_KEYS = known_keys(GmResponse) | known_keys(Character)


@dataclass(frozen=True)
class JsonProblem:
    field: str  # the column (`suggested_actions`) or `text` for a whole-JSON response
    problem: str  # what the strict JSON parser said
    repaired: bool  # json-repair gave a value of the expected shape


@dataclass
class Parsed:
    kind: str  # markers | mixed | json | character
    fields: dict[str, Any]  # raw values, by GmResponse field (or `character`)
    json_problems: list[JsonProblem] = field(default_factory=list)


def parse(text: str) -> Parsed:
    """The kind and raw parts of one response's text."""
    return _whole_json(text) or _markers(text)


def read_json(text: str) -> tuple[Any, str | None]:
    """The value of `text`, and what was wrong with it when it had to be repaired."""
    try:
        return json.loads(text, parse_constant=lambda name: None), None
    except json.JSONDecodeError as exc:
        problem = f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
    except ValueError:  # Python reads an integer of at most 4,300 digits
        problem = "an integer of more digits than can be read (over 4,300)"
    except RecursionError:
        return None, "JSON nested too deeply to read"
    try:
        return json_repair.repair_json(text, return_objects=True, skip_json_loads=True), problem
    except RecursionError:
        return None, f"{problem}; nested too deeply to repair"


# --- whole-JSON responses ----------------------------------------------------------


def _whole_json(text: str) -> Parsed | None:
    body = _without_fence(text.strip())
    if not body.startswith("{"):
        return None
    value, problem = read_json(body)
    if not isinstance(value, dict) or not value.keys() & RESPONSE_KEYS:
        return None  # braces around narrative, not a JSON response
    problems = [JsonProblem("text", problem, True)] if problem else []
    if "attributes" in value:
        return Parsed("character", {"character": value}, problems)
    return Parsed("json", value, problems)


def _without_fence(body: str) -> str:
    """The inside of a ```json ... ``` block, or `body` unchanged."""
    lines = body.splitlines()
    if len(lines) >= 2 and FENCE_LINE.match(lines[0]) and FENCE_LINE.match(lines[-1]):
        return "\n".join(lines[1:-1]).strip()
    return body


# --- markers -----------------------------------------------------------------------


@dataclass
class _Reader:
    """State of one left-to-right pass over a response's markers."""

    text: str
    fields: dict[str, Any] = field(default_factory=dict)
    problems: list[JsonProblem] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)  # cut from the narrative
    end: int = 0  # where the last consumed value ended
    own_line: bool = False  # whether the last marker started its line


def _markers(text: str) -> Parsed:
    reader = _Reader(text)
    matches = list(MARKER.finditer(text))
    for number, match in enumerate(matches):
        if match.start() < reader.end:
            continue  # inside a value already read (a JSON string that mentions a marker)
        limit = matches[number + 1].start() if number + 1 < len(matches) else len(text)
        _read_marker(reader, match, limit)
    fields = reader.fields
    fields["narrative"] = narrative(text, reader.spans)
    if fields.get("combat_opponent") is not None:
        fields["combat"] = True
    kind = "mixed" if "player_decision" in fields else "markers"
    return Parsed(kind, fields, reader.problems)


def _read_marker(reader: _Reader, match: re.Match, limit: int) -> None:
    text = reader.text
    name = MARKER_FIELDS[match["name"] or match["decision"]]
    line_start = text.rfind("\n", 0, match.start()) + 1
    before = text[max(line_start, reader.end) : match.start()]
    # A marker is on its own line when only whitespace or other markers precede it there.
    own_line = not before.strip() and (reader.end <= line_start or reader.own_line)
    end, value = _read_value(reader, name, match.end(), own_line, limit)
    reader.spans.append((match.start(), end))
    reader.end, reader.own_line = end, own_line
    if value is None:
        return
    if name in ITEM_FIELDS and isinstance(value, list) and isinstance(reader.fields.get(name), list):
        reader.fields[name] = reader.fields[name] + value
    else:
        reader.fields[name] = value


def _read_value(reader: _Reader, name: str, start: int, own_line: bool, limit: int) -> tuple[int, Any]:
    """Where the marker's value ends, and the value (None: the marker says nothing)."""
    text = reader.text
    first = _skip_space(text, start)
    line_end = _line_end(text, start)
    # `LOCATION: [Dark Alley]` is a name in the template's brackets, not a list.
    opening = "{" if name in NAME_FIELDS else "[{"
    if first < len(text) and text[first] in opening and (first < line_end or name in JSON_FIELDS):
        return _read_bracketed(reader, name, first, limit)
    stop = min(line_end, limit)
    region = text[start:stop]
    if name in NAME_FIELDS:
        if not own_line:  # inline: the name ends with its sentence
            sentence_end = SENTENCE_END.search(region)
            region = region[: sentence_end.end()] if sentence_end else region
        return start + len(region), _name(region)
    if not own_line:
        return start, None  # an inline list marker followed by narrative: nothing to read
    if region.strip().lower() in NOTHING:
        return stop, None if not region.strip() else []
    return stop, _split_items(region) if name in ITEM_FIELDS else region.strip()


def _read_bracketed(reader: _Reader, name: str, first: int, limit: int) -> tuple[int, Any]:
    text = reader.text
    line_end = _line_end(text, first)
    close = _closing_bracket(text, first, line_end if name in ITEM_FIELDS else len(text))
    if close is None:  # truncated: the value runs to the next marker (or line end for items)
        end = min(limit, line_end) if name in ITEM_FIELDS else limit
        raw, unclosed = text[first:end].rstrip(), True
    else:
        end = close + 1
        raw, unclosed = text[first:end], False
        if name in JSON_FIELDS and text[end : end + 1] == ",":
            end += 1  # the comma after a JSON member in the mixed format
    if name in ITEM_FIELDS and '"' not in raw:
        _note_unclosed(reader, name, raw, unclosed)
        return end, _split_items(raw.strip("[]"))
    return end, _json_value(reader, name, raw)


def _json_value(reader: _Reader, name: str, raw: str) -> Any:
    value, problem = read_json(raw)
    if problem is None:
        return value
    expected = dict if name in ("player_decision", "location", "combat_opponent") else list
    repaired = isinstance(value, expected)
    reader.problems.append(JsonProblem(name, problem, repaired))
    return value if repaired else None


def _note_unclosed(reader: _Reader, name: str, raw: str, unclosed: bool) -> None:
    if unclosed:
        reader.problems.append(JsonProblem(name, f"no closing `]` after {raw[:40]!r}", True))


def _closing_bracket(text: str, start: int, stop: int) -> int | None:
    """Index of the bracket closing the one at `start`, ignoring brackets in JSON strings."""
    depth, in_string, escaped = 0, False, False
    for index in range(start, stop):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return index
    return None


def _split_items(region: str) -> list[str]:
    """`Rope, Lantern` (the seed's comma-separated form) -> ['Rope', 'Lantern']."""
    items = [item.strip().strip("'\"`*").strip() for item in region.split(",")]
    return [item for item in items if item and item.lower() not in NOTHING]


def _name(region: str) -> Any:
    stripped = region.strip()
    if stripped.startswith("{"):
        value, _ = read_json(stripped)
        return value if isinstance(value, dict) else stripped
    # Models copy the template's brackets (`LOCATION: [Dark Alley]`) and end sentences.
    name = stripped.strip("[]*\"'` ").rstrip(".!?").strip()
    return name or None


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index].isspace():
        index += 1
    return index


def _line_end(text: str, index: int) -> int:
    end = text.find("\n", index)
    return len(text) if end < 0 else end


# --- the narrative -----------------------------------------------------------------


def narrative(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` without the marker spans, interrupted sentences rejoined with one space."""
    pieces, position = [], 0
    for start, end in _blocks(text, spans):
        kept = text[position:start]
        rest_of_line = text[end : _line_end(text, end)]
        if rest_of_line.strip():
            # The sentence goes on after the markers (`Dusty ACQUIRED_ITEMS: misses`),
            # possibly after a name line and a block of marker lines: join the two.
            kept = kept.rstrip()
            position = end + len(rest_of_line) - len(rest_of_line.lstrip())
            gap = "" if not kept or STARTS_WITH_PUNCTUATION.match(text, position) else " "
            pieces += [kept, gap]
        else:
            kept = kept.rstrip(" \t")
            pieces.append(kept)
            # Marker lines are removed whole, so they leave no blank line behind.
            starts_line = not kept or kept.endswith("\n")
            position = end + len(rest_of_line) + 1 if starts_line else end
    pieces.append(text[position:])
    return _tidy("".join(pieces))


def _blocks(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Consecutive spans separated only by whitespace, merged."""
    blocks: list[tuple[int, int]] = []
    for start, end in spans:
        if blocks and not text[blocks[-1][1] : start].strip():
            blocks[-1] = (blocks[-1][0], end)
        else:
            blocks.append((start, end))
    return blocks


def _tidy(text: str) -> str:
    """Trailing spaces, code fences and runs of blank lines left by the cut markers, removed."""
    lines: list[str] = []
    blank = False
    for line in text.split("\n"):
        line = line.rstrip()
        if FENCE_LINE.match(line):
            continue
        if not line:
            blank = bool(lines)
            continue
        if blank:
            lines.append("")
            blank = False
        lines.append(line)
    return "\n".join(lines)
