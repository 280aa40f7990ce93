"""The real output of the instrumentations people use, counted right.

`tests/otel/emitters/` holds what each library really wrote for one small bot: two games
of ten turns, agent X on gpt-4.1-mini and agent O on gpt-4o-mini, against a fake
OpenAI-compatible server that answers one call with HTTP 400, one with a refusal, one
with malformed tool-call arguments, and streams one (`record.py` there records them all
again, and says which package versions wrote them: `versions.json`). `truth.json` is
the server's own log of every call and what it answered, joined to the bot's turns: the
expected values here come from it, not from the workbench.

Each file must give one decision per chat call (pydantic-ai sends each tool result back:
38 calls), named by the model asked for, one row per model, the tokens the server
reported, the refusal and the malformed arguments invalid by their rules, the HTTP 400
failed, and the two games the bot named.
"""

import json
from pathlib import Path

import duckdb
import pytest

import workbench
from workbench import analysis

HERE = Path(__file__).parent / "emitters"
TRUTH = json.loads((HERE / "truth.json").read_text())
# LiteLLM's true default writes most calls' GenAI attributes nowhere (`test_litellm_...`).
RAW_ONLY = "litellm_parent"
EMITTERS = sorted(name for name in TRUTH if (HERE / f"{name}.otlp.jsonl").exists() and name != RAW_ONLY)

# What an emitter does not write on its spans, so no reader of its traces can see it.
# openai-v2 2.4b0 in its default mode writes message content only to log records
# (`openai_v2.logs.otlp.jsonl`), never on a span: the malformed tool-call arguments are
# invisible in its traces, and the file says so (`answers_not_recorded`).
UNSEEN = {("openai_v2", "tool_arguments")}


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """Each recording in a database of its own: name -> (database, ingest report)."""
    folder = tmp_path_factory.mktemp("emitters")
    found = {}
    for name in [*EMITTERS, RAW_ONLY]:
        db = folder / f"{name}.duckdb"
        found[name] = db, workbench.ingest([HERE / f"{name}.otlp.jsonl"], db=db).files[0]
    return found


def decisions(db) -> list[dict]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("""
            SELECT d.game_id, d.turn, d.agent_id, d.model, d.response_model, d.outcome, d.failure, d.input_tokens,
                   d.output_tokens, d.locator,
                   (SELECT list(v.rule ORDER BY v.rule) FROM violation_lines v WHERE v.source_id = d.source_id
                      AND v.locator = d.locator AND v.severity = 'error'
                      AND v.rule IN ('refusal', 'tool_arguments', 'tool_failed')) AS rules
            FROM decisions d ORDER BY d.game_id, d.turn""").fetchall()
    finally:
        con.close()
    names = (
        "game",
        "turn",
        "agent",
        "model",
        "response_model",
        "outcome",
        "failure",
        "input_tokens",
        "output_tokens",
        "locator",
        "rules",
    )
    return [dict(zip(names, row)) for row in rows]


def expected_calls(name: str) -> list[dict]:
    """The server's calls of a recording, in each game's order, as a decision would
    show them (what the emitter cannot show, as it shows it)."""
    calls = [dict(call) for call in sorted(TRUTH[name]["calls"], key=lambda call: (call["game"], call["k"]))]
    for call in calls:
        if (name, call["rule"]) in UNSEEN:
            call["outcome"], call["rule"] = "valid", None
    return calls


def test_every_recording_has_its_versions_and_truth():
    versions = json.loads((HERE / "versions.json").read_text())
    assert len(EMITTERS) >= 9 and set(EMITTERS) <= set(versions)
    for name in EMITTERS:
        totals = TRUTH[name]["totals"]
        assert totals["calls"] == (38 if name == "pydantic_ai" else 20)
        assert (totals["invalid"], totals["failed"]) == (2, 1)


@pytest.mark.parametrize("name", EMITTERS)
def test_one_decision_per_chat_call_with_its_game_agent_model_and_outcome(ingested, name):
    db, _ = ingested[name]
    got, calls = decisions(db), expected_calls(name)
    assert len(got) == len(calls)
    for decision, call in zip(got, calls):
        where = f"{name} {call['game']} call {call['k']}"
        assert decision["game"] == call["game"], where
        assert decision["model"] == call["model_requested"], where
        assert decision["outcome"] == call["outcome"], where
        assert (decision["rules"] or []) == ([call["rule"]] if call["rule"] else []), where
        if call["outcome"] == "failed":
            assert "400" in decision["failure"] and decision["response_model"] is None, where
        else:
            assert decision["failure"] is None, where
            assert (decision["input_tokens"], decision["output_tokens"]) == (
                call["input_tokens"],
                call["output_tokens"],
            ), where
    # the player, where the emitter names one for the call (LiteLLM writes its streamed call outside its parent)
    named = [(d["agent"], c["agent"]) for d, c in zip(got, calls) if d["agent"] is not None]
    assert len(named) >= len(calls) - 1 and all(agent == expected for agent, expected in named)


@pytest.mark.parametrize("name", EMITTERS)
def test_one_model_is_one_row_and_the_failed_call_is_shown_apart(ingested, name):
    db, _ = ingested[name]
    con = duckdb.connect(str(db), read_only=True)
    try:
        card = analysis.scorecard(con, by=("model",))
    finally:
        con.close()
    per_model = TRUTH[name]["totals"]["per_model"]
    assert sorted(card["model"].to_list()) == sorted(per_model)
    for row in card.iter_rows(named=True):
        truth = per_model[row["model"]]
        unseen = sum(
            1
            for call in TRUTH[name]["calls"]
            if call["model_requested"] == row["model"] and (name, call["rule"]) in UNSEEN
        )
        assert row["failed"] == truth["failed"]
        assert row["decisions"] == truth["valid"] + truth["invalid"]
        assert row["valid"] == truth["valid"] + unseen
        assert row["games"] == 2


@pytest.mark.parametrize("name", EMITTERS)
def test_the_response_model_is_its_own_column(ingested, name):
    db, _ = ingested[name]
    answered = {call["model_answered"] for call in TRUTH[name]["calls"] if call["model_answered"]}
    shown = {d["response_model"] for d in decisions(db) if d["response_model"]}
    # a dated snapshot where the emitter wrote it (a streamed call's may name the model asked)
    assert shown and shown <= answered


def test_an_emitter_that_keeps_answers_off_its_spans_says_so(ingested):
    _, report = ingested["openai_v2"]
    said = [v for v in report.violations if v.rule == "answers_not_recorded"]
    assert len(said) == 1 and said[0].severity == "info" and "17 inference spans" in said[0].message
    # of its 19 answered calls, the refusal finished with content_filter and the streamed one with no reason written
    for name in set(EMITTERS) - {"openai_v2"}:
        assert not [v for v in ingested[name][1].violations if v.rule == "answers_not_recorded"], name


def test_a_file_of_spans_with_no_inference_says_so_in_one_line(tmp_path):
    # the bot's own spans of the openai-v2 recording without the library's: invoke_agent and game spans only
    lines = []
    for text in (HERE / "openai_v2.otlp.jsonl").read_text().splitlines():
        export = json.loads(text)
        for resource in export["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                scope["spans"] = [span for span in scope["spans"] if not span["name"].startswith("chat ")]
        lines.append(json.dumps(export))
    path = tmp_path / "agents_only.otlp.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = workbench.validate([path]).files[0]
    said = [v for v in report.violations if v.rule == "no_decisions"]
    assert len(said) == 1 and said[0].severity == "warning"
    assert "no decision" in said[0].message and "invoke_agent" in said[0].message


def test_litellms_default_names_the_setting_that_gives_each_call_its_span(ingested):
    # Without USE_OTEL_LITELLM_REQUEST_SPAN, LiteLLM writes a call's attributes onto the
    # span active when it began, after that span ended (lost), except for the HTTP 400
    # (written before the error is raised, over the bot's invoke_agent span) and the
    # streamed call (a litellm_request span of its own); every answered call also gets a
    # raw_gen_ai_request span holding only the provider's response (llm.openai.*).
    db, report = ingested[RAW_ONLY]
    calls = {call["k"]: call for call in TRUTH[RAW_ONLY]["calls"]}
    failed = next(call for call in calls.values() if call["outcome"] == "failed")
    streamed = next(call for call in calls.values() if call["stream"])
    got = decisions(db)
    assert [(d["game"], d["agent"], d["model"], d["outcome"]) for d in got] == [
        (failed["game"], failed["agent"], failed["model_requested"], "failed"),
        (streamed["game"], None, streamed["model_requested"], "valid"),
    ]  # the streamed call has no parent
    (said,) = [v for v in report.violations if v.rule == "raw_calls_only"]
    raw = sum(1 for call in calls.values() if call["outcome"] != "failed" and not call["stream"])
    assert said.severity == "warning" and raw == 18
    assert f"{raw} model calls" in said.message and "USE_OTEL_LITELLM_REQUEST_SPAN=true" in said.message


@pytest.mark.parametrize("name", ["pydantic_ai", "logfire", "litellm_default", "openinference"])
def test_a_recording_that_grows_gives_what_a_one_shot_ingest_gives(tmp_path, name):
    # the collector appends an export per line as the bot plays: ingested in stages, cut
    # mid-line, the database ends as a one-shot ingest of the whole file leaves it
    from tests.test_growing_files import assert_same_tables, grow

    content = (HERE / f"{name}.otlp.jsonl").read_bytes()
    log, db = tmp_path / "grown" / f"{name}.otlp.jsonl", tmp_path / "grown.duckdb"
    log.parent.mkdir()
    reports = grow(log, content, [0.3, 0.55, 0.8, 1.0], db)
    assert [report.status for report in reports][1:] == ["appended"] * 3
    assert_same_tables(db, [log], tmp_path)
