"""`call_judge` on a 400 that says the prompt plus max_tokens overflow the context: asked
again once with the answer budget the context leaves, not counted as an attempt; any other
400 is an attempt (and drops guided decoding)."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from backends.errors import HTTPStatusError
from backends.types import ChatMessage, ChatResponse, Choice, SamplingParams, Usage
from evaluator.judges.call import JudgeFailed, call_judge, fitting_max_tokens
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import estimate_tokens

OLD = ("This model's maximum context length is 8192 tokens. However, you requested 34,000 "
       "tokens (1,232 in the messages, 32,768 in the completion).")
NEW = ("'max_tokens' or 'max_completion_tokens' is too large: 32768. This model's maximum "
       "context length is 8192 tokens and your request has 1232 input tokens "
       "(32768 > 8192 - 1232).")


@pytest.mark.parametrize("body", [OLD, NEW])
def test_the_budget_left_is_read_from_vllms_answer(body):
    assert fitting_max_tokens(HTTPStatusError("u", 400, body)) == 8192 - 1232 - 1


def test_a_budget_above_the_model_length_is_cut_by_the_prompt_estimate():
    body = ("max_tokens=32768 cannot be greater than max_model_len=8192. Please request "
            "fewer output tokens.")
    assert fitting_max_tokens(HTTPStatusError("u", 400, body), 1000) == 8192 - 1000 - 1
    # an estimate that leaves no room may be high: the whole context, the server decides
    assert fitting_max_tokens(HTTPStatusError("u", 400, body), 8150) == 8192


def test_two_answers_bring_the_budget_down_step_by_step():
    over = "max_tokens=32768 cannot be greater than max_model_len=8192."
    fake = Fake(limit=6959, body=over)
    fake.bodies = [over, OLD]  # first the length answer, then the exact-count one

    async def chat(messages, *, model=None, response_format=None, sampling=None):
        fake.seen.append(sampling)
        if (sampling.max_tokens or 0) > fake.limit:
            raise HTTPStatusError("u", 400, fake.bodies[min(len(fake.seen), 2) - 1])
        msg = ChatMessage(role="assistant", content="ok")
        return ChatResponse(id="r", model="m", choices=[Choice(index=0, message=msg)],
                            usage=Usage())

    fake.chat = chat
    value, attempts, _ = asyncio.run(call_judge(fake, "m", "p" * 400, schema_name="s",
                                                schema={}, parse=lambda t: t,
                                                settings=_settings(32768)))
    assert value == "ok" and attempts == 1
    est = estimate_tokens("p" * 400)
    assert [s.max_tokens for s in fake.seen] == [32768, 8192 - est - 1, 6959]


def test_other_answers_and_a_prompt_that_alone_fills_the_context_give_none():
    assert fitting_max_tokens(HTTPStatusError("u", 400, "bad request")) is None
    assert fitting_max_tokens(HTTPStatusError("u", 404, OLD)) is None
    full = OLD.replace("1,232 in the messages", "8,150 in the messages")
    assert fitting_max_tokens(HTTPStatusError("u", 400, full)) is None


class Fake:
    def __init__(self, limit: int, body: str = OLD) -> None:
        self.limit, self.body = limit, body
        self.seen: list[SamplingParams] = []

    async def chat(self, messages, *, model=None, response_format=None, sampling=None):
        self.seen.append(sampling)
        if (sampling.max_tokens or 0) > self.limit:
            raise HTTPStatusError("u", 400, self.body)
        msg = ChatMessage(role="assistant", content='{"ok": 1}')
        return ChatResponse(id="r", model="m", choices=[Choice(index=0, message=msg)],
                            usage=Usage())

    async def resolve_model(self) -> str:
        return "m"


def _settings(max_tokens: int) -> JudgeSettings:
    return JudgeSettings(sampling=SamplingParams(temperature=0.0, max_tokens=max_tokens),
                         max_attempts=1)


def test_an_overflowing_budget_is_cut_once_without_spending_an_attempt():
    fake = Fake(limit=8192 - 1232 - 1)
    value, attempts, _ = asyncio.run(call_judge(fake, "m", "p", schema_name="s", schema={},
                                                parse=lambda t: t, settings=_settings(32768)))
    assert value == '{"ok": 1}' and attempts == 1
    assert [s.max_tokens for s in fake.seen] == [32768, 6959]


def test_another_rejection_is_an_attempt():
    fake = Fake(limit=0, body="bad request")
    with pytest.raises(JudgeFailed, match="rejected"):
        asyncio.run(call_judge(fake, "m", "p", schema_name="s", schema={}, parse=lambda t: t,
                               settings=_settings(100)))
    assert len(fake.seen) == 1


def test_judge_errors_that_are_context_refusals_get_a_hint():
    from evaluator.judges.pool import PoolStats, context_hint, is_context_refusal

    refused = ('judge request rejected: http://h/v1/chat/completions answered HTTP 400: '
               '{"error":{"message":"max_tokens=32768 cannot be greater than max_model_len=8192.'
               '"}} (after 10 attempts)')
    assert is_context_refusal(refused) and is_context_refusal(f"judge request rejected: {OLD}")
    assert not is_context_refusal("unparseable judge output: no rating (after 3 attempts)")
    assert context_hint(PoolStats(judge_errors=2), _settings(1024), "R") == ""
    hint = context_hint(PoolStats(judge_errors=2, context_errors=2), _settings(32768), "R")
    assert hint.startswith("hint: 2 judge error(s) are prompts too long for the judge's context")
    assert "agentsweep judge R --retry-errors --set judge.context_tokens=8192" in hint
    guarded = msgspec.structs.replace(_settings(1024), context_tokens=8192)
    hint = context_hint(PoolStats(judge_errors=1, context_errors=1), guarded, "R")
    assert "--set" not in hint and "--judge-url" in hint  # the guard is on: a longer context
