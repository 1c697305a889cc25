"""What the `agentsweep judge` CLI tests share: a canned OpenAI-compatible judge in a thread
(`JudgeStub`, fixture `judge`), a real run directory made by `agentsweep run` on the stub
server (fixture `sample_run`, made once a session, copied by every test), and small helpers."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Self

import pytest
from aiohttp import web

from evaluator.cli import main
from evaluator.records import Judgement
from evaluator.run.results import EPISODES_FILE

REPO = Path(__file__).resolve().parents[2]
FAKE = "tests.evaluator.run_fakes:one_call_episode"
JUDGE_MODEL = "judge-m"
# Good, Fair, Excellent, Poor -> 4, 3, 5, 2
RUBRIC = {
    "reasoning_planning": {"reasoning": "plans well", "rating": "Good"},
    "summarization_extraction": {"reasoning": "ok", "rating": "Fair"},
    "presentation": {"reasoning": "clear", "rating": "Excellent"},
    "user_interaction": {"reasoning": "asks too much", "rating": "Poor"},
}
META = {"reasoning": "the evaluation is mostly fair", "rating": "Good"}  # s = 4
SINGLE = (4 + 3 + 5 - 3) / 3 / 4   # (mean - 1) / 4 = 0.75
MULTI = (4 + 3 + 5 + 2 - 4) / 4 / 4  # 0.625


def canned(body: dict[str, Any]) -> str:
    """Valid judge JSON for the request: the meta answer or the rubric answer."""
    fmt = body.get("response_format") or {}
    name = fmt.get("json_schema", {}).get("name", "")
    prompt = body["messages"][-1]["content"]
    if name == "travel_meta" or (not name and "meta" in prompt.lower()):
        return json.dumps(META)
    return json.dumps(RUBRIC)


class JudgeStub:
    """An OpenAI-compatible judge in a background thread; `answer(body)` gives the content."""

    def __init__(self, answer: Callable[[dict[str, Any]], str] = canned) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        content = self.answer(body)
        return web.json_response({
            "id": "j", "object": "chat.completion", "created": 0, "model": JUDGE_MODEL,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        })

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": JUDGE_MODEL,
                                                              "object": "model"}]})

    async def _start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return f"http://127.0.0.1:{port}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        self.url = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(30)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()


@pytest.fixture(name="judge")
def judge_fixture() -> Iterator[JudgeStub]:
    with JudgeStub() as j:
        yield j


@pytest.fixture(name="sample_run", scope="session")
def sample_run_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run directory: `agentsweep run` of 2 sample tasks per subset on the stub."""
    from perf.stub_server import start_stub

    out = tmp_path_factory.mktemp("runs")
    env = dict(os.environ, FAKE_EPISODE_SLEEP="0")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    with start_stub("--mode", "text") as stub:
        r = subprocess.run(
            [sys.executable, "-m", "evaluator.cli", "run", "--engine-url", stub.url,
             "--out", str(out), "--name", "s", "--limit", "2", "--trials", "1",
             "--progress", "off", "--set", f"protocol.entry={FAKE}"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert r.returncode == 0, r.stderr
    return out / "s"


def copy_run(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for name in ("manifest.json", "config.toml", EPISODES_FILE):
        (dst / name).write_bytes((src / name).read_bytes())
    return dst


def judge_cli(*args: str) -> int:
    return main(["judge", *args])


def by_kind(judgements: list[Judgement]) -> dict[str, list[Judgement]]:
    out: dict[str, list[Judgement]] = {}
    for j in judgements:
        out.setdefault(j.kind, []).append(j)
    return out
