"""Ways a log gets damaged: crashed writers, bad disks, experimental models."""

import random

BRACES = b"{}[]"


def truncate(line: bytes, rng: random.Random) -> bytes:
    return line[: rng.randrange(len(line) + 1)]


def flip_byte(line: bytes, rng: random.Random) -> bytes:
    if not line:
        return b"\xff"
    i = rng.randrange(len(line))
    return line[:i] + bytes([line[i] ^ rng.randrange(1, 256)]) + line[i + 1 :]


def invalid_utf8(line: bytes, rng: random.Random) -> bytes:
    i = rng.randrange(len(line) + 1)
    return line[:i] + rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"]) + line[i:]


def delete_brace(line: bytes, rng: random.Random) -> bytes:
    places = [i for i, c in enumerate(line) if c in BRACES]
    if not places:
        return line + b"}"
    i = rng.choice(places)
    return line[:i] + line[i + 1 :]


def huge_number(line: bytes, rng: random.Random) -> bytes:
    digits = [i for i, c in enumerate(line) if chr(c).isdigit() and line[i - 1 : i] in (b":", b" ")]
    if not digits:
        return line.replace(b"{", b'{"n": 1e999999, ', 1)
    i = rng.choice(digits)
    return line[:i] + rng.choice([b"1e999999", b"-1e999999", b"123456789012345678901234567890"]) + line[i + 1 :]


def deep_nesting(line: bytes, rng: random.Random) -> bytes:
    depth = rng.choice([64, 600, 20_000])
    return line.replace(b"{", b'{"deep": ' + b"[" * depth + b"]" * depth + b", ", 1)


def long_line(line: bytes, rng: random.Random) -> bytes:
    return line.replace(b"{", b'{"blob": "' + b"x" * rng.choice([3 << 20, 17 << 20]) + b'", ', 1)


def wrong_types(line: bytes, rng: random.Random) -> bytes:
    swaps = [(b": true", b': "true"'), (b": 1", b': "1"'), (b'": "', b'": ['), (b": [", b": {"), (b": null", b": 0")]
    old, new = rng.choice(swaps)
    return line.replace(old, new, 1)


def not_an_object(line: bytes, rng: random.Random) -> bytes:
    return rng.choice([b"[1, 2, 3]", b'"just a string"', b"42", b"null", b"true"])


def blank_noise(line: bytes, rng: random.Random) -> bytes:
    return rng.choice([b"", b"   ", b"\t", b"\x00", b"\x1c", b"\xc2\x85", b"\r"])


def lone_surrogate(line: bytes, rng: random.Random) -> bytes:
    escape = rng.choice([b"\\ud800", b"\\udfff", b"\\uDBFF"])  # legal JSON, not text
    return line.replace(b"{", b'{"s": "a' + escape + b'b", ', 1)


def byte_order_mark(line: bytes, rng: random.Random) -> bytes:
    return b"\xef\xbb\xbf" + line


def carriage_return(line: bytes, rng: random.Random) -> bytes:
    return line + rng.choice([b"\r", b"\r\r", b" \r"])


# The expensive ones (multi-MB lines) are drawn rarely.
CORRUPTIONS = [
    truncate,
    flip_byte,
    invalid_utf8,
    delete_brace,
    huge_number,
    deep_nesting,
    wrong_types,
    not_an_object,
    blank_noise,
    lone_surrogate,
    byte_order_mark,
    carriage_return,
] * 4 + [long_line]


def corrupt_lines(data: bytes, rng: random.Random, count: int) -> tuple[bytes, list[str]]:
    """`count` corruptions at random lines of `data`; returns the bytes and what was done."""
    lines = data.split(b"\n")
    done = []
    for _ in range(count):
        i = rng.randrange(len(lines))
        kind = rng.choice(CORRUPTIONS)
        lines[i] = kind(lines[i], rng)
        done.append(f"line {i + 1}: {kind.__name__}")
    return b"\n".join(lines), done
