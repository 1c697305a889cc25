"""What the TravelBench judges are shown: the whole conversation by default, the context guard,
the rubric prompt's example, the meta prompt for a partly rated rubric, the shared prefix."""

from __future__ import annotations

import json

import pytest

from backends.chat_wire import TokenCount
from backends.types import ChatMessage, SamplingParams
from evaluator.benchmarks.travelbench.judges import (
    CONTEXT_GUARD_NOTE,
    RUBRIC_PROMPT_VERSION,
    UNRATED_NOTE,
    build_meta_prompt,
    build_rubric_prompt,
    judge_meta,
    judge_rubric,
)
from evaluator.benchmarks.travelbench.options import TravelBenchOptions
from evaluator.judges.call import attempt_sampling, server_counter
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import (
    Shortened,
    estimate_tokens,
    fit_to_context,
    render_conversation,
    shorten_texts,
)

from .judge_fakes import ScriptedClient, make_record, tool_call_msg

GOOD = json.dumps({d: {"reasoning": "r", "rating": "Good"} for d in
                   ("reasoning_planning", "summarization_extraction", "presentation")})


def tool(content: str) -> ChatMessage:
    return ChatMessage(role="tool", content=content, tool_call_id="c0", name="web_search")


def long_record(*outputs: str):
    msgs = [ChatMessage(role="user", content="question L")]
    for out in outputs:
        msgs += [tool_call_msg(), tool(out)]
    msgs.append(ChatMessage(role="assistant", content="answer L"))
    return make_record("single_turn", "L", messages=msgs)


def test_estimate_tokens():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcdef") == 2 and estimate_tokens("abcdefg") == 3
    assert estimate_tokens("北京到上海") == 5
    assert estimate_tokens("ab北京") == 3


def test_shorten_cuts_the_longest_texts_to_one_cap():
    texts = ["x" * 900, "", "y" * 270, "z" * 90]  # 300, 0, 90 and 30 estimated tokens
    out, info = shorten_texts(texts, 100)
    # the highest cap removing >= 100: 200 (only the 300-token text is over it)
    assert (info.n_cut, info.cap_tokens, info.chars_removed) == (1, 200, 300)
    assert out[0].startswith("x" * 600 + "\n...[300 characters cut")
    assert out[1:] == texts[1:]  # short texts untouched
    out, info = shorten_texts(texts, 260)  # (300 - c) + (90 - c) >= 260: c = 65
    assert (info.n_cut, info.cap_tokens) == (2, 65)
    assert texts[0] == "x" * 900  # the input is not changed
    assert shorten_texts(texts, 0) == (texts, Shortened())


def test_fit_to_context_guard():
    turns = [ChatMessage(role="user", content="q"), tool("x" * 30000), tool("y" * 300)]

    def render(ts):
        return "header\n" + render_conversation(ts)

    full = render(turns)
    assert fit_to_context(render, turns, 0, 1000) == (full, "")  # no guard
    assert fit_to_context(render, turns, 100_000, 1000) == (full, "")  # fits
    prompt, note = fit_to_context(render, turns, 5000, 1000)
    assert estimate_tokens(prompt) <= 4000 < estimate_tokens(full)
    assert "y" * 300 in prompt  # the short output is kept whole
    assert note.startswith("context guard: ") and "1 tool outputs cut" in note
    assert "still over budget" not in note
    _, note = fit_to_context(render, [ChatMessage(role="user", content="u" * 9000)], 2000, 1000)
    assert "0 tool outputs cut" in note and note.endswith("still over budget")


async def test_judge_sees_everything_by_default_and_the_guard_is_recorded():
    rec = long_record("r" * 20000, "s" * 600)
    client = ScriptedClient(lambda p, i: GOOD)
    j = await judge_rubric(rec, None, client, "m", JudgeSettings())
    assert "r" * 20000 in client.calls[0]["prompt"]  # no 4,000-character cut any more
    assert CONTEXT_GUARD_NOTE not in j.reasoning
    settings = JudgeSettings(context_tokens=4000,
                             sampling=SamplingParams(temperature=0.0, max_tokens=1000))
    j = await judge_rubric(rec, None, client, "m", settings)
    sent = client.calls[1]["prompt"]
    assert estimate_tokens(sent) <= 3000 and "s" * 600 in sent
    assert j.score == pytest.approx(0.75)
    assert "context guard" in j.reasoning[CONTEXT_GUARD_NOTE]
    m = await judge_meta(rec, None, j, ScriptedClient(lambda p, i: '{"reasoning": "ok", '
                                                      '"rating": "Excellent"}'), "m", settings)
    assert m.score == 1.0 and "context guard" in m.reasoning[CONTEXT_GUARD_NOTE]


class CountingClient(ScriptedClient):
    """A judge server that counts tokens (/tokenize): three per character of every message,
    the system message included, three times the estimate of ASCII text."""

    def __init__(self, answer):
        super().__init__(answer)
        self.counted: list[list[str]] = []

    async def count_tokens(self, messages, *, model=None, timeout_s=60.0):
        self.counted.append([m.role for m in messages])
        return TokenCount(count=3 * sum(len(m.content) for m in messages), max_model_len=99_999)


async def test_the_guard_counts_with_a_judge_server_that_can():
    rec = long_record("r" * 20000, "s" * 600)
    client = CountingClient(lambda p, i: GOOD)
    settings = JudgeSettings(context_tokens=30000,
                             sampling=SamplingParams(temperature=0.0, max_tokens=1000))
    j = await judge_rubric(rec, None, client, "m", settings)
    sent = client.calls[0]["prompt"]
    assert 3 * len(sent) <= 29000
    assert "s" * 600 in sent and client.counted[0] == ["user"]
    note = j.reasoning[CONTEXT_GUARD_NOTE]
    assert note.startswith("context guard: prompt ") and " tokens > budget 29000" in note
    assert "estimated tokens >" not in note and "1 tool outputs cut" in note
    # by the estimate, the same settings would not have cut at all
    assert CONTEXT_GUARD_NOTE not in (await judge_rubric(rec, None, ScriptedClient(
        lambda p, i: GOOD), "m", settings)).reasoning


def test_rubric_example_rates_nothing():
    prompt = build_rubric_prompt(make_record("multi_turn", "e"), None, JudgeSettings())
    example = json.loads(prompt[prompt.rindex("\n{"):prompt.rindex("}") + 1])
    assert set(example) == {"reasoning_planning", "summarization_extraction", "presentation",
                            "user_interaction"}
    for entry in example.values():
        assert entry["rating"] not in ("Very Poor", "Poor", "Fair", "Good", "Excellent")
        assert "Good" in entry["rating"] and "Very Poor" in entry["rating"]  # the choices
    assert RUBRIC_PROMPT_VERSION == "travel-rubric-v2"  # bumped with the example


async def test_partly_rated_rubric_and_its_meta_prompt():
    rec = make_record("single_turn", "p")
    answer = json.dumps({"reasoning_planning": {"reasoning": "fine", "rating": "Good"},
                         "summarization_extraction": {"reasoning": "ok", "rating": "Fair"},
                         "presentation": {"reasoning": "?", "rating": "Superb"}})
    j = await judge_rubric(rec, None, ScriptedClient(lambda p, i: answer), "m", JudgeSettings())
    assert j.scores == {"reasoning_planning": 4.0, "summarization_extraction": 3.0}
    assert j.score == pytest.approx((3.5 - 1) / 4) and j.attempts == 1
    assert "Superb" in j.reasoning[UNRATED_NOTE]
    prompt = build_meta_prompt(rec, None, j, JudgeSettings())
    assert "- presentation: N/A (not rated)" in prompt and "- reasoning_planning: Good" in prompt
    assert UNRATED_NOTE not in prompt


def test_attempt_sampling_schedule():
    s = JudgeSettings(max_attempts=10, retry_temperature_from=8)
    assert [attempt_sampling(s, a).temperature for a in range(1, 11)] == [0.0] * 7 + [0.7] * 3
    assert attempt_sampling(s, 9, 0.0).temperature == 0.0
    assert attempt_sampling(s, 9).max_tokens == s.sampling.max_tokens
    assert [attempt_sampling(JudgeSettings(), a).temperature for a in (1, 2, 3)] == [0.0, 0.7, 0.7]
    with pytest.raises(ValueError):
        JudgeSettings(retry_temperature_from=0)


async def test_the_server_count_includes_the_system_message_the_judge_is_sent():
    client = CountingClient(lambda p, i: GOOD)
    count = server_counter(client, "m", "sys")
    assert await count("ab") == 3 * 5 and client.counted == [["system", "user"]]
    assert server_counter(ScriptedClient(lambda p, i: GOOD), "m") is None  # cannot count


async def test_the_prefix_layout_shares_the_tool_list_across_judge_calls():
    """`judge_layout = "prefix"` (the smoke profile) shows the tool list before the task's
    material: two tasks' rubric prompts (and meta prompts) agree up to the end of the tool
    list, so an engine's prefix cache serves it to every judge call of a run. The default
    keeps the reference's order (the task's request before the tools)."""
    tools = [{"type": "function", "function": {"name": f"tool_{i}", "description": "d" * 300,
                                               "parameters": {"type": "object"}}}
             for i in range(8)]
    records = [make_record("single_turn", t) for t in ("a", "b")]
    last_tool = json.dumps(tools[-1]["function"]["description"])[1:-1]
    prefix = TravelBenchOptions(judge_layout="prefix")

    def shared(prompts: list[str]) -> str:
        a, b = prompts
        return a[:next(i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y)]

    def rubric(options):
        return [build_rubric_prompt(r, None, JudgeSettings(), tools=tools, options=options)
                for r in records]

    assert "tool_7" in shared(rubric(prefix)) and last_tool in shared(rubric(prefix))
    assert "question a" not in shared(rubric(prefix))
    assert "tool_0" not in shared(rubric(None))          # the default: the request first
    assert "tool_7" in rubric(None)[0] and rubric(None)[0].index("question a") < \
        rubric(None)[0].index("tool_0")
    judged = [await judge_rubric(r, None, ScriptedClient(lambda p, i: GOOD), "m",
                                 JudgeSettings(), tools=tools, options=prefix) for r in records]
    assert {j.prompt_version for j in judged} == {"travel-rubric-v2+prefix"}
    meta = [build_meta_prompt(r, None, j, JudgeSettings(), tools=tools, options=prefix)
            for r, j in zip(records, judged, strict=True)]
    assert "tool_7" in shared(meta) and last_tool in shared(meta)
    assert "tool_0" not in shared([build_meta_prompt(r, None, j, JudgeSettings(), tools=tools)
                                   for r, j in zip(records, judged, strict=True)])


def test_the_smoke_profile_lays_the_judges_out_for_the_prefix_cache():
    from evaluator.profiles import benchmark_profile

    assert benchmark_profile("smoke", "travelbench")["options"]["judge_layout"] == "prefix"
    assert "judge_layout" not in benchmark_profile("paper", "travelbench")["options"]
