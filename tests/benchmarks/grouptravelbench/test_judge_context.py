"""GroupTravelBench's judge context guard: off by default (the reference shows the judge the
whole chat); with `judge.context_tokens` set, the longest chat texts are cut until the prompt
and the answer fit, counted by the judge server when it can and estimated otherwise, and the
judgement says what was cut. The preference tables and short messages are never cut."""

from __future__ import annotations

import asyncio

import pytest

from backends.chat_wire import TokenCount
from backends.errors import HTTPStatusError
from backends.types import ChatMessage, ChatResponse, Choice, SamplingParams, Usage
from evaluator.benchmarks.base import JudgeInput
from evaluator.benchmarks.grouptravelbench.judge_inputs import (
    judge_view,
    render_view,
    transcript,
    view_texts,
    with_texts,
)
from evaluator.benchmarks.grouptravelbench.judges import (
    CONTEXT_GUARD_NOTE,
    JUDGE_KIND,
    JUDGE_VERSION,
    judge_prompt,
    meta_prompt,
    run_judge,
    run_meta,
)
from evaluator.benchmarks.grouptravelbench.rubric import DIMENSION_KEYS
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import estimate_tokens, fit_texts
from evaluator.records import Judgement, UnitId

from .scripted import TEXTS
from .scripted import task as _task
from .test_judges import _record, review

LONG = "预算和景点" * 400  # 2,000 characters, ~2,000 estimated tokens
CHAT = [
    {"type": "message", "role": "User1", "content": "我想去西安"},
    {"type": "message", "role": "Agent", "content": "@User1 " + LONG, "has_tool_calls": False},
    {"type": "message", "role": "User2", "content": "USER2-SHORT " + LONG},
    {"type": "message", "role": "Agent", "content": "", "has_tool_calls": True},
    {"type": "tool_call", "name": "web_search", "arguments": '{"query": "西安"}'},
    {"type": "tool_result", "name": "web_search", "result": "r" * 1500, "error": False},
    {"type": "message", "role": "Agent", "content": "最后的计划", "has_tool_calls": False},
]
ANSWER = review({k: "较好" for k in DIMENSION_KEYS})


class Judge:
    """A judge server that keeps every prompt it is sent; `per_char`: with it, the client can
    count tokens (this many per character), as vLLM's /tokenize does."""

    def __init__(self, answer: str = ANSWER, per_char: float | None = None,
                 refuse_count: bool = False) -> None:
        self.answer, self.prompts, self.counted = answer, [], 0
        if per_char is not None:
            self.per_char, self.refuse = per_char, refuse_count
            self.count_tokens = self._count

    async def chat(self, messages, *, model=None, response_format=None, sampling=None):
        self.prompts.append(messages[-1].content)
        return ChatResponse(id="x", model="m", usage=Usage(),
                            choices=[Choice(index=0, message=ChatMessage(
                                role="assistant", content=self.answer))])

    async def resolve_model(self) -> str:
        return "m"

    async def _count(self, messages, *, model=None, timeout_s=60.0):
        self.counted += 1
        if self.refuse:
            raise HTTPStatusError("http://judge/tokenize", 400, "model not found")
        return TokenCount(count=int(len(messages[-1].content) * self.per_char), max_model_len=8192)


def _prompt(chat=CHAT) -> str:
    """The judge's prompt of `chat` with nothing cut."""
    return judge_prompt(_inp(None, chat=chat), transcript(chat, TEXTS))


def _inp(client, context_tokens=0, max_tokens=512, chat=CHAT, audited=None):
    settings = JudgeSettings(context_tokens=context_tokens, structured_output=False,
                             sampling=SamplingParams(temperature=0.0, max_tokens=max_tokens))
    return JudgeInput(record=_record(chat=chat), task=_task(), thash="h", settings=settings,
                      prompts=None, tools=None, client=client, model="m", audited=audited)


def test_without_a_context_the_judge_reads_the_whole_chat_as_the_reference_does():
    judge = Judge()
    j = asyncio.run(run_judge(_inp(judge)))
    assert judge.prompts == [_prompt()]
    assert LONG in judge.prompts[0] and CONTEXT_GUARD_NOTE not in j.reasoning
    assert j.score == pytest.approx(0.75)


def test_the_guard_cuts_the_longest_chat_texts_to_fit_its_estimate():
    judge = Judge()
    whole = estimate_tokens(_prompt())
    context = whole - 1000 + 512  # 1,000 estimated tokens too many with a 512-token answer
    j = asyncio.run(run_judge(_inp(judge, context_tokens=context)))
    prompt = judge.prompts[0]
    assert estimate_tokens(prompt) + 512 <= context
    assert LONG not in prompt and prompt.count("characters cut to fit the judge's context") == 2
    assert "USER2-SHORT" in prompt and "@User1 " in prompt  # each cut text keeps its head
    for kept in ("[User1]: 我想去西安", "[Agent]: 最后的计划", "r" * 1500, '"avg_budget": 3000'):
        assert kept in prompt
    note = j.reasoning[CONTEXT_GUARD_NOTE]
    assert note.startswith(f"context guard: prompt ~{whole} estimated tokens > budget "
                           f"{context - 512} (context_tokens {context} - max_tokens 512)")
    assert "2 texts cut" in note and "still over" not in note
    assert j.score == pytest.approx(0.75) and set(j.scores) == set(DIMENSION_KEYS)


def test_the_guard_counts_with_the_judge_server_when_it_can():
    judge = Judge(per_char=2.0)  # twice the estimate's one token per Chinese character
    whole = 2 * len(_prompt())
    j = asyncio.run(run_judge(_inp(judge, context_tokens=whole - 2000 + 512)))
    assert len(judge.prompts[0]) * 2 + 512 <= whole - 2000 + 512 and judge.counted >= 2
    assert f"prompt {whole} tokens > budget" in j.reasoning[CONTEXT_GUARD_NOTE]
    # the same budget by the estimate alone would have sent a prompt the server cannot take
    estimated = Judge()
    asyncio.run(run_judge(_inp(estimated, context_tokens=whole - 2000 + 512)))
    assert len(estimated.prompts[0]) * 2 + 512 > whole - 2000 + 512


def test_a_server_that_refuses_to_count_leaves_the_estimate():
    judge = Judge(per_char=2.0, refuse_count=True)
    whole = estimate_tokens(_prompt())
    j = asyncio.run(run_judge(_inp(judge, context_tokens=whole - 500 + 512)))
    assert "estimated tokens > budget" in j.reasoning[CONTEXT_GUARD_NOTE]
    assert estimate_tokens(judge.prompts[0]) + 512 <= whole - 500 + 512


def test_a_prompt_that_fits_is_sent_whole_and_noted_nowhere():
    judge = Judge(per_char=1.0)
    whole = len(_prompt())
    j = asyncio.run(run_judge(_inp(judge, context_tokens=whole + 512)))
    assert LONG in judge.prompts[0] and CONTEXT_GUARD_NOTE not in j.reasoning


def test_the_meta_judge_is_guarded_and_says_so_and_a_failed_judge_keeps_the_note():
    audited = Judgement(unit=UnitId("r", "k", 0, 1), trajectory_hash="h", judge_model="m",
                        prompt_version=JUDGE_VERSION, kind=JUDGE_KIND, score=0.75,
                        scores={k: 4.0 for k in DIMENSION_KEYS}, raw=ANSWER)
    judge = Judge(answer="<meta_evaluation><reasoning>fair</reasoning><rating>较好</rating>"
                         "</meta_evaluation>")
    whole = estimate_tokens(meta_prompt(_inp(None, audited=audited), audited,
                                        transcript(CHAT, TEXTS)))
    meta = asyncio.run(run_meta(_inp(judge, context_tokens=whole - 800 + 512, audited=audited)))
    assert meta.score == pytest.approx(0.8) and CONTEXT_GUARD_NOTE in meta.reasoning
    assert LONG not in judge.prompts[0]
    failed = asyncio.run(run_judge(_inp(Judge(answer="no json"), context_tokens=whole - 800 + 512)))
    assert failed.score is None and failed.error and CONTEXT_GUARD_NOTE in failed.reasoning


def test_when_even_empty_texts_do_not_fit_the_prompt_goes_as_it_is_and_the_note_says_so():
    prompt, note = asyncio.run(fit_texts((lambda t: "head " * 300 + "".join(t), ["x" * 300]), 100,
                                         10))
    assert note.endswith("; still over budget") and "cut to <= 0 estimated tokens" in note
    assert prompt.startswith("head ") and "x" * 300 not in prompt


def test_an_answer_that_leaves_the_prompt_no_room_is_a_config_error():
    with pytest.raises(ValueError, match=r"judge.sampling.max_tokens \(32768\) must be below "
                                         r"judge.context_tokens \(8192\)"):
        JudgeSettings(context_tokens=8192,
                      sampling=SamplingParams(temperature=0.1, max_tokens=32768))
    JudgeSettings(context_tokens=0, sampling=SamplingParams(max_tokens=32768))  # no guard: ok


def test_a_tokenizer_unlike_the_estimate_still_gets_a_prompt_just_under_the_budget():
    """SmolLM2-like rates: an English-heavy template the estimate overcounts, Chinese chat it
    undercounts. The first cut, planned at the whole prompt's rate, over- or undershoots; the
    search keeps the least cut prompt that fits and stops within 2% of the budget."""

    def tokens(text: str) -> int:
        ascii_chars = len(text.encode("ascii", "ignore"))
        return ascii_chars // 4 + (len(text) - ascii_chars) * 3 // 2

    async def count(prompt: str) -> int:
        calls.append(prompt)
        return tokens(prompt)

    chat = CHAT + [{"role": "User1", "content": "长" * 3000},
                   {"type": "message", "role": "Agent", "content": "ok " * 2000}]
    view = judge_view(chat, TEXTS)
    inp = _inp(None, chat=chat)
    parts = (lambda texts: judge_prompt(inp, render_view(with_texts(view, texts), TEXTS)),
             view_texts(view))
    whole = tokens(parts[0](parts[1]))
    for budget in (whole - 500, whole - 3000, whole * 3 // 5):
        calls: list[str] = []
        prompt, note = asyncio.run(fit_texts(parts, budget + 256, 256, count))
        assert budget - max(16, budget // 50) <= tokens(prompt) <= budget, (budget, note)
        assert note.endswith(f"now {tokens(prompt)}") and 2 <= len(calls) <= 7
