"""What a path is: the one place that turns the user's arguments into files, and a file
name into text.

An argument that names an existing file or folder is that path, whatever characters it
holds (`game[1].events.jsonl`); only one that names nothing is taken as a glob. A file
name that is not valid UTF-8 is still read; wherever it is shown or stored, its bad
bytes are written as `\\xNN` (and its backslashes doubled: see `text_of`).
"""

from __future__ import annotations

import errno
import functools
import glob
import io
import os
import re
import stat
from pathlib import Path

from workbench.errors import UnreadableFile, WorkbenchError

KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def text_of(path: str | os.PathLike) -> str:
    """A path (or a file name) as text: as it is when it is UTF-8 with no backslash;
    otherwise each byte that is not UTF-8 as `\\xNN` and each backslash doubled, so that
    two different names are never one text (a name of the byte 0xff and one of the four
    characters `\\xff` are `\\xff` and `\\\\xff`), and a file is one source."""
    raw = os.fsencode(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and "\\" not in text:
        return text
    return raw.replace(b"\\", b"\\\\").decode("utf-8", "backslashreplace")


def is_text(text: str) -> bool:
    """Text a database can hold, as UTF-8: no lone surrogate (an argument's byte that is
    not UTF-8, as Python holds it, or a JSON `"\\ud800"`)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_tree(path: str | os.PathLike) -> None:
    """A Parquet tree's path as DuckDB and Spark both take it, or one line saying why not:
    UTF-8 (both name files in it) and without a backslash (DuckDB takes one for a folder
    separator: `la\\ke` would be written as `la/ke`)."""
    text = os.fspath(path)
    if not is_text(text):
        raise WorkbenchError(
            f"the tree's path {text_of(path)} is not UTF-8 text, which Spark and DuckDB name "
            f"files in: choose another folder"
        )
    if "\\" in text:
        raise WorkbenchError(
            f"the tree's path {text_of(path)} holds a backslash, which DuckDB takes for a folder "
            f"separator: choose another folder"
        )


def path_of(text: str) -> bytes:
    """The file name `text_of` wrote as `text`, as bytes (its inverse)."""
    if "\\" not in text:
        return os.fsencode(text)
    out, at = bytearray(), 0
    while at < len(text):
        if text.startswith("\\\\", at):
            out += b"\\"
            at += 2
        elif text.startswith("\\x", at) and len(text) >= at + 4:
            out.append(int(text[at + 2 : at + 4], 16))
            at += 4
        else:
            out += text[at].encode()
            at += 1
    return bytes(out)


def under(path: str, roots: list[str]) -> bool:
    """Whether the path (as text) is one of `roots` or inside one of them; for a root
    that is a glob (`Pattern`), whether the glob matches it or a folder it is in."""
    return any(
        root.covers(path)
        if isinstance(root, Pattern)
        else path == root or path.startswith(root.rstrip(os.sep) + os.sep)
        for root in roots
    )


class Pattern(str):
    """A glob the user gave (absolute, as text): what it covers is what `expand_paths`
    finds through it, the files it matches and those in the folders it matches (`*`
    and `?` within a name, `**` any folders), not all of the folder before it."""

    @functools.cached_property
    def regex(self) -> re.Pattern:
        segments = self.split(os.sep)
        parts = [
            (".*" if last else f"(?:[^{os.sep}]*{os.sep})*")
            if segment == "**"
            else _name_regex(segment) + ("" if last else re.escape(os.sep))
            for last, segment in ((n == len(segments) - 1, segment) for n, segment in enumerate(segments))
        ]
        return re.compile("".join(parts), re.DOTALL)

    def covers(self, path: str) -> bool:
        at = len(path)
        while at > 0:  # the path, then each folder it is in
            if self.regex.fullmatch(path, 0, at):
                return True
            at = path.rfind(os.sep, 0, at)
        return False


def _name_regex(segment: str) -> str:
    """A glob of one name as a regular expression (`glob`'s own: `*`, `?`, `[...]`)."""
    out, at = [], 0
    while at < len(segment):
        char = segment[at]
        if char == "*":
            out.append(f"[^{os.sep}]*")
        elif char == "?":
            out.append(f"[^{os.sep}]")
        elif (
            char == "[" and (end := segment.find("]", at + 2 if segment[at + 1 : at + 2] in ("!", "]") else at + 1)) > 0
        ):
            inside = segment[at + 1 : end]
            inside = "^" + inside[1:] if inside.startswith("!") else inside
            out.append("[" + inside.replace("\\", "\\\\") + "]")
            at = end
        else:
            out.append(re.escape(char))
        at += 1
    return "".join(out)


def roots_of(paths) -> list[str]:
    """The places the user's arguments name, as text, both as given (absolute) and with
    links followed; a glob is a `Pattern` (it covers what it matches)."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    roots: list[str] = []  # a Pattern is a str that also covers what it matches
    for raw in paths:
        text = os.fsdecode(raw)
        if not os.path.lexists(text) and glob.has_magic(text):
            roots += [Pattern(text_of(os.path.abspath(text))), Pattern(text_of(Path(text).resolve()))]
            continue
        roots += [text_of(os.path.abspath(text)), text_of(Path(text).resolve())]
    return sorted(set(roots))


def name_without(path: Path, suffix: str) -> str:
    """A file's name without `suffix` (`saloon-1.gm.jsonl` -> `saloon-1`), or without its
    last extension when it does not end so, as text: the game or episode it holds."""
    name = text_of(path.name)
    return name[: -len(suffix)] if name.endswith(suffix) else text_of(path.stem)


def game_of_file(path: Path, suffix: str) -> str:
    """The game a file holds where its records name none (an Arena episode, a game-master
    session): the file's name without `suffix`, within its run, the folder it is in
    (`run1/ep1.decisions.jsonl` -> `run1/ep1`). Two runs' `ep1` are two games; the key
    is the same however the file is named on the command line."""
    folder = text_of(Path(os.path.abspath(path)).parent.name)
    name = name_without(path, suffix)
    return f"{folder}/{name}" if folder else name


def expand_paths(paths) -> list[tuple[Path, bool]]:
    """Every file named by `paths`, with whether the user named it directly.

    Folders are walked recursively (regular files only, hidden ones left out); globs are
    expanded. An argument that matches nothing is an error before anything is read.
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    found: list[tuple[Path, bool]] = []
    for raw in paths:
        text = os.fsdecode(raw)
        matches = [text] if os.path.lexists(text) else sorted(glob.glob(text, recursive=True))
        if not matches:
            raise WorkbenchError(f"no such file or folder: {text_of(text)}")
        for match in matches:
            path = Path(match)
            _refuse_a_loop(path)
            if path.is_dir():
                found += [(p, False) for p in sorted(path.rglob("*")) if p.is_file() and not p.name.startswith(".")]
            else:
                found.append((path, True))
    seen, unique = set(), []
    for path, named in found:
        if path.resolve() not in seen:
            seen.add(path.resolve())
            unique.append((path, named))
    return unique


def _refuse_a_loop(path: Path) -> None:
    """A symbolic link that leads back to itself names nothing that can be read."""
    try:
        path.resolve(strict=True)
    except RuntimeError:  # Python 3.11: "Symlink loop from ..."
        raise WorkbenchError(f"{text_of(path)}: a symbolic link that leads back to itself") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise WorkbenchError(f"{text_of(path)}: a symbolic link that leads back to itself") from None


def check_regular(path: Path) -> None:
    """UnreadableFile for anything that is not a regular file (a FIFO or a device would
    block or never end)."""
    try:
        status = path.stat()
    except FileNotFoundError:
        raise UnreadableFile(f"{text_of(path)}: no such file (it was removed, or is a broken link)") from None
    if not stat.S_ISREG(status.st_mode):
        kind = KINDS.get(stat.S_IFMT(status.st_mode), "not a file")
        raise UnreadableFile(f"{text_of(path)}: not a regular file ({kind}); only files are read")


def open_regular(path: str | os.PathLike) -> io.BufferedReader:
    """`path` opened to read, if it is a regular file; an OSError (ENXIO) for anything
    else. The open never waits: a FIFO put where a file was is opened without blocking
    (`O_NONBLOCK`), seen for what it is, and closed."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            kind = KINDS.get(stat.S_IFMT(status.st_mode), "not a file")
            raise OSError(errno.ENXIO, f"not a regular file ({kind})", os.fsdecode(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


# A settings file (prices, aliases) is a few kilobytes; a larger one is a mistake.
SETTINGS_BYTES = 1_000_000


def settings_text(path: str | os.PathLike, what: str) -> str:
    """The text of a small settings file the user names (`what` says which, for the
    message): a regular file of at most SETTINGS_BYTES, in UTF-8. Anything else is
    refused in one line before a byte is read, so a FIFO never blocks and a device
    never fills memory."""
    path = Path(path)
    try:
        status = path.stat()
    except OSError as exc:
        raise WorkbenchError(f"cannot read {what} from {text_of(path)}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(status.st_mode):
        kind = KINDS.get(stat.S_IFMT(status.st_mode), "a folder" if stat.S_ISDIR(status.st_mode) else "not a file")
        raise WorkbenchError(f"cannot read {what} from {text_of(path)}: it is {kind}, not a file")
    if status.st_size > SETTINGS_BYTES:
        raise WorkbenchError(
            f"cannot read {what} from {text_of(path)}: {status.st_size:,} bytes, more than the "
            f"{SETTINGS_BYTES:,} a {what} file may hold"
        )
    try:
        with open(path, "rb") as handle:
            data = handle.read(SETTINGS_BYTES + 1)
    except OSError as exc:
        raise WorkbenchError(f"cannot read {what} from {text_of(path)}: {exc.strerror or exc}") from None
    if len(data) > SETTINGS_BYTES:  # it grew after the check
        raise WorkbenchError(f"cannot read {what} from {text_of(path)}: more than {SETTINGS_BYTES:,} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise WorkbenchError(f"cannot read {what} from {text_of(path)}: not UTF-8 text") from None


def writable_folder(path: Path) -> None:
    """Make the folder `path` is to be written in, or say in one line why it cannot be:
    a part of it is a file, or the system refuses (permissions, a read-only place)."""
    folder = Path(path).parent
    for part in (folder, *folder.parents):
        if part.exists() and not part.is_dir():
            raise WorkbenchError(f"cannot write {text_of(path)}: {text_of(part)} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkbenchError(f"cannot write {text_of(path)}: {exc.strerror or exc}") from None


def relative_to_common(paths: list[str | None]) -> tuple[list[str | None], str | None]:
    """`paths` relative to the folder they have in common, and that folder (a single
    file's: its folder); `paths` as they are and None where they have none (no paths,
    relative and absolute ones mixed, or different drives)."""
    given = [path for path in paths if path is not None]
    try:
        root = os.path.commonpath(given) if given else None
    except ValueError:
        root = None
    if root is None:
        return paths, None
    if root in given:
        root = os.path.dirname(root)
    return [None if path is None else os.path.relpath(path, root) for path in paths], root
