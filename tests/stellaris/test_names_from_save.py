"""Readable names where the save itself provides them: the player's empire from `meta`'s
`name=`, template variables marked `literal=yes` as written; the raw key and template kept
in their own columns. Expected values are written out by hand, or read from the corpus
save with zipfile and regular expressions, never with the workbench's parser."""

import json
import re
import zipfile

import duckdb
import pytest

import workbench
from tests.conftest import rows
from tests.stellaris.conftest import CORPUS_PLAYER, write_zip
from workbench.stellaris import save, save_zip
from workbench.stellaris.names import raw_key, render, template_json
from workbench.stellaris.synth_campaign import Bare, clausewitz


def literal(text):
    return {"key": text, "literal": Bare("yes")}


def template(key, *variables):
    return {"key": key, "variables": [{"key": name, "value": value} for name, value in variables]}


def gamestate(player_name, wars=None, player=5) -> bytes:
    """A small gamestate in the game's layout: the player's country named `player_name`
    beside a prescripted country 0, and optionally wars the player fights."""
    pairs = {
        "date": "2250.03.01",
        "player": [{"name": "tester", "country": player}],
        "country": {
            "0": {"name": {"key": "EMPIRE_DESIGN_humans1"}, "adjective": {"key": "PRESCRIPTED_adjective_humans1"}},
            str(player): {"name": player_name, "adjective": {"key": "PRESCRIPTED_adjective_humans1"}},
        },
    }
    if wars:
        pairs["war"] = {
            str(war_id): {"name": name, "attackers": [{"country": 0}], "defenders": [{"country": player}]}
            for war_id, name in wars.items()
        }
    return clausewitz(pairs).encode()


def meta(name=None) -> bytes:
    lines = ['version="Phoenix v4.0.1"']
    if name is not None:
        lines.append(f'name="{name}"')
    lines += ['date="2250.03.01"', "required_dlcs=", "{", '\t"Utopia"', "}"]
    return ("\n".join(lines) + "\n").encode()


def ingest_save(tmp_path, members: dict[str, bytes]):
    path = write_zip(tmp_path / "autosave_2250.03.01.sav", members)
    db = tmp_path / "w.duckdb"
    [file] = workbench.ingest([path], db=db).files
    assert file.status == "ingested", file.message
    return db


# --- the real save ------------------------------------------------------------------------------


def corpus_meta_name(path) -> str:
    with zipfile.ZipFile(path) as archive:
        text = archive.read("meta").decode("utf-8")
    [name] = re.findall(r'^name="([^"]*)"$', text, flags=re.MULTILINE)
    return name


def corpus_player_name_keys(path) -> list[str]:
    """Every `key="..."` of the player's country's `name=` block, in order, by lines."""
    with zipfile.ZipFile(path) as archive:
        data = archive.read("gamestate").decode("utf-8")
    country = data.index("\ncountry=\n{")
    entry = data.index(f"\n\t{CORPUS_PLAYER}=\n\t{{", country)
    start = data.index("\n\t\tname=\n\t\t{", entry)
    end = data.index("\n\t\t}", start)
    return re.findall(r'key="([^"]*)"', data[start:end])


def keys_of(value) -> list[str]:
    if isinstance(value, dict):
        return (
            ([value["key"]] if "key" in value else [])
            + [k for v in value.get("variables", []) for k in keys_of(v)]
            + keys_of(value.get("value"))
        )
    return []


def test_the_corpus_meta_holds_the_save_name(corpus_save):
    # transcribed by reading the save's `meta` (and the real companion reads the same)
    assert corpus_meta_name(corpus_save) == "United Nations of Earth 2"


def test_the_corpus_empire_is_named_by_its_meta_with_the_country_template_beside(corpus_save, tmp_path):
    expected_name = corpus_meta_name(corpus_save)
    expected_keys = corpus_player_name_keys(corpus_save)
    assert expected_keys == ["%ADJECTIVE%", "adjective", "SPEC_Bilnoc", "1", "Autocracy"]
    db = tmp_path / "w.duckdb"
    workbench.ingest([corpus_save], db=db)
    [(name, key, template_text)] = rows(
        db, "SELECT empire_name, empire_name_key, empire_name_template FROM stellaris_snapshots"
    )
    assert name == expected_name == "United Nations of Earth 2"
    assert key == expected_keys[0]
    assert keys_of(json.loads(template_text)) == expected_keys
    # the interface's columns keep working
    assert rows(db, "SELECT save_name, game_date, player_id, empire_name FROM stellaris_snapshots") == [
        (corpus_save.name, "2312.01.01", CORPUS_PLAYER, "United Nations of Earth 2")
    ]
    [(status,)] = rows(db, "SELECT payload FROM stellaris_tool_outputs WHERE tool = 'get_player_status'")
    assert json.loads(status)["empire_name"] == "United Nations of Earth 2"


# --- small gamestates -------------------------------------------------------------------------


def test_a_default_empire_key_reads_as_the_meta_name(tmp_path):
    db = ingest_save(tmp_path, {"meta": meta("United Nations of Earth"), "gamestate": gamestate({"key": "humans1"})})
    assert rows(db, "SELECT empire_name, empire_name_key, empire_name_template FROM stellaris_snapshots") == [
        ("United Nations of Earth", "humans1", None)
    ]


def test_without_meta_a_template_of_literal_values_is_filled_in(tmp_path):
    name = template("%ADJECTIVE%", ("adjective", literal("Zorgon")), ("1", literal("Star League")))
    db = ingest_save(tmp_path, {"gamestate": gamestate(name)})
    [(empire, key, text)] = rows(
        db, "SELECT empire_name, empire_name_key, empire_name_template FROM stellaris_snapshots"
    )
    assert (empire, key) == ("Zorgon Star League", "%ADJECTIVE%")
    assert json.loads(text) == {
        "key": "%ADJECTIVE%",
        "variables": [
            {"key": "adjective", "value": {"key": "Zorgon", "literal": "yes"}},
            {"key": "1", "value": {"key": "Star League", "literal": "yes"}},
        ],
    }


def test_a_meta_without_a_name_falls_back_to_the_country(tmp_path):
    name = template("%ADJ%", ("1", template("Union_of", ("1", literal("Free Worlds")))))
    db = ingest_save(tmp_path, {"meta": meta(None), "gamestate": gamestate(name)})
    assert rows(db, "SELECT empire_name, empire_name_key FROM stellaris_snapshots") == [
        ("Union of Free Worlds", "%ADJ%")
    ]


def test_a_literal_empire_name_has_no_key(tmp_path):
    db = ingest_save(tmp_path, {"gamestate": gamestate(literal("Sol_Alliance of Free Stars"))})
    assert rows(db, "SELECT empire_name, empire_name_key, empire_name_template FROM stellaris_snapshots") == [
        ("Sol_Alliance of Free Stars", None, None)
    ]


def test_a_meta_that_does_not_parse_still_names_the_empire(tmp_path):
    broken = b'version="Phoenix v4.0.1"\nname="Broken Meta Union"\nflag=\n{\n\ticon=\n\t{\n'
    db = ingest_save(tmp_path, {"meta": broken, "gamestate": gamestate({"key": "humans1"})})
    assert rows(db, "SELECT empire_name, empire_name_key FROM stellaris_snapshots") == [
        ("Broken Meta Union", "humans1")
    ]


def test_war_names_take_literal_values_as_written(tmp_path):
    wars = {
        7: template(
            "war_vs_names",
            ("1", literal("Kel_Ari Hegemony")),
            ("2", template("%ADJ%", ("1", template("Union_of", ("1", literal("Free Worlds")))))),
        ),
        8: template(
            "war_vs_adjectives", ("1", literal("Zorgon")), ("2", literal("Human")), ("3", literal("War of Liberation"))
        ),
    }
    path = write_zip(
        tmp_path / "w.sav",
        {
            "meta": meta("Union of Free Worlds"),
            "gamestate": gamestate(template("%ADJ%", ("1", template("Union_of", ("1", literal("Free Worlds"))))), wars),
        },
    )
    snapshot = save.read_snapshot(save_zip.open_save(path))
    assert snapshot.outputs["get_wars"]["wars"] == [
        "Kel_Ari Hegemony vs Union of Free Worlds",
        "Zorgon-Human War of Liberation",
    ]


@pytest.mark.parametrize(
    "name, expected",
    [
        (template("PLANET_NAME_FORMAT", ("PARENT", {"key": "NAME_Sol"}), ("NUMERAL", literal("III"))), "Sol III"),
        (
            template(
                "SUBPLANET_NAME_FORMAT",
                (
                    "PARENT",
                    template(
                        "PLANET_NAME_FORMAT", ("PARENT", {"key": "SPEC_Kelbrid_system"}), ("NUMERAL", literal("VII"))
                    ),
                ),
                ("NUMERAL", literal("a")),
            ),
            "Kelbrid VII a",
        ),
        (
            template(
                "%ADJ%",
                (
                    "1",
                    template(
                        "Holy",
                        (
                            "1",
                            template("%ADJECTIVE%", ("adjective", literal("Ma'Kar")), ("1", literal("Commonwealth"))),
                        ),
                    ),
                ),
            ),
            "Holy Ma'Kar Commonwealth",
        ),
        (template("NAME_WAR_OF_REVOLT", ("Root.Target.GetName", literal("New Eden"))), "New Eden"),
        ({"key": "PRESCRIPTED_adjective_humans1"}, "humans1"),
        ({"key": "EMPIRE_DESIGN_humans1"}, "humans1"),
        (literal("my_literal_Name"), "my_literal_Name"),
        ("Plain Text", "Plain Text"),
    ],
)
def test_renderings(name, expected):
    assert render(name) == expected


def test_raw_keys_and_templates():
    assert raw_key({"key": "humans1"}) == "humans1" and template_json({"key": "humans1"}) is None
    assert raw_key(literal("Sol Alliance")) is None and raw_key("Sol Alliance") is None and raw_key(None) is None
    adj = template("%ADJ%", ("1", literal("Free")))
    assert raw_key(adj) == "%ADJ%"
    assert json.loads(template_json(adj)) == {
        "key": "%ADJ%",
        "variables": [{"key": "1", "value": {"key": "Free", "literal": "yes"}}],
    }


def test_a_database_from_before_the_key_columns_gets_them(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_save(tmp_path, {"meta": meta("First Union"), "gamestate": gamestate({"key": "humans1"})})
    # As a workbench of then left it: without the columns, and without the record of
    # the schema that made its tables (which came later).
    con = duckdb.connect(str(db))
    con.execute("ALTER TABLE stellaris_snapshots DROP COLUMN empire_name_template")
    con.execute("ALTER TABLE stellaris_snapshots DROP COLUMN empire_name_key")
    con.execute("DROP TABLE workbench_schema")
    con.close()
    other = tmp_path / "more"
    other.mkdir()
    path = write_zip(
        other / "autosave_2251.01.01.sav", {"meta": meta("Second Union"), "gamestate": gamestate({"key": "humans2"})}
    )
    [file] = workbench.ingest([path], db=db).files
    assert file.status == "ingested", file.message
    assert rows(db, "SELECT empire_name, empire_name_key FROM stellaris_snapshots ORDER BY empire_name") == [
        ("First Union", None),
        ("Second Union", "humans2"),
    ]
