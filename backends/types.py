"""Typed values for the OpenAI chat-completions wire format.

Every arrow in an episode is one of these msgspec Structs, never a dict. The shapes follow
the OpenAI chat-completions API so that any OpenAI-compatible server works unchanged.
`omit_defaults=True` keeps request bodies minimal and byte-stable (prefix caching relies on
byte-identical prefixes).
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import msgspec

# bounds checked when a config is converted (msgspec.convert / decode), not on construction
NonNegative = Annotated[float, msgspec.Meta(ge=0.0)]
Probability = Annotated[float, msgspec.Meta(gt=0.0, le=1.0)]   # top_p: (0, 1]
Positive = Annotated[float, msgspec.Meta(gt=0.0)]
AtLeastOne = Annotated[int, msgspec.Meta(ge=1)]
Count = Annotated[int, msgspec.Meta(ge=0)]
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"   # an environment variable name
EnvName = Annotated[str, msgspec.Meta(pattern=ENV_NAME_PATTERN)]


class FunctionCall(msgspec.Struct, omit_defaults=True):
    """The function part of a tool call. `arguments` is the raw JSON text the model wrote."""

    name: str
    arguments: str = "{}"


class ToolCall(msgspec.Struct, omit_defaults=True):
    id: str
    function: FunctionCall
    type: str = "function"


class ChatMessage(msgspec.Struct, omit_defaults=True):
    """One chat message: system, user, assistant (maybe with tool calls) or tool."""

    role: str
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class PromptTokensDetails(msgspec.Struct, omit_defaults=True):
    cached_tokens: int | None = None


class Usage(msgspec.Struct, omit_defaults=True):
    """Token usage of one response; `cached_tokens` = prompt tokens served from prefix cache."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.total_tokens += other.total_tokens
        self.cached_tokens += other.cached_tokens


class Choice(msgspec.Struct, omit_defaults=True):
    index: int
    message: ChatMessage
    finish_reason: str | None = None


class ChatResponse(msgspec.Struct, omit_defaults=True):
    """A parsed chat completion. `latency_s` is measured by the client (send to body parsed)."""

    id: str
    model: str
    choices: list[Choice]
    usage: Usage = msgspec.field(default_factory=Usage)
    latency_s: float = 0.0
    attempts: int = 1

    @property
    def message(self) -> ChatMessage:
        return self.choices[0].message


class SamplingParams(msgspec.Struct, omit_defaults=True, frozen=True):
    """Per-role sampling settings. None means: leave to the server's default.
    Bounds (checked when converted from a config): temperature >= 0, top_p in (0, 1],
    max_tokens >= 1, n >= 1."""

    temperature: NonNegative | None = 0.0
    top_p: Probability | None = None
    max_tokens: AtLeastOne | None = None
    seed: int | None = None
    n: AtLeastOne | None = None
    stop: list[str] | None = None


class Endpoint(msgspec.Struct, omit_defaults=True, frozen=True):
    """Where one role's model lives.

    base_url: OpenAI-compatible root, e.g. "http://10.0.0.5:8000/v1". The special value
    "embedded" means the embedded vLLM engine started by agentsweep itself.
    model: the served model name; empty means "the first model the server lists".
    api_key: the bearer token itself (a run records it with its config).
    api_key_env: the name of an environment variable that holds the token instead: read when a
        client is built (`api_key_of`), so only the name is recorded. One of the two at most.
    Bounds (checked when converted from a config): timeout_s > 0, max_retries >= 0.
    """

    base_url: str = "embedded"
    model: str = ""
    api_key: str | None = None
    api_key_env: EnvName | None = None
    timeout_s: Positive = 600.0
    max_retries: Count = 6
    extra_headers: dict[str, str] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.api_key is not None and self.api_key_env is not None:
            raise ValueError("give api_key or api_key_env, not both")


class MissingApiKey(ValueError):
    """An endpoint's `api_key_env` names a variable that is unset or empty."""


def api_key_of(endpoint: Endpoint) -> str | None:
    """The endpoint's bearer token: the value of its `api_key_env` variable (read now), else its
    `api_key`; None = none. Raises MissingApiKey when the variable is unset or empty."""
    name = endpoint.api_key_env
    if name is None:
        return endpoint.api_key
    value = os.environ.get(name, "")
    if not value:
        raise MissingApiKey(f"the environment variable {name} (api_key_env) is not set")
    return value


JSONObject = dict[str, Any]
