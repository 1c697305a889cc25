"""The agent's turn in the group chat with a scripted agent and a fake sandbox: tool entries
recorded in the chat (arguments re-written as JSON text) but never shown to users, the turn's
own messages (assistant tool calls re-serialised, named tool results), unparseable arguments
answered without calling the tool, the repetition guard (consecutive, multiple) forcing a
tool-less reply, the iteration limit, recorded calls numbered across rebuilds, and two
repetitive turns ending the chat."""

from __future__ import annotations

import asyncio
import json

from backends.types import ChatMessage, FunctionCall, ToolCall
from evaluator.benchmarks.grouptravelbench.agent_turn import (
    AgentSide,
    RepetitionGuard,
    Situation,
    call_signature,
    reply_text,
)
from evaluator.benchmarks.grouptravelbench.protocol import run_group_chat
from evaluator.benchmarks.grouptravelbench.render import outward_text
from evaluator.protocols.base import EpisodeContext, ProtocolSettings
from evaluator.protocols.loop import Episode
from evaluator.records import ToolCallRecord, UnitId

from .conftest import FakeSandbox
from .scripted import FORCE_FINISH, TEXTS, Scripted, call, task

TOOLS = [{"type": "function", "function": {"name": "web_search", "parameters": {}}}]


def _side(script: list, sandbox: FakeSandbox | None = None, steps: int = 4):
    agent = Scripted("agent", script)
    ctx = EpisodeContext(unit=UnitId("r", "k", 0, 1), task=task(), agent=agent,
                         sandbox=sandbox or FakeSandbox(TOOLS), user=None,
                         settings=ProtocolSettings(max_steps=steps))
    ep = Episode(ctx, "", "")
    return AgentSide(ep, TEXTS, Situation("- User1", "q", "c", "2025-09-01"), steps), agent


HISTORY = [{"type": "message", "role": "User1", "content": "我想去西安"}]


def test_tool_steps_enter_the_chat_hidden_from_users():
    side, agent = _side([[call("web_search", id="a", query="西安")],
                         [call("maps_geo", id="b", address="b")], "done"])
    text, entries = asyncio.run(side.turn(HISTORY))
    assert text == "done" and side.guard.reason == ""
    kinds = [(e["type"], e.get("name") or e.get("content")) for e in entries]
    assert kinds == [("message", ""), ("tool_call", "web_search"), ("tool_result", "web_search"),
                     ("message", ""), ("tool_call", "maps_geo"), ("tool_result", "maps_geo"),
                     ("message", "done")]
    assert entries[0]["has_tool_calls"] and not entries[-1]["has_tool_calls"]
    assert entries[1]["arguments"] == '{"query": "西安"}'    # re-written, not escaped
    assert outward_text(entries) == "Agent: done"            # users see the reply only
    assert len(side.episode.tool_calls) == 2 and side.episode.n_agent_calls == 3
    # the second call sees the first step: arguments re-serialised as the reference sends
    # them back (ASCII-escaped), the result named after the tool, answering the model's id
    second = agent.requests[1]
    assert second[-2] == ChatMessage(role="assistant", content="", tool_calls=[ToolCall(
        id="a", function=FunctionCall(name="web_search", arguments='{"query": "\\u897f\\u5b89"}'))])
    assert second[-1] == ChatMessage(role="tool", content='{"ok": "web_search"}',
                                     tool_call_id="a", name="web_search")
    assert all(agent.with_tools)


def test_arguments_that_are_not_a_json_object_are_answered_without_the_tool():
    sandbox = FakeSandbox(TOOLS)
    bad = ToolCall(id="x", function=FunctionCall(name="web_search", arguments='{"query": '))
    side, _agent = _side([[bad], "ok"], sandbox)
    text, entries = asyncio.run(side.turn(HISTORY))
    assert text == "ok" and not sandbox.calls
    result = json.loads(entries[2]["result"])
    assert result == {"error": TEXTS.render("agent_bad_arguments", raw='{"query": ')}
    assert entries[2]["error"] and entries[1]["arguments"] == '{"raw_arguments": "{\\"query\\": "}'
    record = side.episode.tool_calls[0]
    assert record.error_category == "malformed_json" and record.arguments == '{"query": '
    long = "x" * 600
    assert TEXTS.render("agent_bad_arguments", raw="x" * 500 + "...") in side._bad_arguments(long)


def test_the_same_call_in_consecutive_iterations_forces_a_reply_without_tools():
    same = [call("web_search", query="a")]
    side, agent = _side([same, [call("maps_geo", address="x"), call("web_search", query="a")],
                         "forced"], steps=20)
    text, entries = asyncio.run(side.turn(HISTORY, instruction="ASK"))
    assert text == "forced" and side.guard.reason == "consecutive"
    last = agent.requests[-1]
    assert not agent.with_tools[-1]
    assert last[0].content.endswith("\n\nASK" + FORCE_FINISH)
    assert last[1:] == agent.requests[-2][1:] + [
        ChatMessage(role="assistant", content="", tool_calls=[
            ToolCall(id="", function=FunctionCall(name="maps_geo", arguments='{"address": "x"}')),
            ToolCall(id="", function=FunctionCall(name="web_search", arguments='{"query": "a"}'))]),
        ChatMessage(role="tool", content='{"ok": "maps_geo"}', tool_call_id="", name="maps_geo"),
        ChatMessage(role="tool", content='{"ok": "web_search"}', tool_call_id="",
                    name="web_search")]
    assert entries[-1] == {"type": "message", "role": "Agent", "content": "forced",
                           "has_tool_calls": False}


def test_a_third_identical_call_in_the_episode_stops_the_loop():
    a, b = call("web_search", query="a"), call("maps_geo", address="b")
    # key order in the arguments does not matter: the signature is canonical JSON
    a2 = ToolCall(id="", function=FunctionCall(name="web_search", arguments='{ "query":"a" }'))
    c = call("maps_weather", location="c", date="2025-09-01")
    side, _ = _side([[a], [b], [a2], [c], [a], "forced"], steps=20)
    text, _ = asyncio.run(side.turn(HISTORY))
    assert text == "forced" and side.guard.reason == "multiple"
    assert side.guard.counts[("web_search", '{"query": "a"}')] == 3


def test_running_out_of_iterations_forces_a_reply_but_is_not_repetitive():
    side, agent = _side([[call("web_search", query=str(i))] for i in range(3)] + ["forced"],
                        steps=3)
    text, _ = asyncio.run(side.turn(HISTORY))
    assert text == "forced" and side.guard.reason == ""
    assert agent.with_tools == [True, True, True, False]


def test_recorded_calls_are_numbered_across_rebuilds_of_the_view():
    history = HISTORY + [
        {"type": "message", "role": "Agent", "content": "", "has_tool_calls": True},
        {"type": "tool_call", "name": "web_search", "arguments": '{"query": "西安"}'},
        {"type": "tool_result", "name": "web_search", "result": "r", "error": False},
        {"type": "message", "role": "Agent", "content": "查到了", "has_tool_calls": False}]
    side, agent = _side(["one", "two"])
    asyncio.run(side.turn(history))
    asyncio.run(side.turn(history, mentioned=True))
    ids = [m.tool_calls[0].id for req in agent.requests for m in req if m.tool_calls]
    assert ids == ["call_hist_1", "call_hist_2"]
    view = agent.requests[0]
    assert view[2].tool_calls[0].function.arguments == '{"query": "\\u897f\\u5b89"}'
    assert view[3] == ChatMessage(role="tool", content="r", tool_call_id="call_hist_1",
                                  name="web_search")
    assert view[4] == ChatMessage(role="assistant", content="查到了")
    assert agent.requests[1][0].content.endswith(TEXTS.text("agent_mentioned"))


def test_signature_of_unparseable_arguments_is_the_raw_text():
    rec = ToolCallRecord(call_id="c", name="x", arguments="{oops", valid=False, source="error",
                         content="")
    assert call_signature(rec) == ("x", "{oops")


def test_reply_text_drops_a_think_block_as_the_reference_client_does():
    assert reply_text("  <think>plan</think>\n 答案 ") == "答案"
    assert reply_text("<think>only thoughts</think>") == "only thoughts"
    assert reply_text(" plain ") == "plain" and reply_text(None) is None


def _chat(script: list) -> tuple:
    agent = Scripted("agent", script)
    user = Scripted("user", ["[pass]"] * 40)
    ctx = EpisodeContext(unit=UnitId("r", "k", 0, 1), task=task(), agent=agent,
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
    assert record.termination == "consecutive_repeated_tool_calls" and not agent.replies
    assert record.extra["forced_replies"] == 3


def test_a_normal_agent_turn_in_between_resets_the_count():
    a, b = [call("web_search", query="a")], [call("maps_geo", address="b")]
    record, agent = _chat(["summary", a, a, "reply 1", "plain reply", b, b, "reply 2",
                           '{"days": [{"day": 1, "city_segments": [{"type": "city_block"}]}]}'])
    assert record.termination == "plan_generated" and not agent.replies


def test_a_call_made_a_third_time_ends_the_chat_at_once():
    a = [call("web_search", query="a")]
    record, agent = _chat(["summary", a, "reply 1", a, "reply 2", a, "forced"])
    assert record.termination == "multiple_repeated_tool_calls" and not agent.replies
    assert isinstance(RepetitionGuard().counts, dict)
