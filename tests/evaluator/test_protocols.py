"""Unit tests of the TravelBench episode protocols with scripted fake models and sandbox."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from backends.errors import ConnectionFailed, HTTPStatusError
from backends.types import ChatMessage, ChatResponse, Choice, FunctionCall, ToolCall, Usage
from bench_data.types import Task
from cache_store.types import ToolOutcome
from evaluator.benchmarks import BenchmarkError
from evaluator.benchmarks.travelbench import BENCHMARK
from evaluator.benchmarks.travelbench.data import TravelBenchTask
from evaluator.benchmarks.travelbench.prompting import (
    agent_first_message,
    prompt_version,
    step_limit_reply,
)
from evaluator.protocols import EpisodeContext, ProtocolSettings

PROTOCOLS = BENCHMARK.protocols
get_protocol = BENCHMARK.protocol
from evaluator.records import EpisodeRecord, UnitId

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "weather_forecast_days",
            "description": "forecast",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def call(name: str, arguments: str = '{"city": "Beijing"}', call_id: str = "c1") -> ToolCall:
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))


def say(text: str | None = None, *calls: ToolCall) -> ChatMessage:
    return ChatMessage(role="assistant", content=text, tool_calls=list(calls) or None)


class ScriptedClient:
    """A RoleClient that answers from a script and keeps a snapshot of every request."""

    def __init__(self, role: str, script: list[ChatMessage | BaseException]) -> None:
        self.role = role
        self.model = "fake"
        self.script = list(script)
        self.requests: list[list[ChatMessage]] = []
        self.tools_seen: list[Any] = []

    async def complete(self, messages, *, tools=None, tool_choice=None, response_format=None):
        self.requests.append(list(messages))
        self.tools_seen.append(tools)
        if not self.script:
            raise AssertionError(f"{self.role}: script exhausted")
        item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        usage = Usage(prompt_tokens=10, completion_tokens=2, total_tokens=12, cached_tokens=4)
        return ChatResponse(
            id="r", model="fake", choices=[Choice(index=0, message=item)], usage=usage
        )


class FakeSandbox:
    """Answers known tools with a fixed text; bad JSON and unknown tools are error outcomes."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    @property
    def tools(self) -> list[dict[str, Any]]:
        return TOOLS

    async def call(self, name: str, arguments: str, *, task_time: str) -> ToolOutcome:
        self.calls.append((name, arguments, task_time))
        if name != "weather_forecast_days":
            return ToolOutcome(content='{"error": "unknown tool"}', source="error",
                               error_category="unknown_tool")
        try:
            args = json.loads(arguments)
        except ValueError:
            return ToolOutcome(content='{"error": "bad json"}', source="error",
                               error_category="malformed_json")
        return ToolOutcome(content=f"sunny in {args.get('city')}", source="hit")


def make_task(subset: str, query: str = "What is the weather in Beijing tomorrow?",
              context: str = "User is in Beijing.") -> Task:
    travel = TravelBenchTask(
        trace_id="7", time="2025-10-24 10:00", query=query, context=context,
        intent="Know tomorrow's weather in Beijing", user_profile="Likes walking.",
    )
    return Task(benchmark="travelbench", subset=subset, task_id="7", payload=travel)


def make_ctx(subset, agent, user=None, trial=0, **settings) -> EpisodeContext:
    return EpisodeContext(
        unit=UnitId(run="r", task=f"travelbench/{subset}/7", trial=trial, seed=trial),
        task=make_task(subset), agent=agent, user=user, sandbox=FakeSandbox(),
        settings=ProtocolSettings(**settings),
    )


def assert_prefix_stable(client: ScriptedClient) -> None:
    for before, after in zip(client.requests, client.requests[1:], strict=False):
        assert len(after) >= len(before)
        assert after[: len(before)] == before


def assert_tool_ids_match(record: EpisodeRecord) -> None:
    open_ids: list[str] = []
    for msg in record.messages:
        if msg.role == "assistant" and msg.tool_calls:
            assert not open_ids, "tool results missing before the next assistant message"
            open_ids = [c.id for c in msg.tool_calls]
        elif msg.role == "tool":
            assert msg.tool_call_id == open_ids.pop(0)


def test_registry() -> None:
    assert set(PROTOCOLS) == {"single_turn", "multi_turn", "unsolvable"}
    assert get_protocol("unsolvable") is PROTOCOLS["unsolvable"]
    with pytest.raises(BenchmarkError, match="known subsets"):
        get_protocol("group_chat")


async def test_single_turn_multi_step_tool_loop() -> None:
    agent = ScriptedClient("agent", [
        say(None, call("weather_forecast_days", call_id="a")),
        say(None, call("weather_forecast_days", '{"city": "Tianjin"}', "b"),
            call("weather_forecast_days", '{"city": "Baoding"}', "c")),
        say("Sunny in all three cities."),
    ])
    ctx = make_ctx("single_turn", agent)
    record = await get_protocol("single_turn")(ctx)
    assert record.termination == "answer"
    assert record.final_answer == "Sunny in all three cities."
    assert record.n_agent_calls == 3
    assert [c.content for c in record.tool_calls] == [
        "sunny in Beijing", "sunny in Tianjin", "sunny in Baoding"]
    assert [c.step for c in record.tool_calls] == [0, 1, 1]
    assert all(c.valid and c.source == "hit" for c in record.tool_calls)
    assert [t for _, _, t in ctx.sandbox.calls] == ["2025-10-24 10:00"] * 3
    assert [m.role for m in record.messages] == [
        "system", "user", "assistant", "tool", "assistant", "tool", "tool", "assistant"]
    # layout "reference" (default): the situation is in the system prompt, the query alone in
    # the first user message
    assert record.messages[1].content == agent_first_message(ctx.task, ctx.settings)
    assert record.messages[1].content == ctx.task.payload.query
    assert "2025-10-24 10:00" in record.messages[0].content
    assert "User is in Beijing." in record.messages[0].content
    assert "Answer in English." in record.messages[0].content
    assert_tool_ids_match(record)
    assert_prefix_stable(agent)
    assert all(t is TOOLS for t in agent.tools_seen)
    assert record.extra["prompt_version"] == prompt_version(ctx.settings)
    assert record.extra["prompt_version"].endswith("+reference")
    assert record.extra["layout"] == "reference"
    assert record.timings["total"] >= 0 and "tool" in record.timings
    assert record.finished_at >= record.started_at > 0
    decoded = msgspec.json.decode(msgspec.json.encode(record), type=EpisodeRecord)
    assert decoded.messages == record.messages and decoded.tool_calls == record.tool_calls


async def test_usage_is_summed_per_role() -> None:
    agent = ScriptedClient("agent", [say(None, call("weather_forecast_days")), say("done")])
    record = await run_single(agent)
    assert record.usage["agent"] == Usage(20, 4, 24, 8)


async def run_single(agent: ScriptedClient, subset: str = "single_turn", **settings):
    return await get_protocol(subset)(make_ctx(subset, agent, **settings))


async def test_malformed_tool_calls_are_recorded_and_episode_continues() -> None:
    agent = ScriptedClient("agent", [
        say(None, call("weather_forecast_days", '{"city": "Beij', "x"),
            call("no_such_tool", "{}", "x"),          # duplicate id
            call("", "{}", "")),                      # no name, no id
        say("Sorry, the tools failed."),
    ])
    record = await run_single(agent)
    assert record.termination == "answer"
    cats = [c.error_category for c in record.tool_calls]
    assert cats == ["malformed_json", "unknown_tool", "unknown_tool"]
    assert record.n_tool_errors == 3
    assert not any(c.valid for c in record.tool_calls)
    ids = [c.call_id for c in record.tool_calls]
    assert ids == ["x", "call_0_1", "call_0_2"]
    assert [c.id for c in record.messages[2].tool_calls] == ids
    assert_tool_ids_match(record)
    # the error texts were returned to the agent as tool messages
    assert agent.requests[1][-3].content == '{"error": "bad json"}'


async def test_max_steps() -> None:
    """The step limit no longer ends the episode with an empty answer: the step-limit reply is
    the answer (as the reference; sequences in test_protocols_parity.py)."""
    agent = ScriptedClient("agent", [say(None, call("weather_forecast_days", call_id=str(i)))
                                     for i in range(3)])
    record = await run_single(agent, max_steps=3)
    assert record.termination == "max_steps"
    assert record.n_agent_calls == 3 and len(record.tool_calls) == 3
    assert record.final_answer == step_limit_reply() == record.messages[-1].content
    assert record.extra["step_limit_replies"] == 1


async def test_empty_reply_retried_once_then_agent_error() -> None:
    agent = ScriptedClient("agent", [say(""), say("Sunny.")])
    record = await run_single(agent, retry_empty_replies=True)
    assert record.termination == "answer" and record.final_answer == "Sunny."
    assert record.extra["empty_replies"] == 1 and record.n_agent_calls == 2
    assert [m.role for m in record.messages] == ["system", "user", "assistant"]

    agent = ScriptedClient("agent", [say(None), say("  ")])
    record = await run_single(agent, retry_empty_replies=True)
    assert record.termination == "agent_error" and record.extra["empty_replies"] == 2




async def test_unparsed_hermes_tool_call_stays_text() -> None:
    text = '<tool_call>\n{"name": "weather_forecast_days", "arguments": {}}\n</tool_call>'
    record = await run_single(ScriptedClient("agent", [say(text)]))
    assert record.termination == "answer" and record.final_answer == text
    assert record.tool_calls == [] and record.extra["unparsed_tool_call_text"] == 1


async def test_context_overflow_and_infrastructure_errors() -> None:
    body = "This model's maximum context length is 8192 tokens. However, you requested 9000"
    agent = ScriptedClient("agent", [HTTPStatusError("u", 400, body)])
    record = await run_single(agent)
    assert record.termination == "context_overflow" and "8192" in record.extra["error"]

    agent = ScriptedClient("agent", [ConnectionFailed("down")])
    with pytest.raises(ConnectionFailed):
        await run_single(agent)
    agent = ScriptedClient("agent", [HTTPStatusError("u", 400, "bad tool_choice")])
    with pytest.raises(HTTPStatusError):
        await run_single(agent)


@pytest.mark.parametrize("tag", ["[Unsolvable]", "[Unsolved]"])
async def test_unsolvable_stop_at_tag_option(tag: str) -> None:
    """`stop_at_abstain_tag` keeps the pre-parity behaviour (the default goes on, as the
    reference: test_protocols_parity.py)."""
    agent = ScriptedClient("agent", [say(tag)])
    record = await run_single(agent, "unsolvable", stop_at_abstain_tag=True)
    assert record.termination == "unsolvable_tag" and record.final_answer == tag
    assert "[Unsolvable]" in record.messages[0].content

    agent = ScriptedClient("agent", [
        say(None, call("weather_forecast_days")),
        say(f"No tool can set reminders. {tag}", call("weather_forecast_days", call_id="z")),
    ])
    record = await run_single(agent, "unsolvable", stop_at_abstain_tag=True)
    assert record.termination == "unsolvable_tag"
    assert len(record.tool_calls) == 1  # the tagged reply's tool call is not executed


async def test_unsolvable_answer_without_tag() -> None:
    record = await run_single(ScriptedClient("agent", [say("Sunny.")]), "unsolvable")
    assert record.termination == "answer"


async def test_system_prompt_identical_across_trials() -> None:
    records = []
    for trial in (0, 1):
        agent = ScriptedClient("agent", [say("Sunny.")])
        ctx = make_ctx("single_turn", agent, trial=trial)
        records.append(await get_protocol("single_turn")(ctx))
        assert agent.requests[0][0].content == records[-1].messages[0].content
    assert records[0].messages[:2] == records[1].messages[:2]


async def test_chinese_task_asks_for_chinese_answer() -> None:
    agent = ScriptedClient("agent", [say("晴")])
    ctx = make_ctx("single_turn", agent)
    ctx.task = make_task("single_turn", query="明天北京天气怎么样")
    record = await get_protocol("single_turn")(ctx)
    assert "Answer in Chinese." in record.messages[0].content

    ctx = make_ctx("single_turn", ScriptedClient("agent", [say("晴")]), layout="prefix")
    ctx.task = make_task("single_turn", query="明天北京天气怎么样")
    record = await get_protocol("single_turn")(ctx)
    assert "Answer in Chinese." in record.messages[1].content


async def test_prefix_layout_shares_system_prompt_across_tasks() -> None:
    """Layout "prefix": system prompt + tool schemas (the longest part of a request) must be
    byte-identical for every task of a protocol, so that the prefix cache serves them across
    tasks; the task is in the first user message."""
    seen = []
    for query, context in (("Weather in Beijing tomorrow?", "User is in Beijing."),
                           ("Train from Shanghai to Hangzhou?", "User is at Shanghai station.")):
        agent = ScriptedClient("agent", [say("Sunny.")])
        ctx = make_ctx("single_turn", agent, layout="prefix")
        ctx.task = make_task("single_turn", query=query, context=context)
        record = await get_protocol("single_turn")(ctx)
        seen.append(record)
        first = record.messages[1].content
        assert record.messages[1].role == "user"
        assert query in first and context in first and "2025-10-24 10:00" in first
        assert query not in record.messages[0].content
        assert agent.requests[0][0].content == record.messages[0].content
    assert seen[0].messages[0] == seen[1].messages[0]
    assert seen[0].messages[1] != seen[1].messages[1]
    assert seen[0].extra["prompt_version"].endswith("+prefix")


async def test_multi_turn_finish_marker_and_hidden_tool_calls() -> None:
    agent = ScriptedClient("agent", [
        say("Which day do you mean?"),
        say("Let me check the forecast.", call("weather_forecast_days")),  # mixed turn
        say("Tomorrow Beijing is sunny, 20°C."),
    ])
    user = ScriptedClient("user", [say("Tomorrow, please."), say("Thanks ##FINISH##")])
    ctx = make_ctx("multi_turn", agent, user=user)
    record = await get_protocol("multi_turn")(ctx)
    assert record.termination == "user_finished"
    assert record.final_answer == "Tomorrow Beijing is sunny, 20°C."
    assert record.n_user_turns == 3 and record.n_agent_calls == 3
    assert record.extra["mixed_turns"] == 1 and record.extra["rounds"] == 2
    # the user simulator saw only text replies, never tool calls, results or mixed-turn text
    seen = [m for req in user.requests for m in req]
    assert all(not m.tool_calls and m.role in ("system", "user", "assistant") for m in seen)
    shown = [m.content for m in record.user_messages if m.role == "user"]
    assert shown == ["Which day do you mean?", "Tomorrow Beijing is sunny, 20°C."]
    # layout "reference": the simulator's own first message is the query, as the reference
    assert [m.role for m in record.user_messages] == [
        "system", "assistant", "user", "assistant", "user", "assistant"]
    assert record.user_messages[1].content == ctx.task.payload.query
    assert "Know tomorrow's weather in Beijing" in record.user_messages[0].content
    assert "Likes walking." in record.user_messages[0].content
    assert "##FINISH##" in record.user_messages[0].content
    # profile and intent are hidden from the agent
    assert not any("Likes walking." in (m.content or "") for m in record.messages)
    # the finish message ends the transcript (as the reference saves it), after the agent's
    # last request: the agent never answers it
    assert [m.content for m in record.messages if m.role == "user"] == [
        agent_first_message(ctx.task, ctx.settings), "Tomorrow, please.", "Thanks ##FINISH##"]
    assert agent.requests[-1] == record.messages[:-2]
    assert set(record.usage) == {"agent", "user"}
    assert record.usage["user"].prompt_tokens == 20
    assert "user" in record.timings
    assert_prefix_stable(agent)
    assert_prefix_stable(user)
    assert_tool_ids_match(record)


async def test_multi_turn_max_turns() -> None:
    """max_turns counts rounds: the simulator also answers the last agent reply (its answer is
    not appended), as the reference; sequences in test_protocols_parity.py."""
    agent = ScriptedClient("agent", [say(f"Question {i}?") for i in range(3)])
    user = ScriptedClient("user", [say("I don't know."), say("Anything is fine."), say("Ok.")])
    record = await get_protocol("multi_turn")(make_ctx("multi_turn", agent, user, max_turns=3))
    assert record.termination == "max_turns"
    assert record.n_user_turns == 3 and len(user.requests) == 3
    assert record.messages[-1].content == "Question 2?"


async def test_multi_turn_requires_user_client() -> None:
    with pytest.raises(ValueError, match="user-simulator"):
        await get_protocol("multi_turn")(make_ctx("multi_turn", ScriptedClient("agent", [])))


async def test_multi_turn_empty_user_replies() -> None:
    agent = ScriptedClient("agent", [say("Which day?")])
    user = ScriptedClient("user", [say(""), say(None)])
    ctx = make_ctx("multi_turn", agent, user, retry_empty_replies=True)
    record = await get_protocol("multi_turn")(ctx)
    assert record.termination == "user_error" and record.extra["empty_user_replies"] == 2

    # default: kept and forwarded, as the reference
    agent = ScriptedClient("agent", [say("Which day?"), say("Tomorrow is sunny.")])
    user = ScriptedClient("user", [say(None), say("##FINISH##")])
    record = await get_protocol("multi_turn")(make_ctx("multi_turn", agent, user))
    assert record.termination == "user_finished" and record.extra["empty_user_replies"] == 1
    assert [m.content for m in record.messages if m.role == "user"][1] == ""
