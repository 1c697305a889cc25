"""Wire encoding for chat completions: request body, response decoding, request-option helpers.

Requests are encoded with msgspec straight from `ChatMessage` structs; responses are decoded
with one cached msgspec decoder into a wire struct that mirrors vLLM's answer
(`usage.prompt_tokens_details.cached_tokens`) and then folded into `backends.types.ChatResponse`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from .types import ChatMessage, ChatResponse, Choice, PromptTokensDetails, SamplingParams, Usage

TOOL_CHOICE_MODES = ("auto", "required", "none")


class ChatRequest(msgspec.Struct, omit_defaults=True):
    """The JSON body of POST /v1/chat/completions. None fields are left out of the body."""

    model: str
    messages: Sequence[ChatMessage]
    tools: Any = None  # list[dict] or pre-encoded msgspec.Raw (encoded inline as-is)
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    n: int | None = None
    stop: list[str] | None = None
    priority: int | None = None
    user: str | None = None


class _WireUsage(msgspec.Struct):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    prompt_tokens_details: PromptTokensDetails | None = None


class _WireResponse(msgspec.Struct):
    id: str
    model: str
    choices: list[Choice]
    usage: _WireUsage | None = None


class TokenizeRequest(msgspec.Struct):
    """The JSON body of vLLM's POST /tokenize for chat messages: the prompt the chat template
    makes of them, generation prompt included, as a chat completion would send it."""

    model: str
    messages: Sequence[ChatMessage]
    add_generation_prompt: bool = True


class TokenCount(msgspec.Struct, frozen=True):
    """vLLM's /tokenize answer, less the token ids: the prompt's tokens and the server's
    context length."""

    count: int
    max_model_len: int


_ENCODER = msgspec.json.Encoder()
_TOKENIZE_DECODER = msgspec.json.Decoder(TokenCount)
_RESPONSE_DECODER = msgspec.json.Decoder(_WireResponse)
_MODELS_DECODER = msgspec.json.Decoder(dict[str, Any])


def encode_request(request: ChatRequest | TokenizeRequest) -> bytes:
    return _ENCODER.encode(request)


def encode_tools(tools: list[dict[str, Any]]) -> msgspec.Raw:
    """Encode a tool list once; pass the result as `tools=` on every call of a task."""
    return msgspec.Raw(_ENCODER.encode(tools))


_encoded_tools: dict[int, tuple[Any, msgspec.Raw]] = {}


def wire_tools(tools: Any) -> Any:
    """`tools` as they go on the wire: a list is encoded once per list object (kept, so its id
    is not reused; up to 256 lists) and its bytes reused on every later call, as the response
    journal hashes it (evaluator/run/journal.py). A tool list is not changed in place once
    sent; a changed list is a new list. Anything else is returned as is."""
    if type(tools) is not list:
        return tools
    hit = _encoded_tools.get(id(tools))
    if hit is not None and hit[0] is tools:
        return hit[1]
    raw = msgspec.Raw(_ENCODER.encode(tools))
    if len(_encoded_tools) < 256:
        _encoded_tools[id(tools)] = (tools, raw)
    return raw


def decode_response(body: bytes) -> ChatResponse:
    """Decode a chat-completion body. Raises msgspec.DecodeError/ValidationError or ValueError."""
    wire = _RESPONSE_DECODER.decode(body)
    if not wire.choices:
        raise ValueError("response has no choices")
    u = wire.usage
    if u is None:
        usage = Usage()
    else:
        details = u.prompt_tokens_details
        cached = details.cached_tokens if details is not None else None
        usage = Usage(u.prompt_tokens, u.completion_tokens, u.total_tokens, cached or 0)
    return ChatResponse(id=wire.id, model=wire.model, choices=wire.choices, usage=usage)


def decode_token_count(body: bytes) -> TokenCount:
    """Decode POST /tokenize (vLLM): `count` and `max_model_len` (the token ids are skipped)."""
    count = _TOKENIZE_DECODER.decode(body)
    if count.count < 0 or count.max_model_len < 1:
        raise ValueError(f"implausible token count {count.count} / context {count.max_model_len}")
    return count


def decode_models(body: bytes) -> list[dict[str, Any]]:
    """Decode GET /v1/models: the `data` list of model objects (each has an `id`)."""
    obj = _MODELS_DECODER.decode(body)
    data = obj.get("data")
    if not isinstance(data, list) or not all(
        isinstance(m, dict) and isinstance(m.get("id"), str) for m in data
    ):
        raise ValueError("'data' is not a list of model objects with a string 'id'")
    return data


def named_tool_choice(name: str) -> dict[str, Any]:
    """tool_choice that forces a call of the function `name`."""
    return {"type": "function", "function": {"name": name}}


def json_schema_format(name: str, schema: dict[str, Any], *, strict: bool = True) -> dict[str, Any]:
    """response_format for JSON-schema structured output (OpenAI / vLLM guided decoding)."""
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": schema, "strict": strict},
    }


def check_tool_choice(tool_choice: str | dict[str, Any] | None) -> None:
    if isinstance(tool_choice, str) and tool_choice not in TOOL_CHOICE_MODES:
        raise ValueError(
            f"tool_choice must be one of {TOOL_CHOICE_MODES} or named_tool_choice(name), "
            f"got {tool_choice!r}"
        )


def build_request(
    model: str,
    messages: Sequence[ChatMessage],
    *,
    tools: Any,
    tool_choice: str | dict[str, Any] | None,
    response_format: dict[str, Any] | None,
    sampling: SamplingParams | None,
    priority: int | None,
    user: str | None,
) -> ChatRequest:
    req = ChatRequest(
        model=model,
        messages=messages,
        tools=wire_tools(tools),
        tool_choice=tool_choice,
        response_format=response_format,
        priority=priority,
        user=user,
    )
    if sampling is not None:
        req.temperature = sampling.temperature
        req.top_p = sampling.top_p
        req.max_tokens = sampling.max_tokens
        req.seed = sampling.seed
        req.n = sampling.n
        req.stop = sampling.stop
    return req
