"""`agentsweep chat`: one conversation turn against a server (`--url`), or against the
embedded engine started for the duration of the command.

Exit codes: 0 answered, 1 the server could not be reached or answered an error, 2 bad
arguments, 130 interrupted. See docs/serve.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from evaluator.cli.serve import _add_engine_options, _default_log, _err

if TYPE_CHECKING:
    from backends.types import ChatResponse


def register(subparsers: argparse._SubParsersAction) -> None:
    _register_chat(subparsers)


def _register_chat(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "chat",
        help="send one message to a served model and print the answer",
        description="One chat turn against an OpenAI-compatible server (--url), or, without "
        "--url, against the embedded engine started for this command and stopped afterwards. "
        "The answer goes to stdout, token usage to stderr. See docs/serve.md.",
    )
    p.add_argument("message", metavar="MESSAGE", help="the user message ('-' = read stdin)")
    p.add_argument("--url", default=None, metavar="URL",
                   help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1 (a bare "
                   "http://host:port gets /v1 appended); default: start the embedded engine")
    p.add_argument("--model", default=None, metavar="NAME",
                   help="model name to request (default: the first model the server lists)")
    p.add_argument("--system", default=None, metavar="TEXT", help="system message")
    p.add_argument("--max-tokens", type=int, default=256, metavar="N",
                   help="completion token limit (256)")
    p.add_argument("--temperature", type=float, default=None,
                   help="sampling temperature (default: the server's)")
    p.add_argument("--seed", type=int, default=None, help="sampling seed")
    p.add_argument("--json", action="store_true",
                   help="print the whole response as JSON (content, tool calls, usage with "
                   "cached tokens, latency)")
    key = p.add_mutually_exclusive_group()
    key.add_argument("--api-key", default=None, metavar="KEY", help="bearer token, if needed")
    key.add_argument("--api-key-env", default=None, metavar="VAR",
                     help="the environment variable that holds the bearer token")
    p.add_argument("--header", action="append", default=[], metavar="NAME:VALUE",
                   help="extra HTTP header (repeatable)")
    p.add_argument("--timeout", type=float, default=300.0, metavar="S",
                   help="seconds for the request, retries included (300)")
    p.add_argument("--retries", type=int, default=2, metavar="N",
                   help="retries on connection errors, 429 and 5xx (2)")
    _add_engine_options(p)
    p.set_defaults(func=chat)


def normalize_url(url: str) -> str:
    """An OpenAI base URL: "http://h:p" -> "http://h:p/v1"; a URL with a path is kept."""
    base = url.strip().rstrip("/")
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--url needs an http(s) URL such as http://127.0.0.1:8000/v1, "
                         f"got {url!r}")
    if not parts.path:
        base += "/v1"
    return base


def parse_headers(items: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"--header needs NAME:VALUE, got {item!r}")
        headers[name.strip()] = value.strip()
    return headers


def response_json(resp: ChatResponse) -> dict[str, Any]:
    """The response as plain JSON values, with the assistant content at the top."""
    import msgspec

    choice = resp.choices[0] if resp.choices else None
    msg = choice.message if choice else None
    calls = msgspec.to_builtins(msg.tool_calls) if msg and msg.tool_calls else []
    return {
        "id": resp.id,
        "model": resp.model,
        "content": msg.content if msg else None,
        "tool_calls": calls,
        "finish_reason": choice.finish_reason if choice else None,
        "usage": {
            "prompt_tokens": resp.usage.prompt_tokens,
            "completion_tokens": resp.usage.completion_tokens,
            "total_tokens": resp.usage.total_tokens,
            "cached_tokens": resp.usage.cached_tokens,
        },
        "latency_s": round(resp.latency_s, 6),
        "attempts": resp.attempts,
    }


def usage_line(resp: ChatResponse) -> str:
    u = resp.usage
    return (f"[{resp.model}] prompt {u.prompt_tokens} tokens ({u.cached_tokens} cached), "
            f"completion {u.completion_tokens}, {resp.latency_s:.2f}s"
            + (f", {resp.attempts} attempts" if resp.attempts > 1 else ""))


def _one_line(text: str) -> str:
    return " ".join(text.split())


async def _chat_turn(args: argparse.Namespace, base_url: str, model: str | None) -> ChatResponse:
    from backends.client import ChatClient
    from backends.types import ChatMessage, Endpoint, SamplingParams

    endpoint = Endpoint(base_url=base_url, model=model or "", api_key=args.api_key,
                        api_key_env=args.api_key_env, timeout_s=args.timeout,
                        max_retries=max(0, args.retries),
                        extra_headers=parse_headers(args.header))
    messages = []
    if args.system:
        messages.append(ChatMessage(role="system", content=args.system))
    messages.append(ChatMessage(role="user", content=args.message))
    sampling = SamplingParams(temperature=args.temperature, max_tokens=args.max_tokens,
                              seed=args.seed)
    async with ChatClient(endpoint, max_connections=4) as client:
        return await client.chat(messages, sampling=sampling)


async def _chat_embedded(args: argparse.Namespace) -> ChatResponse:
    from backends.server import VLLMServer

    server = VLLMServer(device=args.device, startup_timeout_s=args.startup_timeout,
                        log_path=args.log or _default_log(0))
    print(f"agentsweep chat: starting the embedded engine (log {server.log_path}) ...",
          file=sys.stderr, flush=True)
    async with server:
        return await _chat_turn(args, server.base_url, args.model or server.model)


def _check_key_env(name: str | None) -> None:
    """--api-key-env names a variable that is set (ValueError otherwise), checked before an
    engine starts; the same rules as a config's `api_key_env`."""
    import re

    from backends.types import ENV_NAME_PATTERN, Endpoint, MissingApiKey, api_key_of

    if name is None:
        return
    if not re.fullmatch(ENV_NAME_PATTERN, name):
        raise ValueError(f"--api-key-env must name an environment variable, got {name!r}")
    try:
        api_key_of(Endpoint(api_key_env=name))
    except MissingApiKey:
        raise ValueError(f"--api-key-env: the environment variable {name} is not set") from None


def chat(args: argparse.Namespace) -> int:
    """`agentsweep chat`."""
    from backends.errors import BackendError, HTTPStatusError, ServerStartError
    from backends.model import ModelUnavailable

    if args.message == "-":
        args.message = sys.stdin.read()
    try:
        if args.max_tokens is not None and args.max_tokens < 1:
            raise ValueError(f"--max-tokens must be >= 1, got {args.max_tokens}")
        parse_headers(args.header)
        base = normalize_url(args.url) if args.url else None
        _check_key_env(args.api_key_env)
    except ValueError as exc:
        _err("chat", str(exc))
        return 2
    try:
        if base is None:
            resp = asyncio.run(_chat_embedded(args))
        else:
            resp = asyncio.run(_chat_turn(args, base, args.model))
    except ServerStartError as exc:  # multi-line on purpose: it carries the log tail
        _err("chat", f"the embedded engine did not start: {exc}")
        return 1
    except HTTPStatusError as exc:
        _err("chat", _one_line(f"the server rejected the request: {exc}"))
        return 1
    except BackendError as exc:  # connection refused, timeouts, 5xx after retries, bad body
        where = base or "the embedded engine"
        _err("chat", _one_line(f"cannot get an answer from {where}: {exc}"))
        return 1
    except ModelUnavailable as exc:
        _err("chat", _one_line(str(exc)))
        return 1
    if args.json:
        print(json.dumps(response_json(resp), ensure_ascii=False, indent=2))
    else:
        msg = resp.message
        if msg.content:
            print(msg.content)
        for call in msg.tool_calls or []:
            print(f"[tool call] {call.function.name}({call.function.arguments})")
        print(usage_line(resp), file=sys.stderr)
    return 0
