"""ChatClient against the stub server: retries, timeouts, typed errors, request encoding."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import msgspec
import pytest

from backends.client import ChatClient, encode_tools, json_schema_format, named_tool_choice
from backends.errors import (
    HTTPStatusError,
    InfrastructureError,
    MalformedResponse,
    RequestTimeout,
    RetriesExhausted,
)
from backends.types import ChatMessage, Endpoint, SamplingParams
from perf.stub_server import StubProcess, free_port, start_stub

MSGS = [ChatMessage(role="system", content="be brief"), ChatMessage(role="user", content="hi")]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
]


@pytest.fixture(scope="module")
def stub() -> Iterator[StubProcess]:
    with start_stub("--record") as s:
        yield s


def client_for(url: str, max_retries: int = 3, **kw) -> ChatClient:
    return ChatClient(Endpoint(base_url=url, max_retries=max_retries), backoff_base_s=0.001, **kw)


def rid() -> str:
    return uuid.uuid4().hex


async def last_request(client: ChatClient) -> dict:
    text = await client.get_text("/stub/requests")
    return json.loads(text)[-1]


async def test_plain_text_and_usage(stub: StubProcess) -> None:
    async with client_for(stub.url) as c:
        r = await c.chat(MSGS)
    assert r.message.content == "stub answer"
    assert r.usage.prompt_tokens == 20 and r.usage.cached_tokens == 16
    assert r.attempts == 1 and r.latency_s > 0
    assert c.stats.requests >= 2 and c.stats.succeeded >= 2 and c.stats.retries == 0


async def test_model_resolved_from_models_list(stub: StubProcess) -> None:
    async with client_for(stub.url) as c:
        assert [m["id"] for m in await c.list_models()] == ["stub-model"]
        await c.chat(MSGS)
        body = json.loads((await last_request(c))["body"])
    assert body["model"] == "stub-model"


async def test_503_then_success_is_retried(stub: StubProcess) -> None:
    async with client_for(stub.url) as c:
        r = await c.chat(
            MSGS, model="m", extra_headers={"X-Request-ID": rid(), "X-Stub-Fail-First": "2"}
        )
    assert r.attempts == 3
    assert c.stats.retries == 2 and c.stats.retryable_statuses == 2 and c.stats.failed == 0


async def test_429_honours_retry_after(stub: StubProcess) -> None:
    headers = {
        "X-Request-ID": rid(),
        "X-Stub-Fail-First": "1",
        "X-Stub-Fail-Status": "429",
        "X-Stub-Retry-After": "0.2",
    }
    async with client_for(stub.url) as c:
        r = await c.chat(MSGS, model="m", extra_headers=headers)
    assert r.attempts == 2
    # the chosen wait is at least what the server asked for (jitter alone would be ~1 ms)
    assert c.stats.backoff_s >= 0.2


async def test_dropped_connection_is_retried(stub: StubProcess) -> None:
    async with client_for(stub.url) as c:
        r = await c.chat(
            MSGS, model="m", extra_headers={"X-Request-ID": rid(), "X-Stub-Drop-First": "1"}
        )
    assert r.attempts == 2 and c.stats.connection_errors == 1


async def test_retries_exhausted(stub: StubProcess) -> None:
    async with client_for(stub.url, max_retries=2) as c:
        with pytest.raises(RetriesExhausted) as info:
            await c.chat(
                MSGS, model="m", extra_headers={"X-Request-ID": rid(), "X-Stub-Fail-First": "10"}
            )
    assert info.value.attempts == 3 and "HTTP 503" in str(info.value)
    assert isinstance(info.value, InfrastructureError)
    assert c.stats.exhausted == 1 and c.stats.failed == 1


async def test_connection_refused_exhausts_retries() -> None:
    async with client_for(f"http://127.0.0.1:{free_port()}/v1", max_retries=1) as c:
        with pytest.raises(RetriesExhausted) as info:
            await c.chat(MSGS, model="m")
    assert info.value.attempts == 2 and c.stats.connection_errors == 2


async def test_timeout_raises_request_timeout(stub: StubProcess) -> None:
    async with client_for(stub.url) as c:
        with pytest.raises(RequestTimeout) as info:
            await c.chat(MSGS, model="m", extra_headers={"X-Stub-Sleep": "5"}, timeout_s=0.3)
    assert info.value.timeout_s == 0.3
    assert isinstance(info.value, InfrastructureError)
    assert c.stats.timeouts == 1 and c.stats.in_flight == 0


async def test_malformed_body_is_retried_then_an_infrastructure_error(stub: StubProcess) -> None:
    async with client_for(stub.url, max_retries=2) as c:
        with pytest.raises(MalformedResponse) as info:
            await c.chat(MSGS, model="m", extra_headers={"X-Stub-Mode": "malformed"})
    msg = str(info.value)
    assert "/chat/completions" in msg and "body starts" in msg and "chatcmpl-stub" in msg
    assert "after 3 attempts" in msg and info.value.attempts == 3
    assert isinstance(info.value, InfrastructureError)  # the server's fault: never scored
    assert c.stats.malformed == 3 and c.stats.attempts == 3 and c.stats.retries == 2
    assert c.stats.failed == 1 and c.stats.succeeded == 0 and c.stats.in_flight == 0


@pytest.mark.parametrize("kind", ["truncated", "not_json", "no_choices", "empty_choices",
                                  "no_message"])
async def test_each_garbled_200_is_retried_like_a_5xx(stub: StubProcess, kind: str) -> None:
    msgs = [ChatMessage(role="user", content=f"garble {kind} {rid()}")]  # a fresh body
    headers = {"X-Stub-Garble-First": "2", "X-Stub-Garble-Kind": kind}
    async with client_for(stub.url) as c:
        r = await c.chat(msgs, model="m", extra_headers=headers)
    assert r.message.content == "stub answer" and r.attempts == 3
    assert c.stats.malformed == 2 and c.stats.retries == 2 and c.stats.succeeded == 1


async def test_400_is_not_retried(stub: StubProcess) -> None:
    async with client_for(stub.url) as c:
        with pytest.raises(HTTPStatusError) as info:
            await c.chat(MSGS, model="m", extra_headers={"X-Stub-Status": "400"})
    assert info.value.status == 400 and "injected status" in info.value.body
    assert c.stats.attempts == 1 and c.stats.retries == 0


async def test_tool_call_parsing_and_scripted_turns(stub: StubProcess) -> None:
    headers = {"X-Stub-Mode": "tool", "X-Stub-Tool-Turns": "2", "X-Stub-Tool-Name": "lookup"}
    msgs = list(MSGS)
    async with client_for(stub.url) as c:
        for turn in range(2):
            r = await c.chat(
                msgs, model="m", tools=TOOLS, tool_choice="auto", extra_headers=headers
            )
            assert r.choices[0].finish_reason == "tool_calls"
            (call,) = r.message.tool_calls or []
            assert call.function.name == "lookup" and json.loads(call.function.arguments) == {
                "turn": turn
            }
            msgs += [r.message, ChatMessage(role="tool", tool_call_id=call.id, content="ok")]
        r = await c.chat(msgs, model="m", tools=TOOLS, extra_headers=headers)
    assert r.message.tool_calls is None and r.message.content == "stub answer"


async def test_request_body_fields(stub: StubProcess) -> None:
    sampling = SamplingParams(temperature=0.7, top_p=0.9, seed=3, max_tokens=11, n=1, stop=["END"])
    fmt = json_schema_format("answer", {"type": "object"})
    async with client_for(stub.url) as c:
        await c.chat(
            MSGS,
            model="m",
            tools=encode_tools(TOOLS),
            tool_choice=named_tool_choice("lookup"),
            response_format=fmt,
            sampling=sampling,
            priority=5,
        )
        body = json.loads((await last_request(c))["body"])
    assert body["tools"] == TOOLS  # pre-encoded msgspec.Raw is sent verbatim
    assert body["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}
    assert body["response_format"]["json_schema"]["schema"] == {"type": "object"}
    assert (body["temperature"], body["top_p"], body["seed"]) == (0.7, 0.9, 3)
    assert (body["max_tokens"], body["n"], body["stop"], body["priority"]) == (11, 1, ["END"], 5)
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
    ]
    assert "user" not in body


async def test_raw_tools_equal_list_tools_bytes(stub: StubProcess) -> None:
    async with client_for(stub.url) as c:
        await c.chat(MSGS, model="m", tools=TOOLS)
        a = (await last_request(c))["body"]
        await c.chat(MSGS, model="m", tools=encode_tools(TOOLS))
        b = (await last_request(c))["body"]
    assert a == b  # byte-identical: prefix caching is unaffected by pre-encoding


async def test_session_header_and_user_field(stub: StubProcess) -> None:
    async with client_for(stub.url, session_header="X-Route-Key") as c:
        await c.chat(MSGS, model="m", session_id="task-7")
        rec = await last_request(c)
    assert rec["headers"]["X-Route-Key"] == "task-7"
    assert json.loads(rec["body"])["user"] == "task-7"


async def test_endpoint_headers_and_api_key(stub: StubProcess) -> None:
    ep = Endpoint(base_url=stub.url, model="m", api_key="sk-x", extra_headers={"X-Team": "a"})
    async with ChatClient(ep) as c:
        await c.chat(MSGS)
        rec = await last_request(c)
    assert rec["headers"]["Authorization"] == "Bearer sk-x" and rec["headers"]["X-Team"] == "a"
    assert json.loads(rec["body"])["model"] == "m"


async def test_bad_tool_choice_and_embedded_url_rejected() -> None:
    with pytest.raises(ValueError, match="embedded"):
        ChatClient(Endpoint())
    async with client_for("http://127.0.0.1:1/v1") as c:
        with pytest.raises(ValueError, match="tool_choice"):
            await c.chat(MSGS, model="m", tool_choice="always")


def test_encode_tools_is_raw() -> None:
    raw = encode_tools(TOOLS)
    assert isinstance(raw, msgspec.Raw) and json.loads(bytes(raw)) == TOOLS


async def test_count_tokens_on_a_server_without_tokenize_is_none(stub: StubProcess) -> None:
    async with client_for(stub.url) as c:
        assert await c.count_tokens(MSGS, model="m") is None
