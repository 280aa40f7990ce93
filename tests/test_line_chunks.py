"""The bulk line reader (`jsonl.read_chunks`) against a plain line-by-line reading of
the same bytes, written here from the rules in `jsonl`'s docstring: lines end at LF (a
CR before it is dropped), are numbered from 1 with blank lines counted, a BOM before the
first line is skipped, blank lines are neither records nor rejects, and a line that is
not UTF-8 or longer than MAX_LINE_BYTES cannot be a record. Every chunk size, split
size and range of the file must give the same lines."""

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench import jsonl
from workbench.jsonl import line_batches, read_chunks

BLANKS = b" \t\r\n\f\v"


def reference(data: bytes, first_line: int = 1, limit: int = jsonl.MAX_LINE_BYTES):
    """(number, text or None, unreadable?) for each non-blank line, one at a time."""
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    found = []
    for number, line in enumerate(lines, first_line):
        if number == 1 and line.startswith(b"\xef\xbb\xbf"):
            line = line[3:]
        if not line.strip(BLANKS):
            continue
        if line.endswith(b"\r"):
            line = line[:-1]
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            found.append((number, None, True))
            continue
        found.append((number, text, len(line) > limit))
    return found


def bulk(path, chunk_bytes, start=0, end=None, first_line=1):
    found = []
    for chunk in read_chunks(path, start=start, end=end, first_line=first_line, chunk_bytes=chunk_bytes):
        found += [(int(n), chunk.text(i), False) for i, n in enumerate(chunk.numbers)]
        found += [(n, None if "UTF-8" in why else text, True) for n, text, why in chunk.unreadable]
        # The Arrow values are the lines' texts as they are, without line ends.
        assert chunk.raw.to_pylist() == [chunk.text(i) for i in range(len(chunk))]
    return sorted(found)


LINE = st.one_of(
    st.just(b'{"a": 1}'),
    st.just(b""),
    st.just(b"   "),
    st.just(b"\t\r"),
    st.just(b'{"b": "x"}\r'),
    st.just(b'  {"c": 2}'),
    st.just(b"[1, 2]"),
    st.just(b"\xff\xfe{}"),
    st.just(b'{"d": "\xc3\xa9"}'),
    st.just(b"x" * 40),
    st.just(b"{" + b"y" * 70 + b"}"),
    st.just(b"\xef\xbb\xbf{}"),
    # at the limit the tests set (60 bytes), with and without a CR, and one byte over
    st.just(b"{" + b"z" * 58 + b"}"),
    st.just(b"{" + b"z" * 58 + b"}\r"),
    st.just(b"{" + b"z" * 59 + b"}"),
)


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(LINE, max_size=30),
    st.booleans(),
    st.booleans(),
    st.integers(1, 200),
    st.integers(1, 64),
    st.integers(1, 40),
)
def test_chunks_give_the_lines_a_line_by_line_reading_gives(
    tmp_path, monkeypatch, lines, bom, final_lf, chunk_bytes, split_bytes, chunk_lines
):
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 60)
    monkeypatch.setattr(jsonl, "SPLIT_BYTES", split_bytes)
    monkeypatch.setattr(jsonl, "CHUNK_LINES", chunk_lines)
    data = (b"\xef\xbb\xbf" if bom else b"") + b"\n".join(lines) + (b"\n" if final_lf and lines else b"")
    path = tmp_path / "f.jsonl"
    path.write_bytes(data)
    assert bulk(path, chunk_bytes) == reference(data, limit=60)


@settings(
    max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(LINE, min_size=1, max_size=20), st.data())
def test_a_range_of_the_file_is_read_from_its_own_first_line(tmp_path, lines, data):
    content = b"\n".join(lines) + b"\n"
    ends = [i + 1 for i, byte in enumerate(content) if byte == ord("\n")]
    start = data.draw(st.sampled_from([0, *ends[:-1]]))
    first_line = content[:start].count(b"\n") + 1
    path = tmp_path / "f.jsonl"
    path.write_bytes(content)
    expected = reference(content[start:], first_line)
    assert bulk(path, data.draw(st.integers(1, 100)), start=start, end=len(content), first_line=first_line) == expected


def test_a_file_still_being_written_is_read_up_to_the_end_given(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": 3')
    assert [int(n) for c in read_chunks(path, end=18) for n in c.numbers] == [1, 2]
    assert [int(n) for c in read_chunks(path) for n in c.numbers] == [1, 2, 3]


@pytest.mark.parametrize("chunk_bytes", [1, 7, 1 << 20])
def test_batches_for_line_by_line_formats_keep_every_line(tmp_path, monkeypatch, chunk_bytes):
    monkeypatch.setattr(jsonl, "CHUNK_BYTES", chunk_bytes)
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a": 1}\n\n\xff\n{"s": "\\ud800"}\n{"b": 2}\r\n')
    (batch,) = line_batches(path)
    assert batch.numbers == [1, 3, 4, 5]
    assert sorted(batch.unreadable.values())[0].startswith("it holds a lone UTF-16 surrogate")
    assert set(batch.unreadable) == {1, 2} and batch.texts[3] == '{"b": 2}'


@pytest.mark.parametrize("shift", [30, 5, 2])
def test_string_views_are_the_texts_of_their_byte_ranges(monkeypatch, shift):
    # Short values live in their views, long ones point into a buffer; with a small
    # buffer step a chunk spans many buffers, as one over 2 GiB does.
    monkeypatch.setattr(jsonl, "_VIEW_BUFFER_SHIFT", shift)
    data = b"".join(
        [
            b"{}\n",
            b"x" * 12 + b"\n",
            b"y" * 13 + b"\r\n",
            "\u00e9t\u00e9 \u2603".encode() * 3 + b"\n",
            b"\n",
            b'{"k": "' + b"v" * 100 + b'"}',
        ]
    )
    starts, ends, at = [], [], 0
    for line in data.split(b"\n"):
        starts.append(at)
        ends.append(at + len(line) - line.endswith(b"\r"))
        at += len(line) + 1
    expected = [data[a:b].decode("utf-8") for a, b in zip(starts, ends)]
    views = jsonl.string_views(data, np.array(starts), np.array(ends))
    views.validate(full=True)
    assert views.to_pylist() == expected
    # DuckDB reads the views as they are.
    lines = pa.table({"raw": views})  # noqa: F841 (DuckDB reads it by name)
    assert [text for (text,) in duckdb.sql("SELECT raw FROM lines").fetchall()] == expected


def test_a_chunk_ends_after_chunk_lines_lines(tmp_path, monkeypatch):
    # Tiny lines: the chunk is cut by its count of lines, not its bytes, and the next
    # chunk goes on from the next line.
    monkeypatch.setattr(jsonl, "CHUNK_LINES", 4)
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"{}\n" * 10 + b"{}")
    chunks = list(read_chunks(path))
    assert [[int(n) for n in c.numbers] for c in chunks] == [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11]]
    assert [c.size for c in chunks] == [12, 12, 8]


def test_string_views_of_no_lines():
    assert jsonl.string_views(b"", np.zeros(0, np.int64), np.zeros(0, np.int64)).to_pylist() == []
