"""Opening a Stellaris `.sav` safely: a zip of `meta` and `gamestate`, refused before
anything is unpacked when its members declare more than `MAX_UNPACKED` bytes, or a
member more than `MAX_RATIO` times its packed size; every member read as a stream with
a byte cap, so a header that lies about sizes cannot exhaust memory, and a gamestate
whose first bytes plainly are not Clausewitz text refused before the rest is unpacked.
Member names are only compared, never used as paths."""

from __future__ import annotations

import re
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from workbench.errors import UnreadableFile, first_line
from workbench.paths import text_of

MAX_UNPACKED = 512 * 1024 * 1024
# Clausewitz text packs about 15 to 1 (the real 4.0.1 save: 52.6 MB in 3.6 MB); a member
# of over a megabyte that claims to unpack to more than MAX_RATIO times its packed size
# is a zip bomb, refused before a byte is unpacked.
MAX_RATIO = 100
RATIO_FROM = 1 << 20
READ_CHUNK = 8 << 20
# A gamestate is refused when its first SNIFF_BYTES plainly are not Clausewitz text, before
# the rest is unpacked (a zip of zeros would otherwise be inflated to its declared size).
SNIFF_BYTES = 4 << 20


@dataclass
class SaveFiles:
    meta: bytes
    gamestate: bytes


def open_save(path: Path, advance: Callable[[int], None] = lambda n: None) -> SaveFiles:
    """The `meta` and `gamestate` members, or UnreadableFile with one clear line."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as exc:
        raise UnreadableFile(f"{path}: not a Stellaris save: not a zip archive ({exc})") from None
    with archive:
        members = archive.infolist()
        declared = sum(info.file_size for info in members)
        if declared > MAX_UNPACKED:
            raise UnreadableFile(
                f"{path}: refused before unpacking: its members would unpack to {_mb(declared)}, "
                f"over the {_mb(MAX_UNPACKED)} bound"
            )
        for info in members:
            if info.file_size > RATIO_FROM and info.file_size > MAX_RATIO * max(info.compress_size, 1):
                raise UnreadableFile(
                    f"{path}: refused before unpacking: `{info.filename}` would unpack to "
                    f"{info.file_size / max(info.compress_size, 1):,.0f} times its packed size "
                    f"({_mb(info.file_size)} from {_mb(info.compress_size)}; a real save's gamestate is about 15 "
                    f"times), as a zip bomb does"
                )
        by_name: dict[str, zipfile.ZipInfo] = {}
        for info in members:
            by_name.setdefault(info.filename, info)
        if "gamestate" not in by_name:
            names = ", ".join(sorted(by_name)[:5]) or "nothing"
            raise UnreadableFile(f"{path}: not a Stellaris save: the zip has no `gamestate` member (it holds {names})")
        gamestate = _read_member(archive, by_name["gamestate"], MAX_UNPACKED, path, advance, not_a_gamestate)
        meta = b""
        if "meta" in by_name:
            meta = _read_member(archive, by_name["meta"], MAX_UNPACKED - len(gamestate), path, advance)
    return SaveFiles(meta, gamestate)


def _read_member(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    cap: int,
    path: Path,
    advance,
    refuse_start: Callable[[bytes], str | None] | None = None,
) -> bytes:
    """The member's bytes, streamed; refused as soon as they pass `cap`, or, with
    `refuse_start`, as soon as its first SNIFF_BYTES plainly are not what they should be.
    After that, one read asks for the rest of the declared size (one decompression, no
    copy of an honest member's bulk); then chunks, so a member longer than it declares
    is caught early."""
    chunks: list[bytes] = []
    total = 0
    declared = min(info.file_size, cap) + 1
    try:
        with archive.open(info) as stream:
            size = min(declared, SNIFF_BYTES) if refuse_start else declared
            while chunk := stream.read(size):
                total += len(chunk)
                if total > cap:
                    raise UnreadableFile(
                        f"{text_of(path)}: refused: `{info.filename}` unpacks past the {_mb(MAX_UNPACKED)} bound "
                        f"although its header declares {_mb(info.file_size)}"
                    )
                if refuse_start and len(chunks) == 0 and (why := refuse_start(chunk)):
                    raise UnreadableFile(
                        f"{text_of(path)}: not a Stellaris save: `{info.filename}` {why} "
                        f"in its first {_mb(len(chunk))} (it declares {_mb(info.file_size)})"
                    )
                chunks.append(chunk)
                advance(len(chunk) * info.compress_size // max(info.file_size, 1))
                size = max(declared - total, READ_CHUNK) if len(chunks) == 1 else READ_CHUNK
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError) as exc:
        raise UnreadableFile(f"{text_of(path)}: `{info.filename}` cannot be unpacked ({first_line(exc)})") from None
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


# How a gamestate begins: with one of its first top-level keys (the real 4.0.1 save:
# version, version_control_revision, name, date), and its `date` within the first few
# keys. Anything else is refused before it is unpacked further: 500 MB of `a=1` from a
# 510 KB zip is slow to parse and takes much memory.
FIRST_KEY = re.compile(rb"\s*(?:version|version_control_revision|name|date)\s*=")
DATE_KEY = re.compile(rb"(?:^|\n)\s*date\s*=\s*\"?\d+\.\d+\.\d+")
DATE_WITHIN = 64 * 1024


def not_a_gamestate(start: bytes) -> str | None:
    """Why the start of a gamestate plainly is not a Stellaris gamestate, or None."""
    if b"\x00" in start:
        return "holds NUL bytes"
    if b"=" not in start:
        return "has no `key=value`"
    if not FIRST_KEY.match(start):
        return (
            f"does not begin with `version=` (or `name=`, `date=`) as a Stellaris gamestate does "
            f"(it begins {start[:24]!r})"
        )
    if not DATE_KEY.search(start[:DATE_WITHIN]):
        return "has no `date=` among its first keys, as a Stellaris gamestate has"
    return None


def _mb(size: int) -> str:
    return f"{size / (1 << 20):,.0f} MB" if size >= 1 << 20 else f"{size:,} bytes"
