"""ChatClient against the real vLLM engine (SmolLM2-135M: tool calls and JSON are unreliable)."""

from __future__ import annotations

import asyncio
import json

import pytest

from backends.client import ChatClient, json_schema_format
from backends.types import ChatMessage, SamplingParams

pytestmark = pytest.mark.integration

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
SHORT = SamplingParams(temperature=0.0, max_tokens=16)


def user(text: str) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=text)]


async def test_plain_completion(engine) -> None:
    async with ChatClient(engine.endpoint()) as c:
        r = await c.chat(user("Say hello."), sampling=SHORT)
    assert r.choices[0].message.role == "assistant"
    assert isinstance(r.message.content, str) and r.message.content
    assert r.usage.prompt_tokens > 0 and 0 < r.usage.completion_tokens <= 16
    assert r.latency_s > 0 and r.attempts == 1


async def test_tool_call_required(engine) -> None:
    async with ChatClient(engine.endpoint()) as c:
        r = await c.chat(
            user("What is the weather in Paris?"),
            tools=[WEATHER_TOOL],
            tool_choice="required",
            sampling=SamplingParams(temperature=0.0, max_tokens=64),
        )
    calls = r.message.tool_calls
    assert calls, f"tool_choice=required returned no tool call: {r.message}"
    assert calls[0].function.name == "get_weather" and calls[0].id
    assert isinstance(json.loads(calls[0].function.arguments), dict)


async def test_tool_call_auto_parses(engine) -> None:
    async with ChatClient(engine.endpoint()) as c:
        r = await c.chat(
            user("What is the weather in Rome? Use the tool."),
            tools=[WEATHER_TOOL],
            tool_choice="auto",
            sampling=SamplingParams(temperature=0.0, max_tokens=64),
        )
    for call in r.message.tool_calls or []:
        assert call.type == "function" and call.id and isinstance(call.function.name, str)
        assert isinstance(call.function.arguments, str)
    if not r.message.tool_calls:
        assert r.message.content is not None


async def test_json_schema_output(engine) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city", "days"],
        "additionalProperties": False,
    }
    async with ChatClient(engine.endpoint()) as c:
        r = await c.chat(
            user("Plan a 3 day trip to Oslo. Answer in JSON."),
            response_format=json_schema_format("trip", schema),
            sampling=SamplingParams(temperature=0.0, max_tokens=64),
        )
    obj = json.loads(r.message.content or "")
    assert isinstance(obj["city"], str) and isinstance(obj["days"], int)


async def test_shared_prefix_reports_cached_tokens(engine) -> None:
    facts = " ".join(f"Fact {i}: the hotel on street {i} has {i % 7 + 1} stars." for i in range(40))
    system = ChatMessage(role="system", content="You are a travel agent. " + facts)
    async with ChatClient(engine.endpoint()) as c:
        first = await c.chat([system, *user("Which hotel is best?")], sampling=SHORT)
        assert first.usage.prompt_tokens > 300
        second = await c.chat([system, *user("Which hotel is cheapest?")], sampling=SHORT)
    assert second.usage.cached_tokens > 0


async def test_64_concurrent_requests(engine) -> None:
    async with ChatClient(engine.endpoint()) as c:
        results = await asyncio.gather(
            *(
                c.chat(user(f"Count to {i}."), sampling=SamplingParams(max_tokens=4))
                for i in range(64)
            )
        )
    assert len(results) == 64 and all(r.usage.completion_tokens > 0 for r in results)
    assert c.stats.succeeded >= 64 and c.stats.failed == 0


async def test_list_models_and_metrics_text(engine) -> None:
    async with ChatClient(engine.endpoint()) as c:
        models = await c.list_models()
        text = await c.get_text("/metrics")
    assert models and all(isinstance(m["id"], str) for m in models)
    assert "vllm:num_requests_running" in text


async def test_count_tokens_is_the_prompt_a_chat_completion_sends(engine) -> None:
    messages = user("Plan two days in 西安 for a group of three.")
    async with ChatClient(engine.endpoint()) as c:
        counted = await c.count_tokens(messages)
        r = await c.chat(messages, sampling=SamplingParams(temperature=0.0, max_tokens=1))
    assert counted is not None and counted.count == r.usage.prompt_tokens
    assert counted.max_model_len == 8192  # the embedded engine's context
