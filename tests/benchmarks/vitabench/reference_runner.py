"""The VitaBench reference, driven by scripts, for the optional parity tests.

Imported only when VITABENCH_REFERENCE_SRC names the reference's `src/` directory (its
dependencies from VITABENCH_REFERENCE_DEPS or the environment). Nothing of the reference is
copied here: its own orchestrator, agent, user simulator and evaluator run, with its `generate`
replaced by a script player that records what each call would send (the reference's own
`format_messages` of the messages, and its tools' `openai_schema`) and answers from a script
the way the reference's `generate` turns a server answer into a message. New record ids
(random in the reference) are handed out from a list, so both sides create the same ones; the
reference's thread-wide registries are cleared before each trial, as agentsweep starts every
episode fresh.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

REF_SRC = os.environ.get("VITABENCH_REFERENCE_SRC", "")
needs_reference = pytest.mark.skipif(
    not REF_SRC, reason="VITABENCH_REFERENCE_SRC is not set (path to the reference's src/)")

Answer = dict[str, Any]
"""A scripted model answer: {"content": text or None, "tool_calls": [{"id", "name",
"arguments" (the raw text)}] or absent}."""


class Crashed(Exception):
    """The reference raised: it reruns the trial."""


class ReferenceRunner:
    """Plays scripted trials and judgements through the reference's own code."""

    def __init__(self) -> None:
        for path in (os.environ.get("VITABENCH_REFERENCE_DEPS", ""), REF_SRC):
            if path and path not in sys.path:
                sys.path.insert(0, path)
        pytest.importorskip("thefuzz")
        pytest.importorskip("json_repair")
        loguru = pytest.importorskip("loguru")
        loguru.logger.remove()
        with contextlib.redirect_stdout(io.StringIO()):
            schema_utils = pytest.importorskip("vita.utils.schema_utils")
            schema_utils.set_global_language("english")
            import vita.agent.llm_agent as agent_mod
            import vita.evaluator.evaluator_traj as eval_mod
            import vita.user.user_simulator as user_mod
            from vita.agent.llm_agent import LLMAgent
            from vita.data_model import message, tasks
            from vita.environment import db as db_mod
            from vita.environment.environment import get_cross_environment
            from vita.orchestrator.orchestrator import Orchestrator
            from vita.registry import registry
            from vita.user.user_simulator import UserSimulator
            from vita.utils.llm_utils import format_messages
        self.m = message
        self.tasks = tasks
        self.mods = {"agent": agent_mod, "user": user_mod, "judge": eval_mod}
        self.db_mod = db_mod
        self.format_messages = format_messages
        self.registry = registry
        self.cross = get_cross_environment
        self.Agent, self.User, self.Orchestrator = LLMAgent, UserSimulator, Orchestrator
        self.Evaluator = eval_mod.TrajectoryEvaluator

    # -- the script player -------------------------------------------------------------
    @contextlib.contextmanager
    def scripted(self, scripts: dict[str, list[Answer]], requests: dict[str, list[Any]],
                 new_ids: list[str]) -> Iterator[None]:
        saved = {role: mod.generate for role, mod in self.mods.items()}
        saved_ids = self.db_mod.DB.assign_order_id
        ids = list(new_ids)

        def player(role: str) -> Any:
            def generate(model: str, messages: list[Any], tools: Any = None,
                         tool_choice: Any = None, enable_think: bool = False,
                         **kwargs: Any) -> Any:
                requests[role].append({
                    "messages": self.format_messages(messages),
                    "tools": [t.openai_schema for t in tools] if tools else None})
                if not scripts[role]:
                    raise AssertionError(f"{role} script exhausted")
                return self._message(scripts[role].pop(0))
            return generate

        def assign(db: Any, scenario: str, user_id: str, **kwargs: Any) -> str:
            if not ids:
                raise AssertionError("the reference created more records than agentsweep")
            return ids.pop(0)

        for role, mod in self.mods.items():
            mod.generate = player(role)
        self.db_mod.DB.assign_order_id = assign  # type: ignore[method-assign]
        try:
            yield
        finally:
            for role, mod in self.mods.items():
                mod.generate = saved[role]
            self.db_mod.DB.assign_order_id = saved_ids  # type: ignore[method-assign]

    def _message(self, answer: Answer) -> Any:
        """What the reference's `generate` returns for this server answer (None where its
        parsing raises: it catches that and returns None)."""
        try:
            calls = [self.m.ToolCall(id=c.get("id"), name=c.get("name"),
                                     arguments=json.loads(c["arguments"])
                                     if c.get("arguments") else {})
                     for c in answer.get("tool_calls") or []]
            return self.m.AssistantMessage(role="assistant", content=answer.get("content"),
                                           tool_calls=calls or None, cost=0.0,
                                           usage={"prompt_tokens": 0, "completion_tokens": 0},
                                           raw_data={})
        except Exception:  # noqa: BLE001 - the reference's generate swallows it too
            return None

    # -- trials and judgements -----------------------------------------------------------
    def _fresh(self) -> None:
        for cls in (self.tasks.StoreBaseModel, self.tasks.ProductBaseModel,
                    self.tasks.Location):
            cls.clear_thread_data()

    def trial(self, raw_task: dict[str, Any], domains: list[str], agent: list[Answer],
              user: list[Answer], new_ids: list[str], max_steps: int = 300
              ) -> tuple[dict[str, list[Any]], Any]:
        """(requests by role, the SimulationRun, or Crashed)."""
        requests: dict[str, list[Any]] = {"agent": [], "user": [], "judge": []}
        scripts = {"agent": list(agent), "user": list(user), "judge": []}
        self._fresh()
        task = self.tasks.Task.model_validate(raw_task)
        quiet = contextlib.redirect_stdout(io.StringIO())
        with quiet, contextlib.redirect_stderr(io.StringIO()), \
                self.scripted(scripts, requests, new_ids):
            if len(domains) > 1:
                env = self.cross(",".join(domains), task.environment, "english")
            else:
                env = self.registry.get_env_constructor(domains[0])(task.environment,
                                                                    "english")
            time = env.tools.db.time
            agent_ = self.Agent(tools=env.get_tools(), domain_policy=env.get_policy(),
                                llm="agent", llm_args={"temperature": 0.0}, time=time,
                                language="english")
            user_ = self.User(persona=str(task.user_scenario.user_profile),
                              instructions=str(task.instructions), llm="user",
                              llm_args={"temperature": 0.0}, language="english")
            orch = self.Orchestrator(domain=",".join(domains), agent=agent_, user=user_,
                                     environment=env, task=task, max_steps=max_steps,
                                     language="english")
            try:
                sim = orch.run()
            except Exception as exc:  # noqa: BLE001 - the reference reruns the trial
                return requests, Crashed(f"{type(exc).__name__}: {exc}")
        return requests, sim

    def judge(self, raw_task: dict[str, Any], messages: list[Any], answers: list[str | None]
              ) -> tuple[list[Any], Any]:
        """(the judge's requests, RewardInfo or Crashed) for a trajectory."""
        requests: dict[str, list[Any]] = {"agent": [], "user": [], "judge": []}
        scripts = {"agent": [], "user": [],
                   "judge": [{"content": a} for a in answers]}
        task = self.tasks.Task.model_validate(raw_task)
        with contextlib.redirect_stdout(io.StringIO()), self.scripted(scripts, requests, []):
            try:
                info = self.Evaluator.calculate_reward(
                    task=task, full_trajectory=messages, final_state={}, llm_evaluator="judge",
                    llm_args_evaluator={"temperature": 0.0}, language="english")
            except Exception as exc:  # noqa: BLE001 - the reference reruns the trial
                return requests["judge"], Crashed(f"{type(exc).__name__}: {exc}")
        return requests["judge"], info

    def trajectory(self, greeting: str, record_messages: list[dict[str, Any]]) -> list[Any]:
        """A reference trajectory (its message objects) from agentsweep's record messages."""
        m = self.m
        out: list[Any] = [m.AssistantMessage(role="assistant", content=greeting)]
        for msg in record_messages:
            role = msg["role"]
            if role == "user":
                out.append(m.UserMessage(role="user", content=msg.get("content")))
            elif role == "assistant":
                calls = [m.ToolCall(id=c["id"], name=c["function"]["name"],
                                    arguments=json.loads(c["function"].get("arguments") or "{}"))
                         for c in msg.get("tool_calls") or []]
                out.append(m.AssistantMessage(role="assistant", content=msg.get("content"),
                                              tool_calls=calls or None))
            elif role == "tool":
                out.append(m.ToolMessage(id=msg["tool_call_id"], name=msg.get("name") or "",
                                         role="tool", content=msg.get("content")))
        return out


def canonical(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A message list as the server reads it: `null` fields are absent, a tool call's `type`
    is "function" (its only value) and the reference's extra `name` beside `function` (no
    field of the chat API) is left out. Every text stays byte for byte."""
    out = []
    for msg in messages:
        msg = {k: v for k, v in msg.items() if v is not None}
        if "tool_calls" in msg:
            msg["tool_calls"] = [{"id": c.get("id"), "type": c.get("type", "function"),
                                  "function": dict(c["function"])} for c in msg["tool_calls"]]
        out.append(msg)
    return out
