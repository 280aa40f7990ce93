"""Random corruption of a valid replay never crashes and never loses a line."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench
from tests.damage.events import PAYLOADS, event

VALID = [json.dumps(event(kind)).encode() for kind in sorted(PAYLOADS)]


def truncate(line: bytes, data) -> bytes:
    return line[: data.draw(st.integers(0, len(line)))]


def flip_byte(line: bytes, data) -> bytes:
    i = data.draw(st.integers(0, len(line) - 1))
    return line[:i] + bytes([line[i] ^ data.draw(st.integers(1, 255))]) + line[i + 1 :]


def invalid_utf8(line: bytes, data) -> bytes:
    i = data.draw(st.integers(0, len(line)))
    return line[:i] + b"\xff\xfe" + line[i:]


def delete_brace(line: bytes, data) -> bytes:
    braces = [i for i, c in enumerate(line) if c in b"{}[]"]
    i = data.draw(st.sampled_from(braces))
    return line[:i] + line[i + 1 :]


def huge_number(line: bytes, data) -> bytes:
    return line.replace(b'"turn": 1', b'"turn": 1e999999', 1).replace(b'"pot": 4', b'"pot": -1e999999', 1)


def deep_nesting(line: bytes, data) -> bytes:
    depth = data.draw(st.integers(50, 5000))
    return line[:-1] + b', "deep": ' + b"[" * depth + b"]" * depth + b"}"


def long_line(line: bytes, data) -> bytes:
    return line[:-1] + b', "blob": "' + b"x" * data.draw(st.integers(1 << 20, 3 << 20)) + b'"}'


def blank_noise(line: bytes, data) -> bytes:
    return data.draw(st.sampled_from([b"", b"   ", b"\t", b"\x00", b"\x1c", b"\xc2\x85"]))


CORRUPTIONS = [truncate, flip_byte, invalid_utf8, delete_brace, huge_number, deep_nesting, long_line, blank_noise]


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
@pytest.mark.slow
def test_corrupted_lines_are_all_accounted_for(tmp_path_factory, data):
    lines = list(VALID)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(lines) - 1))
        lines[i] = data.draw(st.sampled_from(CORRUPTIONS))(lines[i], data)
    path = tmp_path_factory.mktemp("c") / "g.events.jsonl"
    path.write_bytes(b"\n".join(lines) + data.draw(st.sampled_from([b"", b"\n", b"\r\n"])))
    (file,) = workbench.validate([path]).files
    assert file.status == "ingested"
    # Blank: only ASCII whitespace (bytes.strip's own set), not the reader's BLANK constant.
    non_blank = [line for line in path.read_bytes().split(b"\n") if line.strip()]
    assert file.records + file.rejected == len(non_blank)
    errors = {v.locator for v in file.violations if v.severity == "error"}
    assert sum(v.rule == "not_a_json_object" for v in file.violations) == file.rejected
    assert all(loc.startswith("line ") for loc in errors)
