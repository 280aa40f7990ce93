"""Record real OpenTelemetry output of LLM instrumentation libraries as OTLP/JSON lines.

A deterministic two-game bot ("game-1", "game-2"; agent X on gpt-4.1-mini, agent O on
gpt-4o-mini; 10 turns per game alternating X, O) plays a toy 3x3 board game through each
library against a fake OpenAI-compatible server on 127.0.0.1. Every turn declares one tool,
``place``; the server answers each chat call with a ``place`` tool call, except:

- game-1 turn 3 (X): HTTP 400 with an OpenAI-style error body (the client raises);
- game-1 turn 6 (O): a refusal (content null, ``refusal`` set, finish_reason content_filter);
- game-2 turn 4 (O): asked with ``stream=True`` and ``stream_options.include_usage``
  where the library can stream; answered as SSE chunks ending in ``data: [DONE]``;
- game-2 turn 5 (X): a tool call whose arguments are the malformed JSON ``{"square": 2,``;
  the bot's tool execution then fails.

A request whose last message is not the turn's user prompt (a tool result sent back, or a
retry prompt) is answered with plain text "Done." and finish_reason stop.
Tokens of the server's k-th request of a recording: prompt 100+k, completion 10+k,
cached prompt tokens 64 when k is even, else 0.

Spans go over OTLP/HTTP (protobuf) to a receiver on 127.0.0.1 that writes each export
request as one line of OTLP/JSON (hex ids, integer enums, int64 as strings), as an
OpenTelemetry Collector's file exporter does.

Games and agents, per recording (the library's own way where it has one):
    openai_v2          a span "game <name>" with gen_ai.conversation.id, and per turn a span
                       "invoke_agent X|O" (gen_ai.operation.name, gen_ai.agent.name), made by the bot
    openai_v2_latest   util-genai's workflow ("invoke_workflow game", gen_ai.conversation.id added),
                       invoke_local_agent (agent_name, conversation_id) and tool (execute_tool) spans
    openllmetry        @conversation(conversation_id=game) around @workflow(name="game"),
                       Associations session_id, @agent(name=X|O) per turn, @tool(name="place")
    openinference      using_session(game); per turn an AGENT span (agent.name), a TOOL span per call
    pydantic_ai        Agent(name=X|O).run(..., conversation_id=game); its own execute_tool spans
    logfire            logfire.span("game {game}") with gen_ai.conversation.id and
                       logfire.span("invoke_agent {agent}") with gen_ai.agent.name
    litellm_*          the bot's "game"/"invoke_agent" spans as for openai_v2 (litellm's otel callback
                       puts no session of its own on spans); metadata and litellm_session_id are passed;
                       litellm_default and litellm_latest set USE_OTEL_LITELLM_REQUEST_SPAN=true;
                       litellm_parent is litellm's true default (no USE_OTEL_LITELLM_REQUEST_SPAN, no
                       latest-conventions opt-in): litellm writes a call's attributes onto the active
                       parent span (already ended by then, so they may be dropped) instead of a
                       litellm_request span, and adds a raw_gen_ai_request child span per call
    langchain          a RunnableLambda per turn named X|O, config metadata {thread_id: game, agent}
                       and configurable.thread_id; the tool runs as a LangChain StructuredTool

Outputs, beside this file:
    <emitter>.otlp.jsonl   one per recording (openai_v2 also writes openai_v2.logs.otlp.jsonl:
                           its message content goes to log records, not span attributes)
    server_log.json        every request the fake server received and what it answered
    truth.json             per recording: the calls in order with their expected outcome, totals
    versions.json          per recording: Python and package versions

Environments (one virtualenv per family, Python 3.11; ``--setup`` makes them):
    openai-v2      openai==3.57.0 opentelemetry-instrumentation-openai-v2==2.4b0
                   opentelemetry-util-genai==0.4b0 httpx (+ common)
                   (util-genai 1.0b0-1.1b0 always take the latest conventions, so openai-v2's
                   default path cannot run with them; 1.2b0-1.3b0 lack the module
                   opentelemetry.util.genai.instruments that openai-v2 2.4b0 imports)
    traceloop      traceloop-sdk==0.62.4 (opentelemetry-instrumentation-openai==0.62.4) httpx
                   openai==3.57.0 (+ common; traceloop-sdk holds opentelemetry-sdk at 1.45.1)
    openinference  openinference-instrumentation-openai==0.1.66 openai==3.57.0 (+ common)
    pydantic-ai    pydantic-ai-slim[openai]==2.68.0 httpx (+ common)
    logfire        logfire[openai]==5.4.0 openai==3.57.0 httpx (+ common)
    litellm        litellm==1.110.2 (+ common)
    langchain      langchain-openai==1.8.1 langchain-core==1.8.3
                   opentelemetry-instrumentation-langchain==0.62.4 (+ common)
    common         opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
                   opentelemetry-proto==1.45.2

Run:
    python3 record.py --setup --venvs DIR        # create DIR/<family> with the versions above
    python3 record.py --venvs DIR [--only NAME]  # record all (or some) emitters

The recordings: openai_v2, openai_v2_latest, openllmetry, openinference, pydantic_ai,
logfire, litellm_default, litellm_latest, litellm_parent, langchain.
"""

import argparse
import base64
import gzip
import json
import os
import re
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent

COMMON = [
    "opentelemetry-sdk==1.45.2",
    "opentelemetry-exporter-otlp-proto-http==1.45.2",
    "opentelemetry-proto==1.45.2",
]
FAMILIES = {
    "openai-v2": [
        "openai==3.57.0",
        "opentelemetry-instrumentation-openai-v2==2.4b0",
        "opentelemetry-util-genai==0.4b0",
        "httpx",
        *COMMON,
    ],
    # traceloop-sdk 0.62.4 requires opentelemetry-sdk 1.45.1, so the common pins are relaxed.
    "traceloop": [
        "traceloop-sdk==0.62.4",
        "httpx",
        "openai==3.57.0",
        "opentelemetry-sdk",
        "opentelemetry-exporter-otlp-proto-http",
        "opentelemetry-proto",
    ],
    "openinference": ["openinference-instrumentation-openai==0.1.66", "openai==3.57.0", *COMMON],
    "pydantic-ai": ["pydantic-ai-slim[openai]==2.68.0", "httpx", *COMMON],
    "logfire": ["logfire[openai]==5.4.0", "openai==3.57.0", "httpx", *COMMON],
    "litellm": ["litellm==1.110.2", *COMMON],
    "langchain": [
        "langchain-openai==1.8.1",
        "langchain-core==1.8.3",
        "opentelemetry-instrumentation-langchain==0.62.4",
        *COMMON,
    ],
}

# name -> (family, extra environment)
EMITTERS = {
    "openai_v2": ("openai-v2", {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}),
    "openai_v2_latest": (
        "openai-v2",
        {
            "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only",
        },
    ),
    "openllmetry": ("traceloop", {"TRACELOOP_TRACE_CONTENT": "true", "TRACELOOP_TELEMETRY": "false"}),
    "openinference": ("openinference", {}),
    "pydantic_ai": ("pydantic-ai", {}),
    "logfire": ("logfire", {"LOGFIRE_SEND_TO_LOGFIRE": "false", "LOGFIRE_CONSOLE": "false"}),
    # With a parent span active, litellm >= 1.81 writes the call's attributes onto that parent span
    # instead of a span of its own, after the call returned (the parent has ended by then, so they are
    # lost); USE_OTEL_LITELLM_REQUEST_SPAN=true is its documented switch for a litellm_request child span.
    "litellm_default": ("litellm", {"USE_OTEL_LITELLM_REQUEST_SPAN": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}),
    "litellm_latest": (
        "litellm",
        {
            "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
            "USE_OTEL_LITELLM_REQUEST_SPAN": "true",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        },
    ),
    # litellm's true default: without USE_OTEL_LITELLM_REQUEST_SPAN (and without the latest-conventions
    # opt-in) it writes each call's attributes onto the active parent span, plus a raw_gen_ai_request span.
    "litellm_parent": ("litellm", {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}),
    "langchain": ("langchain", {"TRACELOOP_TRACE_CONTENT": "true"}),
}

# Packages whose versions are recorded, per family.
VERSION_PACKAGES = {
    "openai-v2": ["openai", "opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai"],
    "traceloop": ["traceloop-sdk", "opentelemetry-instrumentation-openai", "openai"],
    "openinference": [
        "openinference-instrumentation-openai",
        "openinference-instrumentation",
        "openinference-semantic-conventions",
        "openai",
    ],
    "pydantic-ai": ["pydantic-ai-slim", "openai", "pydantic"],
    "logfire": ["logfire", "openai"],
    "litellm": ["litellm", "openai"],
    "langchain": ["opentelemetry-instrumentation-langchain", "langchain-openai", "langchain-core", "openai"],
}
VERSION_COMMON = [
    "opentelemetry-api",
    "opentelemetry-sdk",
    "opentelemetry-exporter-otlp-proto-http",
    "opentelemetry-semantic-conventions",
    "opentelemetry-instrumentation",
    "opentelemetry-semantic-conventions-ai",
]

# ---------------------------------------------------------------- the scenario

GAMES = ["game-1", "game-2"]
PLAYERS = {"X": "gpt-4.1-mini", "O": "gpt-4o-mini"}
SNAPSHOTS = {"gpt-4.1-mini": "gpt-4.1-mini-2025-04-14", "gpt-4o-mini": "gpt-4o-mini-2024-07-18"}
TURNS = 10
SPECIAL = {
    ("game-1", 3): "http_400",
    ("game-1", 6): "refusal",
    ("game-2", 4): "stream",
    ("game-2", 5): "bad_args",
}
SCHEMA = {
    "type": "object",
    "properties": {"square": {"type": "integer", "minimum": 0, "maximum": 8}},
    "required": ["square"],
    "additionalProperties": False,
}
TOOL_DESCRIPTION = "Put your mark on a free square of the 3x3 board (squares 0-8)."
TOOL = {"type": "function", "function": {"name": "place", "description": TOOL_DESCRIPTION, "parameters": SCHEMA}}
SYSTEM = "You play a toy 3x3 board game. Answer only by calling the tool place with a free square."
REFUSAL = "I can't help with that."
BAD_ARGS = '{"square": 2,'
ERROR_400 = {"error": {"message": "Invalid 'messages': bad request", "type": "invalid_request_error", "code": None}}
TAG = re.compile(r"\[(game-\d+) turn (\d+) agent ([XO])\]")
CASE = re.compile(r"\[case:(\w+)\]")


def turns():
    """Yield (game, turn, agent, model, case) in play order."""
    for game in GAMES:
        for turn in range(1, TURNS + 1):
            agent = "X" if turn % 2 else "O"
            yield game, turn, agent, PLAYERS[agent], SPECIAL.get((game, turn))


class Board:
    def __init__(self):
        self.cells = [None] * 9

    def prompt(self, game, turn, agent, case):
        free = [i for i, v in enumerate(self.cells) if v is None]
        text = (
            f"[{game} turn {turn} agent {agent}] Board: {''.join(v or '.' for v in self.cells)}. "
            f"Free squares: {','.join(map(str, free))}. You are {agent}: call place."
        )
        if case in ("http_400", "refusal", "bad_args"):
            text += f" [case:{case}]"
        return text

    def place(self, agent, arguments):
        """Execute the tool: ``arguments`` is the JSON string or a dict. Raises on bad input."""
        args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
        square = args["square"]
        if not isinstance(square, int) or not 0 <= square <= 8 or self.cells[square] is not None:
            raise ValueError(f"square {square!r} is not free")
        self.cells[square] = agent
        return f"{agent} placed on {square}"


# ---------------------------------------------------------------- fake OpenAI server


def _text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class FakeOpenAI:
    """Chat Completions on /<recording>/v1/chat/completions; logs every request."""

    def __init__(self):
        self.lock = threading.Lock()
        self.logs: dict[str, list] = {}

    def answer(self, recording, body):
        messages = body.get("messages") or []
        with self.lock:
            log = self.logs.setdefault(recording, [])
            k = len(log) + 1
        game = turn = agent = None
        for m in reversed(messages):
            if m.get("role") == "user":
                found = TAG.search(_text_of(m.get("content")))
                if found:
                    game, turn, agent = found.group(1), int(found.group(2)), found.group(3)
                    break
        last = messages[-1] if messages else {}
        last_text = _text_of(last.get("content"))
        is_prompt = last.get("role") == "user" and TAG.search(last_text) is not None
        case = "after_tool" if not is_prompt else "normal"
        marker = CASE.search(last_text) if is_prompt else None
        if marker:
            case = marker.group(1)
        stream = bool(body.get("stream"))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        requested = body.get("model")
        answered = SNAPSHOTS.get(requested, requested)
        entry = {
            "k": k,
            "game": game,
            "turn": turn,
            "agent": agent,
            "model_requested": requested,
            "model_answered": answered,
            "stream": stream,
            "include_usage": include_usage if stream else None,
            "case": case,
            "last_message_role": last.get("role"),
            "messages": len(messages),
            "tools": [t.get("function", {}).get("name") for t in body.get("tools") or []],
        }
        if case == "http_400":
            entry.update(
                status=400,
                answer="http_400",
                model_answered=None,
                prompt_tokens=None,
                completion_tokens=None,
                cached_tokens=None,
                finish_reason=None,
            )
            with self.lock:
                log.append(entry)
            return 400, "application/json", json.dumps(ERROR_400).encode()

        usage = {
            "prompt_tokens": 100 + k,
            "completion_tokens": 10 + k,
            "total_tokens": 110 + 2 * k,
            "prompt_tokens_details": {"cached_tokens": 64 if k % 2 == 0 else 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }
        rid = f"chatcmpl-{recording[:8]}-{k:03d}"
        call_id = f"call_{k:03d}"
        message = {"role": "assistant", "content": None, "refusal": None}
        if case == "refusal":
            message["refusal"] = REFUSAL
            finish, answer, arguments = "content_filter", "refusal", None
        elif case == "after_tool":
            message["content"] = "Done."
            finish, answer, arguments = "stop", "text", None
        else:
            if case == "bad_args":
                arguments = BAD_ARGS
            else:
                free = re.search(r"Free squares: ([\d,]*)", last_text)
                squares = [int(s) for s in free.group(1).split(",") if s] if free else []
                arguments = json.dumps({"square": squares[0] if squares else 0})
            message["tool_calls"] = [
                {"id": call_id, "type": "function", "function": {"name": "place", "arguments": arguments}}
            ]
            finish, answer = "tool_calls", "tool_call"
        entry.update(
            status=200,
            answer=answer,
            tool_arguments=arguments,
            refusal=message["refusal"],
            finish_reason=finish,
            response_id=rid,
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            cached_tokens=usage["prompt_tokens_details"]["cached_tokens"],
        )
        with self.lock:
            log.append(entry)
        created = 1760000000 + k
        if not stream:
            doc = {
                "id": rid,
                "object": "chat.completion",
                "created": created,
                "model": answered,
                "system_fingerprint": "fp_fake",
                "service_tier": "default",
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": usage,
            }
            return 200, "application/json", json.dumps(doc).encode()
        chunks = []

        def chunk(delta, finish_reason=None):
            chunks.append(
                {
                    "id": rid,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": answered,
                    "system_fingerprint": "fp_fake",
                    "service_tier": "default",
                    "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
                }
            )

        if answer == "tool_call":
            chunk(
                {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "tool_calls": [
                        {"index": 0, "id": call_id, "type": "function", "function": {"name": "place", "arguments": ""}}
                    ],
                }
            )
            half = len(arguments) // 2
            for part in (arguments[:half], arguments[half:]):
                chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]})
        elif answer == "refusal":
            chunk({"role": "assistant", "content": None, "refusal": ""})
            chunk({"refusal": REFUSAL})
        else:
            chunk({"role": "assistant", "content": "", "refusal": None})
            chunk({"content": message["content"]})
        chunk({}, finish)
        if include_usage:
            for c in chunks:
                c["usage"] = None
            chunks.append(
                {
                    "id": rid,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": answered,
                    "system_fingerprint": "fp_fake",
                    "service_tier": "default",
                    "choices": [],
                    "usage": usage,
                }
            )
        data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return 200, "text/event-stream", data.encode()


# ---------------------------------------------------------------- OTLP/HTTP receiver


def _hex_ids(obj):
    """Turn the base64 traceId/spanId/parentSpanId of MessageToDict into lowercase hex, in place."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                obj[key] = base64.b64decode(value).hex()
            else:
                _hex_ids(value)
    elif isinstance(obj, list):
        for value in obj:
            _hex_ids(value)
    return obj


class Receiver:
    def __init__(self, outdir: Path):
        self.outdir = outdir
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}

    def export(self, recording, signal, body: bytes):
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceRequest,
            ExportLogsServiceResponse,
        )
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        if signal == "traces":
            request, response, suffix = ExportTraceServiceRequest(), ExportTraceServiceResponse(), ".otlp.jsonl"
        elif signal == "logs":
            request, response, suffix = ExportLogsServiceRequest(), ExportLogsServiceResponse(), ".logs.otlp.jsonl"
        else:
            return None
        request.ParseFromString(body)
        doc = _hex_ids(MessageToDict(request, use_integers_for_enums=True))
        line = json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
        with self.lock:
            with open(self.outdir / f"{recording}{suffix}", "a", encoding="utf-8") as f:
                f.write(line + "\n")
            self.counts[recording + suffix] = self.counts.get(recording + suffix, 0) + 1
        return response.SerializeToString()


def serve(fake: FakeOpenAI, receiver: Receiver):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            parts = self.path.strip("/").split("/")
            status, ctype, out = 404, "text/plain", b"not found"
            if len(parts) == 4 and parts[1:] == ["v1", "chat", "completions"]:
                status, ctype, out = fake.answer(parts[0], json.loads(body))
            elif len(parts) == 3 and parts[1] == "v1" and parts[2] in ("traces", "logs", "metrics"):
                response = receiver.export(parts[0], parts[2], body)
                status, ctype, out = 200, "application/x-protobuf", response or b""
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(out)))
            if status == 400:
                self.send_header("x-request-id", "req_fake")
            self.end_headers()
            self.wfile.write(out)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# ---------------------------------------------------------------- the bots (run in each venv)


def setup_tracing(endpoint, logs=False):
    """A global SDK TracerProvider exporting OTLP/HTTP protobuf to the receiver."""
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"service.name": "game-bot"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{endpoint}/v1/traces")))
    trace.set_tracer_provider(provider)
    shutdowns = [provider.shutdown]
    if logs:
        from opentelemetry._logs import set_logger_provider
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor

        logger_provider = LoggerProvider(resource=resource)
        logger_provider.add_log_record_processor(
            BatchLogRecordProcessor(OTLPLogExporter(endpoint=f"{endpoint}/v1/logs"))
        )
        set_logger_provider(logger_provider)
        shutdowns.insert(0, logger_provider.shutdown)
    return provider, shutdowns


class Outcomes:
    """What the bot saw, per turn (checked against the server's log)."""

    def __init__(self):
        self.rows = []

    def add(self, game, turn, agent, model, case, result):
        result = result if len(result) <= 240 else result[:240] + "..."
        self.rows.append({"game": game, "turn": turn, "agent": agent, "model": model, "case": case, "result": result})


def _placed(board, agent, arguments_list, refusal, text) -> str:
    """A turn's result: the refusal, or each tool call's arguments placed on the board
    (a tool that fails does not end the turn)."""
    results = [f"refusal: {refusal}"] if refusal else []
    for arguments in arguments_list:
        try:
            results.append(board.place(agent, arguments))
        except Exception as exc:
            results.append(f"tool error: {type(exc).__name__}: {exc}")
    return "; ".join(results) or f"text: {text}"


def _answer_turn(client, model, messages, case, run_tool) -> str:
    """One chat call of a turn, then each tool call it answered with, run by
    `run_tool(call_id, name, arguments)`; a tool that fails does not end the turn."""
    calls, refusal, text = _openai_call(client, model, messages, case == "stream")
    if refusal:
        return f"refusal: {refusal}"
    results = []
    for call_id, name, arguments in calls:
        try:
            results.append(run_tool(call_id, name, arguments))
        except Exception as exc:  # the tool failed; the turn goes on
            results.append(f"tool error: {type(exc).__name__}: {exc}")
    return "; ".join(results) or f"text: {text}"


def _openai_call(client, model, messages, stream):
    """One chat call with the openai client; returns (tool_calls [(id, name, args)], refusal, text)."""
    kwargs = dict(model=model, messages=messages, tools=[TOOL])
    if stream:
        calls, refusal, text = {}, None, ""
        for ch in client.chat.completions.create(stream=True, stream_options={"include_usage": True}, **kwargs):
            for choice in ch.choices:
                d = choice.delta
                if d.refusal:
                    refusal = (refusal or "") + d.refusal
                if d.content:
                    text += d.content
                for tc in d.tool_calls or []:
                    c = calls.setdefault(tc.index, {"id": None, "name": "", "arguments": ""})
                    c["id"] = tc.id or c["id"]
                    if tc.function and tc.function.name:
                        c["name"] += tc.function.name
                    if tc.function and tc.function.arguments:
                        c["arguments"] += tc.function.arguments
        return [(c["id"], c["name"], c["arguments"]) for c in calls.values()], refusal, text
    resp = client.chat.completions.create(**kwargs)
    msg = resp.choices[0].message
    calls = [(tc.id, tc.function.name, tc.function.arguments) for tc in msg.tool_calls or []]
    return calls, msg.refusal, msg.content


def bot_openai_v2(args, out: Outcomes):
    latest = args.worker == "openai_v2_latest"
    provider, shutdowns = setup_tracing(args.otlp, logs=not latest)
    import openai
    from opentelemetry import trace
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    OpenAIInstrumentor().instrument()
    client = openai.OpenAI(base_url=args.llm, api_key="test")
    tracer = trace.get_tracer("game-bot")
    if latest:
        from opentelemetry.util.genai.handler import TelemetryHandler

        handler = TelemetryHandler()

    def run_turn(board, game, turn, agent, model, case):
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": board.prompt(game, turn, agent, case)},
        ]

        def run_tool(call_id, name, arguments):
            if not latest:
                return board.place(agent, arguments)
            with handler.tool(
                name, arguments=arguments, tool_call_id=call_id, tool_type="function", tool_description=TOOL_DESCRIPTION
            ) as inv:
                inv.attributes["gen_ai.agent.name"] = agent
                inv.tool_result = board.place(agent, arguments)
                return inv.tool_result

        return _answer_turn(client, model, messages, case, run_tool)

    for game in GAMES:
        board = Board()
        if latest:
            game_cm = handler.workflow("game")
        else:
            game_cm = tracer.start_as_current_span(f"game {game}", attributes={"gen_ai.conversation.id": game})
        with game_cm as game_inv:
            if latest:
                game_inv.attributes["gen_ai.conversation.id"] = game
            for g, turn, agent, model, case in turns():
                if g != game:
                    continue
                try:
                    if latest:
                        with handler.invoke_local_agent("openai", request_model=model) as agent_inv:
                            agent_inv.agent_name = agent
                            agent_inv.conversation_id = game
                            result = run_turn(board, game, turn, agent, model, case)
                    else:
                        with tracer.start_as_current_span(
                            f"invoke_agent {agent}",
                            attributes={
                                "gen_ai.operation.name": "invoke_agent",
                                "gen_ai.agent.name": agent,
                                "gen_ai.provider.name": "openai",
                                "gen_ai.request.model": model,
                            },
                        ):
                            result = run_turn(board, game, turn, agent, model, case)
                except Exception as exc:
                    result = f"error: {type(exc).__name__}: {exc}"
                out.add(game, turn, agent, model, case, result)
    return shutdowns


def bot_openllmetry(args, out: Outcomes):
    import openai
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from traceloop.sdk import Traceloop
    from traceloop.sdk.associations.associations import AssociationProperty, Associations
    from traceloop.sdk.decorators import agent as agent_decorator
    from traceloop.sdk.decorators import conversation, tool, workflow
    from traceloop.sdk.instruments import Instruments

    Traceloop.init(
        app_name="game-bot",
        exporter=OTLPSpanExporter(endpoint=f"{args.otlp}/v1/traces"),
        telemetry_enabled=False,
        instruments={Instruments.OPENAI},
    )
    client = openai.OpenAI(base_url=args.llm, api_key="test")

    @tool(name="place")
    def place(board, agent, arguments):
        return board.place(agent, arguments)

    def turn_fn(board, game, turn, agent, model, case):
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": board.prompt(game, turn, agent, case)},
        ]
        return _answer_turn(client, model, messages, case, lambda _id, _name, arguments: place(board, agent, arguments))

    agents = {a: agent_decorator(name=a)(turn_fn) for a in PLAYERS}

    def play(game):
        Associations.set([(AssociationProperty.SESSION_ID, game)])
        board = Board()
        for g, turn, agent, model, case in turns():
            if g != game:
                continue
            try:
                result = agents[agent](board, game, turn, agent, model, case)
            except Exception as exc:
                result = f"error: {type(exc).__name__}: {exc}"
            out.add(game, turn, agent, model, case, result)

    for game in GAMES:
        conversation(conversation_id=game)(workflow(name="game")(play))(game)
    from opentelemetry import trace

    return [trace.get_tracer_provider().shutdown]


def bot_openinference(args, out: Outcomes):
    provider, shutdowns = setup_tracing(args.otlp)
    import openai
    from openinference.instrumentation import OITracer, TraceConfig, using_session
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry import trace

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    client = openai.OpenAI(base_url=args.llm, api_key="test")
    tracer = OITracer(trace.get_tracer("game-bot"), config=TraceConfig())
    for game in GAMES:
        board = Board()
        with using_session(session_id=game):
            for g, turn, agent, model, case in turns():
                if g != game:
                    continue
                prompt = board.prompt(game, turn, agent, case)
                try:
                    with tracer.start_as_current_span(agent, openinference_span_kind="agent") as span:
                        span.set_attribute("agent.name", agent)
                        span.set_input(prompt)
                        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
                        calls, refusal, text = _openai_call(client, model, messages, case == "stream")
                        results = [f"refusal: {refusal}"] if refusal else []
                        for _call_id, name, arguments in calls:
                            try:
                                with tracer.start_as_current_span(name, openinference_span_kind="tool") as tspan:
                                    tspan.set_tool(name=name, description=TOOL_DESCRIPTION, parameters=SCHEMA)
                                    tspan.set_input(arguments, mime_type="application/json")
                                    r = board.place(agent, arguments)
                                    tspan.set_output(r)
                                    results.append(r)
                            except Exception as exc:
                                results.append(f"tool error: {type(exc).__name__}: {exc}")
                        result = "; ".join(results) or f"text: {text}"
                        span.set_output(result)
                except Exception as exc:
                    result = f"error: {type(exc).__name__}: {exc}"
                out.add(game, turn, agent, model, case, result)
    return shutdowns


def bot_pydantic_ai(args, out: Outcomes):
    provider, shutdowns = setup_tracing(args.otlp)
    import asyncio
    from typing import Annotated

    from pydantic import Field
    from pydantic_ai import Agent, InstrumentationSettings, RunContext
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    openai_provider = OpenAIProvider(base_url=args.llm, api_key="test")
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))

    def place(ctx: RunContext[tuple], square: Annotated[int, Field(ge=0, le=8)]) -> str:
        """Put your mark on a free square of the 3x3 board (squares 0-8)."""
        board, agent = ctx.deps
        return board.place(agent, {"square": square})

    agents = {
        a: Agent(
            OpenAIChatModel(m, provider=openai_provider), name=a, instructions=SYSTEM, tools=[place], deps_type=tuple
        )
        for a, m in PLAYERS.items()
    }

    async def main():
        for game in GAMES:
            board = Board()
            for g, turn, agent, model, case in turns():
                if g != game:
                    continue
                prompt = board.prompt(game, turn, agent, case)
                try:
                    if case == "stream":
                        async with agents[agent].run_stream(prompt, deps=(board, agent), conversation_id=game) as r:
                            output = await r.get_output()
                    else:
                        output = (await agents[agent].run(prompt, deps=(board, agent), conversation_id=game)).output
                    result = f"output: {output}"
                except Exception as exc:
                    result = f"error: {type(exc).__name__}: {exc}"
                out.add(game, turn, agent, model, case, result)

    asyncio.run(main())
    return shutdowns


def bot_logfire(args, out: Outcomes):
    import logfire
    import openai
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    logfire.configure(
        send_to_logfire=False,
        console=False,
        service_name="game-bot",
        additional_span_processors=[BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{args.otlp}/v1/traces"))],
    )
    logfire.instrument_openai()
    client = openai.OpenAI(base_url=args.llm, api_key="test")
    for game in GAMES:
        board = Board()
        with logfire.span("game {game}", game=game, **{"gen_ai.conversation.id": game}):
            for g, turn, agent, model, case in turns():
                if g != game:
                    continue
                try:
                    with logfire.span(
                        "invoke_agent {agent}",
                        agent=agent,
                        **{
                            "gen_ai.operation.name": "invoke_agent",
                            "gen_ai.agent.name": agent,
                            "gen_ai.provider.name": "openai",
                            "gen_ai.request.model": model,
                        },
                    ):
                        messages = [
                            {"role": "system", "content": SYSTEM},
                            {"role": "user", "content": board.prompt(game, turn, agent, case)},
                        ]
                        calls, refusal, text = _openai_call(client, model, messages, case == "stream")
                        result = _placed(board, agent, [arguments for _, _, arguments in calls], refusal, text)
                except Exception as exc:
                    result = f"error: {type(exc).__name__}: {exc}"
                out.add(game, turn, agent, model, case, result)
    return [logfire.force_flush, logfire.shutdown]


def bot_litellm(args, out: Outcomes):
    provider, shutdowns = setup_tracing(args.otlp)
    import litellm
    from opentelemetry import trace

    litellm.callbacks = ["otel"]
    tracer = trace.get_tracer("game-bot")
    for game in GAMES:
        board = Board()
        with tracer.start_as_current_span(f"game {game}", attributes={"gen_ai.conversation.id": game}):
            for g, turn, agent, model, case in turns():
                if g != game:
                    continue
                try:
                    with tracer.start_as_current_span(
                        f"invoke_agent {agent}",
                        attributes={
                            "gen_ai.operation.name": "invoke_agent",
                            "gen_ai.agent.name": agent,
                            "gen_ai.provider.name": "openai",
                            "gen_ai.request.model": model,
                        },
                    ):
                        messages = [
                            {"role": "system", "content": SYSTEM},
                            {"role": "user", "content": board.prompt(game, turn, agent, case)},
                        ]
                        kwargs = dict(
                            model=f"openai/{model}",
                            messages=messages,
                            tools=[TOOL],
                            api_base=args.llm,
                            api_key="test",
                            metadata={"session_id": game, "agent_name": agent},
                            litellm_session_id=game,
                        )
                        calls, refusal, text = [], None, ""
                        if case == "stream":
                            acc = {}
                            for ch in litellm.completion(stream=True, stream_options={"include_usage": True}, **kwargs):
                                for choice in ch.choices:
                                    d = choice.delta
                                    if getattr(d, "refusal", None):
                                        refusal = (refusal or "") + d.refusal
                                    if d.content:
                                        text += d.content
                                    for tc in d.tool_calls or []:
                                        c = acc.setdefault(tc.index, {"arguments": ""})
                                        if tc.function and tc.function.arguments:
                                            c["arguments"] += tc.function.arguments
                            calls = [c["arguments"] for c in acc.values()]
                        else:
                            resp = litellm.completion(**kwargs)
                            msg = resp.choices[0].message
                            refusal = getattr(msg, "refusal", None)
                            text = msg.content
                            calls = [tc.function.arguments for tc in msg.tool_calls or []]
                        result = _placed(board, agent, calls, refusal, text)
                except Exception as exc:
                    result = f"error: {type(exc).__name__}: {exc}"
                out.add(game, turn, agent, model, case, result)
    time.sleep(1.0)  # litellm logs from a background thread after the call returns
    return shutdowns


def bot_langchain(args, out: Outcomes):
    provider, shutdowns = setup_tracing(args.otlp)
    from langchain_core.messages import HumanMessage, SystemMessage
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import StructuredTool
    from langchain_openai import ChatOpenAI
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    LangchainInstrumentor().instrument(tracer_provider=provider)
    llms = {
        a: ChatOpenAI(model=m, base_url=args.llm, api_key="test", stream_usage=True).bind_tools([TOOL])
        for a, m in PLAYERS.items()
    }
    state = {}

    def place_fn(square: int) -> str:
        return state["board"].place(state["agent"], {"square": square})

    place_tool = StructuredTool.from_function(place_fn, name="place", description=TOOL_DESCRIPTION, args_schema=SCHEMA)

    def play_turn(inputs, config):
        agent, case = inputs["agent"], inputs["case"]
        messages = [SystemMessage(SYSTEM), HumanMessage(inputs["prompt"])]
        if case == "stream":
            msg = None
            for ch in llms[agent].stream(messages, config):
                msg = ch if msg is None else msg + ch
        else:
            msg = llms[agent].invoke(messages, config)
        refusal = (msg.additional_kwargs or {}).get("refusal")
        results = [f"refusal: {refusal}"] if refusal else []
        for tc in msg.tool_calls:
            try:
                results.append(str(place_tool.invoke(tc, config).content))
            except Exception as exc:
                results.append(f"tool error: {type(exc).__name__}: {exc}")
        for bad in msg.invalid_tool_calls:
            try:  # the model's arguments are not JSON: the tool gets them as they are
                results.append(str(place_tool.invoke(bad["args"], config)))
            except Exception as exc:
                results.append(f"tool error: {type(exc).__name__}: {exc}")
        return "; ".join(results) or f"text: {msg.content}"

    for game in GAMES:
        state["board"] = board = Board()
        for g, turn, agent, model, case in turns():
            if g != game:
                continue
            state["agent"] = agent
            chain = RunnableLambda(play_turn, name=agent)
            config = {
                "run_name": agent,
                "metadata": {"thread_id": game, "agent": agent},
                "configurable": {"thread_id": game},
            }
            try:
                result = chain.invoke(
                    {"prompt": board.prompt(game, turn, agent, case), "agent": agent, "case": case}, config
                )
            except Exception as exc:
                result = f"error: {type(exc).__name__}: {exc}"
            out.add(game, turn, agent, model, case, result)
    return shutdowns


BOTS = {
    "openai_v2": bot_openai_v2,
    "openai_v2_latest": bot_openai_v2,
    "openllmetry": bot_openllmetry,
    "openinference": bot_openinference,
    "pydantic_ai": bot_pydantic_ai,
    "logfire": bot_logfire,
    "litellm_default": bot_litellm,
    "litellm_latest": bot_litellm,
    "litellm_parent": bot_litellm,
    "langchain": bot_langchain,
}


def worker(args):
    out = Outcomes()
    shutdowns = BOTS[args.worker](args, out)
    for fn in shutdowns:
        fn()
    Path(args.outcomes).write_text(json.dumps(out.rows, indent=1))


def versions(python, family):
    names = VERSION_PACKAGES[family] + VERSION_COMMON
    code = (
        "import importlib.metadata as m, json, sys, platform\n"
        f"names = {names!r}\n"
        "v = {}\n"
        "for n in names:\n"
        "    try: v[n] = m.version(n)\n"
        "    except m.PackageNotFoundError: pass\n"
        "print(json.dumps({'python': platform.python_version(), 'packages': v}))\n"
    )
    return json.loads(subprocess.check_output([python, "-c", code], text=True))


# ---------------------------------------------------------------- truth


def outcome_of(entry):
    if entry["status"] == 400:
        return {"outcome": "failed", "rule": None}
    if entry["answer"] == "refusal":
        return {"outcome": "invalid", "rule": "refusal"}
    if entry["answer"] == "tool_call":
        try:
            json.loads(entry["tool_arguments"])
        except ValueError:
            return {"outcome": "invalid", "rule": "tool_arguments"}
    return {"outcome": "valid", "rule": None}


def truth_of(log, outcomes):
    calls = []
    for e in log:
        calls.append(
            {
                "k": e["k"],
                "game": e["game"],
                "turn": e["turn"],
                "agent": e["agent"],
                "model_requested": e["model_requested"],
                "model_answered": e["model_answered"],
                **outcome_of(e),
                "answer": e["answer"],
                "finish_reason": e["finish_reason"],
                "stream": e["stream"],
                "input_tokens": e["prompt_tokens"],
                "output_tokens": e["completion_tokens"],
                "cached_input_tokens": e["cached_tokens"],
                "response_id": e.get("response_id"),
                "tool_arguments": e.get("tool_arguments"),
            }
        )

    def tally(rows):
        t = {
            "calls": len(rows),
            "valid": 0,
            "invalid": 0,
            "failed": 0,
            "streamed": 0,
            "input_tokens": 0,
            "output_tokens": 0,
        }
        for r in rows:
            t[r["outcome"]] += 1
            t["streamed"] += bool(r["stream"])
            t["input_tokens"] += r["input_tokens"] or 0
            t["output_tokens"] += r["output_tokens"] or 0
        return t

    return {
        "calls": calls,
        "totals": {
            **tally(calls),
            "per_model": {m: tally([c for c in calls if c["model_requested"] == m]) for m in SNAPSHOTS},
            "per_game": {g: tally([c for c in calls if c["game"] == g]) for g in GAMES},
            "per_agent": {a: tally([c for c in calls if c["agent"] == a]) for a in PLAYERS},
        },
        "turns": outcomes,
    }


# ---------------------------------------------------------------- main


def setup(venvs: Path):
    for family, reqs in FAMILIES.items():
        target = venvs / family
        if not (target / "bin" / "python").exists():
            subprocess.check_call([sys.executable, "-m", "venv", str(target)])
        subprocess.check_call([str(target / "bin" / "pip"), "install", "-q", *reqs])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venvs", type=Path, help="folder holding one virtualenv per family")
    parser.add_argument("--setup", action="store_true", help="create the virtualenvs, then stop")
    parser.add_argument("--only", nargs="*", help="record only these emitters")
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: beside this file)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--llm", help=argparse.SUPPRESS)
    parser.add_argument("--otlp", help=argparse.SUPPRESS)
    parser.add_argument("--outcomes", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    if not args.venvs:
        parser.error("--venvs is required")
    if args.setup:
        return setup(args.venvs)
    try:
        import opentelemetry.proto  # noqa: F401
    except ImportError:  # the receiver needs opentelemetry-proto: use a family's interpreter
        python = args.venvs / "openai-v2" / "bin" / "python"
        os.execv(str(python), [str(python), __file__, *sys.argv[1:]])

    names = args.only or list(EMITTERS)
    args.out.mkdir(parents=True, exist_ok=True)
    fake, receiver = FakeOpenAI(), Receiver(args.out)
    server = serve(fake, receiver)
    port = server.server_address[1]
    truth_path, log_path, versions_path = (
        args.out / "truth.json",
        args.out / "server_log.json",
        args.out / "versions.json",
    )
    truth = json.loads(truth_path.read_text()) if truth_path.exists() else {}
    server_log = json.loads(log_path.read_text()) if log_path.exists() else {}
    all_versions = json.loads(versions_path.read_text()) if versions_path.exists() else {}
    for name in names:
        family, extra_env = EMITTERS[name]
        python = str(args.venvs / family / "bin" / "python")
        for suffix in (".otlp.jsonl", ".logs.otlp.jsonl"):
            (args.out / f"{name}{suffix}").unlink(missing_ok=True)
        prefixes = ("OTEL_", "TRACELOOP_", "LOGFIRE_", "LITELLM_", "USE_OTEL_")
        env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
        env.update(extra_env)
        env.update(
            OPENAI_API_KEY="test",
            PYTHONHASHSEED="0",
            OTEL_BSP_SCHEDULE_DELAY="200",
            OTEL_METRICS_EXPORTER="none",
            OTEL_LOGS_EXPORTER="none",
        )
        outcomes_file = args.out / f".{name}.outcomes.json"
        cmd = [
            python,
            __file__,
            "--worker",
            name,
            "--llm",
            f"http://127.0.0.1:{port}/{name}/v1",
            "--otlp",
            f"http://127.0.0.1:{port}/{name}",
            "--outcomes",
            str(outcomes_file),
        ]
        print(f"== {name}", flush=True)
        subprocess.run(cmd, env=env, check=True)
        outcomes = json.loads(outcomes_file.read_text())
        outcomes_file.unlink()
        log = fake.logs.get(name, [])
        server_log[name] = log
        truth[name] = truth_of(log, outcomes)
        all_versions[name] = versions(python, family)
        for line in (args.out / f"{name}.otlp.jsonl").read_text().splitlines():
            json.loads(line)
        print(f"   {len(log)} chat calls; {receiver.counts.get(name + '.otlp.jsonl', 0)} export requests", flush=True)
    server.shutdown()
    order = [n for n in EMITTERS if n in truth]
    truth_path.write_text(json.dumps({n: truth[n] for n in order}, indent=1) + "\n")
    log_path.write_text(json.dumps({n: server_log[n] for n in order}, indent=1) + "\n")
    versions_path.write_text(json.dumps({n: all_versions[n] for n in order}, indent=1) + "\n")


if __name__ == "__main__":
    main()
