"""The locator's one-pass reading of a section's entries (`child_blocks`), of a key near
a block's end (`find_last_child`) and of keys confirmed from a block's end
(`find_children`): on small texts written by hand, where the expected spans are known."""

import pytest

from workbench.stellaris.clausewitz import Locator, parse_block


def section(locator: Locator, key: str = "country"):
    return locator.find(key)


def texts(locator: Locator, spans: dict) -> dict:
    return {key: parse_block(locator.data[span.start : span.end]) for key, span in spans.items()}


LAID_OUT = (
    b'date="2200.01.01"\n'
    b"country=\n{\n"
    b'\t0=\n\t{\n\t\tname="a"\n\t\tflags=\n\t\t{\n\t\t\tx=1\n\t\t}\n\t}\n'
    b"\t1=none\n"
    b'\t7=\n\t{\n\t\tname="b"\n\t\tlist={ 1 2 }\n\t}\n'
    b"\t9={}\n"
    b"}\n"
    b"war=\n{\n}\n"
)


def test_child_blocks_finds_each_block_of_a_section_and_skips_scalars():
    locator = Locator(LAID_OUT)
    found = locator.child_blocks(section(locator), indent=1)
    assert list(found) == ["0", "7", "9"]
    assert texts(locator, found) == {"0": {"name": "a", "flags": {"x": 1}}, "7": {"name": "b", "list": [1, 2]}, "9": {}}


def test_child_blocks_takes_no_key_from_inside_an_entry():
    # `3=` written at the entries' indentation inside entry 0 is not an entry
    text = (
        b"country=\n{\n\t0=\n\t{\n\t\tflags=\n\t\t{\n\t3=\n\t\t\t{\n\t\t\t}\n\t\t}\n\t}\n"
        b'\t5=\n\t{\n\t\tname="c"\n\t}\n}\n'
    )
    locator = Locator(text)
    found = locator.child_blocks(section(locator), indent=1)
    assert list(found) == ["0", "5"]
    assert texts(locator, found)["0"] == {"flags": {"3": {}}}


def test_child_blocks_walks_a_section_whose_entries_are_indented_otherwise():
    # entry 5 at column 0 and entry 6 on one line: a brace between the entries found by
    # indentation sends the locator token by token
    text = b'country=\n{\n\t0=\n\t{\n\t\tname="a"\n\t}\n5=\n{\n\tname="b"\n}\n\t7=\n\t{\n\t}\n 6={ name="x}" }\n}\n'
    locator = Locator(text)
    found = locator.child_blocks(section(locator), indent=1)
    assert sorted(found) == ["0", "5", "6", "7"]
    assert texts(locator, found) == {"0": {"name": "a"}, "5": {"name": "b"}, "6": {"name": "x}"}, "7": {}}


def test_child_blocks_walks_when_an_entry_between_two_others_is_not_indented():
    text = b'country=\n{\n\t0=\n\t{\n\t}\n5=\n{\n\tname="b"\n}\n\t7=\n\t{\n\t\tname="c"\n\t}\n}\n'
    locator = Locator(text)
    found = locator.child_blocks(section(locator), indent=1)
    assert texts(locator, found) == {"0": {}, "5": {"name": "b"}, "7": {"name": "c"}}


def test_child_blocks_of_an_empty_section():
    locator = Locator(b"country=\n{\n}\n")
    assert locator.child_blocks(section(locator), indent=1) == {}
    locator = Locator(b"country={}\n")
    assert locator.child_blocks(section(locator), indent=1) == {}


ENTRY = (
    b'country=\n{\n\t4=\n\t{\n\t\tname="a"\n\t\tz=1\n'
    b'\t\tai=\n\t\t{\n\t\tz=2\n\t\ttype="nested"\n\t\t}\n'
    b'\t\tz=3\n\t\ttype="real"\n\t\tai_tail=\n\t\t{\n\t\ttype="after"\n\t\t}\n\t}\n}\n'
)


# The same entry with a long first key: every other key is in its second half.
LONG_FIRST = ENTRY.replace(b'name="a"\n', b'name="a"\n\t\tfiller={ ' + b"1 " * 200 + b"}\n")


def test_find_last_child_skips_a_same_named_key_deeper_down():
    locator = Locator(ENTRY)
    entry = locator.child_blocks(section(locator), indent=1)["4"]
    found = locator.find_last_child(entry, "type", indent=2)
    assert locator.parse(found) == "real"
    assert locator.find_last_child(entry, "missing", indent=2) is None


@pytest.mark.parametrize("text", [ENTRY, LONG_FIRST])
def test_find_children_confirms_keys_in_a_blocks_second_half_from_its_end(text):
    locator = Locator(text)
    entry = locator.child_blocks(section(locator), indent=1)["4"]
    middle = (entry.start + entry.end) // 2
    assert (text.index(b'type="nested"') > middle) == (text is LONG_FIRST)
    found = locator.find_children(entry, ["name", "z", "type", "ai_tail"], indent=2)
    assert {key: locator.parse(span) for key, span in found.items() if key != "ai_tail"} == {
        "name": "a",
        "z": 1,
        "type": "real",
    }
    assert locator.parse(found["ai_tail"]) == {"type": "after"}
