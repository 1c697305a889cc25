"""The VitaBench episode protocol with scripted models over a real delivery task: the greeting
(seen by the simulator only), a tool call that writes to the task database, user turns, the
stop markers, the step limit as the reference counts it, and trials that keep their writes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from backends.types import ChatMessage, ChatResponse, Choice, FunctionCall, ToolCall, Usage
from bench_data.types import Task
from evaluator.benchmarks import get
from evaluator.benchmarks.vitabench.data import judge_rubrics, load_vitabench_file
from evaluator.benchmarks.vitabench.environment import VitaEpisodes
from evaluator.benchmarks.vitabench.prompting import GREETING, PROMPT_VERSION, STOP
from evaluator.benchmarks.vitabench.protocol import run_episode
from evaluator.protocols import EpisodeContext, ProtocolSettings
from evaluator.records import UnitId

from .helpers import VITA_DATA, load_tasks


class Scripted:
    def __init__(self, script: list[ChatMessage]) -> None:
        self.model = "fake"
        self.script = list(script)
        self.requests: list[list[ChatMessage]] = []

    async def complete(self, messages, *, tools=None, tool_choice=None, response_format=None):
        self.requests.append(list(messages))
        assert self.script, "script exhausted"
        return ChatResponse(id="r", model="fake", usage=Usage(),
                            choices=[Choice(index=0, message=self.script.pop(0))])


def say(text: str | None, *calls: ToolCall) -> ChatMessage:
    return ChatMessage(role="assistant", content=text, tool_calls=list(calls) or None)


def _task() -> tuple[Task, dict[str, Any]]:
    load_tasks("delivery")  # skips with the reason when the data is absent
    tasks = load_vitabench_file(VITA_DATA / "delivery" / "tasks_en.json").tasks
    for task in tasks:
        env = task.extra["environment"]
        if env["location"] and all(k == s["store_id"] for k, s in env["stores"].items()):
            return task, env
    raise AssertionError("no delivery task with a location")


def _order_call(env: dict[str, Any], count: int, call_id: str = "c1") -> ToolCall:
    key, store = next(iter(env["stores"].items()))
    args = {"user_id": env["user_id"], "store_id": key,
            "product_ids": [store["products"][0]["product_id"]], "product_cnts": [count],
            "address": env["location"][0]["address"], "dispatch_time": env["time"],
            "note": f"count {count}"}
    return ToolCall(id=call_id, function=FunctionCall(name="create_delivery_order",
                                                      arguments=json.dumps(args)))


def _ctx(task: Task, episodes: VitaEpisodes, agent: Scripted, user: Scripted,
         max_steps: int = 300, trial: int = 0) -> EpisodeContext:
    return EpisodeContext(unit=UnitId(task.benchmark, task.subset, task.task_id, trial),
                          task=task, agent=agent, sandbox=episodes.episode(task), user=user,
                          settings=ProtocolSettings(max_steps=max_steps))


async def test_a_dialogue_with_a_db_write_ends_at_the_agents_stop_marker() -> None:
    task, env = _task()
    agent = Scripted([say(None, _order_call(env, 2)), say("Your order is placed."),
                      say(STOP)])
    user = Scripted([say("I'd like lunch delivered."), say("Great, thanks.")])
    record = await run_episode(_ctx(task, VitaEpisodes(), agent, user))
    assert record.termination == "agent_stop" and record.final_answer == STOP
    # the simulator saw the greeting first; the agent's context starts with the user
    assert user.requests[0][1] == ChatMessage(role="user", content=GREETING)
    assert [m.role for m in agent.requests[0]] == ["system", "user"]
    assert agent.requests[0][1].content == "I'd like lunch delivered."
    assert env["user_id"] in agent.requests[0][0].content
    assert "lunch" in user.requests[0][0].content or task.extra["instruction_text"][:30] in \
        user.requests[0][0].content
    # the simulator sees the agent's text only, roles flipped
    assert [m.role for m in user.requests[1]] == ["system", "user", "assistant", "user"]
    assert user.requests[1][-1].content == "Your order is placed."
    assert record.tool_calls[0].source == "live", record.tool_calls[0].content
    assert [m.role for m in record.messages] == ["system", "user", "assistant", "tool",
                                                 "assistant", "user", "assistant"]
    assert record.extra["steps"] == 6 and record.extra["prompt_version"] == PROMPT_VERSION
    assert record.n_user_turns == 2 and record.extra["greeting"] == GREETING
    orders = record.extra["db_changes"]["orders"]
    assert len(orders) == 1 and "count 2" in json.dumps(orders)


async def test_a_stop_marker_from_the_user_ends_it_before_the_agent_speaks() -> None:
    task, _ = _task()
    agent, user = Scripted([]), Scripted([say("Never mind. ###STOP###")])
    record = await run_episode(_ctx(task, VitaEpisodes(), agent, user))
    assert record.termination == "user_stop" and agent.requests == []
    assert record.extra["db_changes"] == {} or not any(record.extra["db_changes"].values())


async def test_the_agents_stop_marker_wins_over_its_tool_calls() -> None:
    task, env = _task()
    agent = Scripted([say(f"Bye {STOP}", _order_call(env, 1))])
    record = await run_episode(_ctx(task, VitaEpisodes(), agent, Scripted([say("Hi")])))
    assert record.termination == "agent_stop" and record.tool_calls == []


@pytest.mark.parametrize(("limit", "agent_calls"), [(3, 1), (4, 2), (5, 2)])
async def test_the_step_limit_counts_user_agent_and_tool_steps(limit: int,
                                                               agent_calls: int) -> None:
    task, env = _task()
    agent = Scripted([say(None, _order_call(env, 1, f"c{i}")) for i in range(5)])
    record = await run_episode(_ctx(task, VitaEpisodes(), agent, Scripted([say("Hi")]),
                                    max_steps=limit))
    assert record.termination == "max_steps" and record.extra["steps"] == limit
    assert record.n_agent_calls == agent_calls


async def test_max_steps_scores_zero_without_a_judgement() -> None:
    task, env = _task()
    record = await run_episode(_ctx(task, VitaEpisodes(),
                                    Scripted([say(None, _order_call(env, 1))]),
                                    Scripted([say("Hi")]), max_steps=2))
    bench = get("vitabench")
    from evaluator.benchmarks.base import ScoreContext
    from evaluator.judges.settings import JudgeSettings

    class Nothing:
        def get(self, *a: Any) -> None:
            return None

    unit = bench.score(record, Nothing(), ScoreContext(settings=JudgeSettings()))
    assert unit is not None and unit.score == 0.0 and unit.success is False
    # and the judging stage spends no call on it
    from evaluator.benchmarks.base import Unjudgeable

    with pytest.raises(Unjudgeable, match="step limit"):
        bench.judge_kinds(record, task, JudgeSettings())


async def test_trials_of_one_task_share_the_base_and_keep_their_own_writes() -> None:
    task, env = _task()
    episodes = VitaEpisodes()

    async def trial(i: int):
        agent = Scripted([say(None, _order_call(env, i + 1)), say(STOP)])
        return await run_episode(_ctx(task, episodes, agent, Scripted([say("Hi")]), trial=i))

    records = await asyncio.gather(*(trial(i) for i in range(4)))
    assert len(episodes.cache) == 1
    for i, record in enumerate(records):
        orders = record.extra["db_changes"]["orders"]
        assert len(orders) == 1 and f"count {i + 1}" in json.dumps(orders)
    assert episodes.episode(task).changes() == {} or not any(
        episodes.episode(task).changes().values())


def test_the_judges_rubrics_are_state_then_overall_deduplicated() -> None:
    assert judge_rubrics(["a", "b ", ""], ["b", "c", "a", "d"]) == ["a", "b", "c", "d"]


def test_the_benchmark_has_a_protocol_environment_and_paper_profile() -> None:
    bench = get("vitabench")
    # imported when first called (registering VitaBench imports no tool): the protocol's own
    assert bench.protocol("delivery") is bench.protocol("cross_domain")
    assert bench.protocol("delivery").__qualname__ == (
        f"deferred({run_episode.__module__}.{run_episode.__name__})")
    assert bench.environment is not None
    assert bench.profiles["paper"]["protocol"]["max_steps"] == 300


def test_the_loader_judges_the_state_rubrics_and_keeps_every_set(tmp_path) -> None:
    record = {"id": "t1", "instructions": "Order lunch.", "environment": {"time": "x"},
              "evaluation_criteria": {"state_rubrics": ["order placed"],
                                      "expected_states": [{"state_rubrics": ["paid"]}],
                                      "overall_rubrics": ["paid", "polite"]}}
    path = tmp_path / "delivery" / "tasks_en.json"
    path.parent.mkdir()
    path.write_text(json.dumps([record]))
    task = load_vitabench_file(path).tasks[0]
    assert task.rubrics == ["order placed", "paid"]
    assert task.extra["rubric_sets"] == {"state": ["order placed", "paid"],
                                         "overall": ["paid", "polite"],
                                         "union": ["order placed", "paid", "polite"]}
    assert task.extra["state_rubrics"] == ["order placed", "paid"]
    assert task.extra["overall_rubrics"] == ["paid", "polite"]
