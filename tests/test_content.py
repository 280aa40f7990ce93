"""A file's hash, size and complete lines, computed while the database opens: every
figure is checked against hashlib and a plain count over the same bytes."""

import hashlib
import threading

import pytest

from workbench import content as content_module
from workbench.content import FileHash, KnownSource
from workbench.worker import Worker


def _known(data: bytes) -> KnownSource:
    """What an ingest of `data` recorded."""
    complete = data.rfind(b"\n") + 1
    return KnownSource(
        1, hashlib.sha256(data).hexdigest(), len(data), complete, data[:complete].count(b"\n"), None, 0, 0
    )


def _content(path, known, expect_first: bool):
    with Worker() as pool:
        hashing = FileHash(path, path.stat().st_size, pool, threading.Event())
        if expect_first:
            hashing.expect(known)
        else:
            hashing._pending.result()  # the hash done before the database answered
            hashing.expect(known)
        return hashing, hashing.result()


LINES = b"".join(b'{"n": %d, "pad": "%s"}\n' % (n, b"x" * (n % 13)) for n in range(200))


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    monkeypatch.setattr(content_module, "BLOCK", 97)  # many blocks, cut mid-line


@pytest.mark.parametrize("expect_first", [True, False])
@pytest.mark.parametrize(
    "before, now",
    [
        (0, len(LINES)),  # a new file
        (1000, len(LINES)),  # grown, from the middle of a line
        (97 * 5, len(LINES) - 7),  # from a block's start, to a cut last line
        (LINES.index(b"\n", 500) + 1, len(LINES)),  # from a line's end
        (len(LINES), len(LINES)),  # unchanged
    ],
)
def test_a_grown_file_is_counted_from_where_it_was(tmp_path, before, now, expect_first):
    path = tmp_path / "log.jsonl"
    path.write_bytes(LINES[:now])
    known = _known(LINES[:before]) if before else None
    hashing, found = _content(path, known, expect_first)
    data = LINES[:now]
    assert found.sha256 == hashlib.sha256(data).hexdigest()
    assert found.size == now
    assert found.complete_bytes == hashing.complete_bytes == data.rfind(b"\n") + 1
    assert found.complete_lines == data.count(b"\n")
    assert found.prefix_sha256 == (hashlib.sha256(LINES[:before]).hexdigest() if known else None)


@pytest.mark.parametrize("expect_first", [True, False])
def test_a_file_changed_before_its_old_end_is_counted_whole(tmp_path, expect_first):
    path = tmp_path / "log.jsonl"
    changed = LINES.replace(b'"n": 3,', b'"n": 3.0, "more": 1,\n"x": 1,')  # two lines more
    path.write_bytes(changed)
    known = _known(LINES[:2000])
    _, found = _content(path, known, expect_first)
    assert found.prefix_sha256 == hashlib.sha256(changed[:2000]).hexdigest() != known.sha256
    assert found.complete_lines == changed.count(b"\n") == LINES.count(b"\n") + 1
    assert found.complete_bytes == len(changed)


def test_a_file_shorter_than_what_was_ingested_has_no_prefix(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(LINES[:500])
    _, found = _content(path, _known(LINES), expect_first=True)
    assert found.prefix_sha256 is None
    assert found.complete_lines == LINES[:500].count(b"\n")


def test_an_empty_file_and_one_without_a_newline(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"")
    _, found = _content(path, _known(b""), expect_first=True)
    assert (found.sha256, found.complete_bytes, found.complete_lines) == (hashlib.sha256().hexdigest(), 0, 0)
    assert found.prefix_sha256 == hashlib.sha256().hexdigest()
    path.write_bytes(b'{"cut": ')
    _, found = _content(path, _known(b""), expect_first=True)
    assert (found.size, found.complete_bytes, found.complete_lines) == (8, 0, 0)


def test_a_stopped_hash_reads_no_further(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(LINES)
    stop = threading.Event()
    stop.set()
    with Worker() as pool:
        hashing = FileHash(path, len(LINES), pool, stop)
        assert hashing._pending.result() == (hashlib.sha256().hexdigest(), 0)


def test_blocks_hashed_before_the_database_answers_are_counted_only_where_needed(tmp_path, monkeypatch):
    """What was ingested before arrives while the hash runs (here, at its sixth block):
    the blocks before it are not counted, those after are, and the figures hold."""
    path = tmp_path / "log.jsonl"
    path.write_bytes(LINES)
    before = 97 * 8 + 20
    known = _known(LINES[:before])
    with Worker() as pool:
        hashing = None
        made = []

        class Block(content_module._Block):
            def __init__(self, *args):
                super().__init__(*args)
                made.append(self)
                if len(made) == 6:
                    hashing.expect(known)

        monkeypatch.setattr(content_module, "_Block", Block)
        ready = threading.Event()
        pool.submit(ready.wait)  # the hash starts once `hashing` is set
        hashing = FileHash(path, len(LINES), pool, threading.Event())
        ready.set()
        found = hashing.result()
    hashed = hashing._blocks
    assert len(hashed) == -(-len(LINES) // 97) and hashed == made[: len(hashed)]
    assert [block.newlines is None for block in hashed] == [block.end <= before for block in hashed]
    assert found.complete_lines == LINES.count(b"\n")
    assert found.prefix_sha256 == known.sha256
