"""Zero-latency OpenAI-compatible stub server, for benchmarks and fault-injection tests only.

    python -m perf.stub_server --port 0 [--mode text|tool|malformed|schema] [--tool-turns N] ...

Prints `STUB LISTENING http://127.0.0.1:PORT` once it accepts connections. From Python use
`start_stub(...)` (a subprocess; `.url`, `.root`, `.stop()`, context manager).

Per-request headers override the CLI defaults:
  X-Stub-Mode: text | tool | malformed | schema   what a 200 answer looks like; schema: a JSON
                                              object satisfying the request's `response_format`
                                              JSON schema (enum values picked by the request
                                              hash), a canned judge; text without a schema
  X-Stub-Tool-Turns: N, X-Stub-Tool-Name: X   tool mode: call X while the conversation has
                                              fewer than N assistant messages, then answer text
  X-Stub-Tool-Share: F                        tool mode: only requests whose hash falls below F
                                              (0..1) call a tool; the others answer text
  X-Stub-Tool-Choices: [[name, args], ...]    tool mode: the call (a JSON list), picked by the
                                              request hash, instead of X-Stub-Tool-Name
  X-Stub-Replies: A||B||C                     text answers, picked by the request hash
The request hash is sha256 of the request's `messages` and `seed`: the same conversation with
the same seed always gets the same answer, so runs against the stub are reproducible.
  X-Stub-Fail-First: N (+ X-Request-ID: id)   answer X-Stub-Fail-Status (503) the first N times
  X-Stub-Retry-After: S                       Retry-After header on those failures
  X-Stub-Drop-First: N (+ X-Request-ID)       close the connection without answering N times
  X-Stub-Garble-First: N                      answer the first N copies of each distinct
                                              request body with a garbled 200 (a server fault,
                                              not the model's), then normally; keyed by the
                                              body's sha256, so no request id is needed
  X-Stub-Garble-Kind: K                       which garbled body: truncated | not_json |
                                              no_choices | empty_choices | no_message, or
                                              cycle (the default: the n-th garbled answer to
                                              a body is the n-th kind of that list)
  X-Stub-Status: C                            always answer status C with an error body
  X-Stub-Sleep: S                             sleep S seconds before answering
Endpoints: POST /v1/chat/completions, GET /v1/models, GET /metrics (fake vLLM gauges),
GET /health, POST /reset_prefix_cache (vLLM's dev endpoint: empties the simulated engine's
prefix cache), GET /stub/requests (last recorded requests, with --record), GET /stub/counters
(faults injected and chat-completion requests received so far: {"garbled": N, "requests": M}).
--no-models / --no-metrics answer 404 there (a proxy or hosted endpoint).
--progress-tokens-per-s R makes /metrics an engine's at work: a generation-token counter growing
R per second and the requests being answered as running (R = 0: an engine that does nothing
for the requests it holds: a static counter, none running). --replies, --tool-calls
[[name, {args}], ...] (the n-th tool turn calls the n-th) and --finish-after N / --finish-text T
(answer T once the request holds N assistant messages: a user simulator that ends its
conversation) set defaults for every request, for harnesses that send no stub headers
(perf.vs_reference). The engine flags
(--kv-tokens, --max-running, --prefill-us, --decode-ms, --completion-tokens, --slowdown) turn
on a simulated engine (perf.stub_engine): prefix cache, KV capacity, preemptions, timing; its
usage and /metrics replace the canned ones.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import hashlib
import json
import sys
import time
from typing import Any

import msgspec
from aiohttp import web

from perf.stub_engine import SimEngine, add_engine_args, engine_from_args, with_usage
from perf.stub_process import READY_LINE, StubProcess, free_port, start_stub  # noqa: F401
from perf.stub_replies import (
    ENC,
    GARBLE_KINDS,
    HASHED_DECODER,
    MALFORMED_BODY,
    METRICS_TEXT,
    MODEL,
    MODELS_BODY,
    REQ_DECODER,
    Hashed,
    completion,
    fraction,
    garbled_body,
    pick,
    schema_body,
    text_body,
    tool_body,
)


class StubConfig(msgspec.Struct):
    mode: str = "text"
    tool_turns: int = 1
    tool_name: str = "lookup"
    sleep_s: float = 0.0
    fail_first: int = 0
    fail_status: int = 503
    record: bool = False
    no_models: bool = False
    no_metrics: bool = False
    garble_first: int = 0
    garble_kind: str = "cycle"
    replies: str = ""  # default X-Stub-Replies
    tool_calls: list[tuple[str, dict[str, Any]]] = []  # the n-th tool turn calls the n-th
    finish_after: int = 0  # text answers: finish_text once the request has >= N assistant msgs
    finish_text: str = ""
    progress_tokens_per_s: float = -1.0  # >= 0: /metrics has a generation counter, this fast


class StubState:
    def __init__(self, cfg: StubConfig, engine: SimEngine | None = None) -> None:
        self.cfg = cfg
        self.engine = engine
        self.failures: dict[str, int] = collections.defaultdict(int)
        self.drops: dict[str, int] = collections.defaultdict(int)
        self.garbles: dict[bytes, int] = collections.defaultdict(int)
        self.garbled = 0  # garbled answers sent
        self.requests = 0  # chat-completion requests received
        self.recorded: collections.deque[dict[str, Any]] = collections.deque(maxlen=256)
        self.tool_bodies: dict[tuple[str, int], bytes] = {}
        self.call_bodies: dict[int, bytes] = {}
        self.in_flight = 0
        self.started = time.monotonic()

    def tool_body(self, name: str, turn: int) -> bytes:
        body = self.tool_bodies.get((name, turn))
        if body is None:
            call = {
                "id": f"call_{turn}",
                "type": "function",
                "function": {"name": name, "arguments": ENC.encode({"turn": turn}).decode()},
            }
            msg = {"role": "assistant", "content": None, "tool_calls": [call]}
            body = completion(msg, "tool_calls", 40, 32)
            self.tool_bodies[(name, turn)] = body
        return body


    def tool_call_body(self, turn: int) -> bytes:
        """--tool-calls: the answer of tool turn `turn` (built once)."""
        body = self.call_bodies.get(turn)
        if body is None:
            name, args = self.cfg.tool_calls[turn % len(self.cfg.tool_calls)]
            body = self.call_bodies[turn] = tool_body(name, args, turn)
        return body


def _json(body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=body, status=status, content_type="application/json", headers=headers)


async def chat_completions(request: web.Request) -> web.StreamResponse:
    state: StubState = request.app["state"]
    cfg = state.cfg
    h = request.headers
    raw = await request.read()
    state.requests += 1
    if cfg.record:
        state.recorded.append({"headers": dict(h), "body": raw.decode("utf-8", "replace")})
    if (
        cfg.fail_first
        or "X-Stub-Fail-First" in h
        or "X-Stub-Drop-First" in h
        or "X-Stub-Status" in h
    ):
        rid = h.get("X-Request-ID", "")
        drop = int(h.get("X-Stub-Drop-First", 0))
        if drop and state.drops[rid] < drop:
            state.drops[rid] += 1
            if request.transport is not None:
                request.transport.close()
            return web.Response(body=b"")
        fail = int(h.get("X-Stub-Fail-First", cfg.fail_first))
        if fail and state.failures[rid] < fail:
            state.failures[rid] += 1
            extra = {}
            if "X-Stub-Retry-After" in h:
                extra["Retry-After"] = h["X-Stub-Retry-After"]
            status = int(h.get("X-Stub-Fail-Status", cfg.fail_status))
            return _json(b'{"error": "injected failure"}', status, extra)
        if "X-Stub-Status" in h:
            return _json(b'{"error": "injected status"}', int(h["X-Stub-Status"]))
    garble = int(h.get("X-Stub-Garble-First", cfg.garble_first))
    if garble:
        digest = hashlib.sha256(raw).digest()
        n = state.garbles[digest]
        if n < garble:
            state.garbles[digest] = n + 1
            state.garbled += 1
            kind = h.get("X-Stub-Garble-Kind", cfg.garble_kind)
            if kind == "cycle":
                kind = GARBLE_KINDS[n % len(GARBLE_KINDS)]
            try:
                return _json(garbled_body(kind))
            except ValueError as exc:
                return _json(ENC.encode({"error": str(exc)}), 400)
    sleep_s = float(h.get("X-Stub-Sleep", cfg.sleep_s))
    if sleep_s > 0:
        state.in_flight += 1
        try:
            await asyncio.sleep(sleep_s)
        finally:
            state.in_flight -= 1
    if state.engine is not None:
        usage = await state.engine.serve(raw)
        resp = _answer(state, h, raw)
        if resp.status == 200 and isinstance(resp.body, bytes):
            resp.body = with_usage(resp.body, *usage)
        return resp
    return _answer(state, h, raw)


def _answer(state: StubState, h: Any, raw: bytes) -> web.Response:
    cfg = state.cfg
    mode = h.get("X-Stub-Mode", cfg.mode)
    replies = h.get("X-Stub-Replies", cfg.replies)
    if cfg.finish_after and mode in ("text", "tool"):
        try:
            req = REQ_DECODER.decode(raw)
        except msgspec.DecodeError as exc:
            return _json(ENC.encode({"error": f"bad request body: {exc}"}), 400)
        done = sum(1 for m in req.messages if m.role == "assistant")
        turns = int(h.get("X-Stub-Tool-Turns", cfg.tool_turns)) if mode == "tool" else 0
        if done >= max(cfg.finish_after, turns):
            return _json(completion({"role": "assistant", "content": cfg.finish_text},
                                     "stop", 20, 16))
    hashed: Hashed | None = None
    if replies or mode == "schema" or "X-Stub-Tool-Share" in h or "X-Stub-Tool-Choices" in h:
        try:
            hashed = HASHED_DECODER.decode(raw)
        except msgspec.DecodeError as exc:
            return _json(ENC.encode({"error": f"bad request body: {exc}"}), 400)
    if mode == "text":
        return _json(text_body(hashed, replies))
    if mode == "schema":
        assert hashed is not None
        return _json(schema_body(hashed, replies))
    if mode == "malformed":
        return _json(MALFORMED_BODY)
    if mode == "tool":
        turns = int(h.get("X-Stub-Tool-Turns", cfg.tool_turns))
        name = h.get("X-Stub-Tool-Name", cfg.tool_name)
        try:
            req = REQ_DECODER.decode(raw)
        except msgspec.DecodeError as exc:
            return _json(ENC.encode({"error": f"bad request body: {exc}"}), 400)
        done = sum(1 for m in req.messages if m.role == "assistant")
        share = float(h.get("X-Stub-Tool-Share", 1.0))
        if done < turns and (hashed is None or fraction(hashed, "tool") < share):
            if hashed is not None and "X-Stub-Tool-Choices" in h:
                tool, args = pick(hashed, "which", json.loads(h["X-Stub-Tool-Choices"]))
                return _json(tool_body(tool, args, done))
            if cfg.tool_calls and "X-Stub-Tool-Name" not in h:
                return _json(state.tool_call_body(done))
            return _json(state.tool_body(name, done))
        return _json(text_body(hashed, replies))
    return _json(ENC.encode({"error": f"unknown stub mode {mode!r}"}), 400)


async def models(request: web.Request) -> web.Response:
    if request.app["state"].cfg.no_models:
        return _json(b'{"error": "not found"}', 404)
    return _json(MODELS_BODY)


async def metrics(request: web.Request) -> web.Response:
    state: StubState = request.app["state"]
    if state.cfg.no_metrics:
        return web.Response(status=404, text="404: Not Found")
    if state.engine is not None:
        return web.Response(text=state.engine.metrics_text(MODEL), content_type="text/plain")
    rate = state.cfg.progress_tokens_per_s
    if rate < 0:
        text = METRICS_TEXT.format(m=MODEL, running="5.0")
    else:  # an engine at work (its counter moves, it holds the requests being answered) or
        # one that does nothing for the requests it holds (no counter moving, none held)
        generated = rate * (time.monotonic() - state.started)
        held = state.in_flight if rate > 0 else 0
        text = (f'vllm:num_requests_running{{engine="0",model_name="{MODEL}"}} {held}\n'
                f'vllm:num_requests_waiting{{engine="0",model_name="{MODEL}"}} 0\n'
                f'vllm:generation_tokens_total{{engine="0",model_name="{MODEL}"}} {generated}\n')
    return web.Response(text=text, content_type="text/plain")


async def reset_prefix_cache(request: web.Request) -> web.Response:
    engine = request.app["state"].engine
    ok = engine.reset_prefix_cache() if engine is not None else True
    return _json(ENC.encode({"success": ok}))


async def health(request: web.Request) -> web.Response:
    return web.Response(body=b"")


async def counters(request: web.Request) -> web.Response:
    """The stub's counters: faults injected, so a fault test can show its faults happened, and
    chat-completion requests received, so a test can show which calls reached the server."""
    state: StubState = request.app["state"]
    return _json(ENC.encode({"garbled": state.garbled, "requests": state.requests}))


async def recorded(request: web.Request) -> web.Response:
    state: StubState = request.app["state"]
    return _json(ENC.encode(list(state.recorded)))


def make_app(cfg: StubConfig, engine: SimEngine | None = None) -> web.Application:
    app = web.Application()
    app["state"] = StubState(cfg, engine)
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/health", health)
    app.router.add_post("/reset_prefix_cache", reset_prefix_cache)
    app.router.add_get("/stub/requests", recorded)
    app.router.add_get("/stub/counters", counters)
    return app


async def _serve(cfg: StubConfig, host: str, port: int, reuse_port: bool,
                 engine: SimEngine | None = None) -> None:
    runner = web.AppRunner(make_app(cfg, engine), access_log=None, handle_signals=True)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_port=reuse_port or None, backlog=4096)
    await site.start()
    server = site._server
    assert server is not None and server.sockets
    bound = server.sockets[0].getsockname()[1]
    print(f"{READY_LINE}http://{host}:{bound}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m perf.stub_server", description=__doc__.split("\n")[0]
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 = pick a free port (printed)")
    p.add_argument("--mode", choices=["text", "tool", "malformed", "schema"], default="text")
    p.add_argument("--tool-turns", type=int, default=1)
    p.add_argument("--tool-name", default="lookup")
    p.add_argument("--sleep", type=float, default=0.0, help="seconds before each answer")
    p.add_argument("--fail-first", type=int, default=0, help="fail N times per X-Request-ID")
    p.add_argument("--fail-status", type=int, default=503)
    p.add_argument("--record", action="store_true", help="keep the last 256 requests")
    p.add_argument("--reuse-port", action="store_true", help="SO_REUSEPORT (several processes)")
    p.add_argument("--no-models", action="store_true", help="GET /v1/models answers 404")
    p.add_argument("--no-metrics", action="store_true", help="GET /metrics answers 404")
    p.add_argument("--garble-first", type=int, default=0,
                   help="answer the first N copies of each request body with a garbled 200")
    p.add_argument("--garble-kind", default="cycle", choices=("cycle", *GARBLE_KINDS))
    p.add_argument("--replies", default="", help="text answers A||B||C, picked by the request "
                   "hash (the default of X-Stub-Replies)")
    p.add_argument("--tool-calls", default="", metavar="JSON",
                   help='tool mode: [[name, {args}], ...]; the n-th tool turn of a '
                   'conversation calls the n-th (cycling), instead of --tool-name')
    p.add_argument("--finish-after", type=int, default=0, metavar="N",
                   help="text and tool mode: answer --finish-text once the request holds N "
                   "or more assistant messages (a user simulator that ends its conversation)")
    p.add_argument("--finish-text", default="[Finish Conversation]")
    p.add_argument("--progress-tokens-per-s", type=float, default=-1.0, metavar="R",
                   help="/metrics: vllm:generation_tokens_total growing R per second and the "
                   "requests being answered as running (a slow engine at work); 0: a static "
                   "counter and none running (a stalled one); default: no such counter")
    add_engine_args(p)
    a = p.parse_args(argv)
    try:
        tool_calls = [(str(n), dict(x)) for n, x in json.loads(a.tool_calls or "[]")]
    except (ValueError, TypeError) as exc:
        p.error(f"--tool-calls: expected [[name, {{args}}], ...]: {exc}")
    cfg = StubConfig(
        a.mode, a.tool_turns, a.tool_name, a.sleep, a.fail_first, a.fail_status, a.record,
        a.no_models, a.no_metrics, a.garble_first, a.garble_kind, a.replies, tool_calls,
        a.finish_after, a.finish_text, a.progress_tokens_per_s,
    )
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover - uvloop is a dependency
        pass
    try:
        asyncio.run(_serve(cfg, a.host, a.port, a.reuse_port, engine_from_args(a)))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
