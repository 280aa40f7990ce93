"""From the number to the record: `records` finds every record by what it is, and its
raw text is the line as written in its file (read here with plain Python, byte for
byte); `side_by_side` puts two models' decisions on the same turn in one row, with the
disagreements first; `count_records`, `findings_of` and `unsearched` say how many, what a
record breaks and which files a search passes over. Expected values come from the files'
own lines and the seed's text."""

import json
import os

import duckdb
import polars as pl
import pytest

import workbench
from tests.conftest import SHARED, write_lines
from workbench import analysis
from workbench.errors import WorkbenchError
from workbench.records import count_records, findings_of, known_severities, records, unsearched

REAL_DAMAGE = SHARED / "corpus" / "damage"


def line_of(path, number: int) -> str:
    """Line `number` of a file as written: its bytes up to the LF, without a CR before it."""
    line = path.read_bytes().split(b"\n")[number - 1]
    return line.removesuffix(b"\r").decode("utf-8")


def arena_line(agent, tick, model, tool="idle", **extra):
    return json.dumps({"agent_id": agent, "tick": tick, "tool": tool, "params": {}, "model": model, **extra})


def write_arena_logs(tmp_path):
    """Two models in two episodes: `a` always valid, `b` flies (no tool of seed 002) on
    the odd ticks; a blank line, a CRLF line and a line that is no JSON among them.
    Ingested into `w.duckdb`: (its path, episode 1's log, episode 2's)."""
    episode_1 = tmp_path / "logs" / "ep_1.decisions.jsonl"
    episode_1.parent.mkdir()
    lines = []
    for tick in range(4):
        lines.append(arena_line("agent_a", tick, "model-a", "query_inventory" if tick == 2 else "idle"))
        lines.append(arena_line("agent_b", tick, "model-b", "fly" if tick % 2 else "idle"))
    lines.insert(3, "")
    lines.insert(5, "{not json")
    write_lines(episode_1, lines)
    episode_2 = tmp_path / "logs" / "ep_2.decisions.jsonl"
    episode_2.write_bytes(
        (
            arena_line("agent_a", 0, "model-a")
            + "\r\n"
            + arena_line("agent_b", 0, "model-b", "fly")
            + "\r\n"
            + arena_line("agent_c", 0, "model-c")
            + "\n"
        ).encode()
    )
    db = tmp_path / "w.duckdb"
    report = workbench.ingest([tmp_path / "logs"], db=db)
    assert not report.failed
    return db, episode_1, episode_2


@pytest.fixture
def arena_db(tmp_path):
    """`write_arena_logs`' database, open: (connection, episode 1's log, episode 2's)."""
    db, episode_1, episode_2 = write_arena_logs(tmp_path)
    con = duckdb.connect(str(db))
    yield con, episode_1, episode_2
    con.close()


def test_every_line_is_one_record_and_its_raw_text_is_the_line_as_written(arena_db):
    con, episode_1, episode_2 = arena_db
    found = analysis.records(con, limit=None)
    # 10 lines in episode 1, one blank: 9 records (8 decisions and the reject), 3 in episode 2
    assert found.height == 12
    for row in found.iter_rows(named=True):
        path = episode_1 if row["path"].endswith("ep_1.decisions.jsonl") else episode_2
        assert row["raw"] == line_of(path, row["line"]), row
        assert row["locator"] == f"line {row['line']}"
    assert found.filter(found["path"].str.ends_with("ep_1.decisions.jsonl"))["line"].to_list() == [
        1,
        2,
        3,
        5,
        6,
        7,
        8,
        9,
        10,
    ]
    reject = found.filter(found["line"] == 6).row(0, named=True)
    assert reject["raw"] == "{not json" and reject["valid"] is False and reject["model"] is None


def test_filters_by_model_validity_rule_severity_and_game(arena_db):
    con, episode_1, _ = arena_db
    invalid_b = analysis.records(con, model="model-b", valid=False)
    # model-b flew on ticks 1 and 3 of episode 1 and on tick 0 of episode 2
    assert invalid_b.select("game_id", "turn").rows() == [("logs/ep_1", 1), ("logs/ep_1", 3), ("logs/ep_2", 0)]
    assert all("fly" in raw for raw in invalid_b["raw"])
    assert all(invalid_b["rules"].to_list()) and all("error" in s for s in invalid_b["severities"].to_list())
    rule = invalid_b["rules"].to_list()[0][0]
    by_rule = analysis.records(con, rule=rule)
    assert set(by_rule["model"]) == {"model-b"} and by_rule.height >= 3
    assert analysis.records(con, game_id="logs/ep_2")["line"].to_list() == [1, 2, 3]
    assert analysis.records(con, severity="error", format="gm").is_empty()
    assert analysis.records(con, model="model-a", valid=False).is_empty()
    assert analysis.records(con, model="model-a", valid=True).height == 5
    assert analysis.records(con, limit=2).height == 2 and analysis.records(con, limit=0).is_empty()


def test_text_is_found_in_the_raw_text_in_any_case(arena_db):
    con, episode_1, episode_2 = arena_db
    hits = analysis.records(con, text="QUERY_inventory")
    assert hits.select("game_id", "turn", "model").rows() == [("logs/ep_1", 2, "model-a")]
    assert hits["raw"][0] == line_of(episode_1, hits["line"][0])
    assert analysis.records(con, text="not json")["raw"].to_list() == ["{not json"]
    # every line holding `agent_c` (plain Python): one, in episode 2
    expected = [n for n, text in enumerate(episode_2.read_text().split("\n"), 1) if "agent_c" in text]
    assert analysis.records(con, text="agent_c")["line"].to_list() == expected == [3]
    assert analysis.records(con, text="no such words").is_empty()


def test_a_changed_file_gives_no_raw_text_and_a_reject_keeps_its_own(arena_db):
    con, episode_1, _ = arena_db
    episode_1.write_text(episode_1.read_text().replace("agent_a", "agent_z"))  # same size, other bytes
    found = analysis.records(con, game_id="logs/ep_1", limit=None)
    assert found.filter(found["line"] == 6)["raw"].to_list() == ["{not json"]  # kept in the database
    assert found.filter(found["line"] != 6)["raw"].null_count() == found.height - 1
    assert analysis.records(con, text="agent_a", game_id="logs/ep_1").is_empty()  # not searched in what changed
    episode_1.unlink()
    assert analysis.records(con, game_id="logs/ep_1", limit=None)["raw"].null_count() == found.height - 1


def test_a_grown_file_still_gives_the_raw_text_of_what_was_ingested(arena_db):
    con, episode_1, _ = arena_db
    with open(episode_1, "a") as handle:
        handle.write(arena_line("agent_a", 9, "model-a") + "\n")
    found = analysis.records(con, game_id="logs/ep_1", limit=None)
    assert found.height == 9 and found["raw"].null_count() == 0
    assert found["raw"][0] == line_of(episode_1, 1)


def test_aliases_and_bad_arguments(arena_db):
    con, _, _ = arena_db
    both = analysis.records(con, model="family", aliases={"model-a": "family", "model-b": "family"}, limit=None)
    assert both.height == 8 + 2 and set(both["model"]) == {"family"}  # a's and b's decisions in both episodes
    with pytest.raises(WorkbenchError, match="no severity 'fatal'"):
        analysis.records(con, severity="fatal")
    for limit in (-1, 1.0, True):  # True is an int to Python, not a number of rows
        with pytest.raises(WorkbenchError, match="limit must be"):
            analysis.records(con, limit=limit)


def test_side_by_side_pairs_the_same_episode_and_tick_disagreements_first(arena_db):
    con, episode_1, episode_2 = arena_db
    pairs = analysis.side_by_side(con, "model-a", "model-b")
    # shared turns: ep_1 ticks 0-3 and ep_2 tick 0; b is invalid on ep_1 1, 3 and ep_2 0
    assert pairs.select("game_id", "turn", "disagree").rows() == [
        ("logs/ep_1", 1, True),
        ("logs/ep_1", 3, True),
        ("logs/ep_2", 0, True),
        ("logs/ep_1", 0, False),
        ("logs/ep_1", 2, False),
    ]
    first = pairs.row(0, named=True)
    assert first["valid_a"] is True and first["valid_b"] is False
    assert first["action_a"] == "idle" and first["action_b"] == "fly"
    assert first["raw_a"] == line_of(episode_1, int(first["locator_a"].split()[1]))
    assert first["raw_b"] == line_of(episode_1, int(first["locator_b"].split()[1]))
    assert first["rules_a"] == [] and first["rules_b"]
    last_of_ep_2 = pairs.filter(pairs["game_id"] == "logs/ep_2").row(0, named=True)
    assert last_of_ep_2["raw_a"] == line_of(episode_2, 1) and last_of_ep_2["raw_b"] == line_of(episode_2, 2)
    assert analysis.side_by_side(con, "model-a", "model-c").height == 1  # they share only ep_2 tick 0
    assert analysis.side_by_side(con, "model-a", "nobody").is_empty()
    with pytest.raises(WorkbenchError, match="two different models"):
        analysis.side_by_side(con, "model-a", "model-a")


def test_game_master_responses_named_by_id_are_records_of_their_lines(tmp_path):
    """A response is `response r-N` in its decision and findings; it is still its line."""

    def response(rid, text, model):
        return json.dumps({"id": rid, "ts": "2026-02-06T09:38:54+00:00", "model": model, "text": text})

    path = write_lines(
        tmp_path / "session_1.jsonl",
        [
            response("r-1", "You enter the saloon.\nLOCATION: Silver Gulch Saloon", "gm-a"),
            "",
            response("r-2", 'A shadow.\nSUGGESTED_ACTIONS: [{"text": "Vanish", "type": "magic"}]', "gm-a"),
        ],
    )
    (file,) = workbench.ingest([path], db=tmp_path / "w.duckdb", format="gm").files
    assert file.status == "ingested", file.message
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    found = analysis.records(con, limit=None)
    assert found.select("locator", "model", "valid").rows() == [("line 1", "gm-a", True), ("line 3", "gm-a", False)]
    assert found["raw"].to_list() == [line_of(path, 1), line_of(path, 3)]
    assert analysis.records(con, valid=False)["rules"].to_list()[0]  # the unknown action type
    con.close()


@pytest.mark.skipif(not REAL_DAMAGE.is_dir(), reason=f"the real Damage corpus is absent ({REAL_DAMAGE})")
def test_real_damage_logs_every_record_reads_back_as_its_line(tmp_path):
    logs = sorted(REAL_DAMAGE.rglob("*.events.jsonl"))[:3]
    report = workbench.ingest(logs, db=tmp_path / "w.duckdb")
    assert not report.failed
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    found = analysis.records(con, limit=None)
    # every non-blank line of each file is one record (the ingest's own count, checked here by hand)
    for log in logs:
        lines = [n for n, text in enumerate(log.read_bytes().split(b"\n"), 1) if text.strip()]
        mine = found.filter(found["path"] == os.fspath(log.resolve()))
        assert mine["line"].to_list() == lines
        for line, raw in mine.select("line", "raw").rows()[:200]:
            assert raw == line_of(log, line)
    decisions = con.execute("SELECT count(*) FROM decisions").fetchone()[0]
    assert analysis.records(con, model=found.drop_nulls("model")["model"][0], limit=None).height <= decisions
    attacks = analysis.records(con, text='"mode": "ATTACK_TEAM"', limit=None)  # any case
    by_hand = sum(b'"mode": "attack_team"' in text.lower() for log in logs for text in log.read_bytes().split(b"\n"))
    assert by_hand > 0 and attacks.height == by_hand
    con.close()


def test_at_keeps_the_records_a_chart_names(arena_db):
    con, episode_1, _ = arena_db
    source = con.execute("SELECT source_id FROM sources WHERE path LIKE '%ep_1%'").fetchone()[0]
    at = {"source_id": [source, source], "line": [2, 7]}
    assert analysis.records(con, at=at)["line"].to_list() == [2, 7]
    assert analysis.records(con, at=at, valid=False)["line"].to_list() == []  # lines 2 and 7: valid decisions
    assert analysis.records(con, at=at, text="agent_b")["line"].to_list() == [2]
    assert analysis.records(con, at={"source_id": [], "line": []}).is_empty()


def test_a_turn_decided_twice_gives_each_decision_a_row_at_its_own_line(tmp_path):
    # model-b decides tick 0 twice: first a valid idle (line 2), then a flight (line 3)
    log = write_lines(
        tmp_path / "ep_1.decisions.jsonl",
        [
            arena_line("agent_a", 0, "model-a"),
            arena_line("agent_b", 0, "model-b"),
            arena_line("agent_b", 0, "model-b", "fly"),
            arena_line("agent_a", 1, "model-a"),
            arena_line("agent_b", 1, "model-b", "fly"),
            arena_line("agent_b", 1, "model-b"),
        ],
    )
    workbench.ingest([log], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    pairs = analysis.side_by_side(con, "model-a", "model-b")
    con.close()
    # each of b's decisions on a row of its own, in file order; a's one decision beside b's first
    assert pairs.select("turn", "valid_b", "locator_b", "locator_a", "disagree").rows() == [
        (0, True, "line 2", "line 1", True),
        (0, False, "line 3", None, True),
        (1, False, "line 5", "line 4", True),
        (1, True, "line 6", None, True),
    ]
    assert pairs["raw_b"].to_list() == [line_of(log, n) for n in (2, 3, 5, 6)]
    assert pairs["raw_a"].to_list() == [line_of(log, 1), None, line_of(log, 4), None]


def test_two_runs_episodes_of_one_name_are_two_games_and_never_pair(tmp_path):
    # run1/ep1 is model A's, run2/ep1 model B's: the same file name in two runs
    for run, model in (("run1", "model-a"), ("run2", "model-b")):
        (tmp_path / "runs" / run).mkdir(parents=True)
        write_lines(
            tmp_path / "runs" / run / "ep1.decisions.jsonl", [arena_line("agent_x", tick, model) for tick in range(20)]
        )
    workbench.ingest([tmp_path / "runs"], db=tmp_path / "w.duckdb")
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        games = con.execute("SELECT DISTINCT game_id FROM decisions ORDER BY 1").fetchall()
        assert games == [("run1/ep1",), ("run2/ep1",)]
        assert analysis.side_by_side(con, "model-a", "model-b").is_empty()
        compared = analysis.compare_models(con, "model-a", "model-b")
        assert compared["shared_turns"].to_list() == [0] and compared["games_a"].to_list() == [1]
        # the same key whichever way the files are named: one of them alone, from its own folder
        again = tmp_path / "again.duckdb"
        workbench.ingest([tmp_path / "runs" / "run1" / "ep1.decisions.jsonl"], db=again)
        with duckdb.connect(str(again)) as other:
            assert other.execute("SELECT DISTINCT game_id FROM decisions").fetchall() == [("run1/ep1",)]
    finally:
        con.close()


def test_the_rules_broken_most_name_their_places_by_path_and_check_their_severities(arena_db):
    con, episode_1, episode_2 = arena_db
    rules = analysis.top_violation_rules(con, severities="error", examples=5)
    assert rules.equals(analysis.top_violation_rules(con, severities=("error",), examples=5))
    flights = rules.filter(pl.col("rule") == "unknown_tool").row(0, named=True)
    # model-b flew on ep_1's ticks 1 and 3 and on ep_2's tick 0: places in file and line order
    lines_1 = [n for n, text in enumerate(episode_1.read_text().splitlines(), 1) if '"fly"' in text]
    assert flights["examples"] == [f"{episode_1}:line {n}" for n in lines_1] + [f"{episode_2}:line 2"]
    for wrong in ("Info", ("error", "fatal")):
        with pytest.raises(WorkbenchError, match="no severity"):
            analysis.top_violation_rules(con, severities=wrong)


# --- the module's own functions, called directly -------------------------------------------------

# The tools of Agent Arena, as seed 002 names them: the headings of its tool specifications.
SEED_002 = (SHARED / "seeds" / "002_1957e62afd48e707.txt").read_text()
SEED_TOOLS = [
    line.removeprefix("### ")
    for line in SEED_002.split("## Tool Specifications", 1)[1].split("\n## ", 1)[0].splitlines()
    if line.startswith("### ")
]


def test_every_record_is_counted_as_its_lines_are_and_a_limit_cuts_only_what_is_shown(arena_db):
    con, episode_1, episode_2 = arena_db
    texts = [text for path in (episode_1, episode_2) for text in path.read_text().splitlines() if text.strip()]
    assert count_records(con) == len(texts) == 12  # a record a line that is not blank
    assert count_records(con, model="model-b", valid=False) == sum('"fly"' in text for text in texts) == 3
    assert count_records(con, text="AGENT_C") == sum("agent_c" in text for text in texts) == 1
    assert count_records(con, format="gm") == 0
    shown = records(con, limit=5)
    assert shown.height == 5 and shown["raw"].to_list() == [line_of(episode_1, n) for n in (1, 2, 3, 5, 6)]


def test_the_findings_of_a_record_say_which_rule_of_the_seed_it_breaks(arena_db):
    con, episode_1, _ = arena_db
    [(source,)] = con.execute("SELECT source_id FROM sources WHERE path = ?", [str(episode_1)]).fetchall()
    flight = next(n for n, text in enumerate(episode_1.read_text().splitlines(), 1) if '"fly"' in text)
    [(severity, rule, field, message)] = findings_of(con, source, f"line {flight}", flight).rows()
    assert (severity, rule, field) == ("error", "unknown_tool", "tool")
    assert SEED_TOOLS == ["move_to", "collect", "craft", "query_world", "query_inventory", "send_message", "idle"]
    assert message == f"tool 'fly' is not one of the seed's tools ({', '.join(SEED_TOOLS)})"
    [(severity, rule, field, _)] = findings_of(con, source, "line 6", 6).rows()  # `{not json`
    assert (severity, rule, field) == ("error", "not_a_json_object", "(record)")
    assert findings_of(con, source, "line 1", 1).is_empty()  # agent_a idles: a tool of the seed


def test_the_files_a_search_passes_over_are_those_no_longer_as_ingested(arena_db):
    con, episode_1, episode_2 = arena_db
    assert unsearched(con) == []
    episode_1.write_text(episode_1.read_text().replace("agent_a", "agent_z"))  # same size, other bytes
    assert unsearched(con) == [str(episode_1)] and unsearched(con, format="gm") == []
    episode_2.unlink()
    assert unsearched(con) == [str(episode_1), str(episode_2)]


def test_a_severity_is_one_of_error_warning_and_info():
    assert known_severities("error") == ("error",)
    assert known_severities(["info", "warning"]) == ("info", "warning")
    with pytest.raises(WorkbenchError) as raised:
        known_severities(("error", "fatal"))
    assert str(raised.value) == "no severity 'fatal'; one of error, warning, info"
