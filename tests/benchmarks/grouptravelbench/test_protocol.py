"""The group-chat episode with scripted fake models: what each model is sent (the agent's
rebuilt chat view with its table and instructions, each user's own view), @-mentions, `[pass]`,
a solicited compromise applied and stripped, an unsolicited one regenerated, the summary every
kappa rounds, the final plan ending the chat, the events counted as the reference counts them;
then the rule judge and the unit score."""

from __future__ import annotations

import asyncio
import itertools
import json

from backends.types import ChatMessage
from evaluator.benchmarks import get
from evaluator.benchmarks.base import JudgeInput, ScoreContext
from evaluator.benchmarks.grouptravelbench.judges import JUDGE_KIND, META_KIND
from evaluator.benchmarks.grouptravelbench.options import GroupOptions
from evaluator.benchmarks.grouptravelbench.protocol import run_group_chat
from evaluator.benchmarks.grouptravelbench.scoring import METRICS, METRICS_VERSION
from evaluator.benchmarks.grouptravelbench.validity import plan_validity
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.protocols.base import EpisodeContext, ProtocolSettings
from evaluator.records import UnitId

from .conftest import PLAN, FakeSandbox
from .scripted import (
    CONVERGENCE,
    FINAL_PLAN,
    TABLE_ASK,
    TEXTS,
    PlanOnAsk,
    Scripted,
    task,
)

TABLE = {"User1": {"global_constraints": {"avg_budget": 2500}},
         "User2": {"global_constraints": {"avg_budget": 2000}}}
AGENT = ["大家好。@User1 预算降到2500可以吗？", "@User2 你想吃什么？", "好的。", "继续讨论。",
         json.dumps(TABLE), json.dumps(PLAN, ensure_ascii=False)]
USER = ["好吧 [global_constraints.avg_budget: 2500]",   # User1, @-mentioned: applied
        "行 [global_constraints.avg_budget: 100]",      # User2, not asked: regenerated
        "[pass]",                                        # User2's second try
        "我喜欢川菜",                                     # User2, @-mentioned
        "[pass]", "[pass]", "[pass]", "[pass]", "[pass]"]


def _ctx(agent, user, options=None, max_steps=3, difficulty=""):
    return EpisodeContext(unit=UnitId("r", "grouptravelbench/test/t1", 0, 1),
                          task=task(difficulty), agent=agent, sandbox=FakeSandbox(), user=user,
                          settings=ProtocolSettings(max_steps=max_steps, options=options))


def _run(options=None):
    agent, user = Scripted("agent", AGENT), Scripted("user", USER)
    return asyncio.run(run_group_chat(_ctx(agent, user, options))), agent, user


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
    assert record.extra["plan_generated"] is True and record.extra["agent_table"] == TABLE
    # opening summary and the summary after kappa = 3 rounds: the summary instruction is the
    # end of the system prompt; a refresh before each summary and one after the plan
    asks = [i for i, req in enumerate(agent.requests) if req[0].content.endswith(CONVERGENCE)]
    assert asks == [0, 4] and len(agent.refreshes) == 3
    assert all(FINAL_PLAN not in r[0].content for r in agent.requests)
    # speaking events as the reference counts them: the opening summary, 2 mentions, 9 polls
    # (passes included, skips not), the periodic summary, and the turn that gave the plan
    assert record.extra["events"] == 14 and record.extra["rounds"] == 4


def test_the_agent_sees_the_chat_rebuilt_with_its_table_in_the_system_prompt():
    record, agent, _ = _run()
    first = agent.requests[0]
    assert [m.role for m in first] == ["system", "user"]
    assert first[1].content == "User1: 我想去西安\nUser2: 我也想去"
    block = TEXTS.render("agent_table_block", table="{}")
    assert block in first[0].content and "西安两日游" in first[0].content
    assert "- User1\n- User2" in first[0].content and "2025-09-01" in first[0].content
    # after the summary the table the agent posted is in its system prompt, indented
    last = agent.requests[-1]
    assert TEXTS.render("agent_table_block", table=json.dumps(
        TABLE, ensure_ascii=False, indent=2)) in last[0].content
    roles = [m.role for m in last[1:]]
    assert roles[0] == "user" and all(a != b for a, b in itertools.pairwise(roles))
    assert last[2] == ChatMessage(role="assistant", content=AGENT[0])
    # the table refresh: system prompt, then the outward chat and the instruction
    refresh = agent.refreshes[1]
    assert refresh[1].content == TEXTS.render(
        "agent_table_request", chat="\n".join(
            f"{e['role']}: {e['content']}" for e in record.extra["chat"][:8]), ask=TABLE_ASK)
    # the post-plan refresh reads the chat without the plan
    assert '"days"' not in agent.refreshes[-1][1].content


def test_each_user_sees_its_own_messages_as_the_assistant_and_the_rest_merged():
    _, _, user = _run()
    first = user.requests[0]                    # User1, @-mentioned by the opening summary
    assert first[0].content.endswith(TEXTS.text("user_mentioned"))
    assert "You are willing to compromise" in first[0].content and '"avg_budget": 3000' in \
        first[0].content
    assert [(m.role, m.content) for m in first[1:]] == [
        ("user", TEXTS.text("chat_opening")), ("assistant", "我想去西安"),
        ("user", "User2: 我也想去\nAgent: " + AGENT[0])]
    second = user.requests[1]                   # User2, polled
    assert "You do not compromise" in second[0].content
    assert not second[0].content.endswith(TEXTS.text("user_mentioned"))
    assert [m.role for m in second[1:]] == ["user", "assistant", "user"]


def test_summaries_can_post_the_table_instead_of_mediating():
    record, agent, _ = _run(GroupOptions(summary_style="table"))
    asks = [i for i, req in enumerate(agent.requests) if req[0].content.endswith(TABLE_ASK)]
    assert asks == [0, 4] and record.termination == "plan_generated"
    assert not any(req[0].content.endswith(CONVERGENCE) for req in agent.requests)


def test_rounds_exhausted_ask_for_the_final_plan():
    agent = PlanOnAsk("agent", ["你们好"] + ["嗯。"] * 60, PLAN)
    user = Scripted("user", ["[pass]"] * 200)
    record = asyncio.run(run_group_chat(_ctx(agent, user, max_steps=12)))
    # a plan given after the rounds ran out still ends as "max_turn_reached" (the reference's
    # forced finish), but it is a plan: scored as generated, and the table refreshed after it
    assert record.termination == "max_turn_reached" and record.extra["plan_generated"]
    final = agent.requests[-1]
    assert final[0].content.endswith("\n\n" + FINAL_PLAN)
    assert final[-1] == ChatMessage(role="user", content="user: " + TEXTS.render(
        "agent_final_directive", ask=FINAL_PLAN))
    # 15 rounds (kappa 3): the opening summary, then a summary every 3 rounds
    summaries = sum(r[0].content.endswith(CONVERGENCE) for r in agent.requests)
    assert record.extra["rounds"] == 15 and summaries == 5
    assert len(agent.refreshes) == 6 and record.extra["table_refreshes"] == 6


def test_a_failed_final_plan_is_asked_again_and_only_the_last_attempt_stays():
    agent = Scripted("agent", ["你们好"] + ["嗯。"] * 15 + ["no plan 1", "no plan 2", "no plan 3"])
    user = Scripted("user", ["[pass]"] * 200)
    record = asyncio.run(run_group_chat(_ctx(agent, user)))
    assert record.termination == "max_turn_reached" and not record.extra["plan_generated"]
    assert record.extra["final_plan_attempts"] == 3 and not agent.replies
    said = [e["content"] for e in record.extra["chat"] if e.get("role") == "Agent"]
    assert said[-1] == "no plan 3" and "no plan 1" not in said and "no plan 2" not in said
    # each attempt saw the same chat: the failed attempt is not in the next one's view
    assert "no plan 1" not in str(agent.requests[-1])
    assert len(agent.refreshes) == 5                            # no refresh without a plan


def test_two_accepted_compromises_rebuild_the_users_prompt_and_mentions_retry_passes():
    agent = Scripted("agent", ["@User1 预算2500可以吗？", "@User1 每天两个景点可以吗？",
                               "@User2 你呢？", json.dumps(PLAN, ensure_ascii=False)])
    user = Scripted("user", ["好 [global_constraints.avg_budget: 2500]", "[pass]",
                             "行 [global_constraints.intensity.max_poi_per_day: 2]"]
                    + ["[pass]"] * 6)
    record = asyncio.run(run_group_chat(_ctx(agent, user)))
    assert record.termination == "plan_generated" and not agent.replies and not user.replies
    assert record.extra["compromise_counts"] == {"User1": 2, "User2": 0}
    systems = [r[0].content for r in user.requests]
    assert "willing to compromise" in systems[0] and "willing to compromise" in systems[2]
    assert "You do not compromise" in systems[7]                 # User1 after the cap
    mentioned = [s.endswith(TEXTS.text("user_mentioned")) for s in systems]
    assert mentioned[4:7] == [True] * 3                          # User2 asked 3 times
    assert not mentioned[8]                                      # then consumed: polled
    assert record.extra["mention_pass_retries"] == 2


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
    assert j.judge_model == "rule" and j.reasoning["_poi_table"] == "none"
    counts = plan_validity(PLAN, ["User1", "User2"]).issue_counts
    assert counts and {k[3:]: v for k, v in j.scores.items() if k.startswith("pv:")} == counts
    unit = bench.score(record, _Lookup(j), ScoreContext(settings=settings))
    assert {k: v for k, v in unit.dims.items() if not k.startswith("cmp:")} == j.scores
    assert unit.score == j.scores["pv"] and "lj" not in unit.dims     # no LLM judgement yet
    assert unit.dims["cmp:accepted"] == 1 and unit.dims["cmp:invalid"] == 1
    assert unit.labels["difficulty"] == "unknown" and unit.labels["poi_table"] == "none"
    summary = bench.report.summarize([unit])
    assert summary.overall.tasks == 1 and "test" in summary.subsets
    assert summary.judge is None and summary.other is None
    assert bench.report.tables([("run", summary)])[0].rows


def test_a_user_reply_that_stays_empty_is_asked_again_and_then_kept_empty():
    from evaluator.benchmarks.grouptravelbench.agent_turn import EMPTY_REPLY_ATTEMPTS

    agent = Scripted("agent", ["@User1 你好？", json.dumps(PLAN, ensure_ascii=False)])
    user = Scripted("user", [""] * EMPTY_REPLY_ATTEMPTS + ["[pass]"] * 5)
    record = asyncio.run(run_group_chat(_ctx(agent, user)))
    said = [(e["role"], e["content"]) for e in record.extra["chat"]]
    assert ("User1", "") in said and record.extra["user_empty_replies"] == 14
