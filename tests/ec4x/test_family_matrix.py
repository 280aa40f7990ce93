"""The EC4X command-family x model matrix and its heatmap, checked against plain Python
over the raw lines of hand-written order drafts and a two-session bot trace."""

import json
import re
from collections import Counter, defaultdict

import duckdb
import pytest

import workbench
from tests.conftest import write_lines
from tests.test_growing_files import assert_same_tables
from workbench.ec4x.queries import family_matrix
from workbench.plots import save
from workbench.plots.families import family_matrix_chart

# Seed 004's draft keys and the families the bot's coverage script names, transcribed
# here (seed 004's v1 JSON contract; repair and scrap lists are the real compiler's).
DRAFT_KEYS = {
    "zeroTurnCommands": "zero_turn",
    "fleetCommands": "fleet",
    "buildCommands": "build",
    "repairCommands": "repair",
    "scrapCommands": "scrap",
    "diplomaticCommand": "diplomacy",
    "populationTransfers": "population_transfer",
    "terraformCommands": "terraform",
    "colonyManagement": "colony_management",
    "espionageActions": "espionage",
    "researchAllocation": "research",
    "ebpInvestment": "investment",
    "cipInvestment": "investment",
}
FAMILIES = (
    "zero_turn",
    "fleet",
    "build",
    "repair",
    "scrap",
    "diplomacy",
    "population_transfer",
    "terraform",
    "colony_management",
    "espionage",
    "research",
    "investment",
)
# How the bot classifies a failed attempt by its stage (formats.md).
CLASS_OF_STAGE = {
    "llm_request": "llm_request",
    "schema_parse": "validation",
    "compile": "validation",
    "submit": "transport",
}


def draft(**values):
    return {"turn": 3, "houseId": 1, **values}


MOVE = {"fleetId": 101, "commandType": "move", "targetSystemId": 22}
# Each draft with the rules it breaks, by hand from seed 004: family -> rule, and None for
# a rule about the draft as a whole (the compiler then refuses every family in it).
DRAFTS = [
    (
        draft(
            fleetCommands=[MOVE],
            buildCommands=[{"colonyId": 12, "buildType": "ship", "shipClass": "destroyer", "quantity": 1}],
        ),
        {},
    ),
    # `move` is a system-target command: no target breaks the fleet family...
    (
        draft(fleetCommands=[{**MOVE, "targetSystemId": None}], colonyManagement=[{"colonyId": 12, "taxRate": 20}]),
        {"fleet": "target_system_required"},
    ),
    # ... and so does `bombard` without one: the same rule twice.
    (
        draft(fleetCommands=[{"fleetId": 102, "commandType": "bombard"}], researchAllocation={"economic": 10}),
        {"fleet": "target_system_required"},
    ),
    (
        draft(
            fleetCommands=[{"fleetId": 103, "commandType": "hold"}],
            diplomaticCommand={"targetHouseId": 2, "action": "declare-war"},
        ),
        {"diplomacy": "enum_value"},
    ),
    ({"turn": 3, "terraformCommands": [{"colonyId": 12}]}, {None: "required_key"}),
    (draft(espionageActions=[{"operation": "tech-theft", "targetHouseId": 2}], ebpInvestment=5), {}),
    # A diplomatic command that is not an object is still a diplomacy attempt.
    (
        draft(diplomaticCommand="declare-hostile", espionageActions=[{"operation": "psyops"}]),
        {"diplomacy": "model_type", "espionage": "espionage_target_required"},
    ),
]


def session(model):
    return {
        "kind": "session_start",
        "timestamp": "2026-02-27T10:00:00-05:00",
        "gameId": "g1",
        "model": model,
        "maxRetries": 2,
    }


def turn(number, tags=(), stages=(), ok=True):
    attempts = len(stages) + (1 if ok else 0)
    trace = [
        {"attempt": i, "stage": s, "details": ["x"], "outcome": "retry", "llmRequestMs": 10, "llmResponseBytes": 5}
        for i, s in enumerate(stages, 1)
    ]
    error_class = "success" if ok else CLASS_OF_STAGE[stages[-1]]
    return {
        "timestamp": f"2026-02-27T11:{number:02d}:00-05:00",
        "gameId": "g1",
        "turn": number,
        "ok": ok,
        "errorClass": error_class,
        "attempts": attempts,
        "errors": [] if ok else ["x"],
        "featureTags": list(tags),
        "trace": trace,
    }


TRACE = [
    session("model-a"),
    turn(1, ["fleet", "build"]),
    turn(2, ["zero_turn", "ztc_merge_fleets", "fleet"], ["compile"]),
    turn(3, [], ["schema_parse", "schema_parse", "compile"], ok=False),  # failed: no tags, no family
    turn(4, ["research"], ["schema_parse", "compile"]),
    session("model-b"),
    turn(5, ["espionage", "investment"]),
    turn(6, ["espionage"], ["llm_request"]),
    turn(7, ["espionage", "ztc_reactivate"], ["llm_request"]),
    turn(8, ["espionage"], ["schema_parse"]),
]


def models_of_turns(trace_lines) -> dict[int, set]:
    """Turn -> the models that played it, read off the raw trace lines."""
    model, played = None, defaultdict(set)
    for raw in trace_lines:
        record = json.loads(raw)
        if record.get("kind") == "session_start":
            model = record["model"]
        elif model is not None:
            played[record["turn"]].add(model)
    return played


def draft_model(turn: int, played: dict[int, set]) -> str:
    # the one model of the draft's turn, else the one model of the game, else unknown
    in_game = set().union(*played.values())
    for models in (played.get(turn, set()), in_game):
        if len(models) == 1:
            return next(iter(models))
    return "unknown"


def draft_uses(lines, played=None):
    """(model, family, rules broken) per family use, counted over the raw draft lines."""
    for raw, broken in lines:
        record = json.loads(raw)
        used = {DRAFT_KEYS[key] for key, value in record.items() if key in DRAFT_KEYS and _uses(value)}
        used |= {family for family in broken if family is not None}
        for family in used:
            yield (
                draft_model(record["turn"], played or {}),
                family,
                {rule for f, rule in broken.items() if f in (family, None)},
            )


def _uses(value) -> bool:
    if isinstance(value, (list, dict)):
        return len(value) > 0 and (not isinstance(value, dict) or any(v not in (None, 0) for v in value.values()))
    return isinstance(value, int) and value > 0


def trace_uses(raw_lines):
    """(model, family, rules broken) per tagged turn and family, over the raw trace lines."""
    model = "unknown"
    for raw in raw_lines:
        record = json.loads(raw)
        if record.get("kind") == "session_start":
            model = record["model"]
            continue
        first_try = record["ok"] and record["attempts"] == 1
        stage = record["trace"][-1]["stage"] if record["trace"] else None
        rules = set() if first_try else {f"{CLASS_OF_STAGE[stage]}/{stage}"}
        families = {"zero_turn" if tag.startswith("ztc_") else tag for tag in record["featureTags"]}
        for family in families & set(FAMILIES):
            yield model, family, rules


def expected_matrix(uses_by_source):
    cells = defaultdict(lambda: {"tried": 0, "valid": 0, "rules": Counter()})
    models = defaultdict(set)
    for source, uses in uses_by_source.items():
        for model, family, rules in uses:
            cell = cells[source, model, family]
            cell["tried"] += 1
            cell["valid"] += not rules
            cell["rules"].update(rules)
    for source, model, _ in list(cells):
        models[source].add(model)
    out = {}
    for source, names in models.items():
        for model in names:
            for family in FAMILIES:
                cell = cells.get((source, model, family), {"tried": 0, "valid": 0, "rules": Counter()})
                top = sorted(cell["rules"].items(), key=lambda kv: (-kv[1], kv[0]))[:1]
                out[family, model, source] = (
                    cell["tried"],
                    cell["valid"],
                    cell["valid"] / cell["tried"] if cell["tried"] else None,
                    top[0][0] if top else None,
                    top[0][1] if top else 0,
                )
    return out


@pytest.fixture
def matrix_db(ingest_lines):
    draft_lines = [(json.dumps(d), broken) for d, broken in DRAFTS]
    trace_lines = [json.dumps(line) for line in TRACE]
    _, con = ingest_lines("g1.orders.jsonl", [raw for raw, _ in draft_lines])
    ingest_lines("bot_trace_g1.jsonl", trace_lines)
    expected = expected_matrix(
        {"drafts": list(draft_uses(draft_lines, models_of_turns(trace_lines))), "trace": list(trace_uses(trace_lines))}
    )
    return con, expected


def as_dict(frame):
    return {
        (r["family"], r["model"], r["source"]): (
            r["tried"],
            r["valid"],
            r["validity"],
            r["top_rule"],
            r["top_rule_count"],
        )
        for r in frame.iter_rows(named=True)
    }


def test_matrix_matches_an_independent_count(matrix_db):
    con, expected = matrix_db
    frame = family_matrix(con)
    assert frame.columns == ["family", "model", "tried", "valid", "validity", "top_rule", "top_rule_count", "source"]
    got = as_dict(frame)
    assert got.keys() == expected.keys()
    for key, (tried, valid, validity, rule, count) in expected.items():
        g_tried, g_valid, g_validity, g_rule, g_count = got[key]
        assert (g_tried, g_valid, g_rule, g_count) == (tried, valid, rule, count), key
        assert g_validity == pytest.approx(validity) if validity is not None else g_validity is None, key


def test_matrix_by_hand(matrix_db):
    got = as_dict(family_matrix(matrix_db[0]))
    # 12 families for the drafts' one model (turn 3 was model-a's, in the trace of the
    # same game) and the trace's two models.
    assert len(got) == 36
    assert {model for _, model, source in got if source == "drafts"} == {"model-a"}
    assert {model for _, model, source in got if source == "trace"} == {"model-a", "model-b"}
    # Fleet: four drafts, two broke the same rule.
    assert got["fleet", "model-a", "drafts"] == (4, 2, 0.5, "target_system_required", 2)
    # A draft-level error (no houseId) breaks the one family the draft used.
    assert got["terraform", "model-a", "drafts"] == (1, 0, 0.0, "required_key", 1)
    # The string diplomaticCommand counts as tried; a 1-1 tie goes to the first rule by name.
    assert got["diplomacy", "model-a", "drafts"] == (2, 0, 0.0, "enum_value", 1)
    assert got["investment", "model-a", "drafts"] == (1, 1, 1.0, None, 0)
    # Never tried: listed with zeros, so the coverage gap shows.
    for family in ("zero_turn", "repair", "scrap", "population_transfer"):
        assert got[family, "model-a", "drafts"] == (0, 0, None, None, 0)
    # Trace: a turn counts once per family (zero_turn and ztc_merge_fleets are one use);
    # the failed turn 3 has no tags and counts nowhere; turn 4's rule is its last stage's.
    assert got["zero_turn", "model-a", "trace"] == (1, 0, 0.0, "validation/compile", 1)
    assert got["fleet", "model-a", "trace"] == (2, 1, 0.5, "validation/compile", 1)
    assert got["research", "model-a", "trace"] == (1, 0, 0.0, "validation/compile", 1)
    assert got["espionage", "model-b", "trace"] == (4, 1, 0.25, "llm_request/llm_request", 2)
    assert got["zero_turn", "model-b", "trace"] == (1, 0, 0.0, "llm_request/llm_request", 1)
    assert got["espionage", "model-a", "trace"] == (0, 0, None, None, 0)


def test_draft_model_comes_from_decisions(matrix_db):
    con, _ = matrix_db
    con.execute(
        "UPDATE decisions SET model = 'drafter' WHERE format = 'ec4x' AND locator = 'line 1' "
        "AND source_id = (SELECT min(source_id) FROM ec4x_orders)"
    )
    got = as_dict(family_matrix(con))
    assert got["fleet", "drafter", "drafts"] == (1, 1, 1.0, None, 0)
    assert got["fleet", "model-a", "drafts"] == (3, 1, pytest.approx(1 / 3), "target_system_required", 2)
    assert got["zero_turn", "drafter", "drafts"] == (0, 0, None, None, 0)


def test_empty_database(tmp_path):
    con = workbench.connect(tmp_path / "empty.duckdb")
    assert family_matrix(con).is_empty()
    assert save(family_matrix_chart(con), tmp_path / "empty.svg").read_text().startswith("<svg")
    con.close()


@pytest.mark.parametrize("suffix", [".html", ".svg"])
def test_chart_exports_and_shows_the_frame(matrix_db, tmp_path, suffix):
    con, expected = matrix_db
    frame = family_matrix(con)
    chart = family_matrix_chart(con)
    spec = chart.to_dict()
    (values,) = spec["datasets"].values()
    shown = {
        (v["family"], v["model"], v["source"]): (
            v["tried"],
            v["valid"],
            v["validity"],
            v["top_rule"],
            v["top_rule_count"],
        )
        for v in values
    }
    assert shown == as_dict(frame)
    path = save(chart, tmp_path / f"matrix{suffix}")
    text = path.read_text()
    if suffix == ".svg":
        assert text.startswith("<svg")
        for row in ("drafts · model-a", "trace · model-a", "trace · model-b"):
            assert row in text
        # One cell per row of the frame; the untried ones drawn grey, not left out.
        cells = re.findall(r'<path [^>]*aria-roledescription="rect mark"[^>]*>', text)
        untried = sum(1 for tried, *_ in expected.values() if tried == 0)
        assert len(cells) == len(expected)
        assert sum('fill="#d9d9d9"' in cell for cell in cells) == untried > 0
    else:
        assert "vega" in text and "model-b" in text


def draft_models(con) -> dict[int, str | None]:
    """Draft turn -> the model its decision row carries."""
    return dict(
        con.execute(
            "SELECT d.turn, d.model FROM decisions d JOIN sources s USING (source_id) "
            "WHERE s.path LIKE '%.orders.jsonl' ORDER BY 1"
        ).fetchall()
    )


TWO_SESSIONS = [
    session("model-a"),
    turn(1, ["fleet"]),
    turn(2, ["fleet"]),
    session("model-b"),
    turn(2, ["build"]),
    turn(3, ["build"]),
]


@pytest.mark.parametrize("drafts_first", [True, False])
def test_a_draft_takes_the_model_of_its_game_and_turn_whichever_file_comes_first(ingest_lines, drafts_first):
    drafts = [json.dumps(draft(turn=number, fleetCommands=[MOVE])) for number in (1, 2, 3, 4)]
    files = [("g1.orders.jsonl", drafts), ("bot_trace_g1.jsonl", [json.dumps(line) for line in TWO_SESSIONS])]
    for name, lines in files if drafts_first else files[::-1]:
        _, con = ingest_lines(name, lines)
    # turn 1: only model-a played it; turn 2: both did (the trace names no house), so
    # unknown; turn 3: model-b; turn 4: not in the trace, and the game had two models.
    assert draft_models(con) == {1: "model-a", 2: None, 3: "model-b", 4: None}


def test_a_draft_takes_the_games_one_model_and_none_from_another_game(ingest_lines):
    _, con = ingest_lines("g1.orders.jsonl", [json.dumps(draft(turn=9, fleetCommands=[MOVE]))])
    ingest_lines("h2.orders.jsonl", [json.dumps(draft(turn=1, fleetCommands=[MOVE]))])
    ingest_lines("bot_trace_g1.jsonl", [json.dumps(line) for line in (session("model-a"), turn(1, ["fleet"]))])
    models = dict(
        con.execute(
            "SELECT s.path LIKE '%g1.orders.jsonl', d.model FROM decisions d "
            "JOIN sources s USING (source_id) WHERE s.path LIKE '%.orders.jsonl'"
        ).fetchall()
    )
    assert models == {True: "model-a", False: None}  # turn 9 is past the trace, the game had one model


def test_a_rewritten_trace_relinks_the_drafts(tmp_path):
    db = tmp_path / "w.duckdb"
    drafts = write_lines(tmp_path / "g1.orders.jsonl", [json.dumps(draft(turn=1, fleetCommands=[MOVE]))])
    trace = tmp_path / "bot_trace_g1.jsonl"
    for model, status in (("model-a", "ingested"), ("model-b", "replaced")):
        write_lines(trace, [json.dumps(line) for line in (session(model), turn(1, ["fleet"]))])
        assert [f.status for f in workbench.ingest([drafts, trace], db=db).files][1] == status
        con = duckdb.connect(str(db), read_only=True)
        try:
            assert draft_models(con) == {1: model}
        finally:
            con.close()


def test_a_trace_that_grows_relinks_the_drafts_of_its_game(tmp_path):
    db = tmp_path / "w.duckdb"
    drafts = write_lines(
        tmp_path / "g1.orders.jsonl", [json.dumps(draft(turn=number, fleetCommands=[MOVE])) for number in (1, 2, 3, 4)]
    )
    trace = tmp_path / "bot_trace_g1.jsonl"
    first = [session("model-a"), turn(1, ["fleet"]), turn(2, ["fleet"])]
    write_lines(trace, [json.dumps(line) for line in first])
    workbench.ingest([drafts, trace], db=db)
    with duckdb.connect(str(db), read_only=True) as con:
        assert draft_models(con) == {1: "model-a", 2: "model-a", 3: "model-a", 4: "model-a"}  # one model so far
    write_lines(trace, [json.dumps(line) for line in (*first, session("model-b"), turn(3, ["build"]))])
    assert [f.status for f in workbench.ingest([drafts, trace], db=db).files] == ["unchanged", "appended"]
    with duckdb.connect(str(db), read_only=True) as con:
        # turn 3 is model-b's; turn 4 was played by neither, in a game of two models now.
        assert draft_models(con) == {1: "model-a", 2: "model-a", 3: "model-b", 4: None}
    assert_same_tables(db, [drafts, trace], tmp_path)


def test_a_trace_turn_read_cut_then_completed_as_no_record_unlinks_its_drafts(tmp_path):
    db = tmp_path / "w.duckdb"
    drafts = write_lines(tmp_path / "g1.orders.jsonl", [json.dumps(draft(turn=1, fleetCommands=[MOVE]))])
    trace = tmp_path / "bot_trace_g1.jsonl"
    before = json.dumps(session("model-a")) + "\n" + json.dumps(turn(1, ["fleet"]))  # the turn: no newline yet
    trace.write_text(before)
    workbench.ingest([drafts, trace], db=db)
    with duckdb.connect(str(db), read_only=True) as con:
        assert draft_models(con) == {1: "model-a"}
    trace.write_text(before + "}\n")  # completed, it is no JSON: the game has no turn left
    assert workbench.ingest([trace], db=db).files[0].status == "appended"
    with duckdb.connect(str(db), read_only=True) as con:
        assert draft_models(con) == {1: None}
    assert_same_tables(db, [drafts, trace], tmp_path)
