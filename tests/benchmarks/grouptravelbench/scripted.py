"""Scripted role clients for GroupTravelBench's episode tests: each records every request
(the messages and whether tools were offered) and answers from its script; the agent's
internal table refreshes are answered with a fixed table and logged apart."""

from __future__ import annotations

import copy
import json
from typing import Any

from backends.types import ChatMessage, ChatResponse, Choice, FunctionCall, ToolCall, Usage
from bench_data.types import GroupTravelTask, Task
from evaluator.benchmarks.grouptravelbench.prompting import Texts

from .conftest import GROUP

TEXTS = Texts.of(None)
TABLE_ASK = TEXTS.text("agent_table_ask")
CONVERGENCE = TEXTS.text("agent_convergence")
FINAL_PLAN = TEXTS.text("agent_final_plan")
FORCE_FINISH = TEXTS.text("agent_force_finish")


def response(content: str = "", calls: list[ToolCall] | None = None) -> ChatResponse:
    msg = ChatMessage(role="assistant", content=content, tool_calls=calls)
    return ChatResponse(id="r", model="fake", choices=[Choice(index=0, message=msg)],
                        usage=Usage())


def call(name: str, id: str = "", **args: Any) -> ToolCall:
    return ToolCall(id=id, function=FunctionCall(name=name, arguments=json.dumps(args)))


def is_refresh(messages: list[ChatMessage], ask: str = TABLE_ASK) -> bool:
    return ask in (messages[-1].content or "") and len(messages) == 2


class Scripted:
    """Replies from a script: a string is a text reply, a list is the tool calls of one
    reply. Table refreshes get `table` (JSON) and are kept in `refreshes`."""

    def __init__(self, role: str, replies: list[Any], table: dict | None = None,
                 ask: str = TABLE_ASK) -> None:
        self.role, self.model, self.ask = role, "fake", ask
        self.replies = list(replies)
        self.requests: list[list[ChatMessage]] = []
        self.with_tools: list[bool] = []
        self.refreshes: list[list[ChatMessage]] = []
        self.table = table or {}

    async def complete(self, messages, *, tools=None, tool_choice=None, response_format=None):
        if self.role == "agent" and is_refresh(messages, self.ask):
            self.refreshes.append(copy.deepcopy(list(messages)))
            return response(json.dumps(self.table, ensure_ascii=False))
        self.requests.append(copy.deepcopy(list(messages)))
        self.with_tools.append(tools is not None)
        assert self.replies, f"{self.role}: script exhausted"
        step = self.next_reply(messages)
        return response(step) if isinstance(step, str) else response("", list(step))

    def next_reply(self, messages: list[ChatMessage]) -> Any:
        return self.replies.pop(0)


class PlanOnAsk(Scripted):
    """Gives `plan` when told to give the final plan."""

    def __init__(self, role: str, replies: list[Any], plan: dict) -> None:
        super().__init__(role, replies)
        self.plan = plan

    def next_reply(self, messages):
        if messages[0].content.endswith(FINAL_PLAN):
            return json.dumps(self.plan, ensure_ascii=False)
        return super().next_reply(messages)


def task(difficulty: str = "", group: dict | None = None) -> Task:
    payload = GroupTravelTask(
        trace_id="t1", time="2025-09-01", query="西安两日游", context="出发城市：北京市",
        user_preferences=copy.deepcopy(group or GROUP), difficulty_type=difficulty,
        initial_messages=[{"role": "User1", "content": "我想去西安"},
                          {"role": "User2", "content": "我也想去"}])
    return Task(benchmark="grouptravelbench", subset="test", task_id="t1", source="x:1",
                payload=payload, instructions="西安两日游")
