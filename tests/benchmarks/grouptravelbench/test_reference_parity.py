"""Optional parity with the GroupTravelBench reference code (skipped unless
GROUPTRAVELBENCH_REFERENCE names a checkout): with the prompts imported from it
(`agentsweep prompts import`), every message list agentsweep sends to the agent and to the user
simulators equals what the reference's own loop sends for the same scripted replies, in the
same order, over whole chats of real tasks (tool calls, malformed arguments, repeated calls,
compromise markers, passes, tables, summaries, the final-plan fallback); the final chat,
tables, counters and ending agree; the judge and meta-judge prompts equal the reference's for
those chats; canned judge answers read the same way; and the judge scores aggregate to the
reference report's numbers, crashed runs included.

Two wire details differ and are normalised here (docs/grouptravelbench.md): the reference adds
empty `reasoning_content`/`reasoning` keys to assistant messages that carry tool calls, and
agentsweep's request encoder leaves out the default `"type": "function"` of a tool call.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
from typing import Any

import msgspec
import pytest

from backends.types import ChatMessage, ChatResponse, Choice, FunctionCall, ToolCall, Usage
from bench_data.grouptravelbench import load_grouptravel_file
from evaluator.benchmarks.base import JudgeInput
from evaluator.benchmarks.grouptravelbench.judge_parse import (
    CHINESE_WORDS,
    read_meta,
    read_review,
    review_scores,
)
from evaluator.benchmarks.grouptravelbench.judges import (
    JUDGE_KIND,
    run_judge,
    run_meta,
)
from evaluator.benchmarks.grouptravelbench.options import GroupOptions
from evaluator.benchmarks.grouptravelbench.prompt_import import import_reference
from evaluator.benchmarks.grouptravelbench.prompting import PROMPT_ROLES
from evaluator.benchmarks.grouptravelbench.protocol import run_group_chat
from evaluator.benchmarks.grouptravelbench.rubric import DIMENSION_KEYS
from evaluator.judges.settings import JudgeSettings
from evaluator.prompt_sets import load_prompt_set
from evaluator.protocols.base import EpisodeContext, ProtocolSettings
from evaluator.records import UnitId

from .conftest import PLAN, SAMPLE, FakeSandbox
from .reference import checkout, reference

TOOLS = [{"type": "function", "function": {"name": n, "parameters": {}}}
         for n in ("web_search", "search_poi", "maps_weather")]


@pytest.fixture(scope="module")
def prompts(tmp_path_factory):
    out = tmp_path_factory.mktemp("sets") / "gtb"
    import_reference(checkout(), out)
    return load_prompt_set(out, PROMPT_ROLES)


def _tasks(n: int):
    if not SAMPLE.is_file():
        pytest.skip("GroupTravelBench task sample not present")
    return load_grouptravel_file(SAMPLE, limit=n).tasks


def _pick(*key: Any) -> float:
    h = hashlib.sha256(json.dumps(key, ensure_ascii=False).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64


class Script:
    """Replies that depend only on who is asked and how many times it was asked before, so
    both implementations get the same replies in the same order when they ask in it."""

    def __init__(self, seed: int, prefs: dict[str, Any], final_ask: str) -> None:
        self.seed, self.counts, self.final_ask = seed, {}, final_ask
        self.users = {json.dumps(v.get("preference", {}), ensure_ascii=False): k
                      for k, v in prefs.items()}
        self.names = list(prefs)
        self.table = {k: v["preference"] for k, v in prefs.items()}

    def reply(self, who: str, messages: list[dict[str, Any]], tools: bool
              ) -> tuple[str, list[tuple[str, str, str]]]:
        if who == "user":
            who = next(k for s, k in self.users.items() if s in messages[0]["content"])
        kind = ("turn" if tools else "forced" if messages[-1]["role"] == "tool" else "refresh")
        key = (who, kind)
        n = self.counts[key] = self.counts.get(key, 0) + 1
        r = _pick(self.seed, who, kind, n)
        if who == "agent" and kind == "turn" and messages[0]["content"].endswith(
                self.final_ask) and r < 0.6:
            return "```json\n" + json.dumps(PLAN, ensure_ascii=False) + "\n```", []
        if who == "agent":
            return self._agent(kind, n, r)
        return self._user(r, n), []

    def _agent(self, kind: str, n: int, r: float) -> tuple[str, list[tuple[str, str, str]]]:
        if kind == "refresh":
            return ("```json\n" + json.dumps(self.table, ensure_ascii=False) + "\n```"
                    if r < 0.7 else "我还需要更多信息"), []
        if kind == "forced":
            return f"综合已有信息的回复 {n}", []
        user = self.names[int(r * 997) % len(self.names)]
        if r < 0.3:
            tool = TOOLS[int(r * 1000) % 3]["function"]["name"]
            same = r < 0.05  # the same call again: the repetition guards
            args = json.dumps({"query": "西安" if same else f"西安 {n} {r:.3f}"},
                              ensure_ascii=False)
            calls = [(f"call_{n}", tool, args)]
            if r < 0.06:
                calls.append((f"call_{n}b", "web_search", '{"query": "bad'))
            return ("先查一下" if r < 0.15 else ""), calls
        if r < 0.45:
            return f"@{user} 你的人均预算上限是多少？能接受调整吗？", []
        if r < 0.5:
            return json.dumps({u: {"global_constraints": {"avg_budget": 1000}}
                               for u in self.names}), []
        if r < 0.54 and n > 8:
            return "```json\n" + json.dumps(PLAN, ensure_ascii=False) + "\n```", []
        return f"好的，我们继续讨论行程 {n}。", []

    def _user(self, r: float, n: int) -> str:
        if r < 0.4:
            return "[pass]"
        if r < 0.55:
            return f"行吧。\n[global_constraints.avg_budget : {1000 + n}]"
        if r < 0.6:
            return "好的\n[global_constraints.transport.must : [\"高"
        if r < 0.65:
            return "可以\n[city_specific_preferences.nowhere.food.must_eat : []]"
        if r < 0.7:
            return "我想吃本地菜\n[pass]"
        return f"我比较想去博物馆 {n}"


class Client:
    def __init__(self, who: str, script: Script, sent: list) -> None:
        self.role, self.model, self.who, self.script, self.sent = who, who, who, script, sent

    async def complete(self, messages, *, tools=None, tool_choice=None, response_format=None):
        wire = [_ours(m) for m in messages]
        self.sent.append((self.who, wire, bool(tools)))
        text, calls = self.script.reply(self.who, wire, bool(tools))
        msg = ChatMessage(role="assistant", content=text, tool_calls=[
            ToolCall(id=i, function=FunctionCall(name=n, arguments=a)) for i, n, a in calls]
            or None)
        return ChatResponse(id="r", model="m", choices=[Choice(index=0, message=msg)],
                            usage=Usage())


def _ours(m: ChatMessage) -> dict[str, Any]:
    d = msgspec.to_builtins(m)
    for c in d.get("tool_calls") or []:
        c["type"] = "function"
    return d


def _theirs(m: dict[str, Any]) -> dict[str, Any]:
    d = dict(m)
    for key in ("reasoning_content", "reasoning"):
        assert d.pop(key, "") == "", "the scripts give no reasoning"
    return d


class Sandbox(FakeSandbox):
    pass


def _run_both(task, seed: int, prompts):
    payload = task.payload
    final_ask = prompts.templates["agent_final_plan"].substitute()
    script_ours, script_ref = (Script(seed, payload.user_preferences, final_ask)
                               for _ in range(2))
    sent_ours: list = []
    ctx = EpisodeContext(unit=UnitId("r", "k", 0, 1), task=task,
                         agent=Client("agent", script_ours, sent_ours),
                         user=Client("user", script_ours, sent_ours),
                         sandbox=Sandbox(TOOLS),
                         settings=ProtocolSettings(max_steps=20, prompts=prompts,
                                                   options=GroupOptions()))
    record = asyncio.run(run_group_chat(ctx))
    with reference(script_ref.reply) as ref:
        ref["utils.multi_util"]._tool_call_counter = 0
        cfg = ref["core.config"].OpenAIConfig
        data = {"task_id": task.task_id, "query": payload.query, "time": payload.time,
                "context": payload.context,
                "user_preferences": copy.deepcopy(payload.user_preferences),
                "initial_messages": payload.initial_messages}
        settings = {"easy": (15, 3), "medium": (20, 4), "hard": (25, 5)}
        turns, interval = settings.get(payload.difficulty_type, (15, 3))
        result = ref["core.multi_interaction"].run_multi_user_conversation(
            data, cfg(model_name="agent", api_key="x"), cfg(model_name="user", api_key="x"),
            max_turn=turns, convergence_interval=interval)
        sent_ref = list(ref["sent"])
    return record, sent_ours, result, sent_ref


def test_every_agent_and_user_request_equals_the_references(prompts):
    compared = 0
    for task in _tasks(12):
        for seed in (1, 2):
            record, ours, result, theirs = _run_both(task, seed, prompts)
            assert len(ours) == len(theirs), (task.task_id, seed)
            for i, ((w1, m1, t1), (w2, m2, t2)) in enumerate(zip(ours, theirs, strict=True)):
                assert (w1 == "agent") == (w2 == "agent") and t1 == t2, (task.task_id, seed, i)
                assert m1 == [_theirs(m) for m in m2], (task.task_id, seed, i)
            compared += len(ours)
            chat = [{k: v for k, v in e.items()} for e in result["conversation_history"]]
            assert record.extra["chat"] == chat
            assert record.extra["effective"] == result["effective_preferences"]
            table = result["agent_preference_table"]
            assert record.extra["agent_table"] == (table if table != {} else None)
            assert record.extra["events"] == result["total_events"]
            assert record.extra["rounds"] == result["total_rounds"]
            assert record.extra["plan_generated"] == result["plan_generated"]
            assert record.termination == result["completion_reason"]
    assert compared > 1000


ANSWERS = [
    "<response>" + "".join(f"<{d}><reasoning>理由 {i} & <说明></reasoning><rating>较好</rating>"
                           f"</{d}>" for i, d in enumerate(DIMENSION_KEYS)) + "</response>",
    ("```xml\n<response><hallucination_factuality><reasoning>x</reasoning><rating>评级：一般"
    "</rating></hallucination_factuality><plan_humanization><reasoning>y<rating>优秀"
    "</rating></plan_humanization></response>\n```"),
    ("<hallucination><reasoning>a < b</reasoning><rating>极差。</rating></hallucination>"
    "<tool_usage_reasoning><reasoning>ok</reasoning></tool_usage_reasoning>"),
    ("<response><interaction_quality><reasoning>仅此</reasoning><rating>Good</rating>"
    "</interaction_quality></response>"),
    ("<response><conflict_coordination><reasoning>未闭合 &amp; <br> 文字</reasoning>"
    "<rating>较差</rating></conflict_coordination>"),
    "no xml at all", "", "<response></response>",
    ("< response >< plan_humanization >< reasoning >空格</ reasoning >< rating >较好"
    "</ rating ></ plan_humanization ></ response >"),
    ("<response><plan_humanization><reasoning>a<!-- c -->b</reasoning><rating><!-- 极差 -->较好"
    "</rating></plan_humanization></response>"),
]
METAS = [
    "<meta_evaluation><reasoning>好</reasoning><rating>较好</rating></meta_evaluation>",
    ("```xml\n<meta_evaluation><reasoning>r</reasoning><rating>评级:优秀</rating>"
    "</meta_evaluation>\n```"),
    "<meta_evaluation><reasoning>a < b</reasoning><rating>一般</rating></meta_evaluation>",
    "前言<meta_evaluation><rating>Good</rating></meta_evaluation>", "nothing",
]


def fuzzed_answers(n: int) -> list[str]:
    """Review answers broken the ways judges break them: dropped closing tags, spaces in tags,
    misspelt dimension tags, bare `<`, `>`, `&` in the reasoning, comments, fences, text
    around, a missing wrapper, rating words with a label or punctuation."""
    words = ["极差", "较差", "一般", "较好", "优秀", "评级：较好", "较好。", "Good", "", "好"]
    out = []
    for i in range(n):
        def r(salt: str, i: int = i) -> float:
            return _pick("fuzz", i, salt)
        parts = []
        for d in DIMENSION_KEYS:
            if r(d + "skip") < 0.15:
                continue
            tag = d if r(d + "tag") > 0.1 else d.split("_")[0]
            reasoning = ["依据充分", "a < b", "A & B", "x > y <br> z", "已转义 &lt; 和 <",
                         "<!-- 注释 -->文本"][int(r(d + "reason") * 6)]
            close_r = "" if r(d + "cr") < 0.1 else "</reasoning>"
            rating = words[int(r(d + "word") * len(words))]
            close_g = "" if r(d + "cg") < 0.1 else "</rating>"
            close_d = "" if r(d + "cd") < 0.1 else f"</{tag}>"
            sp = " " if r(d + "sp") < 0.1 else ""
            parts.append(f"<{sp}{tag}{sp}>\n<reasoning>{reasoning}{close_r}\n"
                         f"<rating>{rating}{close_g}\n{close_d}")
        body = "\n".join(parts)
        if r("wrap") > 0.2:
            body = f"<response>{body}</response>" if r("close") > 0.1 else f"<response>{body}"
        if r("fence") < 0.2:
            body = f"```xml\n{body}\n```"
        if r("around") < 0.2:
            body = f"好的，评估如下：\n{body}\n以上。"
        out.append(body)
    return out


def test_judge_answers_are_read_as_the_reference_reads_them():
    with reference(lambda *a: ("", [])) as ref:
        parser = ref["utils.eval_util"].ResultParser
        dims = list(DIMENSION_KEYS)
        for answer in ANSWERS + fuzzed_answers(3000):
            theirs = parser.parse_xml_response(answer, dims)
            ours = read_review(answer, dims, CHINESE_WORDS)
            assert ours == theirs, answer
            scores = parser.extract_scores(theirs, dims)
            mine = review_scores(ours, dims, CHINESE_WORDS)
            assert {f"{d}_score": v for d, v in mine.items()} == {
                k: v for k, v in scores.items() if k != "average_score"}
        for answer in METAS:
            assert read_meta(answer) == parser.parse_meta_judge_response(answer), answer


class Capture:
    def __init__(self, answer: str) -> None:
        self.answer, self.sent = answer, []

    async def chat(self, messages, *, model=None, response_format=None, sampling=None):
        self.sent.append([msgspec.to_builtins(m) for m in messages])
        return ChatResponse(id="x", model="m", usage=Usage(), choices=[Choice(
            index=0, message=ChatMessage(role="assistant", content=self.answer))])

    async def resolve_model(self) -> str:
        return "m"


def test_the_judges_are_sent_what_the_reference_sends(prompts):
    review = ANSWERS[0]
    meta = METAS[0]
    settings = JudgeSettings(structured_output=False, meta_judge=True)
    for task in _tasks(4):
        record, _, result, _ = _run_both(task, 3, prompts)
        judge = Capture(review)
        inp = JudgeInput(record=record, task=task, thash="h", settings=settings,
                         prompts=prompts, tools=None, client=judge, model="m")
        judged = asyncio.run(run_judge(inp))
        assert judged.kind == JUDGE_KIND and judged.score is not None
        meta_judge = Capture(meta)
        inp.client, inp.audited = meta_judge, judged
        asyncio.run(run_meta(inp))
        seen: list = []
        with reference(lambda *a: ("", [])) as ref:
            mod = ref["evaluation.llm_judge"]

            def call(self, messages, system_prompt, seen=seen, **kw):
                seen.append([{"role": "system", "content": system_prompt}] + messages)
                return meta if "meta_evaluation" in messages[-1]["content"][-3000:] and \
                    len(seen) > 1 else review

            mod.JudgeLLMClient.call = call
            config = mod.JudgeConfig(api_key="x", enable_meta_judge=True)
            res = {**result, "task_id": task.task_id, "trial_id": 0}
            mod.MultiAgentJudge(config).evaluate_single(res, 0)
        assert judge.sent[0] == seen[0]
        assert meta_judge.sent[0] == seen[1]


def test_judge_scores_aggregate_to_the_reference_reports_numbers():
    """Canned judge results (trials of five tasks over two difficulties: rated, crashed,
    failed, never rated) through both aggregations."""
    from evaluator.benchmarks import get

    from .test_judges import _record, _scored

    cases = [("a", "easy", 0, 0.8, 0.5, None), ("a", "easy", 1, 1.0, 0.75, None),
             ("b", "hard", 0, None, 0.25, None), ("b", "hard", 1, 0.6, None, "context_overflow"),
             ("c", "hard", 0, None, None, None), ("d", "easy", 0, 0.4, 1.0, None),
             ("d", "easy", 1, None, None, None), ("d", "easy", 2, 0.2, 0.0, None),
             ("e", "medium", 0, None, None, "agent_error")]
    units, details = [], []
    for tid, level, trial, meta, score, failed in cases:
        rec = _record(task_id=tid, trial=trial, difficulty=level,
                      termination=failed or "plan_generated")
        unit = _scored(rec, meta, judge_score=score if not failed else 0.5,
                       judge_error=None if score is not None or failed else "x")
        units.append(unit)
        if "lj" in unit.dims:
            final = {f"{d}_score": round(unit.dims[f"lj:{d}"] * 100, 2) for d in DIMENSION_KEYS}
            final["average_score"] = round(unit.dims["lj"] * 100, 2)
            details.append({"task_id": tid, "evaluation": {"final_scores": final}})
    summary = get("grouptravelbench").report.summarize(units)
    with reference(lambda *a: ("", [])) as ref:
        gen = ref["evaluation.report_generator"]
        multi = {"details": [{"task_id": t, "difficulty_type": lv} for t, lv, *_ in cases]}
        theirs = gen._compute_llm_judge_by_difficulty(
            {"details": details, "statistics": {"dimensions": list(DIMENSION_KEYS)}}, multi)
    assert summary.judge.score == theirs["overall"]["average_score"]
    for level, j in summary.judge_by_difficulty.items():
        assert j.score == theirs[level]["average_score"], level
        assert j.dimensions == {d: theirs[level][d] for d in DIMENSION_KEYS}
    assert summary.judge.dimensions == {d: theirs["overall"][d] for d in DIMENSION_KEYS}
