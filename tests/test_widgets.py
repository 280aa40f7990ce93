"""The replay scrubber: its state against an independent replay of the log, its jumps,
its widget tree (no browser), and what it shows of hostile log text."""

import json
import random
import subprocess
import sys
from datetime import UTC, datetime

import ipywidgets as widgets
import numpy as np
import pytest
from ipywidgets.widgets.widget_link import Link

import workbench
from tests.conftest import write_lines
from workbench import connection
from workbench.damage.replay import GameReplay
from workbench.damage.synth import play_game
from workbench.widgets import ReplayScrubber

EMOTIONS = ("fear", "anger", "shame", "confidence", "tilt")
HOSTILE_PLAYER = "<img src=x onerror=alert(1)>"
HOSTILE_TEXT = "</pre><script>alert('chatter')</script>"


@pytest.fixture(scope="module")
def game_db(tmp_path_factory):
    """A database with a synthetic 5-player game (with injected faults and one line that
    lost its `game_id`) and a tiny game whose log carries markup."""
    folder = tmp_path_factory.mktemp("replays")
    log = play_game(random.Random(11), datetime(2026, 3, 1, tzinfo=UTC), 5, 12)
    orphan = next(i for i, line in enumerate(log.lines) if line["type"] == "life_lost")
    del log.lines[orphan]["game_id"]
    (folder / f"{log.game_id}.events.jsonl").write_text(log.text())
    write_lines(folder / "hostile.events.jsonl", hostile_game())
    db = folder / "w.duckdb"
    report = workbench.ingest([folder], db=db)
    assert all(f.status == "ingested" for f in report.files), [f.message for f in report.files]
    return db, log.game_id, folder / f"{log.game_id}.events.jsonl"


def hostile_game() -> list[dict]:
    emotions = {e: 0.1 for e in EMOTIONS}
    player = {
        "player_id": HOSTILE_PLAYER,
        "lives": 3,
        "bankroll": 50,
        "current_bet": 0,
        "in_hand": True,
        "hand": [],
        "emotions": emotions,
    }
    other = {**player, "player_id": "P2"}
    payloads = [
        ("game_started", {"players": 2, "turns": 1, "primary_model": "<b>m</b>", "fallback_models": [], "seed": 1}),
        ("hand_started", {"turn": 1, "pot": 4, "ante": 2, "players": [player, other]}),
        ("phase_changed", {"turn": 1, "phase": "discussion"}),
        ("chatter_posted", {"turn": 1, "player_id": HOSTILE_PLAYER, "text": HOSTILE_TEXT}),
        ("hand_ended", {"turn": 1, "players": [player, other]}),
    ]
    return [
        {
            "schema_version": "0.1",
            "type": kind,
            "game_id": "game_hostile",
            "ts": "2026-03-01T10:00:00+00:00",
            "payload": payload,
        }
        for kind, payload in payloads
    ]


# --- an independent replay, straight from the log file -----------------------------------


def replay_from_file(path, game_id):
    """[(seq, type, payload)] of the game's lines, in order, read with json.loads."""
    return [(seq, record.get("type"), record.get("payload")) for seq, record in game_lines(path, game_id)]


def game_lines(path, game_id):
    """[(seq, record)] of the JSON objects of the game (and the lines without a game_id)."""
    lines = []
    for seq, text in enumerate(path.read_text().splitlines(), 1):
        try:
            record = json.loads(text)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("game_id", game_id) == game_id:
            lines.append((seq, record))
    return lines


def emotion_vectors_from_file(path, game_id):
    """[(seq, player_id, fear, anger, shame, confidence, tilt)] read from the log with json,
    by docs/formats/damage.md: an emotion vector is any JSON object with the five keys, at any
    depth of a line; it belongs to its own `player_id`, else to that of the object holding
    it (not the line or its payload), else to the payload's `target_player_id`, else to
    its `player_id`; a component that is not a JSON number is None; a vector no player can
    be attributed to is left out. In document order."""

    def number(value):
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def walk(node, holder, found):
        if isinstance(node, list):
            for item in node:
                walk(item, holder, found)
        elif isinstance(node, dict):
            if all(key in node for key in EMOTIONS):
                found.append((node, holder))
            for value in node.values():
                walk(value, node, found)

    vectors = []
    for seq, record in game_lines(path, game_id):
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
        found = []
        for value in record.values():  # the line and its payload hold no vector as a player state would
            walk(value, None, found)
        if payload:
            found = [(v, None if holder is payload else holder) for v, holder in found]
        for vector, holder in found:
            candidates = (
                vector.get("player_id"),
                (holder or {}).get("player_id"),
                payload.get("target_player_id"),
                payload.get("player_id"),
            )
            player = next((c for c in candidates if isinstance(c, str)), None)  # a JSON string, "" too
            if player is not None:
                vectors.append((seq, player, *(number(vector[key]) for key in EMOTIONS)))
    return vectors


def states_by_position(events, vectors):
    """The state after each event: lives/bankroll/in_hand as last stated by a payload,
    emotions as the last vector read from the log at or before the event's line."""
    state, by_seq, out = {}, {}, []
    for seq, player, *values in vectors:
        by_seq.setdefault(seq, []).append((player, dict(zip(EMOTIONS, values))))

    def player(pid):
        return state.setdefault(
            pid, {"lives": None, "bankroll": None, "in_hand": None, "emotions": None, "eliminated": False}
        )

    def stated(p, pid=None):
        target = player(p.get("player_id") or pid)
        for key in ("lives", "bankroll"):
            if type(p.get(key)) is int:
                target[key] = p[key]
        if type(p.get("in_hand")) is bool and not target["eliminated"]:
            target["in_hand"] = p["in_hand"]

    for seq, kind, payload in events:
        if kind in ("hand_started", "hand_ended"):
            for p in payload["players"]:
                stated(p)
        elif kind == "game_ended":
            for p in payload["final_state"]:
                stated(p)
        elif kind == "action_resolved":
            stated(payload["player_state"], payload["player_id"])
        elif kind in ("life_lost", "player_eliminated"):
            player(payload["player_id"])["lives"] = payload["remaining_lives"]
            if kind == "player_eliminated":  # seed 003: out of the game from here on
                player(payload["player_id"]).update(in_hand=False, eliminated=True)
        for pid, emotions in by_seq.get(seq, []):
            player(pid)["emotions"] = emotions
        out.append(json.loads(json.dumps(state)))
    return out


@pytest.fixture(scope="module")
def expected(game_db):
    """The game's events and the state after each, replayed from the log file alone."""
    _, game_id, path = game_db
    events = replay_from_file(path, game_id)
    return events, states_by_position(events, emotion_vectors_from_file(path, game_id))


NOT_STATED = {"lives": None, "bankroll": None, "in_hand": None, "emotions": None, "eliminated": False}


def full_state(states, position):
    """The state at `position` for every player of the game, those not stated yet empty."""
    return {pid: states[position].get(pid, NOT_STATED) for pid in states[-1]}


def test_the_independent_replay_reads_what_the_log_says(tmp_path):
    """The replay's emotion reader on known lines: the five keys anywhere, each vector
    attributed by the documented order of precedence."""
    five = dict(zip(EMOTIONS, (0.1, 0.2, 0.3, 0.4, 0.5)))
    lines = [
        {
            "type": "hand_started",
            "game_id": "g",
            "payload": {
                "players": [
                    {"player_id": "P1", "emotions": five},
                    {"player_id": "P2", "emotions": {**five, "tilt": "high"}},
                ]
            },
        },
        {
            "type": "affect_resolved",
            "game_id": "g",
            "payload": {"player_id": "P1", "target_player_id": "P2", "target_emotions": five},
        },
        {
            "type": "self_regulated",
            "game_id": "g",
            "payload": {"player_id": "P3", "after": {**five, "player_id": "P4"}, "before": five},
        },
        {"type": "chatter", "game_id": "g", "payload": {"text": "hi", "deltas": {"fear": 1, "tilt": 2}}, "mood": five},
        {"type": "other", "game_id": "h", "payload": {"player_id": "P1", "x": five}},
    ]
    log = tmp_path / "vectors.events.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    values = tuple(five.values())
    assert emotion_vectors_from_file(log, "g") == [
        (1, "P1", *values),
        (1, "P2", *values[:4], None),
        (2, "P2", *values),
        (3, "P4", *values),
        (3, "P3", *values),
    ]


def test_state_matches_an_independent_replay_at_every_position(game_db, expected):
    db, game_id, _ = game_db
    events, states = expected
    assert sum(1 for state in states[-1].values() if state["emotions"] is not None) == 5
    scrubber = ReplayScrubber(db, game_id)
    assert len(scrubber) == len(events) > 500
    for position in range(len(events)):
        scrubber.position = position
        assert scrubber.state == full_state(states, position), position
    assert scrubber.event["seq"] == events[-1][0]


def test_pot_and_phase_follow_the_payloads(game_db):
    db, game_id, path = game_db
    replay = GameReplay(db, game_id)
    for position, (seq, kind, payload) in enumerate(replay_from_file(path, game_id)):
        table = replay.table_at(position)
        assert table["seq"] == seq and table["type"] == kind
        if kind in ("hand_started", "action_resolved", "showdown"):
            assert table["pot"] == payload["pot"]
        if kind == "phase_changed":
            assert table["phase"] == payload["phase"]
        if kind == "hand_started":
            assert table["phase"] is None and table["turn"] == payload["turn"]


# --- jumps -------------------------------------------------------------------------------


@pytest.mark.parametrize("phase", ["affect", "betting", "showdown", "discussion", "hand"])
def test_jump_visits_every_boundary_of_a_phase_in_order(game_db, phase):
    db, game_id, path = game_db
    events = replay_from_file(path, game_id)
    want = [
        i
        for i, (_, kind, payload) in enumerate(events)
        if (phase == "hand" and kind == "hand_started") or (kind == "phase_changed" and payload.get("phase") == phase)
    ]
    scrubber = ReplayScrubber(db, game_id)
    visited = []
    while (position := scrubber.jump(phase)) is not None:
        assert scrubber.position == position
        visited.append(position)
    assert visited == want and want
    assert scrubber.position == want[-1]  # stayed put at the last one


def test_jump_backward_and_any_phase(game_db):
    db, game_id, path = game_db
    events = replay_from_file(path, game_id)
    changes = [i for i, (_, kind, _) in enumerate(events) if kind == "phase_changed"]
    scrubber = ReplayScrubber(db, game_id)
    scrubber.position = changes[3] + 1
    assert scrubber.jump() == changes[4]
    assert scrubber.jump(backward=True) == changes[3]
    assert scrubber.jump("hand", backward=True) is not None
    assert events[scrubber.position][1] == "hand_started"
    scrubber.position = 0
    assert scrubber.jump(backward=True) is None and scrubber.position == 0
    with pytest.raises(workbench.WorkbenchError, match="unknown phase"):
        scrubber.jump("shwodown")


def test_position_is_checked(game_db):
    db, game_id, _ = game_db
    scrubber = ReplayScrubber(db, game_id)
    for bad in (-1, len(scrubber)):
        with pytest.raises(IndexError):
            scrubber.position = bad
    with pytest.raises(TypeError):
        scrubber.position = "3"


# --- the widget ----------------------------------------------------------------------------


def all_widgets(root):
    found = [root]
    for child in getattr(root, "children", ()):
        found += all_widgets(child)
    return found


def test_widget_tree_builds_and_follows_the_position(game_db):
    db, game_id, _ = game_db
    scrubber = ReplayScrubber(db, game_id)
    tree = all_widgets(scrubber.widget)
    play = next(w for w in tree if isinstance(w, widgets.Play))
    slider = next(w for w in tree if isinstance(w, widgets.IntSlider))
    link = scrubber._view.link
    assert isinstance(link, Link)  # jslink: linked in the browser
    assert {link.source, link.target} == {(play, "value"), (slider, "value")}
    # The slider counts from 1, like "event 121 of N" beside it.
    assert (slider.min, slider.max) == (play.min, play.max) == (1, len(scrubber))

    scrubber.position = 120
    assert slider.value == 121 and "event 121 of" in scrubber._view.event.value
    slider.value = 300
    assert scrubber.position == 299 and "event 300 of" in scrubber._view.event.value
    assert scrubber._view.table.value.count("<tr>") == len(scrubber.replay.players) + 1
    assert f"line {scrubber.event['seq']}" in scrubber._view.event.value

    buttons = {w.description: w for w in tree if isinstance(w, widgets.Button)}
    assert set(buttons) == {"◀ phase", "phase ▶", "hand ▶", "showdown ▶", "⟳ new events"}
    buttons["showdown ▶"].click()
    assert scrubber.table["type"] == "phase_changed" and scrubber.table["phase"] == "showdown"
    assert slider.value == scrubber.position + 1

    # Play's speed: events a second = steps a second x events a step.
    speed = next(w for w in tree if isinstance(w, widgets.Dropdown) and w.description == "speed")
    rates = {}
    for option in speed.options:
        speed.value = option
        rates[option] = 1000 / play.interval * play.step
    assert rates == {"5 events/s": 5, "20 events/s": 20, "100 events/s": 100, "500 events/s": 500}


def test_chart_cursor_moves_by_parameter(game_db):
    pytest.importorskip("anywidget")
    db, game_id, _ = game_db
    scrubber = ReplayScrubber(db, game_id)
    scrubber.widget
    chart = scrubber._view.chart
    spec_before = chart.spec
    scrubber.position = 400
    assert chart.params.cursor == scrubber.event["seq"]
    assert chart.spec is spec_before  # the chart itself was not rebuilt
    [cursor] = [p for p in scrubber.figure().to_dict()["params"] if p["name"] == "cursor"]
    assert cursor["value"] == scrubber.event["seq"]
    # A browser view reports the spec's initial cursor when it renders: it goes back.
    chart._params = {"cursor": 1}
    assert chart.params.cursor == scrubber.event["seq"]


def test_log_text_is_escaped_in_the_views(game_db):
    db, _, _ = game_db
    scrubber = ReplayScrubber(db, "game_hostile")
    scrubber.widget
    assert scrubber.state == {HOSTILE_PLAYER: NOT_STATED, "P2": NOT_STATED}
    scrubber.position = 3  # the chatter line
    stated = {"lives": 3, "bankroll": 50, "in_hand": True, "emotions": {e: 0.1 for e in EMOTIONS}, "eliminated": False}
    assert scrubber.state == {HOSTILE_PLAYER: stated, "P2": stated}
    views = [scrubber._view.table.value, scrubber._view.event.value]
    text = "".join(views)
    assert "<script" not in text and "<img" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in views[0]
    assert "&lt;script&gt;" in views[1] and "&lt;/pre&gt;" in views[1]


def test_an_eliminated_player_is_out_whatever_later_lines_list(tmp_path):
    # Seed 003: `player_eliminated` (remaining_lives 0) takes the player out of the game.
    # A later `hand_ended` that still lists it in the hand does not bring it back.
    emotions = {e: 0.0 for e in EMOTIONS}
    p1 = {
        "player_id": "P1",
        "lives": 1,
        "bankroll": 50,
        "current_bet": 0,
        "in_hand": True,
        "hand": [],
        "emotions": emotions,
    }
    p2 = {**p1, "player_id": "P2"}
    payloads = [
        ("hand_started", {"turn": 1, "pot": 4, "ante": 2, "players": [p1, p2]}),
        ("life_lost", {"turn": 1, "player_id": "P2", "remaining_lives": 0}),
        ("player_eliminated", {"turn": 1, "player_id": "P2", "remaining_lives": 0}),
        ("hand_ended", {"turn": 1, "players": [p1, {**p2, "lives": 0}]}),
    ]
    write_lines(
        tmp_path / "g.events.jsonl",
        [
            {
                "schema_version": "0.1",
                "type": kind,
                "game_id": "g",
                "ts": "2026-03-01T10:00:00+00:00",
                "payload": payload,
            }
            for kind, payload in payloads
        ],
    )
    workbench.ingest([tmp_path / "g.events.jsonl"], db=tmp_path / "w.duckdb")
    scrubber = ReplayScrubber(tmp_path / "w.duckdb", "g")
    scrubber.position = 1  # a life lost, not yet eliminated
    assert scrubber.state["P2"]["eliminated"] is False and scrubber.state["P2"]["in_hand"] is True
    for position in (2, 3):
        scrubber.position = position
        assert scrubber.state["P2"] | {"emotions": None} == {
            "lives": 0,
            "bankroll": 50,
            "in_hand": False,
            "eliminated": True,
            "emotions": None,
        }
        assert scrubber.state["P1"]["in_hand"] is True and scrubber.state["P1"]["eliminated"] is False
    scrubber.widget
    assert "<td>eliminated</td>" in scrubber._view.table.value


# --- no connection kept ------------------------------------------------------------------


def test_the_database_is_free_after_construction(game_db, expected, tmp_path):
    db, game_id, _ = game_db
    scrubber = ReplayScrubber(db, game_id)
    scrubber.widget
    # Another process can open the database read-write while the scrubber lives on.
    writer = (
        "import duckdb, sys; con = duckdb.connect(sys.argv[1]); "
        "con.execute('CREATE TABLE IF NOT EXISTS t (x INT)'); con.close()"
    )
    subprocess.run([sys.executable, "-c", writer, str(db)], check=True, timeout=60)
    _, states = expected
    scrubber.position = 300
    assert scrubber.state == full_state(states, 300)


def test_a_connection_given_is_only_read_in_the_constructor(game_db, expected):
    db, game_id, _ = game_db
    events, states = expected
    con = connection.connect(db, read_only=True)
    scrubber = ReplayScrubber(con, game_id)
    con.close()
    scrubber.position = len(scrubber) - 1
    slider = next(w for w in all_widgets(scrubber.widget) if isinstance(w, widgets.IntSlider))
    assert (slider.max, slider.value) == (len(events), len(events))
    assert scrubber.event["seq"] == events[-1][0]
    assert scrubber.state == full_state(states, len(events) - 1)


def test_state_arrays_are_lookups_not_replays(game_db):
    db, game_id, _ = game_db
    replay = GameReplay(db, game_id)
    assert isinstance(replay._fields["lives"], np.ndarray)
    assert replay._fields["lives"].shape == (len(replay), len(replay.players))


# --- a game still being played -------------------------------------------------------------


def test_refresh_reads_the_events_written_since_and_keeps_the_cursor(game_db, tmp_path):
    _, game_id, full_log = game_db
    lines = full_log.read_bytes().splitlines(keepends=True)
    log, db = tmp_path / full_log.name, tmp_path / "live.duckdb"
    log.write_bytes(b"".join(lines[: len(lines) // 2]))
    workbench.ingest([log], db=db)
    scrubber = ReplayScrubber(db, game_id)
    tree = all_widgets(scrubber.widget)
    slider = next(w for w in tree if isinstance(w, widgets.IntSlider))
    early = len(scrubber)
    scrubber.position = early - 1
    at_cursor = scrubber.event

    log.write_bytes(b"".join(lines))  # the game went on
    (grown,) = workbench.ingest([log], db=db).files
    assert grown.status == "appended"
    buttons = {w.description: w for w in tree if isinstance(w, widgets.Button)}
    buttons["⟳ new events"].click()

    expected = replay_from_file(log, game_id)
    assert len(scrubber) == len(expected) > early
    assert scrubber._view.status.value == f"<i>{len(expected) - early} new events</i>"
    assert scrubber.position == early - 1 and scrubber.event == at_cursor
    assert slider.max == len(expected) and slider.value == early
    scrubber.position = len(expected) - 1
    assert scrubber.event["seq"] == expected[-1][0]
    assert scrubber.refresh() == 0  # nothing new: nothing moves
    assert scrubber.position == len(expected) - 1


def test_the_records_behind_a_rule_show_raw_and_stored_in_full_and_escaped(tmp_path):
    from workbench import analysis
    from workbench.widgets import records_html

    hostile = '{"agent_id": "a</pre><script>alert(1)</script>", "tick": "x", "tool": "move_to", "params": {}}'
    long_tail = "y" * 500  # wider than any screen: must wrap, not scroll
    log = tmp_path / "arena" / "ep1.decisions.jsonl"
    log.parent.mkdir()
    log.write_text(
        hostile
        + "\n"
        + json.dumps({"agent_id": "b", "tick": "z", "tool": "idle", "params": {}, "reasoning": long_tail})
        + "\n"
    )
    db = tmp_path / "w.duckdb"
    workbench.ingest([log], db=db)
    con = connection.connect(db, read_only=True)
    try:
        [rule] = {r for (r,) in con.execute("SELECT rule FROM violations WHERE field = 'tick'").fetchall()}
        records = analysis.violations_for_rule(con, rule)
    finally:
        con.close()
    shown = records_html(records)
    assert records.height == 2 and shown.count("<i>raw</i>") == 2 and shown.count("<i>stored</i>") == 2
    assert "<script>" not in shown and "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in shown
    assert long_tail in shown and "white-space:pre-wrap" in shown  # in full, wrapped
    assert f"title='{log}'" in shown and "ep1.decisions.jsonl · arena · <b>line 1</b>" in shown
    assert records_html(records.clear()) == "<i>no records</i>"


def test_a_decision_card_shows_its_trace_steps_to_scale_and_escaped():
    from workbench.widgets import decision_html

    decision = {
        "agent_id": "a<1>",
        "episode_id": "ep_1",
        "tick": 7,
        "model": "m",
        "tool": "craft",
        "params": '{"item_name": "</pre>"}',
        "valid": False,
        "violations": ["error required_key at params.station_name: expected key `station_name`"],
        "decision_file": "/logs/ep_1.decisions.jsonl",
        "locator": "line 9",
        "traced": True,
        "trace_file": "/logs/traces/ep_1.jsonl",
        "trace_locator": "line 3",
        "trace_ms": 1010.0,
        "step_ms": [
            {"name": "prompt", "duration_ms": 10.0},
            {"name": "llm_request", "duration_ms": 1000.0},
            {"name": "decision", "duration_ms": None},
        ],
        "observation": '{"position": [1, 2, 3]}',
        "retrieved": None,
        "prompt": "<script>x</script>",
        "llm_request": '{"model": "m"}',
        "response": '{"raw_text": "ok"}',
        "traced_decision": None,
    }
    shown = decision_html(decision)
    assert "<script>" not in shown and "&lt;script&gt;" in shown and "a&lt;1&gt;" in shown
    assert "invalid" in shown and "params.station_name" in shown and "1,010.0 ms in all" in shown
    # bars to scale: the slowest step is 240 px wide, a step 100x faster 2 px, an untimed one 0
    assert "width:240px" in shown and "width:2px" in shown and "width:0px" in shown
    assert '"position": [\n  1,' in shown.replace("&quot;", '"')  # JSON data pretty-printed
    assert "<i>retrieved</i>" not in shown and "<i>observation</i>" in shown  # absent steps are left out
    untraced = decision_html({**decision, "traced": False})
    assert "no reasoning trace" in untraced and "<table>" not in untraced
