"""What the `workbench` command writes to a terminal: the text a log, a file name or a
model name holds, shown escaped, never run as the terminal's own commands."""

from __future__ import annotations

# What a terminal is never sent as it is: C0 controls but the line end and tab (ESC
# starts the sequences that set a window's title or clear the screen), DEL, C1 controls
# (0x9b is CSI) and the marks that reorder text (bidirectional overrides and isolates).
_SHOWN_ESCAPED = {
    code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if code not in (0x09, 0x0A)
} | {code: f"\\u{code:04x}" for code in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def escaped(text: str) -> str:
    """`text` as a terminal may be sent it: each character of `_SHOWN_ESCAPED` written as
    its escape (`\\x1b`); a carriage return that starts or ends the text (a progress
    bar's) kept."""
    body = text.strip("\r")
    if not body:
        return text
    start = text.index(body)
    return text[:start] + body.translate(_SHOWN_ESCAPED) + text[start + len(body) :]


class Terminal:
    """A terminal's stream (standard output or error) that shows what a log, a file name
    or a model name holds escaped (`escaped`), never as a terminal would run it."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(escaped(text))

    def writelines(self, lines) -> None:
        self.stream.writelines(escaped(line) for line in lines)

    def __getattr__(self, name: str):
        return getattr(self.stream, name)


def is_a_terminal(stream) -> bool:
    """Whether `stream` is a terminal's, not yet wrapped in a `Terminal`."""
    try:
        return stream is not None and not isinstance(stream, Terminal) and stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False
