"""What the scripted oracle agents and their CLI tests share: an OpenAI-compatible endpoint
around a function that answers a chat request's body, starting one as a process, and running
`agentsweep` (`python -m evaluator.cli`) the way those tests do.

The endpoint (127.0.0.1, `port` 0 = any free one) prints `ORACLE LISTENING <url>` when it
accepts connections; a body the function cannot answer (it returns None) gets HTTP 400.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

READY = "ORACLE LISTENING "
REPO = Path(__file__).resolve().parents[2]


def serve(answer: Callable[[dict[str, Any]], str | None], port: int = 0) -> None:
    """Serve `answer(request body) -> the assistant's text` until the process ends."""
    from aiohttp import web

    async def chat(request: web.Request) -> web.Response:
        text = answer(await request.json())
        if text is None:
            return web.json_response({"error": {"message": "the oracle has no answer for "
                                                           "this request"}}, status=400)
        return web.json_response({
            "id": "oracle", "object": "chat.completion", "created": 0, "model": "oracle",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "oracle",
                                                              "object": "model"}]})

    async def health(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/health", health)
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    print(f"{READY}http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
    web.run_app(app, sock=sock, print=None)


def cli_env(home: Path, changes: dict[str, str | None] | None = None) -> dict[str, str]:
    """The environment of a CLI or oracle process in a test: its own AGENTSWEEP_HOME, no
    plugins, this checkout importable; `changes` set variables (None: unset one)."""
    env = dict(os.environ, AGENTSWEEP_HOME=str(home))
    env.pop("AGENTSWEEP_PLUGINS", None)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    for name, value in (changes or {}).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def run_cli(*args: str, home: Path,
            env: dict[str, str | None] | None = None) -> subprocess.CompletedProcess[str]:
    """`agentsweep ARGS...` from this checkout with `cli_env(home, env)`; output captured."""
    return subprocess.run([sys.executable, "-m", "evaluator.cli", *args], cwd=REPO,
                          env=cli_env(home, env), capture_output=True, text=True, timeout=300,
                          check=False)


class OracleProcess:
    """`python -m MODULE ARGS...` (an oracle calling `serve`), its URL once it listens."""

    def __init__(self, module: str, *args: str, home: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", module, *args], cwd=REPO,
                                     env=cli_env(home), stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith(READY):
            self.close()
            raise AssertionError(f"{module} did not start: {line!r}")
        self.url = line[len(READY):].strip()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
