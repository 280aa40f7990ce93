"""The Clausewitz parser and the targeted locator."""

import pytest

from workbench.stellaris import clausewitz as cw
from workbench.stellaris.clausewitz import ClausewitzError, Locator, Repeated

DOCUMENT = b"""version="Phoenix v4.0.1"
date="2312.01.01"
player=
{
\t
\t{
\t\tname="someone"
\t\tcountry=16777223
\t}
 
}
species_db=
{
\t1=
\t{
\t\ttraits=
\t\t{
\t\t\ttrait="trait_quick_learners"
\t\t\ttrait="trait_talented"
\t\t}
\t}
\t2=none
}
country=
{
\t0=
\t{
\t\tname={ key="Not the player" }
\t\tmilitary_power=5.5
\t}
\t1=none
\t16777223=
\t{
\t\tname=
\t\t{
\t\t\tkey="%ADJECTIVE%"
\t\t\tvariables=
\t\t\t{
\t\t\t\t
\t\t\t\t{
\t\t\t\t\tkey="adjective"
\t\t\t\t\tvalue={ key="SPEC_Bilnoc" }
\t\t\t\t}
 
\t\t\t}
\t\t}
\t\tdemotions=
\t\t{
560=
\t\t\t{
\t\t\t}
\t\t}
\t\tvariables=
\t\t{
\t\t\torigin_planets
=0
\t\t}
\t\tholding=
\t\t{
\t\t\t{
\t\t\t\tkey=subject_holding\t\t\t\tvalue=450\t\t\t}
\t\t}
\t\towned_planets=
\t\t{
\t\t\t99 3770 
\t\t}
\t\tempty={}
\t\tmilitary_power=0.00000
\t\trival=4294967295
\t}
}
war=
{
\t1=none
}
"""


def test_top_level_pairs_blocks_and_scalars():
    doc = cw.parse(DOCUMENT)
    assert doc["version"] == "Phoenix v4.0.1"
    assert doc["date"] == "2312.01.01"  # quoted text stays text
    assert doc["player"] == [{"name": "someone", "country": 16777223}]  # a list of blocks


def test_repeated_keys_are_a_list_and_none_marks_a_deleted_slot():
    doc = cw.parse(DOCUMENT)
    traits = doc["species_db"]["1"]["traits"]["trait"]
    assert isinstance(traits, Repeated) and traits == ["trait_quick_learners", "trait_talented"]
    assert doc["species_db"]["2"] == "none"
    assert doc["country"]["1"] == "none"


def test_scalar_lists_empty_blocks_numbers_and_no_id():
    player = cw.parse(DOCUMENT)["country"]["16777223"]
    assert player["owned_planets"] == [99, 3770]
    assert player["empty"] == {} and cw.as_list(player["empty"]) == []
    assert player["military_power"] == 0.0 and isinstance(player["military_power"], float)
    assert player["rival"] == cw.NO_ID and not cw.is_id(player["rival"])


def test_the_corpus_quirks_parse():
    player = cw.parse(DOCUMENT)["country"]["16777223"]
    assert player["demotions"] == {"560": {}}  # a nested key written at column 0
    assert player["variables"] == {"origin_planets": 0}  # a key split from its `=`
    assert player["holding"] == [{"key": "subject_holding", "value": 450}]  # tabs inside one line


def test_mixed_blocks_keep_bare_values_and_escaped_quotes():
    assert cw.parse_block(b"{ a=1 2 3 }") == {"a": 1, "": [2, 3]}
    assert cw.parse(b'name="say \\"hi\\""')["name"] == 'say "hi"'
    assert cw.parse(b"color=rgb { 1 2 3 }")  # a tagged block parses (tag kept as a bare value)


@pytest.mark.parametrize("text", [b"a={ b=1", b"a=1 }", b"a= }", b"= 1"])
def test_malformed_text_is_an_error(text):
    with pytest.raises(ClausewitzError):
        cw.parse(text)


def test_locator_finds_top_level_values_and_the_players_country():
    loc = Locator(DOCUMENT)
    assert loc.parse(loc.find("date")) == "2312.01.01"
    assert loc.find("nothing") is None
    countries = loc.find("country")
    player = loc.parse(loc.find_child(countries, "16777223", indent=1))
    assert player["owned_planets"] == [99, 3770]
    zero = loc.parse(loc.find_child(countries, "0", indent=1))
    assert zero["military_power"] == 5.5
    assert loc.find_child(countries, "42", indent=1) is None
    assert loc.parse(loc.find_child(countries, "1", indent=1)) == "none"


def test_locator_ignores_a_same_named_key_at_another_depth():
    data = b"a=\n{\n\tcountry=\n\t{\n\t\tx=1\n\t}\n}\ncountry=\n{\n\t7=\n\t{\n\t\tx=2\n\t}\n}\n"
    loc = Locator(data)
    assert loc.parse(loc.find("country")) == {"7": {"x": 2}}
    # indentation lies: a nested `7=` at the child indentation of `country` is refused
    data = b"country=\n{\n\tb=\n\t{\n\t7=\n\t{\n\t\tx=1\n\t}\n\t}\n\t7=\n\t{\n\t\tx=2\n\t}\n}\n"
    loc = Locator(data)
    assert loc.parse(loc.find_child(loc.find("country"), "7", indent=1)) == {"x": 2}


def test_locator_falls_back_when_a_string_holds_a_brace():
    data = b'name="curly { name"\ncountry=\n{\n\t5=\n\t{\n\t\tx="}"\n\t}\n}\nwar=\n{\n}\n'
    loc = Locator(data)
    country = loc.find("country")
    assert loc.parse(country) == {"5": {"x": "}"}}
    assert loc.parse(loc.find_child(country, "5", indent=1)) == {"x": "}"}
    assert loc.parse(loc.find("war")) == {}


def test_find_children_finds_many_keys_in_one_pass():
    data = (
        b"planets=\n{\n\tplanet=\n\t{\n"
        + b"".join(b"\t\t%d=\n\t\t{\n\t\t\towner=%d\n\t\t}\n" % (n, n * 10) for n in range(1, 50))
        + b"\t}\n}\n"
    )
    loc = Locator(data)
    table = loc.find_child(loc.find("planets"), "planet", indent=1)
    found = loc.find_children(table, ["7", "49", "1", "500"], indent=2)
    assert {k: loc.parse(v)["owner"] for k, v in found.items()} == {"7": 70, "49": 490, "1": 10}


def test_locator_reads_inline_blocks_and_windows_line_endings():
    data = (
        b"flags={}\nlist={ 1 2 3 }\nplayer=\n{\n\t{\n\t\tcountry=7\n\t}\n}\ncountry=\n{\n\t7=\n\t{\n\t\tx=1\n\t}\n}\n"
    ).replace(b"\n", b"\r\n")
    loc = Locator(data)
    assert loc.parse(loc.find("flags")) == {} and loc.parse(loc.find("list")) == [1, 2, 3]
    assert loc.parse(loc.find("player")) == [{"country": 7}]
    assert loc.parse(loc.find_child(loc.find("country"), "7", indent=1)) == {"x": 1}
