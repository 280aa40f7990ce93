"""Agent Arena reasoning traces: what the real runtime writes, read into
`arena_traces`/`arena_trace_steps` with every line a row or a reject, grown like a
one-shot ingest, joined back to the decisions, timed per step and model, and charted.

Facts about the real program are written out by hand from its source
(github.com/JustInternetAI/AgentArena at bf2cafb244c6, March 2026), never taken from the
workbench's own lists; the inputs are our own:

- `python/agent_runtime/reasoning_trace.py`: `ReasoningTrace.to_dict` writes `agent_id`,
  `tick`, `episode_id`, `start_time`, `steps`; `TraceStep.to_dict` writes `timestamp`,
  `agent_id`, `tick`, `name`, `data`, and `duration_ms` only when it is not None;
  `add_step` stamps each step with its trace's agent and tick; times are
  `datetime.utcnow().isoformat() + "Z"`; `TraceStepName` is observation, retrieved,
  prompt (PROMPT_BUILDING), llm_request, response (LLM_RESPONSE), decision;
  `TraceStore` writes `log_dir / f"{episode_id}.jsonl"` (default `logs/traces`), opened
  for appending, one `to_jsonl()` line per finished capture; generated episode ids are
  `ep_%Y%m%d_%H%M%S`; `get_episode_traces` reads each step's `agent_id` and `tick` as
  required keys and `steps` with a default of [].
- `python/agent_runtime/prompt_inspector.py`: the older inspector writes one JSON file
  per tick, `<agent>_tick_<NNNNNN>.json`, with `entries` of `stage`s: not a trace file.
- `python/sdk/agent_arena_sdk/server/debug_store.py`: the SDK's `DebugTrace` adds
  `trace_id`, writes `start_time` and step `timestamp` as epoch floats, steps with
  `elapsed_ms` and no `agent_id`/`tick`. Its bridge to disk calls
  `TraceStore._write_trace`, which the runtime's TraceStore does not define, so at this
  commit it stays in memory; were it written, it would read as below.
- `python/sdk/agent_arena_sdk/server/ipc_server.py`, `docs/prompt_inspector.md`: step
  data shapes (observation `position`/`health`/`energy`; prompt `system_prompt`,
  `user_prompt`; llm_request `model`, `prompt`, `temperature`, `max_tokens`; response
  `raw_text`, `tokens_used`, `finish_reason`; decision `tool`, `params`, `reasoning`).
- The real program writes no decision-log files: `*.decisions.jsonl` is seed 002's
  shape. A decision joins its trace by agent, tick and episode, the episode being the
  decision log's name and the trace record's `episode_id`.
"""

from __future__ import annotations

import json
import random
import statistics
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

import workbench
from tests.conftest import write_lines
from tests.figures import assert_rendered, views
from workbench.arena import FORMAT, queries, traces
from workbench.arena import synth as synth_arena
from workbench.arena.models import TRACE_STEP_NAMES
from workbench.jsonl import LineBatch
from workbench.plots import save
from workbench.plots.traces import step_times_chart

EPISODE = "ep_20260306_183000"  # the runtime's generated form


def step(name, data, tick, agent="agent_001", duration_ms=None, at="2026-03-06T18:30:00.250000Z", **extra):
    entry = {"timestamp": at, "agent_id": agent, "tick": tick, "name": name, "data": data, **extra}
    if duration_ms is not None:
        entry["duration_ms"] = duration_ms
    return entry


def record(tick, steps, agent="agent_001", episode=EPISODE, **extra):
    return {
        "agent_id": agent,
        "tick": tick,
        "episode_id": episode,
        "start_time": f"2026-03-06T18:30:{tick:02d}.000100Z",
        "steps": steps,
        **extra,
    }


def pipeline(tick, tool="move_to", params=None, agent="agent_001", model="gpt-4o-mini", llm_ms=650.0):
    params = params if params is not None else {"target": [1.0, 0.0, 2.0]}
    answer = {"tool": tool, "params": params}
    return record(
        tick,
        [
            step("observation", {"position": [10.5, 0.0, 5.2], "health": 100, "energy": 80}, tick, agent, 0.4),
            step("prompt", {"system_prompt": "You are a forager.", "user_prompt": f"Tick {tick}"}, tick, agent, 1.2),
            step(
                "llm_request",
                {"model": model, "prompt": f"Tick {tick}", "temperature": 0.7, "max_tokens": 256},
                tick,
                agent,
                llm_ms,
            ),
            step(
                "response",
                {"raw_text": json.dumps(answer), "tokens_used": 45, "finish_reason": "stop"},
                tick,
                agent,
                0.3,
            ),
            step("decision", {**answer, "reasoning": "nearest berry"}, tick, agent),
        ],
        agent,
    )


def violations_of(*records):
    texts = [r if isinstance(r, str) else json.dumps(r) for r in records]
    found, rejects = traces.check_batch(LineBatch(numbers=list(range(1, len(texts) + 1)), texts=texts))
    return {(v.locator, v.rule, v.field) for v in found}, rejects


def ingest(tmp_path, files: dict[str, list], db="x.duckdb"):
    paths = [write_lines(_at(tmp_path / name), lines) for name, lines in files.items()]
    report = workbench.ingest(paths, db=tmp_path / db)
    return report, duckdb.connect(str(tmp_path / db))


def _at(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


# --- what the real runtime writes --------------------------------------------------------


def test_the_runtimes_step_names_in_pipeline_order():
    # reasoning_trace.py, TraceStepName
    assert TRACE_STEP_NAMES == ("observation", "retrieved", "prompt", "llm_request", "response", "decision")


def test_a_record_as_the_runtime_writes_it_is_valid():
    # TraceStep.to_dict leaves duration_ms out when it is None; times end with "Z"
    assert violations_of(pipeline(3)) == (set(), {})


@pytest.mark.parametrize("key", ["agent_id", "tick", "episode_id", "start_time", "steps"])
def test_every_key_of_a_record_is_required(key):
    # ReasoningTrace.to_dict writes all five; get_episode_traces indexes the first four
    line = pipeline(3)
    del line[key]
    assert violations_of(line)[0] == {("line 1", "required_key", key)}


@pytest.mark.parametrize("key", ["timestamp", "name", "data"])
def test_a_steps_written_keys_are_required(key):
    line = pipeline(3)
    del line["steps"][1][key]
    assert violations_of(line)[0] == {("line 1", "required_key", f"steps[1].{key}")}


def test_a_step_stamped_with_another_tick_or_agent_is_an_error():
    # add_step copies the trace's agent_id and tick into every step
    line = pipeline(3)
    line["steps"][2]["tick"] = 4
    assert violations_of(line)[0] == {("line 1", "step_mismatch", "steps[2].tick")}
    line = pipeline(3)
    line["steps"][4]["agent_id"] = "agent_002"
    assert violations_of(line)[0] == {("line 1", "step_mismatch", "steps[4].agent_id")}


def test_trace_files_are_claimed_where_the_runtime_writes_them(tmp_path):
    first = (json.dumps(pipeline(0)) + "\n").encode()
    decision = (json.dumps({"agent_id": "a", "tick": 0, "tool": "idle", "params": {}}) + "\n").encode()
    # TraceStore: log_dir / f"{episode_id}.jsonl", default log_dir logs/traces
    assert FORMAT.claims(Path(f"logs/traces/{EPISODE}.jsonl"), first)
    assert FORMAT.claims(Path(f"logs/traces/{EPISODE}.jsonl"), b'{"agent_id": "agent_001", "ti')  # a cut first line
    assert FORMAT.claims(Path("elsewhere/run.jsonl"), first)  # recognised by its keys
    assert traces.is_trace(Path(f"logs/traces/{EPISODE}.jsonl"), first)
    assert not traces.is_trace(Path("logs/traces/foo.decisions.jsonl"), first)  # a decision log by name
    assert not traces.is_trace(Path("logs/traces/run.jsonl"), decision)  # a decision log by its keys
    assert not traces.is_trace(Path("logs/traces/game.events.jsonl"), b"")  # another log kept there
    assert not traces.is_trace(Path("elsewhere/run.jsonl"), b"")
    # the older PromptInspector's per-tick JSON files are not traces
    capture = json.dumps(
        {
            "agent_id": "agent_001",
            "tick": 42,
            "start_time": "2026-01-30T19:38:00Z",
            "entries": [{"stage": "llm_request", "data": {}}],
        }
    ).encode()
    assert not FORMAT.claims(Path("logs/inspector/agent_001_tick_000042.json"), capture)


def test_the_sdks_debug_trace_shape_reads_with_its_differences_reported(tmp_path):
    # debug_store.DebugTrace.to_dict: trace_id, epoch-float times, elapsed_ms, no stamps
    sdk = {
        "agent_id": "agent_1",
        "tick": 5,
        "episode_id": EPISODE,
        "trace_id": "a1b2c3d4",
        "start_time": 1772821800.5,
        "steps": [{"name": "observation", "data": {"health": 100}, "timestamp": 1772821800.6, "elapsed_ms": 100.0}],
    }
    report, con = ingest(tmp_path, {f"traces/{EPISODE}.jsonl": [sdk]})
    (file,) = report.files
    found = {(v.severity, v.rule, v.field) for v in file.violations}
    assert found == {
        ("error", "string_type", "start_time"),
        ("error", "string_type", "steps[0].timestamp"),
        ("warning", "step_stamp_missing", "steps[0].agent_id"),
        ("info", "undocumented_key", "trace_id"),
        ("info", "undocumented_key", "steps[0].elapsed_ms"),
    }
    assert con.execute("SELECT agent_id, tick, defaulted, extra->>'elapsed_ms' FROM arena_trace_steps").fetchall() == [
        ("agent_1", 5, ["agent_id", "tick"], "100.0")
    ]


# --- rows, rejects, violations -------------------------------------------------------------


def hand_written():
    """Lines of one episode file, and the faults each carries (independently of the reader)."""
    llm_failed = record(
        2,
        [
            step("observation", {"position": [1.0, 0.0, 1.0]}, 2, duration_ms=0.5),
            step("llm_request", {"model": "llama3.1:8b", "prompt": "Tick 2"}, 2, duration_ms=30000),
            step("parse_error", {"error": "timeout"}, 2),
        ],
    )
    wrong_types = pipeline(4)
    wrong_types["steps"][1]["duration_ms"] = "12"
    wrong_types["steps"][0]["data"] = "saw two berries"
    lines = [
        pipeline(0),  # 1
        pipeline(1, tool="collect", params={"target_name": "Berry1"}),  # 2
        "",  # 3 blank
        llm_failed,  # 4
        '{"agent_id": "agent_001", "tick": 3, "episode_id": "ep',  # 5 cut
        record(3, None),  # 6 steps null
        {k: v for k, v in record(5, []).items() if k != "steps"},  # 7 no steps
        wrong_types,  # 8
        {**pipeline(6), "tick": "6"},  # 9
        "[1, 2, 3]",  # 10 not an object
        record(7, []),  # 11 no step logged
    ]
    faults = {
        ("line 5", "not_a_json_object", "(record)"),
        ("line 6", "list_type", "steps"),
        ("line 7", "required_key", "steps"),
        ("line 8", "float_type", "steps[1].duration_ms"),
        ("line 8", "dict_type", "steps[0].data"),
        ("line 9", "int_type", "tick"),
        ("line 10", "not_a_json_object", "(record)"),
    }
    return lines, faults


def expected_steps(lines, episode):
    """(seq, agent_id, episode_id, tick, step, name, ts, duration_ms, data) for every step
    of every object line, the way the real reader reconstructs a trace."""
    rows = []
    for seq, line in enumerate(lines, 1):
        if not isinstance(line, dict) or not isinstance(line.get("steps"), list):
            continue
        tick = line["tick"] if isinstance(line["tick"], int) else None
        for index, s in enumerate(line["steps"]):
            ts = datetime.fromisoformat(s["timestamp"]).replace(tzinfo=None)
            duration = s.get("duration_ms")
            duration = float(duration) if isinstance(duration, (int, float)) else None
            rows.append(
                (
                    seq,
                    line["agent_id"],
                    line.get("episode_id", episode),
                    tick,
                    index,
                    s["name"],
                    ts,
                    duration,
                    s["data"],
                )
            )
    return rows


def test_every_line_is_rows_or_a_reject(tmp_path):
    lines, faults = hand_written()
    report, con = ingest(tmp_path, {f"traces/{EPISODE}.jsonl": lines})
    (file,) = report.files
    assert file.format == "arena" and file.status == "ingested"
    assert {(v.locator, v.rule, v.field) for v in file.violations if v.severity == "error"} == faults
    non_blank = sum(1 for line in lines if line != "")
    assert (file.records, file.rejected) == (non_blank - 2, 2)
    assert con.execute("SELECT raw FROM rejects ORDER BY line").fetchall() == [(lines[4],), (lines[9],)]
    cut = next(v for v in file.violations if v.locator == "line 5")
    assert "line 5" in cut.locator and "kept in `rejects`" in cut.message
    records = con.execute("SELECT seq, tick, steps, valid FROM arena_traces ORDER BY seq").fetchall()
    assert records == [
        (1, 0, 5, True),
        (2, 1, 5, True),
        (4, 2, 3, True),
        (6, 3, None, False),
        (7, 5, None, False),
        (8, 4, 5, False),
        (9, None, 5, False),
        (11, 7, 0, True),
    ]
    got = con.execute(
        "SELECT seq, agent_id, episode_id, tick, step, name, ts, duration_ms, data "
        "FROM arena_trace_steps ORDER BY seq, step"
    ).fetchall()
    assert [(*row[:8], json.loads(row[8])) for row in got] == expected_steps(lines, EPISODE)


def test_a_missing_episode_id_is_the_files_name(tmp_path):
    line = pipeline(0)
    del line["episode_id"]
    _, con = ingest(tmp_path, {"traces/ep_7.jsonl": [line, record(1, [], episode="other")]})
    assert con.execute("SELECT seq, episode_id FROM arena_traces ORDER BY seq").fetchall() == [
        (1, "ep_7"),
        (2, "other"),
    ]
    assert set(con.execute("SELECT locator, rule, field FROM violations").fetchall()) == {
        ("line 1", "required_key", "episode_id"),
        ("line 2", "episode_mismatch", "episode_id"),
    }


# --- growth ---------------------------------------------------------------------------------


def table_rows(db: Path) -> dict[str, list]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            table: con.execute(f"SELECT * EXCLUDE (source_id) FROM {table} ORDER BY ALL").fetchall()
            for table in ("arena_traces", "arena_trace_steps", "violations", "rejects")
        } | {"sources": con.execute("SELECT records, rejected, complete_lines FROM sources").fetchall()}
    finally:
        con.close()


def test_a_growing_trace_file_ingests_only_new_lines_like_a_one_shot(tmp_path):
    lines, _ = hand_written()
    content = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines).encode()
    grown = _at(tmp_path / "grown" / "traces" / f"{EPISODE}.jsonl")
    statuses = []
    # half, then a cut mid-line, then the rest: what a watcher sees of the runtime's appends
    for end in (len(content) // 2, int(len(content) * 0.7), len(content)):
        grown.write_bytes(content[:end])
        statuses.append(workbench.ingest([grown], db=tmp_path / "grown.duckdb").files[0].status)
    assert statuses == ["ingested", "appended", "appended"]
    again = workbench.ingest([grown], db=tmp_path / "grown.duckdb").files[0]
    assert again.status == "unchanged"
    one_shot = _at(tmp_path / "once" / "traces" / f"{EPISODE}.jsonl")
    one_shot.write_bytes(content)
    workbench.ingest([one_shot], db=tmp_path / "once.duckdb")
    assert table_rows(tmp_path / "grown.duckdb") == table_rows(tmp_path / "once.duckdb")
    steps = sum(len(line["steps"]) for line in lines if isinstance(line, dict) and isinstance(line.get("steps"), list))
    assert len(table_rows(tmp_path / "grown.duckdb")["arena_trace_steps"]) == steps


# --- the join: from a decision back to its reasoning -------------------------------------------


def joined_episode(tmp_path):
    decisions = [
        {
            "agent_id": "agent_001",
            "tick": 0,
            "tool": "move_to",
            "params": {"target": [1.0, 0.0, 2.0]},
            "model": "gpt-4o-mini",
        },
        {
            "agent_id": "agent_001",
            "tick": 1,
            "tool": "collect",
            "params": {"resource_id": "Berry1"},
            "model": "gpt-4o-mini",
        },
        {"agent_id": "agent_002", "tick": 1, "tool": "idle", "params": {}, "model": "qwen2.5:14b"},  # untraced
    ]
    trace_lines = [
        pipeline(0),
        pipeline(1, tool="collect", params={"resource_id": "Berry1"}),
        record(2, [step("observation", {}, 2, duration_ms=0.2)]),
    ]  # no decision logged
    return ingest(tmp_path, {f"{EPISODE}.decisions.jsonl": decisions, f"traces/{EPISODE}.jsonl": trace_lines})


def test_an_invalid_decision_drills_down_to_its_trace(tmp_path):
    _, con = joined_episode(tmp_path)
    frame = queries.decision_drilldown(con, agent_id="agent_001", episode_id=EPISODE, tick=1)
    assert frame.height == 1
    row = frame.row(0, named=True)
    assert (row["tool"], row["valid"], row["traced"]) == ("collect", False, True)
    assert any("unknown_key at params.resource_id" in v for v in row["violations"])
    expected = pipeline(1, tool="collect", params={"resource_id": "Berry1"})["steps"]
    by_name = {s["name"]: s for s in expected}
    assert json.loads(row["observation"]) == by_name["observation"]["data"]
    assert json.loads(row["prompt"]) == by_name["prompt"]["data"]
    assert json.loads(row["llm_request"]) == by_name["llm_request"]["data"]
    assert json.loads(row["response"]) == by_name["response"]["data"]
    assert json.loads(row["traced_decision"]) == by_name["decision"]["data"]
    assert row["retrieved"] is None  # the behaviour kept no memory
    assert row["step_ms"] == [{"name": s["name"], "duration_ms": s.get("duration_ms")} for s in expected]
    assert row["trace_ms"] == pytest.approx(sum(s.get("duration_ms", 0) for s in expected))
    assert row["trace_locator"] == "line 2" and row["locator"] == "line 2"


def test_every_decision_is_listed_traced_or_not(tmp_path):
    _, con = joined_episode(tmp_path)
    frame = queries.decision_drilldown(con)
    assert [(r["agent_id"], r["tick"], r["traced"], r["valid"]) for r in frame.iter_rows(named=True)] == [
        ("agent_001", 0, True, True),
        ("agent_001", 1, True, False),
        ("agent_002", 1, False, True),
    ]
    assert queries.decision_drilldown(con, agent_id="nobody").is_empty()


def test_traced_ticks_say_where_to_jump(tmp_path):
    _, con = joined_episode(tmp_path)
    ticks = queries.traced_ticks(con)
    assert [
        (r["agent_id"], r["tick"], r["steps"], r["has_decision_step"], r["decision_line"], r["decision_valid"])
        for r in ticks.iter_rows(named=True)
    ] == [
        ("agent_001", 0, 5, True, 1, True),
        ("agent_001", 1, 5, True, 2, False),
        ("agent_001", 2, 1, False, None, None),
    ]
    assert ticks["names"][0].to_list() == ["observation", "prompt", "llm_request", "response", "decision"]


def test_a_tick_traced_twice_shows_the_last_record(tmp_path):
    # the runtime opens the episode file for appending: a rerun adds a second record
    _, con = ingest(
        tmp_path,
        {
            f"{EPISODE}.decisions.jsonl": [{"agent_id": "agent_001", "tick": 0, "tool": "idle", "params": {}}],
            f"traces/{EPISODE}.jsonl": [pipeline(0, llm_ms=100.0), pipeline(0, llm_ms=200.0)],
        },
    )
    frame = queries.decision_drilldown(con)
    assert frame.height == 1 and frame["trace_locator"].to_list() == ["line 2"]


# --- step times -------------------------------------------------------------------------------


def test_step_times_match_an_independent_percentile(tmp_path):
    # DuckDB's quantile_cont interpolates at rank (n-1)p, which is statistics.quantiles'
    # "inclusive" method; the "exclusive" default gives another p95 for these values.
    durations = {"gpt-4o-mini": [120.0, 480.0, 650.0, 700.0, 2400.0], "llama3.1:8b": [900.0, 1500.0]}
    decisions, trace_lines = [], []
    for agent, (model, values) in zip(("agent_001", "agent_002"), durations.items()):
        for tick, ms in enumerate(values):
            decisions.append({"agent_id": agent, "tick": tick, "tool": "idle", "params": {}, "model": model})
            trace_lines.append(pipeline(tick, agent=agent, model=model, llm_ms=ms))
    # an agent whose decisions name no model: its trace's llm_request does
    trace_lines.append(pipeline(0, agent="agent_003", model="claude-3-5-haiku-20241022", llm_ms=50.0))
    _, con = ingest(tmp_path, {f"{EPISODE}.decisions.jsonl": decisions, f"traces/{EPISODE}.jsonl": trace_lines})
    times = queries.step_times(con)
    llm = {r["model"]: r for r in times.filter(times["name"] == "llm_request").iter_rows(named=True)}
    for model, values in durations.items():
        cuts = statistics.quantiles(values, n=100, method="inclusive")
        assert llm[model]["p50_ms"] == pytest.approx(cuts[49])
        assert llm[model]["p95_ms"] == pytest.approx(cuts[94])
        assert (llm[model]["steps"], llm[model]["timed"], llm[model]["model_from"]) == (
            len(values),
            len(values),
            "decisions",
        )
    exclusive = statistics.quantiles(durations["gpt-4o-mini"], n=100, method="exclusive")[94]
    assert llm["gpt-4o-mini"]["p95_ms"] != pytest.approx(exclusive)
    assert llm["claude-3-5-haiku-20241022"]["model_from"] == "trace"
    decision = times.filter(times["name"] == "decision")
    assert decision["timed"].to_list() == [0, 0, 0] and decision["p50_ms"].null_count() == 3
    assert times["name"].unique(maintain_order=True).to_list() == [
        "observation",
        "prompt",
        "llm_request",
        "response",
        "decision",
    ]


def test_step_times_fall_back_to_the_agent(tmp_path):
    lines = [record(0, [step("plan", {}, 0, duration_ms=3.0)]), record(1, [step("plan", {}, 1, duration_ms=5.0)])]
    _, con = ingest(tmp_path, {f"traces/{EPISODE}.jsonl": lines})
    assert queries.step_times(con).rows() == [("plan", "agent_001", "agent", 2, 2, 4.0, 4.9)]


# --- the chart ---------------------------------------------------------------------------------


def test_the_step_times_chart_renders_the_percentiles(tmp_path):
    _, con = joined_episode(tmp_path)
    chart = step_times_chart(con)
    save(chart, tmp_path / "steps.png")
    assert_rendered(tmp_path / "steps.png")
    marks = {v.mark: v for v in views(chart.to_dict())}
    assert set(marks) == {"bar", "rule", "tick"}
    rows = {(r["name"], r["model"]): r for r in marks["bar"].rows}
    # the two traces of agent_001 (gpt-4o-mini), each llm_request 650 ms, prompt 1.2 ms
    assert rows[("llm_request", "gpt-4o-mini")]["p50_ms"] == 650.0
    assert rows[("prompt", "gpt-4o-mini")]["p95_ms"] == pytest.approx(1.2)
    assert ("decision", "gpt-4o-mini") not in rows  # never timed: nothing to draw
    assert marks["tick"].fields["x"] == "p95_shown" and marks["bar"].fields["x2"] == "p50_shown"


def test_an_empty_database_gives_a_chart_that_says_so(tmp_path):
    con = workbench.connect(tmp_path / "empty.duckdb")
    chart = step_times_chart(con)
    (view,) = views(chart.to_dict())
    assert view.mark == "text" and view.rows[0]["note"].startswith("Nothing to plot")
    save(chart, tmp_path / "empty.png")
    assert_rendered(tmp_path / "empty.png")
    bare = duckdb.connect(str(tmp_path / "bare.duckdb"))  # no workbench tables at all
    (view,) = views(step_times_chart(bare).to_dict())
    assert "no Agent Arena trace tables" in view.rows[0]["note"]


# --- the synthetic corpus -----------------------------------------------------------------------


def test_synthetic_traces_match_the_decisions_they_explain(tmp_path):
    entries = synth_arena.generate(tmp_path / "arena", 1, random.Random("7:arena"))
    trace_files = [Path(e["path"]) for e in entries if Path(e["path"]).parent.name == "traces"]
    assert len(trace_files) == 3
    for trace_file in trace_files:
        decided = {}
        for text in (trace_file.parent.parent / f"{trace_file.stem}.decisions.jsonl").read_text().splitlines():
            try:
                line = json.loads(text)
            except ValueError:
                continue  # the crashed episode's cut line
            decided[(line["agent_id"], str(line["tick"]))] = line
        agents, compared, untimed_llm = set(), 0, 0
        for text in trace_file.read_text().splitlines():
            try:
                rec = json.loads(text)
            except ValueError:
                continue
            agents.add(rec["agent_id"])
            assert rec["episode_id"] == trace_file.stem
            final = [s for s in rec.get("steps", []) if s["name"] == "decision"]
            line = decided.get((rec["agent_id"], str(rec["tick"])))
            if final and line:
                assert (final[0]["data"]["tool"], final[0]["data"]["params"]) == (line["tool"], line["params"])
                compared += 1
            names = [s["name"] for s in rec.get("steps", [])]
            if names:
                assert names[0] == "observation" and names[-1] in ("decision", "parse_error")
                assert set(names) <= set(TRACE_STEP_NAMES) | {"parse_error"}
            untimed_llm += any(s["name"] == "llm_request" and "duration_ms" not in s for s in rec.get("steps", []))
        assert compared > 50 and untimed_llm == 0
        # one agent ran with tracing off
        assert len({agent for agent, _ in decided}) - len(agents) == 1
