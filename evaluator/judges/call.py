"""One judge call with retries: structured output request, tolerant parse, typed failure.

Retry policy:
- unparseable output or a 4xx answer: retried up to `max_attempts` in all;
  attempt `retry_temperature_from` (1-based) and later use `retry_temperature` (a
  deterministic judge would otherwise repeat the same output; the reference judges 10 times,
  the 8th to 10th at 0.7), and after a 4xx the `response_format` is dropped in case the
  server does not support guided decoding. Then `JudgeFailed` (recorded as a judge error).
- `InfrastructureError` (connection, timeout, 5xx or a malformed 200 body after the client's
  own retries): retried up to `infra_attempts`, then re-raised; the caller records nothing,
  so a later run retries. A malformed body is the server's fault, never a judge verdict.
- a 400 saying the prompt plus `max_tokens` exceed the model's context (a profile's answer
  budget written for a long-context judge, on a small local one) is asked again with
  `max_tokens` cut to what the context leaves (up to 3 times: a `max_tokens` above the
  model's length is first cut by an estimate of the prompt, then by the server's count),
  without counting an attempt; the prompt is never cut here (the benchmarks' context guards
  do that).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

import msgspec

from backends.chat_wire import json_schema_format
from backends.errors import HTTPStatusError, InfrastructureError
from backends.types import ChatMessage, ChatResponse, SamplingParams

from .parse import JudgeParseError
from .settings import JudgeSettings
from .transcript import Parts, TokenCounter, estimate_tokens, fit_texts

T = TypeVar("T")


class JudgeClient(Protocol):
    """What the judges need of `backends.client.ChatClient`."""

    async def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        model: str | None = None,
        response_format: dict[str, Any] | None = None,
        sampling: SamplingParams | None = None,
    ) -> ChatResponse: ...

    async def resolve_model(self) -> str: ...


def judge_messages(prompt: str, system: str = "") -> list[ChatMessage]:
    """What a judge call sends: the prompt as one user message, after `system` when given."""
    messages = [ChatMessage(role="user", content=prompt)]
    if system:
        messages.insert(0, ChatMessage(role="system", content=system))
    return messages


def server_counter(client: Any, model: str = "", system: str = "") -> TokenCounter | None:
    """A `TokenCounter` asking the judge server (the client's `count_tokens`: vLLM's
    /tokenize) how many tokens a prompt takes, sent as `call_judge` sends it
    (`judge_messages`); None for a client without `count_tokens`. A server that refuses to
    count (an HTTP error) gives None, so the context guard falls back to its estimate;
    connection trouble propagates as an infrastructure error."""
    counter = getattr(client, "count_tokens", None)
    if counter is None:
        return None

    async def count(prompt: str) -> int | None:
        try:
            got = await counter(judge_messages(prompt, system), model=model or None)
        except HTTPStatusError:
            return None
        return None if got is None else int(got.count)

    return count


async def fit_prompt(parts: Parts, settings: JudgeSettings, client: Any, model: str, *,
                     system: str = "", what: str = "texts") -> tuple[str, str]:
    """The context guard before one judge call (`transcript.fit_texts`): the settings'
    `context_tokens` and answer budget, tokens counted by the judge server when it can.
    Returns (prompt, guard note or "")."""
    return await fit_texts(parts, settings.context_tokens, settings.sampling.max_tokens or 0,
                           server_counter(client, model, system), what)


class JudgeFailed(Exception):
    """Every attempt gave an unusable answer; `raw` is the last output seen."""

    def __init__(self, detail: str, attempts: int, raw: str) -> None:
        super().__init__(detail)
        self.detail = detail
        self.attempts = attempts
        self.raw = raw


async def call_judge(
    client: JudgeClient,
    model: str,
    prompt: str,
    *,
    schema_name: str,
    schema: dict[str, Any],
    parse: Callable[[str], T],
    settings: JudgeSettings,
    retry_temperature: float | None = None,
    system: str = "",
) -> tuple[T, int, str]:
    """Ask the judge, parse its answer; returns (value, attempts, raw answer).
    `retry_temperature` overrides `settings.retry_temperature` (the meta-judge's own);
    `system`: a system message before the prompt ("" = none)."""
    messages = judge_messages(prompt, system)
    structured = settings.structured_output
    attempts = 0
    infra_failures = 0
    raw = ""
    detail = "no attempt made"
    cap: int | None = None  # max_tokens cut to the context after an overflow answer
    shrinks = 0
    prompt_estimate = estimate_tokens(prompt + system)
    while attempts < settings.max_attempts:
        sampling = attempt_sampling(settings, attempts + 1, retry_temperature)
        if cap is not None:
            sampling = msgspec.structs.replace(sampling, max_tokens=cap)
        fmt = json_schema_format(schema_name, schema) if structured else None
        try:
            response = await client.chat(
                messages, model=model, response_format=fmt, sampling=sampling
            )
        except InfrastructureError:
            infra_failures += 1
            if infra_failures >= settings.infra_attempts:
                raise
            await asyncio.sleep(min(2.0 ** infra_failures, 30.0))
            continue
        except HTTPStatusError as exc:
            fit = fitting_max_tokens(exc, prompt_estimate)
            if shrinks < 3 and fit is not None and fit < (sampling.max_tokens or fit + 1):
                cap, shrinks = fit, shrinks + 1  # the next answer may give exact numbers
                continue
            attempts += 1
            detail = f"judge request rejected: {exc}"
            structured = False
            continue
        attempts += 1
        raw = response.message.content or ""
        if not raw.strip():
            detail = "empty judge output"
            continue
        try:
            return parse(raw), attempts, raw
        except JudgeParseError as exc:
            detail = f"unparseable judge output: {exc}"
    raise JudgeFailed(f"{detail} (after {attempts} attempts)", attempts, raw)


_CONTEXT = re.compile(r"maximum context length is (\d+)")
_INPUT = re.compile(r"(\d+) in the messages|has (\d+) input tokens|(\d+) input tokens")
_OVER_LEN = re.compile(r"max_tokens=\d+ cannot be greater than max_model_len=(\d+)")
MIN_ANSWER_TOKENS = 64


def fitting_max_tokens(exc: HTTPStatusError, prompt_tokens: int = 0) -> int | None:
    """The answer budget the context leaves, read from a 400 that says the prompt plus
    `max_tokens` do not fit (vLLM's wordings: with the prompt's token count, or `max_tokens`
    above `max_model_len`, where `prompt_tokens`, an estimate, is subtracted); None for any
    other answer, or when less than MIN_ANSWER_TOKENS would be left (the prompt itself is
    too long). When the estimate leaves less than that under `max_model_len`, the answer is
    `max_model_len` itself: the estimate may be high, and the server then either answers (recent
    vLLM cuts `max_tokens` to what the prompt leaves) or says the prompt's exact count."""
    if exc.status != 400:
        return None
    body = exc.body.replace(",", "")
    ctx, used = _CONTEXT.search(body), _INPUT.search(body)
    if ctx is not None and used is not None:
        left = int(ctx.group(1)) - int(next(g for g in used.groups() if g)) - 1
    elif (over := _OVER_LEN.search(body)) is not None:
        left = int(over.group(1)) - prompt_tokens - 1
        if left < MIN_ANSWER_TOKENS:  # the estimate may be high: let the server decide
            return int(over.group(1))
    else:
        return None
    return left if left >= MIN_ANSWER_TOKENS else None


def attempt_sampling(
    settings: JudgeSettings, attempt: int, retry_temperature: float | None = None
) -> SamplingParams:
    """Sampling of attempt number `attempt` (1-based): `settings.sampling`, with the retry
    temperature from attempt `retry_temperature_from` on."""
    if attempt < settings.retry_temperature_from:
        return settings.sampling
    temperature = settings.retry_temperature if retry_temperature is None else retry_temperature
    return _with_temperature(settings.sampling, temperature)


def _with_temperature(sampling: SamplingParams, temperature: float) -> SamplingParams:
    return msgspec.structs.replace(sampling, temperature=temperature)
