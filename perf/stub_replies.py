"""The bodies the stub server (`perf/stub_server.py`) answers with: completions (text, a
value for a JSON schema, a tool call), garbled ones, the model list and fake vLLM metrics; and
the request hash that picks among canned answers (sha256 of `messages` and `seed`)."""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

MODEL = "stub-model"
ENC = msgspec.json.Encoder()


class _Msg(msgspec.Struct):
    role: str


class _Req(msgspec.Struct):
    messages: list[_Msg] = []


class Hashed(msgspec.Struct):
    messages: msgspec.Raw = msgspec.Raw(b"[]")
    seed: int | None = None
    response_format: dict[str, Any] | None = None


REQ_DECODER = msgspec.json.Decoder(_Req)
HASHED_DECODER = msgspec.json.Decoder(Hashed)


def fraction(req: Hashed, salt: str) -> float:
    """A number in [0, 1) from the request's messages and seed (and `salt`)."""
    h = hashlib.sha256(salt.encode() + b"\0" + bytes(req.messages) + b"\0"
                       + str(req.seed).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64


def pick(req: Hashed, salt: str, options: list[Any]) -> Any:
    return options[int(fraction(req, salt) * len(options))]


def text_body(req: Hashed | None, replies: str) -> bytes:
    if req is None or not replies:
        return TEXT_BODY
    text = pick(req, "reply", replies.split("||"))
    return completion({"role": "assistant", "content": text}, "stop", 20, 16)


def schema_value(schema: dict[str, Any], req: Hashed, path: str) -> Any:
    """A value satisfying `schema` (objects, enums, strings, numbers, booleans, arrays)."""
    if "enum" in schema:
        return pick(req, path, list(schema["enum"]))
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {k: schema_value(v, req, f"{path}.{k}")
                for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        return 0
    if kind == "boolean":
        return False
    return f"stub reasoning {path}"


def schema_body(req: Hashed, replies: str) -> bytes:
    fmt = req.response_format or {}
    schema = (fmt.get("json_schema") or {}).get("schema") if isinstance(fmt, dict) else None
    if not isinstance(schema, dict):
        return text_body(req, replies)
    text = ENC.encode(schema_value(schema, req, "")).decode()
    return completion({"role": "assistant", "content": text}, "stop", 20, 16)


def completion(message: dict[str, Any], finish: str, prompt: int, cached: int) -> bytes:
    return ENC.encode(
        {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 0,
            "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": 4,
                "total_tokens": prompt + 4,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }
    )


TEXT_BODY = completion({"role": "assistant", "content": "stub answer"}, "stop", 20, 16)
MALFORMED_BODY = b'{"id": "chatcmpl-stub", "choices": [{"index": 0, "message": '
GARBLE_KINDS = ("truncated", "not_json", "no_choices", "empty_choices", "no_message")


def garbled_body(kind: str) -> bytes:
    """A 200 body that is not a valid chat completion (see GARBLE_KINDS)."""
    if kind == "truncated":
        return TEXT_BODY[: len(TEXT_BODY) // 2]
    if kind == "not_json":
        return b"<html><body>502 Bad Gateway</body></html>"
    if kind == "no_choices":
        return ENC.encode({"id": "chatcmpl-stub", "object": "chat.completion", "model": MODEL})
    if kind == "empty_choices":
        return ENC.encode({"id": "chatcmpl-stub", "object": "chat.completion", "model": MODEL,
                            "choices": []})
    if kind == "no_message":
        return ENC.encode({"id": "chatcmpl-stub", "object": "chat.completion", "model": MODEL,
                            "choices": [{"index": 0, "finish_reason": "stop"}]})
    raise ValueError(f"unknown garble kind {kind!r}; one of {GARBLE_KINDS} or cycle")


MODELS_BODY = ENC.encode(
    {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "stub"}]}
)
METRICS_TEXT = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{engine="0",model_name="{m}"}} {running}
vllm:num_requests_waiting{{engine="0",model_name="{m}"}} 2.0
vllm:kv_cache_usage_perc{{engine="0",model_name="{m}"}} 0.25
vllm:prefix_cache_queries_total{{engine="0",model_name="{m}"}} 1000.0
vllm:prefix_cache_hits_total{{engine="0",model_name="{m}"}} 750.0
vllm:num_preemptions_total{{engine="0",model_name="{m}"}} 3.0
"""


def tool_body(name: str, args: dict[str, Any], turn: int) -> bytes:
    call = {"id": f"call_{turn}", "type": "function",
            "function": {"name": name, "arguments": ENC.encode(args).decode()}}
    return completion({"role": "assistant", "content": None, "tool_calls": [call]},
                       "tool_calls", 40, 32)
