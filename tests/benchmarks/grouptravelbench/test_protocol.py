"""The group-chat episode with scripted fake models: the broadcast, @-mentions, `[pass]`, a
solicited compromise applied and stripped, an unsolicited one regenerated, the summary every
kappa rounds, the final plan ending the chat; then the rule judge and the unit score."""

from __future__ import annotations

import asyncio
import copy
import json

from backends.types import ChatMessage, ChatResponse, Choice, Usage
from bench_data.types import Task
from evaluator.benchmarks import get
from evaluator.benchmarks.base import JudgeInput, ScoreContext
from evaluator.benchmarks.grouptravelbench.data import GroupTravelTask
from evaluator.benchmarks.grouptravelbench.judges import JUDGE_KIND, META_KIND
from evaluator.benchmarks.grouptravelbench.protocol import (
    FINAL_ASK,
    SUMMARY_ASK,
    TABLE_ASK,
    run_group_chat,
)
from evaluator.benchmarks.grouptravelbench.scoring import METRICS, METRICS_VERSION
from evaluator.benchmarks.grouptravelbench.validity import plan_validity
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.protocols.base import EpisodeContext, ProtocolSettings
from evaluator.records import UnitId

from .conftest import GROUP, PLAN, FakeSandbox


class Scripted:
    """Replies from a script; the agent's internal table refreshes (TABLE_ASK) are answered
    with `table` and logged in `refreshes` without using the script."""

    def __init__(self, role: str, replies: list[str], table: dict | None = None) -> None:
        self.role, self.model = role, "fake"
        self.replies = list(replies)
        self.requests: list[list[ChatMessage]] = []
        self.refreshes: list[list[ChatMessage]] = []
        self.table = table or {}

    async def complete(self, messages, *, tools=None, tool_choice=None, response_format=None):
        if TABLE_ASK in (messages[-1].content or ""):
            self.refreshes.append(copy.deepcopy(list(messages)))
            msg = ChatMessage(role="assistant", content=json.dumps(self.table))
            return ChatResponse(id="r", model="fake", choices=[Choice(index=0, message=msg)],
                                usage=Usage())
        self.requests.append(copy.deepcopy(list(messages)))
        assert self.replies, f"{self.role}: script exhausted"
        msg = ChatMessage(role="assistant", content=self.replies.pop(0))
        return ChatResponse(id="r", model="fake", choices=[Choice(index=0, message=msg)],
                            usage=Usage())


class PlanOnAsk(Scripted):
    async def complete(self, messages, **kw):
        if FINAL_ASK in (messages[-1].content or ""):
            self.replies.insert(0, json.dumps(PLAN, ensure_ascii=False))
        return await super().complete(messages, **kw)


def _task(difficulty: str = "") -> Task:
    payload = GroupTravelTask(
        trace_id="t1", time="2025-09-01", query="西安两日游", context="出发城市：北京市",
        user_preferences=copy.deepcopy(GROUP), difficulty_type=difficulty,
        initial_messages=[{"role": "User1", "content": "我想去西安"},
                          {"role": "User2", "content": "我也想去"}])
    return Task(benchmark="grouptravelbench", subset="test", task_id="t1", source="x:1",
                payload=payload, instructions="西安两日游")


AGENT = ["大家好。@User1 预算降到2500可以吗？", "@User2 你想吃什么？", "好的。", "继续讨论。",
         json.dumps({"User1": {"global_constraints": {"avg_budget": 2500}},
                     "User2": {"global_constraints": {"avg_budget": 2000}}}),
         json.dumps(PLAN, ensure_ascii=False)]
USER = ["好吧 [global_constraints.avg_budget: 2500]",   # User1, @-mentioned: applied
        "行 [global_constraints.avg_budget: 100]",      # User2, not asked: regenerated
        "[pass]",                                        # User2's second try
        "我喜欢川菜",                                     # User2, @-mentioned
        "[pass]", "[pass]", "[pass]", "[pass]", "[pass]"]


def _run():
    agent, user = Scripted("agent", AGENT), Scripted("user", USER)
    ctx = EpisodeContext(unit=UnitId("r", "grouptravelbench/test/t1", 0, 1), task=_task(),
                         agent=agent, sandbox=FakeSandbox(), user=user,
                         settings=ProtocolSettings(max_steps=3))
    return asyncio.run(run_group_chat(ctx)), agent, user


def test_the_chat_follows_the_schedule_and_ends_with_the_plan():
    record, agent, user = _run()
    assert record.termination == "plan_generated" and not agent.replies and not user.replies
    chat = record.extra["chat"]
    said = [(e["role"], e["content"]) for e in chat]
    assert said[:4] == [("User1", "我想去西安"), ("User2", "我也想去"), ("Agent", AGENT[0]),
                        ("User1", "好吧")]                    # mention: User1 next, marker gone
    assert ("User2", "我喜欢川菜") == said[5]                  # the @User2 question answered
    assert not any("[pass]" in c or "avg_budget:" in c for _, c in said)
    assert record.extra["effective"]["User1"]["preference"]["global_constraints"][
        "avg_budget"] == 2500
    assert record.extra["effective"]["User2"]["preference"]["global_constraints"][
        "avg_budget"] == 2000                                  # unsolicited: not applied
    assert record.extra["regenerations"] == 1
    assert record.extra["compromise_counts"] == {"User1": 1, "User2": 0}
    # opening summary, then the summary after kappa=3 rounds (5th agent call)
    asks = [i for i, req in enumerate(agent.requests) if SUMMARY_ASK in req[-1].content]
    assert asks == [0, 4] and record.extra["agent_table"]["User1"]
    assert all(FINAL_ASK not in r[-1].content for r in agent.requests)
    assert record.extra["plan_generated"] is True
    # users see the broadcast and outward messages in their own prompt, one shared prefix
    first = user.requests[0]
    assert "[User2]: 我也想去" in first[1].content and "[Agent]: " + AGENT[0] in first[1].content
    prefixes = {r[0].content.split("Your name in the chat")[0] for r in user.requests}
    assert len(prefixes) == 1
    # the five speaking situations of the seed's B.6, [pass] otherwise, in the shared prefix
    assert all(f"\n{c}. " in user.requests[0][0].content for c in "ABCDE")
    assert "willing to compromise" in user.requests[0][0].content     # User1 compromisable
    assert "do not compromise" in user.requests[1][0].content         # User2 is not


def test_rounds_exhausted_ask_for_the_final_plan():
    agent = PlanOnAsk("agent", ["你们好"] + ["嗯。"] * 60)
    user = Scripted("user", ["[pass]"] * 200)
    task = _task()
    ctx = EpisodeContext(unit=UnitId("r", "k", 0, 1), task=task, agent=agent,
                         sandbox=FakeSandbox(), user=user, settings=ProtocolSettings())
    record = asyncio.run(run_group_chat(ctx))
    # a plan given after the rounds ran out still ends as "max_turn_reached" (the reference's
    # forced finish), but it is a plan: scored as generated, and the table refreshed after it
    assert record.termination == "max_turn_reached" and record.extra["plan_generated"]
    assert FINAL_ASK in agent.requests[-1][-1].content
    # 15 rounds (kappa 3): opening summary, 15 polls, 4 summaries, then the final plan
    summaries = sum(SUMMARY_ASK in r[-1].content for r in agent.requests)
    assert record.extra["rounds"] == 15 and summaries == 5  # the opening one, then every 3
    # a table refresh before each summary and one after the plan, on the chat without it
    assert len(agent.refreshes) == 6 and record.extra["table_refreshes"] == 6
    assert '"days"' not in agent.refreshes[-1][-1].content


def test_a_failed_final_plan_is_asked_again_and_only_the_last_attempt_stays():
    agent = Scripted("agent", ["你们好"] + ["嗯。"] * 15 + ["no plan 1", "no plan 2", "no plan 3"])
    user = Scripted("user", ["[pass]"] * 200)
    ctx = EpisodeContext(unit=UnitId("r", "k", 0, 1), task=_task(), agent=agent,
                         sandbox=FakeSandbox(), user=user, settings=ProtocolSettings())
    record = asyncio.run(run_group_chat(ctx))
    assert record.termination == "max_turn_reached" and not record.extra["plan_generated"]
    assert record.extra["final_plan_attempts"] == 3 and not agent.replies
    said = [e["content"] for e in record.extra["chat"] if e.get("role") == "Agent"]
    assert said[-1] == "no plan 3" and "no plan 1" not in said and "no plan 2" not in said
    # each attempt saw the same chat: the failed attempt is not in the next one's view
    assert "no plan 1" not in str(agent.requests[-1])
    assert len(agent.refreshes) == 5                            # no refresh without a plan


class _Lookup:
    def __init__(self, j):
        self.j = j

    def get(self, thash, kind, version):
        return self.j if (kind, version) == (METRICS, METRICS_VERSION) else None

    current_or_latest = get


def test_the_final_plan_is_scored_by_the_rule_judge():
    record, _, _ = _run()
    bench = get("grouptravelbench")
    settings = JudgeSettings()
    assert bench.judge_kinds(record, None, settings) == [METRICS, JUDGE_KIND, META_KIND]
    settings.meta_judge = False
    assert bench.judge_kinds(record, None, settings) == [METRICS, JUDGE_KIND]
    j = bench.judges[METRICS].run(JudgeInput(record=record, task=None,
                                             thash=trajectory_hash(record), settings=settings,
                                             prompts=None, tools=None))
    assert {k for k in j.scores if ":" not in k} == {"pc", "gu", "gf", "pv"}
    assert j.judge_model == "rule"
    counts = plan_validity(PLAN, ["User1", "User2"]).issue_counts
    assert counts and {k[3:]: v for k, v in j.scores.items() if k.startswith("pv:")} == counts
    unit = bench.score(record, _Lookup(j), ScoreContext(settings=settings))
    assert {k: v for k, v in unit.dims.items() if not k.startswith("cmp:")} == j.scores
    assert unit.score == j.scores["pv"] and "lj" not in unit.dims     # no LLM judgement yet
    assert unit.dims["cmp:accepted"] == 1 and unit.dims["cmp:invalid"] == 1
    assert unit.labels == {"difficulty": "unknown"}
    summary = bench.report.summarize([unit])
    assert summary.overall.tasks == 1 and "test" in summary.subsets
    assert bench.report.tables([("run", summary)])[0].rows



def test_two_accepted_compromises_rebuild_the_users_prompt_and_mentions_retry_passes():
    agent = Scripted("agent", ["@User1 预算2500可以吗？", "@User1 每天两个景点可以吗？", "@User2 你呢？",
                               json.dumps(PLAN, ensure_ascii=False)])
    user = Scripted("user", ["好 [global_constraints.avg_budget: 2500]", "[pass]",
                             "行 [global_constraints.intensity.max_poi_per_day: 2]"]
                    + ["[pass]"] * 6)
    ctx = EpisodeContext(unit=UnitId("r", "k", 0, 1), task=_task(), agent=agent,
                         sandbox=FakeSandbox(), user=user, settings=ProtocolSettings())
    record = asyncio.run(run_group_chat(ctx))
    assert record.termination == "plan_generated" and not agent.replies and not user.replies
    assert record.extra["compromise_counts"] == {"User1": 2, "User2": 0}
    systems = [r[0].content for r in user.requests]
    assert "willing to compromise" in systems[0] and "willing to compromise" in systems[2]
    assert "You do not compromise any more" in systems[7]      # User1 after the cap
    cues = [r[1].content.splitlines()[-1] for r in user.requests]
    assert cues[4:7] == ["The planner @-mentioned you (User2): answer now."] * 3  # retried
    assert "User2" in cues[8] and "@-mentioned" not in cues[8]  # then consumed: polled
