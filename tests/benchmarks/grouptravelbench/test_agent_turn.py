"""The agent's turn in the group chat with a scripted agent and a fake sandbox: tool entries
recorded in the chat but never shown to users, the repetition guard (consecutive, multiple)
forcing a tool-less reply, the iteration limit, and two repetitive turns ending the chat."""

from __future__ import annotations

import asyncio
import copy
import json

from backends.types import ChatMessage, ChatResponse, Choice, FunctionCall, ToolCall, Usage
from evaluator.benchmarks.grouptravelbench.agent_turn import (
    FORCED_REPLY,
    RepetitionGuard,
    call_signature,
    run_agent_turn,
)
from evaluator.benchmarks.grouptravelbench.protocol import (
    TABLE_ASK,
    render_chat,
    run_group_chat,
)
from evaluator.protocols.base import EpisodeContext, ProtocolSettings
from evaluator.protocols.loop import Episode
from evaluator.records import ToolCallRecord, UnitId

from .conftest import FakeSandbox
from .test_protocol import Scripted, _task


def call(name: str, **args) -> ToolCall:
    return ToolCall(id="", function=FunctionCall(name=name, arguments=json.dumps(args)))


class Agent:
    """Replies from a script: a list of tool calls, or a text."""

    def __init__(self, script: list) -> None:
        self.role, self.model = "agent", "fake"
        self.script = list(script)
        self.requests: list[tuple[list[ChatMessage], bool]] = []

    async def complete(self, messages, *, tools=None, tool_choice=None, response_format=None):
        self.requests.append((copy.deepcopy(list(messages)), tools is not None))
        step = self.script.pop(0)
        if isinstance(step, str):
            msg = ChatMessage(role="assistant", content=step)
        else:
            msg = ChatMessage(role="assistant", content="", tool_calls=list(step))
        return ChatResponse(id="r", model="fake", choices=[Choice(index=0, message=msg)],
                            usage=Usage())


def _episode(agent: Agent, sandbox: FakeSandbox | None = None) -> Episode:
    ctx = EpisodeContext(unit=UnitId("r", "k", 0, 1), task=_task(), agent=agent,
                         sandbox=sandbox or FakeSandbox(), user=None,
                         settings=ProtocolSettings(max_steps=4))
    return Episode(ctx, "system", "hello")


def test_tool_steps_enter_the_chat_hidden_from_users():
    agent = Agent([[call("web_search", query="a")], [call("maps_geo", address="b")], "done"])
    ep, history, guard = _episode(agent), [], RepetitionGuard()
    text = asyncio.run(run_agent_turn(ep, history, guard, 4))
    assert text == "done" and guard.reason == ""
    kinds = [(e["type"], e.get("name") or e.get("content")) for e in history]
    assert kinds == [("message", ""), ("tool_call", "web_search"), ("tool_result", "web_search"),
                     ("message", ""), ("tool_call", "maps_geo"), ("tool_result", "maps_geo"),
                     ("message", "done")]
    assert history[0]["has_tool_calls"] and not history[-1]["has_tool_calls"]
    assert render_chat(history) == "[Agent]: done"          # users see the reply only
    assert len(ep.tool_calls) == 2 and ep.n_agent_calls == 3


def test_the_same_call_in_consecutive_iterations_forces_a_reply_without_tools():
    same = [call("web_search", query="a")]
    agent = Agent([same, [call("maps_geo", address="x"), call("web_search", query="a")],
                   "forced"])
    ep, history, guard = _episode(agent), [], RepetitionGuard()
    text = asyncio.run(run_agent_turn(ep, history, guard, 20))
    assert text == "forced" and guard.reason == "consecutive"
    last, with_tools = agent.requests[-1]
    assert not with_tools and last[0].content.endswith(FORCED_REPLY)
    assert ep.messages[0].content == "system"               # the episode's prompt unchanged
    assert history[-1] == {"type": "message", "role": "Agent", "content": "forced",
                           "has_tool_calls": False}


def test_a_third_identical_call_in_the_episode_stops_the_loop():
    a, b = call("web_search", query="a"), call("maps_geo", address="b")
    # key order in the arguments does not matter: the signature is canonical JSON
    a2 = ToolCall(id="", function=FunctionCall(name="web_search", arguments='{ "query":"a" }'))
    c = call("maps_weather", location="c", date="2025-09-01")
    agent = Agent([[a], [b], [a2], [c], [a], "forced"])
    guard = RepetitionGuard()
    text = asyncio.run(run_agent_turn(_episode(agent), [], guard, 20))
    assert text == "forced" and guard.reason == "multiple"
    assert guard.counts[("web_search", '{"query": "a"}')] == 3


def test_running_out_of_iterations_forces_a_reply_but_is_not_repetitive():
    agent = Agent([[call("web_search", query=str(i))] for i in range(3)] + ["forced"])
    guard = RepetitionGuard()
    text = asyncio.run(run_agent_turn(_episode(agent), [], guard, 3))
    assert text == "forced" and guard.reason == ""
    assert not agent.requests[-1][1]


def test_signature_of_unparseable_arguments_is_the_raw_text():
    rec = ToolCallRecord(call_id="c", name="x", arguments="{oops", valid=False, source="error",
                         content="")
    assert call_signature(rec) == ("x", "{oops")


class TableAgent(Agent):
    """Answers the protocol's internal table refreshes with an empty table."""

    async def complete(self, messages, **kw):
        if TABLE_ASK in (messages[-1].content or ""):
            msg = ChatMessage(role="assistant", content="{}")
            return ChatResponse(id="r", model="fake", choices=[Choice(index=0, message=msg)],
                                usage=Usage())
        return await super().complete(messages, **kw)


def _chat(script: list) -> tuple:
    agent = TableAgent(script)
    user = Scripted("user", ["[pass]"] * 40)
    ctx = EpisodeContext(unit=UnitId("r", "k", 0, 1), task=_task(), agent=agent,
                         sandbox=FakeSandbox(), user=user, settings=ProtocolSettings(max_steps=20))
    return asyncio.run(run_group_chat(ctx)), agent


def test_two_agent_turns_in_a_row_with_a_repeat_inside_end_the_chat():
    loop = [call("web_search", query="same")]
    other = [call("maps_geo", address="x")]
    # the opening summary repeats a call (not checked there); the first poll repeats another
    # (1 of 2); the second poll repeats a third one: two in a row
    third = [call("maps_weather", location="x", date="2025-09-01")]
    record, agent = _chat([loop, loop, "summary", other, other, "reply 1",
                           third, third, "reply 2"])
    assert record.termination == "consecutive_repeated_tool_calls" and not agent.script
    assert record.extra["forced_replies"] == 3


def test_a_normal_agent_turn_in_between_resets_the_count():
    a, b = [call("web_search", query="a")], [call("maps_geo", address="b")]
    record, agent = _chat(["summary", a, a, "reply 1", "plain reply", b, b, "reply 2",
                           '{"days": [{"day": 1, "city_segments": [{"type": "city_block"}]}]}'])
    assert record.termination == "plan_generated" and not agent.script


def test_a_call_made_a_third_time_ends_the_chat_at_once():
    a = [call("web_search", query="a")]
    record, agent = _chat(["summary", a, "reply 1", a, "reply 2", a, "forced"])
    assert record.termination == "multiple_repeated_tool_calls" and not agent.script
