"""Facts about the real program (gitmaan/stellaris-companion, commit faf8b27), each held
as a test. Expected values were transcribed from the real program: its history database
as its recorder writes it (run outside this project on a small briefing), its name
resolver's readings of name blocks from the corpus save, and its extractor's metadata
read of the corpus save. None of them is computed by the code under test.

- History: SQLite in WAL journal mode, `PRAGMA user_version` 9 after its nine migrations;
  tables `sessions`, `snapshots`, `events`, `schema_version`, `cached_chronicles`,
  `advisor_memory`. A snapshot row's `military_power` and `colony_count` are the
  briefing's figures cut with int() (52000.4 -> 52000); `wars_count` is NULL unless the
  briefing carried `history.wars`; only a session's first row keeps `full_briefing_json`
  (later rows NULL); `event_state_json` keeps `meta` (date, empire_name, campaign_id,
  player_id), `military`, five `economy.net_monthly` resources, `territory.colonies.total_count`.
  `sessions.empire_name` is the briefing's `meta.empire_name`.
- Names: the extractor's `get_player_status.empire_name` (and the briefing's
  `meta.empire_name`) is the `name=` line of the save's `meta`; for the corpus save that
  is "United Nations of Earth 2", although the player's country (16777223) is named by a
  `%ADJECTIVE%` template. Its resolver reads templates from their variables' keys.
"""

import json
import sqlite3

import pytest

import workbench
from tests.conftest import rows
from tests.stellaris.test_names_from_save import gamestate, ingest_save, meta
from workbench.stellaris import save, save_zip
from workbench.stellaris.names import render

SESSION = "6c2fb2b98ed5462388df682ff37017a4"
EMPIRE = "United Nations of Earth 2"

# The companion's tables after its migrations: (column, declared type), as `PRAGMA table_info` lists them.
COMPANION_TABLES = {
    "sessions": [
        ("id", "TEXT"),
        ("save_id", "TEXT"),
        ("save_path", "TEXT"),
        ("empire_name", "TEXT"),
        ("started_at", "INTEGER"),
        ("ended_at", "INTEGER"),
        ("last_game_date", "TEXT"),
        ("last_updated_at", "INTEGER"),
        ("latest_briefing_json", "TEXT"),
        ("advisor_custom_instructions", "TEXT"),
    ],
    "snapshots": [
        ("id", "INTEGER"),
        ("session_id", "TEXT"),
        ("captured_at", "INTEGER"),
        ("game_date", "TEXT"),
        ("save_hash", "TEXT"),
        ("military_power", "INTEGER"),
        ("colony_count", "INTEGER"),
        ("wars_count", "INTEGER"),
        ("energy_net", "REAL"),
        ("alloys_net", "REAL"),
        ("full_briefing_json", "TEXT"),
        ("event_state_json", "TEXT"),
    ],
    "events": [
        ("id", "INTEGER"),
        ("session_id", "TEXT"),
        ("captured_at", "INTEGER"),
        ("game_date", "TEXT"),
        ("event_type", "TEXT"),
        ("summary", "TEXT"),
        ("data_json", "TEXT"),
    ],
    "schema_version": [("version", "INTEGER"), ("updated_at", "INTEGER")],
    "cached_chronicles": [
        ("id", "TEXT"),
        ("session_id", "TEXT"),
        ("save_id", "TEXT"),
        ("language", "TEXT"),
        ("chronicle_text", "TEXT"),
        ("chapters_json", "TEXT"),
        ("event_count", "INTEGER"),
        ("snapshot_count", "INTEGER"),
        ("generated_at", "TEXT"),
        ("chronicle_custom_instructions", "TEXT"),
    ],
    "advisor_memory": [
        ("save_id", "TEXT"),
        ("language", "TEXT"),
        ("summary_text", "TEXT"),
        ("last_game_date", "TEXT"),
        ("updated_at", "INTEGER"),
    ],
}


def state(date, military_power, energy, alloys, colonies, wars=None):
    """An `event_state_json` as the companion wrote it for our briefing."""
    value = {
        "meta": {"date": date, "empire_name": EMPIRE, "campaign_id": "c0ffee", "player_id": 16777223},
        "military": {"military_power": military_power, "military_fleets": 3},
        "economy": {
            "net_monthly": {"energy": energy, "alloys": alloys, "consumer_goods": 1.25, "food": 3.0, "minerals": 35.5}
        },
        "territory": {"colonies": {"total_count": colonies}},
        "technology": {"tech_count": 40},
        "diplomacy": {"federation": None},
    }
    if wars is not None:
        value["history"] = {"wars": wars}
    return json.dumps(value, separators=(",", ":"))


BASELINE_BRIEFING = {
    "meta": {
        "empire_name": EMPIRE,
        "date": "2310.01.01",
        "version": "Phoenix v4.0.1",
        "player_id": 16777223,
        "campaign_id": "c0ffee",
    },
    "military": {"military_power": 52000.4, "military_fleets": 3, "fleet_size": 40},
    "economy": {
        "economy_power": 100.0,
        "tech_power": 50.0,
        "net_monthly": {
            "energy": 20.0,
            "minerals": 35.5,
            "food": 3.0,
            "alloys": -12.5,
            "consumer_goods": 1.25,
            "unity": 9.0,
        },
    },
    "territory": {"colonies": {"total_count": 2, "total_population": 80}},
    "technology": {"tech_count": 40, "researched": []},
    "diplomacy": {"federation": None, "allies": []},
}

# (id, session_id, game_date, save_hash, military_power, colony_count, wars_count, energy_net, alloys_net,
#  full_briefing_json, event_state_json): the three rows the companion's recorder wrote.
COMPANION_ROWS = [
    (
        1,
        SESSION,
        "2310.01.01",
        "h0",
        52000,
        2,
        None,
        20.0,
        -12.5,
        json.dumps(BASELINE_BRIEFING),
        state("2310.01.01", 52000.4, 20.0, -12.5, 2),
    ),
    (
        2,
        SESSION,
        "2311.01.01",
        "h1",
        53000,
        2,
        1,
        25.0,
        -2.0,
        None,
        state("2311.01.01", 53000.6, 25.0, -2.0, 2, {"count": 1, "wars": ["x"]}),
    ),
    (3, SESSION, "2312.01.01", "h2", 54000, 3, None, 30.0, 4.0, None, state("2312.01.01", 54000.0, 30.0, 4.0, 3)),
]


def companion_history(path, snapshot_rows=COMPANION_ROWS):
    """A database laid out as the companion's (our own DDL for its columns), in WAL mode."""
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = WAL")
    for table, columns in COMPANION_TABLES.items():
        con.execute(f"CREATE TABLE {table} ({', '.join(f'{name} {kind}' for name, kind in columns)})")
    con.execute("PRAGMA user_version = 9")
    con.execute("INSERT INTO schema_version VALUES (9, 1795458553)")
    con.execute(
        "INSERT INTO sessions (id, save_id, save_path, empire_name, started_at, last_game_date) "
        "VALUES (?, 'c610209ba48dd5cd', '/saves/une/autosave_2312.01.01.sav', ?, 1795458553, '2312.01.01')",
        (SESSION, EMPIRE),
    )
    con.executemany(
        "INSERT INTO snapshots (id, session_id, game_date, save_hash, military_power, colony_count, "
        "wars_count, energy_net, alloys_net, full_briefing_json, event_state_json) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        snapshot_rows,
    )
    con.commit()
    con.close()
    return path


def test_the_companion_layout_is_what_it_creates(tmp_path):
    path = companion_history(tmp_path / "stellaris_history.db")
    header = path.read_bytes()[:100]
    assert header[18:20] == b"\x02\x02"  # the file format's read/write versions: 2 means WAL
    con = sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True)
    assert con.execute("PRAGMA user_version").fetchone() == (9,)
    for table, columns in COMPANION_TABLES.items():
        assert [(c[1], c[2]) for c in con.execute(f"PRAGMA table_info({table})")] == columns
    con.close()


def test_a_companion_history_loads_without_false_findings(tmp_path):
    path = companion_history(tmp_path / "stellaris_history.db")
    db = tmp_path / "w.duckdb"
    [file] = workbench.ingest([path], db=db).files
    assert (file.status, file.records, file.rejected) == ("ingested", 3, 0)
    # military_power 52000 beside a briefing's 52000.4 is the companion's int(), not lost data
    assert [v for v in file.violations if v.rule == "invariant_full_briefing"] == []
    # what is found is only the first row's briefing held to the seed's full-briefing shape
    assert {(v.locator, v.field.split(".")[0]) for v in file.violations} <= {("row 1", "full_briefing_json")}
    assert rows(
        db,
        "SELECT locator, series, game_date, player_id, empire_name, empire_name_key, military_power, "
        "colony_count, wars_count, at_war FROM stellaris_snapshots ORDER BY day",
    ) == [
        ("row 1", "stellaris_history", "2310.01.01", 16777223, EMPIRE, None, 52000.0, 2, None, None),
        ("row 2", "stellaris_history", "2311.01.01", 16777223, EMPIRE, None, 53000.0, 2, 1, True),
        ("row 3", "stellaris_history", "2312.01.01", 16777223, EMPIRE, None, 54000.0, 3, None, None),
    ]
    assert rows(
        db, "SELECT locator, resource, net FROM stellaris_resources WHERE locator = 'row 3' ORDER BY resource"
    ) == [
        ("row 3", "alloys", 4.0),
        ("row 3", "consumer_goods", 1.25),
        ("row 3", "energy", 30.0),
        ("row 3", "food", 3.0),
        ("row 3", "minerals", 35.5),
    ]
    # the baseline's briefing carries `unity` too
    assert rows(db, "SELECT net FROM stellaris_resources WHERE locator = 'row 1' AND resource = 'unity'") == [(9.0,)]


def test_a_column_further_off_than_int_is_still_found(tmp_path):
    damaged = list(COMPANION_ROWS)
    damaged[1] = damaged[1][:4] + (52999,) + damaged[1][5:]  # int(53000.6) is 53000
    path = companion_history(tmp_path / "stellaris_history.db", damaged)
    [file] = workbench.validate([path]).files
    assert [(v.locator, v.field, v.rule) for v in file.violations if v.rule == "invariant_full_briefing"] == [
        ("row 2", "military_power", "invariant_full_briefing")
    ]


def test_the_player_empire_is_named_as_the_companion_names_it(corpus_save):
    # the real extractor's get_metadata() on the corpus save: name, date, version
    snapshot = save.read_snapshot(save_zip.open_save(corpus_save))
    status = snapshot.outputs["get_player_status"]
    assert (status["empire_name"], status["date"]) == ("United Nations of Earth 2", "2312.01.01")


# Name blocks of the corpus save (country names, a war's name) and the real resolver's reading.
def adjective(species, noun=None):
    variables = [{"key": "adjective", "value": {"key": f"SPEC_{species}"}}]
    if noun is not None:
        variables.append({"key": "1", "value": noun})
    return {"key": "%ADJECTIVE%", "variables": variables}


def word(key, inner):
    return {"key": key, "variables": [{"key": "1", "value": inner}]}


@pytest.mark.parametrize(
    "block, companion_reading",
    [
        (adjective("Bilnoc", {"key": "Autocracy"}), "Bilnoc Autocracy"),  # the player's country
        (adjective("Kelbrid", {"key": "Imperium"}), "Kelbrid Imperium"),
        (
            {
                "key": "%ADJ%",
                "variables": [{"key": "1", "value": word("Galactic", adjective("Fafossan", {"key": "Empire"}))}],
            },
            "Galactic Fafossan Empire",
        ),
        (
            adjective(
                "Vetirisius", {"key": "%ADJ%", "variables": [{"key": "1", "value": word("Allied", {"key": "Worlds"})}]}
            ),
            "Vetirisius Allied Worlds",
        ),
        (
            adjective(
                "Lishian", {"key": "%ADJ%", "variables": [{"key": "1", "value": word("Tranquil", {"key": "Kingdom"})}]}
            ),
            "Lishian Tranquil Kingdom",
        ),
        ({"key": "SPEC_Tycan"}, "Tycan"),
    ],
)
def test_template_readings_agree_with_the_companion(block, companion_reading):
    assert render(block) == companion_reading


def test_where_the_companion_guesses_from_a_key_the_meta_name_is_used_instead(tmp_path):
    # The companion reads `EMPIRE_DESIGN_humans1` (country 0 of the corpus save) as "Humans 1",
    # a guess from the key; the save's own text for the player's empire is its meta name.
    db = ingest_save(
        tmp_path, {"meta": meta("United Nations of Earth"), "gamestate": gamestate({"key": "EMPIRE_DESIGN_humans1"})}
    )
    assert rows(db, "SELECT empire_name, empire_name_key FROM stellaris_snapshots") == [
        ("United Nations of Earth", "EMPIRE_DESIGN_humans1")
    ]


def test_the_companions_player_status_types_power_as_a_float(tmp_path):
    """Its get_player_status writes `military_power` and `economy_power` as floats
    (a 4.2.4 save: 344441.25781, 34706.57403) where seed 000 says int: a true finding."""
    status = {
        "player_id": 0,
        "empire_name": EMPIRE,
        "date": "2509.07.01",
        "military_power": 344441.25781,
        "economy_power": 34706.57403,
        "tech_power": 33920.0,
        "victory_rank": 5,
        "fleet_size": 895,
        "military_fleet_count": 10,
        "military_ships": 127,
        "fleet_count": 10,
        "starbase_count": 26,
        "outpost_count": 24,
        "celestial_bodies_in_territory": 223,
        "colonies": {
            "total_count": 30,
            "total_population": 161308,
            "avg_pops_per_colony": 5376.9,
            "habitats": {"count": 16, "population": 69438, "avg_pops": 4339.9},
            "planets": {"count": 14, "population": 91870, "avg_pops": 6562.1},
        },
    }
    (tmp_path / "get_player_status.json").write_text(json.dumps(status))
    [file] = workbench.validate([tmp_path / "get_player_status.json"]).files
    assert sorted((v.field, v.rule) for v in file.violations if v.severity == "error") == [
        ("economy_power", "wrong_type"),
        ("military_power", "wrong_type"),
    ]
