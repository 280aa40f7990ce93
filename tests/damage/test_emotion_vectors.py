"""Emotion vectors are found wherever they are: any JSON object with the five
EmotionState keys, at any depth of a line, attributed to a player by one rule."""

import json
import re

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench
from tests.conftest import rows, write_lines
from tests.damage.events import EMOTIONS as VECTOR
from tests.damage.events import PAYLOADS, event
from workbench.damage import emotions, tables
from workbench.damage.models import EmotionState

FIVE = ["fear", "anger", "shame", "confidence", "tilt"]  # seed 003, section 3.1


def test_the_keys_come_from_the_model_once():
    assert emotions.EMOTIONS == list(EmotionState.model_fields) == FIVE


def vector(fear: float, **extra) -> dict:
    return {**VECTOR, "fear": fear, **extra}


def ingest_lines(tmp_path, lines) -> list[tuple]:
    path = write_lines(tmp_path / "g.events.jsonl", lines)
    db = tmp_path / "w.duckdb"
    (file,) = workbench.ingest([path], db=db).files
    assert file.status == "ingested", file.message
    return rows(db, "SELECT seq, player_id, origin, fear FROM damage_emotions ORDER BY seq, rowid")


def test_direct_emoter_attack_before_and_after_belong_to_the_target(tmp_path):
    # As the real game writes it (simulator.py, a raise with an attack plan): the
    # attacker is `attacker_id`, the vectors are the target's before and after.
    attack = event(
        "phase_changed",
        {
            "turn": 2,
            "attacker_id": "P1",
            "target_player_id": "P2",
            "emotion": "fear",
            "before": vector(0.1),
            "after": vector(0.3),
        },
        type="direct_emoter_attack_resolved",
    )
    assert ingest_lines(tmp_path, [attack]) == [
        (1, "P2", "direct_emoter_attack_resolved.before", 0.1),
        (1, "P2", "direct_emoter_attack_resolved.after", 0.3),
    ]


def test_vectors_anywhere_in_a_line(tmp_path):
    odd = event(
        "phase_changed",
        {
            "turn": 1,
            "a": {"b": [[{"player_id": "P3", "mood": vector(0.2)}]]},
            "history": [vector(0.4), vector(0.5)],
            "target_player_id": "P2",
            "odd key": {"player_id": "P5", "x-y": vector(0.6)},
            "partial": {k: 0.0 for k in FIVE[:4]},
            "deltas": {"tilt": 0.1, "fear": 0.1},
        },
        type="something_new",
    )
    own = event("phase_changed", {"player_id": "P1", "snap": vector(0.7, player_id="P4")}, type="snapshot")
    itself = event("phase_changed", {"player_id": "P1", **VECTOR}, type="mood")
    envelope = {**event("phase_changed", {"turn": 1, "player_id": "P2"}, type="mood"), "mood": vector(0.8)}
    escaped = json.dumps(event("phase_changed", {"target_player_id": "P6", "v": vector(0.9)}, type="esc")).replace(
        '"fear"', '"\\u0066ear"'
    )
    assert "\\u0066ear" in escaped
    found = ingest_lines(tmp_path, [odd, own, itself, envelope, escaped])
    assert sorted(found) == sorted(
        [
            (1, "P3", "something_new.a.b[][].mood", 0.2),
            (1, "P2", "something_new.history[]", 0.4),
            (1, "P2", "something_new.history[]", 0.5),
            (1, "P5", 'something_new."odd key"."x-y"', 0.6),
            (2, "P4", "snapshot.snap", 0.7),
            (3, "P1", "mood", 0.1),
            (4, "P2", "mood.$.mood", 0.8),
            (5, "P6", "esc.v", 0.9),
        ]
    )


def test_player_rule_and_strict_values(tmp_path):
    lines = [
        # the holder is a player state: its player_id, not the payload's
        event(
            "phase_changed",
            {"player_id": "P1", "target_player_id": "P2", "state": {"player_id": "P3", "emotions": vector(0.1)}},
            type="t1",
        ),
        # held by the payload itself: target_player_id first, then player_id
        event("phase_changed", {"player_id": "P1", "target_player_id": "P2", "v": vector(0.2)}, type="t2"),
        event("phase_changed", {"player_id": "P1", "v": vector(0.3)}, type="t3"),
        # a player_id that is not a JSON string does not count; no player at all: not kept
        event("phase_changed", {"player_id": 7, "target_player_id": "P2", "v": vector(0.4)}, type="t4"),
        event("phase_changed", {"v": vector(0.5)}, type="t5"),
        # a component that is not a JSON number is NULL (the validation reports it)
        event("phase_changed", {"player_id": "P1", "v": vector("0.6")}, type="t6"),
    ]
    assert ingest_lines(tmp_path, lines) == [
        (1, "P3", "t1.state.emotions", 0.1),
        (2, "P2", "t2.v", 0.2),
        (3, "P1", "t3.v", 0.3),
        (4, "P2", "t4.v", 0.4),
        (6, "P1", "t6.v", None),
    ]


def test_shapes_duckdb_cannot_type_are_walked(tmp_path):
    # A mixed array, and a key holding an object in one line and a number in another:
    # json_structure cannot type them; the lines are still read exactly.
    lines = [
        event("phase_changed", {"target_player_id": "P2", "mix": [1, vector(0.1), "s", [vector(0.2)]]}, type="m"),
        event("phase_changed", {"target_player_id": "P2", "k": vector(0.3)}, type="n"),
        event("phase_changed", {"target_player_id": "P2", "k": 5, "j": {"i": vector(0.4)}}, type="n"),
        event("phase_changed", {"target_player_id": "P2", "k": {}, "j": [{"i": vector(0.5)}]}, type="n"),
    ]
    assert sorted(ingest_lines(tmp_path, lines)) == [
        (1, "P2", "m.mix[]", 0.1),
        (1, "P2", "m.mix[][]", 0.2),
        (2, "P2", "n.k", 0.3),
        (3, "P2", "n.j.i", 0.4),
        (4, "P2", "n.j[].i", 0.5),
    ]


def test_documented_places_keep_their_players(tmp_path):
    found = ingest_lines(tmp_path, [event("hand_started"), event("action_resolved"), event("affect_resolved")])
    assert found == [
        (1, "P1", "hand_started.players[].emotions", 0.1),
        (2, "P1", "action_resolved.player_state.emotions", 0.1),
        (3, "P2", "affect_resolved.target_emotions", 0.3),
    ]


# --- against an independent walk, on random lines -----------------------------------

PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def written(key: str) -> str:
    return "." + key if PLAIN.match(key) else '."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def reference(line: dict) -> list[tuple]:
    """(origin, player, fear) of every object with the five keys, by a plain recursive
    walk and the documented rule: the vector's own player_id, else its nearest enclosing
    object's (not the payload), else the payload's target_player_id, else player_id."""
    payload = line.get("payload")
    root = payload if isinstance(payload, dict) else {}

    def text(obj, key):
        value = obj.get(key) if isinstance(obj, dict) else None
        return value if isinstance(value, str) else None

    def walk(node, path, holder):
        if isinstance(node, dict):
            if all(k in node for k in FIVE):
                fear = node["fear"]
                number = isinstance(fear, (int, float)) and not isinstance(fear, bool)
                player = (
                    text(node, "player_id")
                    or text(holder, "player_id")
                    or text(root, "target_player_id")
                    or text(root, "player_id")
                )
                yield path, player, float(fear) if number else None
            for key, value in node.items():
                yield from walk(value, path + written(key), node)
        elif isinstance(node, list):
            for value in node:
                yield from walk(value, path + "[]", holder)

    found = [(line["type"] + path, *rest) for path, *rest in walk(payload, "", None)]
    extra = {k: v for k, v in line.items() if k not in ("schema_version", "type", "game_id", "ts", "payload")}
    found += [(line["type"] + ".$" + path, *rest) for path, *rest in walk(extra, "", None)]
    return [f for f in found if f[1] is not None]


KEYS = st.sampled_from(["a", "b", "emotions", "player_id", "target_player_id", "odd key", "x-y", *FIVE])
SCALARS = st.one_of(st.none(), st.booleans(), st.floats(-1, 1), st.integers(-1, 1), st.sampled_from(["P1", "P2"]))
VECTORS = st.fixed_dictionaries(
    {k: st.floats(-1, 1) for k in FIVE}, optional={"player_id": st.sampled_from(["P3", "P4"])}
)
VALUES = st.recursive(
    st.one_of(SCALARS, VECTORS),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)
LINES = st.lists(
    st.tuples(
        st.sampled_from(["t1", "t2", "hand_started"]),
        st.dictionaries(KEYS, VALUES, max_size=4),
        st.dictionaries(st.sampled_from(["mood", "seat"]), VALUES, max_size=1),
    ),
    min_size=1,
    max_size=6,
)


def run_emotions(lines: list[dict]) -> list[tuple]:
    con = duckdb.connect()
    con.execute("".join(table.ddl() for table in tables.TABLES))
    event_lines = pa.table({"seq": list(range(1, len(lines) + 1)), "raw": [json.dumps(line) for line in lines]})
    tables.insert_events(con, 1, event_lines)
    tables.set_extra(con, 1, event_lines)  # every line: SET_EXTRA keeps only envelope keys the seed does not list
    emotions.insert_vectors(con, 1, 1, len(lines))
    return con.execute("SELECT seq, origin, player_id, fear FROM damage_emotions").fetchall()


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(LINES)
def test_same_vectors_as_an_independent_walk(drawn):
    lines = [{**event("phase_changed", payload, type=kind), **extra} for kind, payload, extra in drawn]
    expected = sorted((seq, *found) for seq, line in enumerate(lines, 1) for found in reference(line))
    assert sorted(run_emotions(lines), key=repr) == sorted(expected, key=repr)


def test_compact_json_is_what_the_count_reads():
    # The soundness check counts `"key":` in DuckDB's re-serialised payloads: spaces
    # and escapes written by another tool must be gone by then.
    con = duckdb.connect()
    spaced = '{"payload": { "fe\\u0061r" : 1 , "a" : [ 1 ] }}'
    text = con.execute("SELECT json_extract(?::JSON, '$.payload')::VARCHAR", [spaced]).fetchall()[0][0]
    assert text == '{"fear":1,"a":[1]}'


@pytest.mark.parametrize("kind", sorted(PAYLOADS))
def test_every_documented_event_is_read_without_error(tmp_path, kind):
    found = ingest_lines(tmp_path, [event(kind)])
    assert all(player for _, player, _, _ in found)


@pytest.mark.parametrize(
    "decoy",
    [
        {**{f"x{name}": 1 for name in FIVE}, "pad": "y" * 500},  # the names inside other keys
        {"labels": FIVE, "pad": "y" * 500},  # the names as values
    ],
)
def test_a_longer_line_that_only_names_the_five_changes_no_vector(tmp_path, decoy):
    # The round reads the vectors at the paths of the longest document of each type that
    # may hold one. A longer line that only names the five holds none: the same vectors
    # come out with it as without it. (Sampled again and again, it used to send the whole
    # chunk to the exact walk, which reads a repeated key by its last value.)
    held = json.dumps(event("mood_shift", {"player_id": "P1", "mood": vector(0.1)}))
    held = held.replace('"fear": 0.1', '"fear": 0.1, "fear": 0.9')
    (tmp_path / "alone").mkdir()
    (tmp_path / "with").mkdir()
    alone = ingest_lines(tmp_path / "alone", [held])
    assert [row[:3] for row in alone] == [(1, "P1", "mood_shift.mood")]
    assert ingest_lines(tmp_path / "with", [held, event("mood_shift", decoy)]) == alone
