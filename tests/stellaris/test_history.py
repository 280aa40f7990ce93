"""The companion's SQLite history: read-only, one record per row, into the same tables."""

import hashlib
import json
import sqlite3

import workbench
from tests.conftest import rows
from tests.stellaris.examples import example
from workbench.stellaris import claims

SCHEMA = """
CREATE TABLE snapshots (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, captured_at INTEGER,
    game_date TEXT, save_hash TEXT, military_power INTEGER, colony_count INTEGER, wars_count INTEGER,
    energy_net REAL, alloys_net REAL, full_briefing_json TEXT, event_state_json TEXT);
"""


def event_state(energy=20.0, alloys=-12.5, food=3.0):
    return json.dumps(
        {
            "meta": {"date": "x", "player_id": 16777223, "empire_name": "UNE"},
            "economy": {
                "net_monthly": {
                    "energy": energy,
                    "alloys": alloys,
                    "consumer_goods": 1.0,
                    "food": food,
                    "minerals": 35.5,
                }
            },
        }
    )


def make_history(path, rows_to_insert, schema=SCHEMA):
    con = sqlite3.connect(path)
    con.executescript(schema)
    if rows_to_insert:
        con.executemany(
            "INSERT INTO snapshots (session_id, game_date, military_power, colony_count, wars_count, "
            "energy_net, alloys_net, full_briefing_json, event_state_json) VALUES (?,?,?,?,?,?,?,?,?)",
            rows_to_insert,
        )
    con.commit()
    con.close()
    return path


def good_rows():
    briefing = json.dumps(example("get_full_briefing"))
    return [
        ("s1", "2342.06.15", 52000, 22, 1, 20.0, -12.5, briefing, event_state()),
        ("s1", "2343.01.01", 53000, 23, 0, 25.0, -2.0, "{}", event_state(25.0, -2.0)),
        ("s1", "2344.01.01", 54000, 24, 0, 30.0, 4.0, None, event_state(30.0, 4.0)),
    ]


def test_detection_needs_the_sqlite_header_and_a_snapshots_table(tmp_path):
    history = make_history(tmp_path / "history.db", good_rows())
    assert claims(history, history.read_bytes()[:64])
    other = sqlite3.connect(tmp_path / "other.db")
    other.execute("CREATE TABLE t (x)")
    other.close()
    assert not claims(tmp_path / "other.db", (tmp_path / "other.db").read_bytes()[:64])
    (tmp_path / "text.db").write_text("SQLite format 3 but not really")
    assert not claims(tmp_path / "text.db", b"SQLite format 3 but not really")


def test_rows_load_into_snapshots_and_resources(tmp_path):
    history = make_history(tmp_path / "companion.db", good_rows())
    db = tmp_path / "w.duckdb"
    [file] = workbench.ingest([tmp_path], db=db).files
    assert (file.status, file.records, file.rejected, file.violations) == ("ingested", 3, 0, [])
    assert rows(
        db,
        "SELECT series, origin, locator, game_date, player_id, military_power, wars_count, at_war "
        "FROM stellaris_snapshots ORDER BY day",
    ) == [
        ("companion", "history", "row 1", "2342.06.15", 16777223, 52000.0, 1, True),
        ("companion", "history", "row 2", "2343.01.01", 16777223, 53000.0, 0, False),
        ("companion", "history", "row 3", "2344.01.01", 16777223, 54000.0, 0, False),
    ]
    nets = rows(
        db,
        "SELECT locator, resource, net FROM stellaris_resources WHERE resource IN ('energy', 'food') "
        "ORDER BY locator, resource",
    )
    assert nets == [
        ("row 1", "energy", 20.0),
        ("row 1", "food", 3.0),
        ("row 2", "energy", 25.0),
        ("row 2", "food", 3.0),
        ("row 3", "energy", 30.0),
        ("row 3", "food", 3.0),
    ]
    # the first row's full briefing is validated and kept
    assert rows(db, "SELECT locator, tool, origin, valid FROM stellaris_tool_outputs") == [
        ("row 1", "get_full_briefing", "history", True)
    ]
    assert history.exists()


def test_the_file_is_opened_read_only_and_left_untouched(tmp_path, monkeypatch):
    history = make_history(tmp_path / "companion.db", good_rows())
    before = hashlib.sha256(history.read_bytes()).hexdigest(), history.stat().st_mtime_ns
    opened = []
    real_connect = sqlite3.connect

    def watching_connect(target, *args, **kwargs):
        opened.append((str(target), kwargs.get("uri")))
        return real_connect(target, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", watching_connect)
    workbench.ingest([history], db=tmp_path / "w.duckdb")
    assert opened and all(target.endswith("?mode=ro&immutable=1") and uri for target, uri in opened)
    assert (hashlib.sha256(history.read_bytes()).hexdigest(), history.stat().st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["companion.db", "w.duckdb"]


def test_bad_rows_are_found_where_they_are(tmp_path):
    history_rows = good_rows()
    history_rows[1] = ("s1", "2343.01.01", 53000, 23, 0, 40.0, -2.0, "{}", event_state(25.0, -2.0))
    history_rows[2] = ("s1", "2344.01.01", 54000, 24, 0, 30.0, 4.0, None, event_state()[:20])
    history_rows.append(("s1", "someday", None, None, None, None, None, None, None))
    make_history(tmp_path / "companion.db", history_rows)
    db = tmp_path / "w.duckdb"
    [file] = workbench.ingest([tmp_path / "companion.db"], db=db).files
    assert (file.records, file.rejected) == (3, 1)
    assert {(v.locator, v.field, v.rule) for v in file.violations} == {
        ("row 2", "energy_net", "invariant_full_briefing"),
        ("row 3", "event_state_json", "invalid_json"),
        ("row 4", "game_date", "date_format"),
    }
    [(locator, raw)] = rows(db, "SELECT locator, raw FROM rejects")
    assert locator == "row 4" and json.loads(raw)["game_date"] == "someday"


def test_a_full_briefing_that_disagrees_with_its_columns(tmp_path):
    history_rows = good_rows()[:1]
    briefing = example("get_full_briefing")
    briefing["military"]["military_power"] = 1
    history_rows[0] = history_rows[0][:7] + (json.dumps(briefing), event_state())
    make_history(tmp_path / "companion.db", history_rows)
    [file] = workbench.validate([tmp_path / "companion.db"]).files
    assert {(v.locator, v.field, v.rule) for v in file.violations} == {
        ("row 1", "military_power", "invariant_full_briefing")
    }


def test_several_sessions_are_several_series(tmp_path):
    history_rows = good_rows()
    history_rows[2] = ("s2",) + history_rows[2][1:]
    make_history(tmp_path / "companion.db", history_rows)
    db = tmp_path / "w.duckdb"
    workbench.ingest([tmp_path / "companion.db"], db=db)
    assert rows(db, "SELECT DISTINCT series FROM stellaris_snapshots ORDER BY 1") == [
        ("companion/s1",),
        ("companion/s2",),
    ]


def test_a_history_without_game_date_fails_with_one_line(tmp_path):
    make_history(
        tmp_path / "odd.db",
        [],
        schema="CREATE TABLE snapshots (id INTEGER, session_id TEXT, game_date_text TEXT, "
        "military_power INTEGER, colony_count INTEGER, wars_count INTEGER, energy_net REAL, "
        "alloys_net REAL, full_briefing_json TEXT, event_state_json TEXT);",
    )
    [file] = workbench.ingest([tmp_path / "odd.db"], db=tmp_path / "w.duckdb").files
    assert file.status == "failed" and "no `game_date` column" in file.message
