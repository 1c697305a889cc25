"""Both sides of a TravelBench episode on the same scripted models: the reference's own code
(imported from the checkout named by TRAVELBENCH_REFERENCE, run, never copied) and
agentsweep's protocols, sandbox and judges; every request each side sends is captured.

The models are scripts: `Turn`s for the agent (text and/or tool calls, as the server returns
them), texts for the user simulator and the tool simulator. The reference talks to them through
a fake of the `openai` client it constructs (one per base URL: agent://, user://, tool://,
judge://); agentsweep through fake role clients. Requests are compared as JSON text with keys in
order (`as_json`), the strictest comparison a message list allows.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import msgspec

from backends.types import ChatMessage, ChatResponse, Choice, FunctionCall, ToolCall, Usage

ENV = "TRAVELBENCH_REFERENCE"
DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "travelbench"


def checkout() -> Path | None:
    value = os.environ.get(ENV, "")
    path = Path(value).expanduser() if value else None
    if path is None or not (path / "travelbench" / "agents" / "assistant.py").is_file():
        return None
    return path


@dataclass
class Turn:
    """One agent answer: text (None = no content) and calls [(id, name, raw arguments)]."""

    content: str | None = None
    calls: list[tuple[str, str, str]] = field(default_factory=list)


def first_difference(want: list[str], got: list[str]) -> str:
    """Where two request lists first differ: the request, the message, both versions."""
    for i, (a, b) in enumerate(zip(want, got)):
        if a != b:
            ma, mb = json.loads(a), json.loads(b)
            j = next((k for k, (x, y) in enumerate(zip(ma, mb)) if x != y), min(len(ma),
                                                                                 len(mb)))
            x = ma[j] if j < len(ma) else None
            y = mb[j] if j < len(mb) else None
            return f"request {i}, message {j}:\nreference  {x!r:.600}\nagentsweep {y!r:.600}"
    return f"{len(want)} requests by the reference, {len(got)} by agentsweep"


def as_json(messages: Any) -> str:
    """A message list as JSON text, keys in the order they are sent."""
    if not isinstance(messages, list | tuple) or (messages and not isinstance(messages[0],
                                                                              dict)):
        messages = msgspec.json.decode(msgspec.json.encode(messages))
    return json.dumps(messages, ensure_ascii=False)


# ------------------------------------------------------------------ the reference side

class _Completions:
    def __init__(self, owner: FakeOpenAI) -> None:
        self.owner = owner

    def create(self, **params: Any) -> Any:
        self.owner.requests.append(params)
        return self.owner.answer(params)


class FakeOpenAI:
    """What the reference's code uses of `openai.OpenAI`, answering from a script."""

    registry: ClassVar[dict[str, FakeOpenAI]] = {}

    def __init__(self, api_key: str = "", base_url: str = "", timeout: Any = None) -> None:
        self.requests: list[dict[str, Any]] = []
        self.chat = SimpleNamespace(completions=_Completions(self))
        self.script: Any = None
        FakeOpenAI.registry[base_url] = self

    def answer(self, params: dict[str, Any]) -> Any:
        out = (self.script(params["messages"]) if callable(self.script)
               else self.script.pop(0))
        if isinstance(out, Turn):
            calls = [SimpleNamespace(id=i, function=SimpleNamespace(name=n, arguments=a))
                     for i, n, a in out.calls] or None
            message = SimpleNamespace(content=out.content, tool_calls=calls)
        else:
            message = SimpleNamespace(content=out, tool_calls=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop")],
                               usage=None, model="fake")


class Reference:
    """The reference checkout, imported once per process."""

    def __init__(self, root: Path) -> None:
        os.environ["SANDBOX_CACHE_DIR"] = tempfile.mkdtemp(prefix="tb-ref-cache-")
        sys.path.insert(0, str(root))
        self.root = root
        self.client = importlib.import_module("travelbench.core.openai_client")
        self.client.OpenAI = FakeOpenAI  # the reference's own client, on our fake transport
        self.client.time.sleep = lambda s: None  # its retry pauses
        self.config = importlib.import_module("travelbench.core.config")
        self.tools = importlib.import_module("travelbench.core.tools")
        importlib.import_module("travelbench.tools")  # registers the ten tools
        self.main = importlib.import_module("travelbench.__main__")
        self.evaluate = importlib.import_module("travelbench.evaluation.evaluate")
        self.evaluate.OpenAI = FakeOpenAI
        self.evaluate.time.sleep = lambda s: None  # its retry pauses
        self.eval_util = importlib.import_module("travelbench.utils.eval_util")
        self.simulator = importlib.import_module("travelbench.simulators.tool_simulator")
        self.messages = importlib.import_module("travelbench.core.messages")
        manager = self.tools.get_sandbox_cache_manager()
        manager.save_missed_call = lambda *a, **k: None  # its miss log (rewritten per miss)
        cfg = self.config
        self.bench_config = cfg.BenchmarkConfig(
            assistant_config=cfg.OpenAIConfig(api_key="x", api_base="agent://", max_tokens=8192,
                                              temperature=0.7),
            user_simulator_config=cfg.OpenAIConfig(api_key="x", api_base="user://",
                                                   max_tokens=8192, temperature=0.0),
            tool_simulator_config=cfg.OpenAIConfig(api_key="x", api_base="tool://",
                                                   max_tokens=8192, temperature=0.0),
            sandbox_config=cfg.SandboxConfig(enabled=False))
        self.tool_sim = self.tools.create_and_set_llm_simulator(
            self.bench_config.tool_simulator_config, use_similarity_retrieval=False)
        self.tool_sim.max_examples = 8

    def client_messages(self, messages: list[Any]) -> list[dict[str, Any]]:
        """The reference's messages in the form its client sends them."""
        return self.messages.to_openai_messages(messages)

    def fake(self, url: str) -> FakeOpenAI:
        return FakeOpenAI.registry[url]

    def run(self, subset: str, data: dict[str, Any], agent: list[Any], user: list[str],
            tool: Any) -> dict[str, Any]:
        """One episode of the reference's runner; returns its saved trajectory (requests in
        `self.fake(url).requests`)."""
        FakeOpenAI.registry.clear()
        cfg = self.bench_config
        # the clients are made inside the runner: script them as they are made
        scripts = {"agent://": list(agent), "user://": list(user), "tool://": tool}
        original = FakeOpenAI.__init__

        def init(fake: FakeOpenAI, api_key: str = "", base_url: str = "",
                 timeout: Any = None) -> None:
            original(fake, api_key, base_url, timeout)
            fake.script = scripts.get(base_url)

        FakeOpenAI.__init__ = init  # type: ignore[method-assign]
        try:
            self.tool_sim.openai_client = self.client.OpenAIClient(cfg.tool_simulator_config)
            if subset == "multi_turn":
                return self.main.run_multi_turn_conversation(cfg, data, 0, None, 10, False)
            return self.main.run_single_turn_conversation(cfg, data, 0, None, 20, False,
                                                         unsolved=subset == "unsolvable")
        finally:
            FakeOpenAI.__init__ = original  # type: ignore[method-assign]

    def requests(self, url: str) -> list[str]:
        fake = FakeOpenAI.registry.get(url)
        return [as_json(r["messages"]) for r in fake.requests] if fake else []

    def judge_prompts(self, trajectory: dict[str, Any], mode: str, answers: list[str],
                      meta_answers: list[str]) -> tuple[Any, list[str], list[str]]:
        """The reference's evaluation of one trajectory with scripted judge answers: its result
        (None when dropped) and the rubric and meta requests it sent."""
        FakeOpenAI.registry.clear()
        ev = self.evaluate
        config = ev.EvaluationConfig(api_key="x", base_url="judge://", mode=mode,
                                     enable_meta_judge=True, meta_judge_base_url="meta://")
        evaluator = ev.TrajectoryEvaluator(config)
        evaluator.llm_evaluator.client.script = list(answers)
        evaluator.meta_judge_client.script = list(meta_answers)
        result = evaluator.evaluate_single_trajectory(trajectory, 0)
        return result, self.requests("judge://"), self.requests("meta://")


# ------------------------------------------------------------------ agentsweep's side

def chat_response(out: Turn | str) -> ChatResponse:
    if isinstance(out, Turn):
        calls = [ToolCall(id=i, function=FunctionCall(name=n, arguments=a))
                 for i, n, a in out.calls] or None
        message = ChatMessage(role="assistant", content=out.content, tool_calls=calls)
    else:
        message = ChatMessage(role="assistant", content=out)
    return ChatResponse(id="x", model="fake", choices=[Choice(index=0, message=message)],
                        usage=Usage())


class ScriptedRole:
    """A `RoleClient` answering from a script; `requests` holds each request as JSON."""

    def __init__(self, role: str, script: list[Any]) -> None:
        self.role, self.model = role, "fake"
        self.script = list(script)
        self.requests: list[str] = []
        self.tools: Any = None

    async def complete(self, messages: list[Any], **kwargs: Any) -> ChatResponse:
        self.requests.append(as_json(list(messages)))
        self.tools = kwargs.get("tools")
        return chat_response(self.script.pop(0))


class ScriptedChat:
    """A `ChatClient` look-alike (tool simulator, judges) answering from a function of the
    request."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.requests: list[str] = []

    async def resolve_model(self) -> str:
        return "fake"

    async def chat(self, messages: list[ChatMessage], **kwargs: Any) -> ChatResponse:
        self.requests.append(as_json(list(messages)))
        out = self.answer(messages) if callable(self.answer) else self.answer.pop(0)
        return chat_response(out)
