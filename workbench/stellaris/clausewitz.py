"""Clausewitz text (Stellaris `gamestate` and `meta`): a parser for bounded blocks and
a targeted locator that finds the few sections we need in a 50 MB gamestate without
parsing the rest.

The text has no outer braces: the top level is a series of `key=value`. Values are
scalars (`16777223`, `0.5`, `yes`, `"2312.01.01"`, `none`) or blocks `{ ... }`. A block
holds pairs (`key=value`, a repeated key meaning several values), bare values (a list
`{ 1 2 3 }` or a list of blocks `{ { ... } { ... } }`), or nothing (`{}`, which may be
an empty object or an empty list).

Parsed values: a block of pairs becomes a `dict` (a repeated key holds a `Repeated`
list of its values), a block of bare values a `list`, an empty block `{}`; a block
that mixes both keeps its bare values under the key `""`. Quoted text stays `str`;
bare numbers become `int`/`float`; other bare words (`yes`, `none`) stay `str`.

Finding sections fast: the game writes every top-level key at the start of a line and
indents nested keys with tabs, but not reliably (the corpus save has nested numeric
keys at column 0). So a candidate found by its indentation is only accepted once the
brace balance between a known point and it confirms its depth; strings with braces
in them would upset that balance, and then the locator falls back to tokenizing. A
block is taken to close on the line it opens or at its key's indentation, as the game
writes every block.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from workbench.errors import WorkbenchError

# Quoted strings (with escapes), braces, operators, and bare words.
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}]|[<>!?]?=|[<>]|[^\s{}=<>"]+')
INTEGER = re.compile(r"-?\d+\Z")
DECIMAL = re.compile(r"-?\d*\.\d+\Z")
OPERATORS = frozenset({"=", "<", ">", "<=", ">=", "!=", "?="})
# 4294967295 (2**32 - 1) is the game's "no id".
NO_ID = 4294967295


class ClausewitzError(WorkbenchError):
    """Text that is not well-formed Clausewitz (unbalanced braces, a key without a value)."""


class Repeated(list):
    """The values of a key written more than once in the same block (`trait="a" trait="b"`)."""


def parse(text: str | bytes) -> dict:
    """Parse a whole document (the top level: pairs without outer braces)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    value = _build(TOKEN.findall(text), top_level=True)
    return value if isinstance(value, dict) else {"": value}


def parse_block(text: str | bytes):
    """Parse one `{ ... }` block (braces included) into a dict, list or `{}`."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return _build(TOKEN.findall(text), top_level=False)


def _scalar(token: str):
    if token[0] == '"':
        inner = token[1:-1]
        return inner.replace('\\"', '"').replace("\\\\", "\\") if "\\" in inner else inner
    if INTEGER.match(token):
        return int(token)
    if DECIMAL.match(token):
        return float(token)
    return token


class _Block:
    __slots__ = ("pairs", "items", "key")

    def __init__(self, key: str | None) -> None:
        self.key = key  # the key this block is the value of in its parent (None: bare)
        self.pairs: dict = {}
        self.items: list = []

    def add_pair(self, key: str, value) -> None:
        pairs = self.pairs
        if key in pairs:
            held = pairs[key]
            if isinstance(held, Repeated):
                held.append(value)
            else:
                pairs[key] = Repeated((held, value))
        else:
            pairs[key] = value

    def value(self):
        if self.pairs:
            if self.items:
                self.pairs[""] = self.items
            return self.pairs
        return self.items if self.items else {}


def _build(tokens: list[str], top_level: bool):
    """Assemble tokens into values with an explicit stack (blocks nest deeply)."""
    stack = [_Block(None)]
    if not top_level:
        if not tokens or tokens[0] != "{":
            raise ClausewitzError("a block must start with `{`")
        tokens = tokens[1:]
    pending_key = None  # a key whose `=` has been read, waiting for its value
    last_scalar = None  # a bare word that may turn out to be a key
    count = len(tokens)
    i = 0
    while i < count:
        token = tokens[i]
        i += 1
        block = stack[-1]
        if token == "{":
            if last_scalar is not None:
                block.items.append(_scalar(last_scalar))
                last_scalar = None
            stack.append(_Block(pending_key))
            pending_key = None
        elif token == "}":
            if last_scalar is not None:
                block.items.append(_scalar(last_scalar))
                last_scalar = None
            if pending_key is not None:
                raise ClausewitzError(f"key `{pending_key}` has no value")
            if len(stack) == 1:
                if top_level:
                    raise ClausewitzError("unbalanced `}`")
                if i != count:
                    raise ClausewitzError("text after the closing `}` of the block")
                return block.value()
            stack.pop()
            parent = stack[-1]
            if block.key is None:
                parent.items.append(block.value())
            else:
                parent.add_pair(block.key, block.value())
        elif token in OPERATORS:
            if last_scalar is None:
                raise ClausewitzError("`=` without a key")
            pending_key = last_scalar[1:-1] if last_scalar[0] == '"' else last_scalar
            last_scalar = None
        elif pending_key is not None:
            block.add_pair(pending_key, _scalar(token))
            pending_key = None
        else:
            if last_scalar is not None:
                block.items.append(_scalar(last_scalar))
            last_scalar = token
    if len(stack) != 1 or pending_key is not None:
        problem = "the text ends inside a block" if len(stack) != 1 else f"key `{pending_key}` has no value"
        raise ClausewitzError(problem)
    if not top_level:
        raise ClausewitzError("the block has no closing `}`")
    if last_scalar is not None:
        stack[0].items.append(_scalar(last_scalar))
    return stack[0].value()


# --- helpers for reading parsed values --------------------------------------------


def as_list(value) -> list:
    """A value read as a list: `{}` is empty, a dict or scalar is one item."""
    if isinstance(value, list):
        return value
    if value is None or value == {}:
        return []
    return [value]


def as_dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def first(value):
    """A key written once or several times, read as its first value."""
    return value[0] if isinstance(value, Repeated) else value


def is_id(value) -> bool:
    return isinstance(value, int) and value != NO_ID


# --- finding sections without parsing everything ----------------------------------


@dataclass(frozen=True)
class Span:
    """Where a value sits in the data: `start` at its first byte, `end` after its last."""

    start: int
    end: int

    def is_block(self, data: bytes) -> bool:
        return data[self.start : self.start + 1] == b"{"


class Locator:
    """Finds keyed values in the bytes of a Clausewitz document, by depth.

    `find(key)` finds a top-level value (from an index of the top level built on first
    use); `find_child(block, key, indent)` a value directly inside a block;
    `child_blocks(block, indent)` every block directly inside one (each country). Each
    candidate's depth is confirmed by brace balance; when no candidate can be confirmed
    the region is walked token by token instead.
    """

    # After a key: optional blanks (a newline too: the game sometimes splits `key\n=`),
    # the operator, blanks.
    KEY_END = re.compile(rb"[ \t\r]*(?:\n[ \t\r]*)?[<>!?]?=[ \t\r\n]*")
    TOP_KEY = re.compile(rb'[ \t\r\n]*("[^"\n]*"|[^\s{}=<>"]+)[ \t\r]*(?:\n[ \t\r]*)?[<>!?]?=[ \t\r\n]*')

    def __init__(self, data: bytes):
        self.data = data
        self._top_level: dict[str, Span] | None = None

    def find(self, key: str) -> Span | None:
        """The value of a top-level `key` (the first one written)."""
        if self._top_level is None:
            self._top_level = self._index_top_level()
        if self._top_level is not None:
            return self._top_level.get(key)
        return self._walk_for(0, len(self.data), key)

    def _index_top_level(self) -> dict[str, Span] | None:
        """Every top-level key and the span of its (first) value, in one pass that jumps
        over blocks: a top-level block ends at a `}` written at column 0 where the brace
        balance since its `{` returns to zero. None if the text is not laid out so."""
        data, position = self.data, 0
        spans: dict[str, Span] = {}
        while True:
            match = self.TOP_KEY.match(data, position)
            if match is None:
                return spans if not data[position:].strip() else None
            key = match.group(1).decode("utf-8", errors="replace").strip('"')
            value_at = match.end()
            if data[value_at : value_at + 1] == b"{":
                end = self._indented_block_end(value_at, 0)
                if end is None:
                    return None
                span = Span(value_at, end)
            else:
                token = TOKEN_BYTES.match(data, value_at)
                if token is None or token.group() in (b"{", b"}"):
                    return None
                span = Span(value_at, token.end())
            spans.setdefault(key, span)
            position = span.end

    def find_child(self, block: Span, key: str, indent: int) -> Span | None:
        """The value of `key` directly inside `block`; `indent` is the number of tabs the
        game writes before keys at that depth."""
        return self._find_at_depth(block.start + 1, block.end - 1, key, indent, depth=1, counted_from=block.start)

    def find_children(self, block: Span, keys: list[str], indent: int) -> dict[str, Span]:
        """Several keys of one block (e.g. planet ids), confirmed with one pass of brace
        counts over the block instead of one pass per key: from the block's start for
        the keys in its first half, from its end for the others (a country's `type` is
        written near its end)."""
        data, lo, hi = self.data, block.start + 1, block.end - 1
        candidates = sorted(
            (found[0], key, found[1])
            for key in dict.fromkeys(keys)
            if (found := self._candidate(lo, hi, key, indent)) is not None
        )
        middle = (lo + hi) // 2
        spans: dict[str, Span] = {}
        depth, counted_to = 0, block.start
        for line_start, key, value_at in (c for c in candidates if c[0] < middle):
            depth += data.count(b"{", counted_to, line_start) - data.count(b"}", counted_to, line_start)
            counted_to = line_start
            if depth == 1:
                spans[key] = self.value_span(value_at, indent)
        # A key directly inside the block has as many `{` as `}` between it and the
        # block's closing brace.
        balance, counted_from = 0, hi
        for line_start, key, value_at in (c for c in reversed(candidates) if c[0] >= middle):
            balance += data.count(b"{", line_start, counted_from) - data.count(b"}", line_start, counted_from)
            counted_from = line_start
            if balance == 0:
                spans[key] = self.value_span(value_at, indent)
        for key in dict.fromkeys(keys):
            if key not in spans and (span := self.find_child(block, key, indent)) is not None:
                spans[key] = span
        return spans

    def find_last_child(self, block: Span, key: str, indent: int) -> Span | None:
        """The value of `key` directly inside `block`, looked for from the block's end:
        for a key written once near the end (a country's `type`), without a pass over
        the rest of the block."""
        data, lo, hi = self.data, block.start + 1, block.end - 1
        needle = b"\n" + b"\t" * indent + key.encode()
        position = data.rfind(needle, lo, hi)
        while position != -1:
            match = self.KEY_END.match(data, position + len(needle))
            # Directly inside: as many `{` as `}` between the key and the block's end.
            if match and data.count(b"{", position, hi) == data.count(b"}", position, hi):
                return self.value_span(match.end(), indent)
            position = data.rfind(needle, lo, position)
        return self.find_child(block, key, indent)

    def child_blocks(self, block: Span, indent: int) -> dict[str, Span]:
        """Every block directly inside `block` (each country of `country`) by its key, in
        one pass that jumps over each block once its end is confirmed: `indent` is the
        number of tabs the game writes before those keys. Between two such blocks only
        scalars may be written (`184549381=none`); a brace there means a block whose
        key is indented otherwise, and then the block is walked token by token."""
        data, hi = self.data, block.end - 1
        key_at = re.compile(rb"\n" + b"\t" * indent + rb'("[^"\n]*"|[^\s{}=<>"]+)' + self.KEY_END.pattern)
        spans: dict[str, Span] = {}
        position = block.start + 1
        while (match := key_at.search(data, position, hi)) is not None:
            if _has_brace(data, position, match.start()):
                return self._walk_child_blocks(block)
            if data[match.end() : match.end() + 1] == b"{":
                span = self.value_span(match.end(), indent)
                spans.setdefault(match.group(1).decode("utf-8", errors="replace").strip('"'), span)
                position = span.end
            else:
                position = match.end()
        return self._walk_child_blocks(block) if _has_brace(data, position, hi) else spans

    def _walk_child_blocks(self, block: Span) -> dict[str, Span]:
        """`child_blocks` token by token (quoted strings respected)."""
        spans: dict[str, Span] = {}
        depth, previous, key, opened_at, opened_by = 0, None, None, 0, None
        for match in TOKEN_BYTES.finditer(self.data, block.start + 1, block.end - 1):
            token = match.group()
            if token == b"{":
                if depth == 0:
                    opened_at, opened_by = match.start(), key
                depth += 1
            elif token == b"}":
                depth -= 1
                if depth == 0 and opened_by is not None:
                    key_text = opened_by.decode("utf-8", errors="replace").strip('"')
                    spans.setdefault(key_text, Span(opened_at, match.end()))
            elif depth == 0:
                # A key is the word before an operator; any other word ends it.
                key = previous if token.endswith(b"=") or token in (b"<", b">") else None
                previous = token
                continue
            key, previous = None, None
        return spans

    def _find_at_depth(self, lo: int, hi: int, key: str, indent: int, depth: int, counted_from: int) -> Span | None:
        data = self.data
        balance, counted_to = 0, counted_from
        found = self._candidate(lo, hi, key, indent)
        while found is not None:
            line_start, value_at = found
            balance += data.count(b"{", counted_to, line_start) - data.count(b"}", counted_to, line_start)
            counted_to = line_start
            if balance == depth:
                return self.value_span(value_at, indent)
            found = self._candidate(value_at, hi, key, indent)
        return self._walk_for(lo, hi, key)

    def _candidate(self, lo: int, hi: int, key: str, indent: int) -> tuple[int, int] | None:
        """The next `key=` at the start of a line indented by `indent` tabs, as
        (line start, value start)."""
        data = self.data
        needle = b"\n" + b"\t" * indent + key.encode()
        position = data.find(needle, lo, hi)
        while position != -1:
            match = self.KEY_END.match(data, position + len(needle))
            if match:
                return position + 1, match.end()
            position = data.find(needle, position + 1, hi)
        return None

    def value_span(self, at: int, indent: int | None = None) -> Span:
        """The span of the value starting at byte `at` (a block or a scalar); `indent` is
        the indentation of its key, where the game also writes the closing brace."""
        data = self.data
        if data[at : at + 1] == b"{":
            end = self._indented_block_end(at, indent) if indent is not None else None
            return Span(at, end if end is not None else self._block_end(at))
        match = TOKEN_BYTES.match(data, at)
        if match is None:
            raise ClausewitzError(f"no value at byte {at}")
        return Span(at, match.end())

    def _indented_block_end(self, start: int, indent: int) -> int | None:
        """The end of a block found from the closing braces written at its key's
        indentation, confirmed by brace balance (a 12 MB section has few of them). A
        block that closes on the line it opens (`flags={}`) is found on that line."""
        data = self.data
        inline = self._same_line_end(start)
        if inline is not None:
            return inline
        # A compiled search: faster than `bytes.find` for a needle that starts with a
        # newline, over the tens of MB the top level spans.
        closing = _closing_brace(indent)
        balance, counted_to = 0, start
        close = closing.search(data, start)
        while close is not None:
            brace = close.end() - 1
            balance += data.count(b"{", counted_to, brace) - data.count(b"}", counted_to, brace)
            counted_to = brace
            if balance == 1:
                return brace + 1
            if balance < 1:
                return None
            close = closing.search(data, brace)
        return None

    def _same_line_end(self, start: int) -> int | None:
        line_end = self.data.find(b"\n", start)
        line = self.data[start : line_end if line_end != -1 else len(self.data)]
        if b"}" not in line or b'"' in line:
            return None
        depth = 0
        for offset, byte in enumerate(line):
            if byte == 0x7B:  # {
                depth += 1
            elif byte == 0x7D:  # }
                depth -= 1
                if depth == 0:
                    return start + offset + 1
        return None

    def _block_end(self, start: int) -> int:
        """The byte after the `}` closing the block that opens at `start`, counting the
        braces between closing braces (for blocks whose indentation is unknown)."""
        data = self.data
        depth, position = 0, start
        while True:
            close = data.find(b"}", position)
            if close == -1:
                raise ClausewitzError(f"the block at byte {start} is never closed")
            depth += data.count(b"{", position, close) - 1
            position = close + 1
            if depth == 0:
                return position

    def _walk_for(self, lo: int, hi: int, key: str) -> Span | None:
        """Token by token (quoted strings respected): `key` at depth 0 of [lo, hi)."""
        data, target = self.data, key.encode()
        depth, previous = 0, None
        for match in TOKEN_BYTES.finditer(data, lo, hi):
            token = match.group()
            if token == b"{":
                depth += 1
            elif token == b"}":
                depth -= 1
                if depth < 0:
                    return None
            elif depth == 0 and previous == target and token.endswith(b"="):
                value = TOKEN_BYTES.search(data, match.end())
                return self._walked_value(value.start()) if value else None
            previous = token
        return None

    def _walked_value(self, at: int) -> Span:
        data = self.data
        if data[at : at + 1] != b"{":
            return self.value_span(at)
        depth = 0
        for match in TOKEN_BYTES.finditer(data, at):
            token = match.group()
            if token == b"{":
                depth += 1
            elif token == b"}":
                depth -= 1
                if depth == 0:
                    return Span(at, match.end())
        raise ClausewitzError(f"the block at byte {at} is never closed")

    def parse(self, span: Span):
        """Parse the value at `span`. A block whose end was found by brace counting is
        re-delimited token by token if it does not parse (a brace inside a string)."""
        raw = self.data[span.start : span.end]
        if raw[:1] != b"{":
            return _scalar(raw.decode("utf-8", errors="replace"))
        try:
            return parse_block(raw)
        except ClausewitzError:
            exact = self._walked_value(span.start)
            if exact == span:
                raise
            return parse_block(self.data[exact.start : exact.end])


TOKEN_BYTES = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}]|[<>!?]?=|[<>]|[^\s{}=<>"]+')


@functools.cache
def _closing_brace(indent: int) -> re.Pattern:
    return re.compile(b"\n" + b"\t" * indent + b"}")


def _has_brace(data: bytes, lo: int, hi: int) -> bool:
    return data.find(b"{", lo, hi) != -1 or data.find(b"}", lo, hi) != -1
