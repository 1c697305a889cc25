"""Scripted trials for the message-level parity tests: what the agent, the user simulator and
the judge answer, derived from each task's own data, and agentsweep's side of such a trial
(the VitaBench protocol and judge with recording clients, the paper profile's options and the
imported prompt set). The reference's side is `reference_runner.py`.

A trial's script covers what a model can do to the message lists: a call without arguments,
two calls in one message (one with non-ASCII and one with float arguments), a write that
creates a record, an empty reply (asked again), text with surrounding whitespace, and the
agent's stop marker; the judge answers the two windows with a bare list and with a fenced
list whose status is the string "false".
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from backends.types import ChatMessage, ChatResponse, Choice, FunctionCall, ToolCall, Usage
from bench_data.types import Task
from evaluator.benchmarks.base import JudgeInput
from evaluator.benchmarks.vitabench.environment import VitaEpisodes
from evaluator.benchmarks.vitabench.judge import run_judge
from evaluator.benchmarks.vitabench.options import REFERENCE, VitaOptions
from evaluator.benchmarks.vitabench.prompting import tool_descriptions
from evaluator.benchmarks.vitabench.protocol import run_episode
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.prompt_sets import PromptSet
from evaluator.protocols import EpisodeContext, ProtocolSettings
from evaluator.records import EpisodeRecord, Judgement, UnitId

from .scripts import CREATES, note_ids, script

PAPER_JUDGE = JudgeSettings(rubric_set="union", structured_output=False, window_turns=10,
                            window_overlap=2)
SEARCH = {"delivery": "delivery_store_search_recommand",
          "instore": "instore_shop_search_recommend"}


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


def trial_script(raw: dict[str, Any], domains: tuple[str, ...]
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(agent answers, user answers) of one scripted trial of `raw`."""
    env = raw["environment"]
    writes = [(n, a) for n, a in script(env, domains) if n in CREATES]
    name, args = writes[0] if writes else ("get_user_all_orders", {})
    distance = {"longitude1": 116.4, "latitude1": 39.9, "longitude2": 116.41,
                "latitude2": 39.95}
    agent = [
        {"content": None, "tool_calls": [call("c1", "get_user_historical_behaviors", "")]},
        {"content": "Let me look.", "tool_calls": [
            call("c2", SEARCH[domains[0]], json.dumps({"keywords": ["奶茶", "coffee"]},
                                                      ensure_ascii=False)),
            call("c3", "longitude_latitude_to_distance",
                 json.dumps(distance, separators=(",", ":")))]},
        {"content": "I found a few places for you.\n"},
        {"content": ""},  # empty: the reference asks again
        {"content": None, "tool_calls": [
            call("c4", name, json.dumps(args, ensure_ascii=False, separators=(",", ":")))]},
        {"content": "  Done; anything else?  "},
        {"content": "Goodbye. ###STOP###"},
    ]
    first = raw["instructions"][:80]
    user = [{"content": f"Hi, I need some help. {first}"},
            {"content": "Yes, please help me place the order"},
            {"content": "No, that's all, thanks. "}]
    return agent, user


def judge_script(n_rubrics: int) -> list[str]:
    first = [{"rubric_idx": "rubric_0", "rubric": "restated", "justification": "[3] seen",
              "meetExpectation": True}]
    second = [{"rubric_idx": f"rubric_{min(1, n_rubrics - 1)}", "rubric": "r",
               "justification": "[12] not done", "meetExpectation": "false"}]
    return [json.dumps(first), "Here is my update:\n```json\n" + json.dumps(second, indent=2)
            + "\n```"]


class Recorder:
    """A role client that records each request (messages as sent, tools) and answers from a
    script of answer dicts."""

    def __init__(self, answers: list[dict[str, Any]]) -> None:
        self.model = "scripted"
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []

    async def complete(self, messages: list[ChatMessage], *, tools: Any = None,
                       tool_choice: Any = None, response_format: Any = None) -> ChatResponse:
        self.requests.append({"messages": msgspec.to_builtins(list(messages)), "tools": tools})
        return _response(self.answers.pop(0))

    async def chat(self, messages: Any, *, model: Any = None, response_format: Any = None,
                   sampling: Any = None) -> ChatResponse:
        self.requests.append({"messages": msgspec.to_builtins(list(messages)), "tools": None})
        return _response(self.answers.pop(0))


def _response(answer: dict[str, Any]) -> ChatResponse:
    calls = [ToolCall(id=c["id"], function=FunctionCall(name=c["name"],
                                                        arguments=c["arguments"]))
             for c in answer.get("tool_calls") or []]
    msg = ChatMessage(role="assistant", content=answer.get("content"), tool_calls=calls or None)
    return ChatResponse(id="r", model="scripted", usage=Usage(),
                        choices=[Choice(index=0, message=msg)])


async def our_trial(task: Task, ps: PromptSet, agent: list[dict[str, Any]],
                    user: list[dict[str, Any]], options: VitaOptions = REFERENCE,
                    domains: tuple[str, ...] | None = None, max_steps: int = 300,
                    ) -> tuple[dict[str, list[Any]], EpisodeRecord, list[str]]:
    """(requests by role, the record, the new record ids in creation order)."""
    a, u = Recorder(agent), Recorder(user)
    episodes = VitaEpisodes(domains, tool_descriptions(ps))
    ctx = EpisodeContext(unit=UnitId("parity", task.key, 0, 0), task=task, agent=a,
                         sandbox=episodes.episode(task), user=u,
                         settings=ProtocolSettings(max_steps=max_steps, prompts=ps,
                                                   options=options))
    record = await run_episode(ctx)
    ids: list[str] = []
    for c in record.tool_calls:
        if c.name in CREATES:
            note_ids(c.content, ids)
    return {"agent": a.requests, "user": u.requests}, record, ids


async def our_judgement(task: Task, record: EpisodeRecord, ps: PromptSet | None,
                        answers: list[str], options: VitaOptions = REFERENCE,
                        settings: JudgeSettings = PAPER_JUDGE
                        ) -> tuple[list[Any], Judgement]:
    judge = Recorder([{"content": a} for a in answers])
    inp = JudgeInput(record=record, task=task, thash=trajectory_hash(record),
                     settings=settings, prompts=ps, tools=None, client=judge, model="m",
                     options=options)
    return judge.requests, await run_judge(inp)
