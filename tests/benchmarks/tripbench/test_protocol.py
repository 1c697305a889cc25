"""The TRIP-Bench episode with scripted fake agent and simulator over a generated world: the
simulator's notes follow the dialogue graph turn by turn (each of the nine behaviours; a later
change is never shown earlier; AIS reveals the explicit form only after a miss or a
question), the endings, the final plan in the record, and the rule judge on the record."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from backends.types import ChatMessage, ChatResponse, Choice, FunctionCall, ToolCall, Usage
from bench_data.tripbench import (
    Preference,
    TripMeta,
    TripStay,
    TripTask,
    TurnEvent,
    TurnNode,
)
from bench_data.types import Task
from evaluator.benchmarks.base import JudgeInput
from evaluator.benchmarks.tripbench import BENCHMARK
from evaluator.benchmarks.tripbench.environment import TripSandbox
from evaluator.benchmarks.tripbench.judging import RULES, RULES_VERSION, rules, score
from evaluator.benchmarks.tripbench.protocol import PROMPT_VERSION, parse_user, run_trip
from evaluator.benchmarks.tripbench.world import open_world
from evaluator.benchmarks.tripbench.world.generate import generate_world
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.protocols import EpisodeContext, ProtocolSettings
from evaluator.records import UnitId


class Scripted:
    """A RoleClient answering from a script, keeping every request."""

    def __init__(self, role: str, script: list[Any]) -> None:
        self.role, self.model = role, "fake"
        self.script = list(script)
        self.requests: list[list[ChatMessage]] = []

    async def complete(self, messages, *, tools=None, tool_choice=None, response_format=None):
        self.requests.append(list(messages))
        item = self.script.pop(0) if self.script else ChatMessage(role="assistant",
                                                                  content="ok")
        if isinstance(item, str):
            item = ChatMessage(role="assistant", content=item)
        n = sum(len(m.content or "") for m in messages) // 4
        usage = Usage(prompt_tokens=n, completion_tokens=3, total_tokens=n + 3)
        return ChatResponse(id="r", model="fake", choices=[Choice(index=0, message=item)],
                            usage=usage)


def user_says(text: str, *ids: str) -> str:
    return json.dumps({"instruction_ids": list(ids), "user_query": text})


def pref(pid: str, chain: str, step: int, rubric: dict, text: str, **kw: Any) -> Preference:
    return Preference(id=pid, chain=chain, step=step, family="hotel", rubric=rubric, text=text,
                      **kw)


A = TripMeta(origin="Shanghai", stays=[TripStay("Hangzhou", 2)], start_date="2025-10-02",
             end_date="2025-10-04", number_of_people=2)
B = TripMeta(origin="Shanghai", stays=[TripStay("Nanjing", 2)], start_date="2025-10-02",
             end_date="2025-10-04", number_of_people=2)
M = TripMeta(origin="Shanghai", stays=[TripStay("Hangzhou", 1), TripStay("Nanjing", 1)],
             start_date="2025-10-02", end_date="2025-10-04", number_of_people=2)
PREFS = {
    "P1": pref("P1", "c1", 0, {"type": "STAR", "bound": {"min": 3}},
               "Hotels must be 3-star or above."),
    "P2": pref("P2", "c2", 0, {"type": "PRICE", "bound": {"max": 1}},
               "Restaurants should cost no more than 1 yuan per person.",
               vague="Meals shouldn't be too pricey."),
    "P3": pref("P3", "c1", 1, {"type": "STAR", "bound": {"min": 5}},
               "Hotels must be 5-star or above.", infeasible=True),
    "P4": pref("P4", "c3", 0, {"type": "INCLUDE_CUISINE", "values": ["Sichuan"],
                               "city": "Nanjing"},
               "We want to have Sichuan in Nanjing at least once.", scope="B"),
}


def ev(op: str, **kw: Any) -> TurnEvent:
    return TurnEvent(op=op, **kw)


TURNS = [
    TurnNode(turn=1, trip="A", events=[ev("add", pref="P1")], active=["P1"]),
    TurnNode(turn=2, trip="A", events=[ev("add", pref="P2"), ev("change", pref="P3",
                                                                 replaces="P1")],
             active=["P3", "P2"], feasible=False),
    TurnNode(turn=3, trip="A", events=[ev("rollback", pref="P1", replaces="P3",
                                          note="when the assistant finds no way"),
                                       ev("issue")], active=["P1", "P2"]),
    TurnNode(turn=4, trip="B", events=[ev("redirect", trip="B"), ev("add", pref="P4")],
             active=["P1", "P2", "P4"]),
    TurnNode(turn=5, trip="B", events=[ev("content_mod"), ev("issue")],
             active=["P1", "P2", "P4"]),
    TurnNode(turn=6, trip="M", events=[ev("merge", trip="M"), ev("clarify")],
             active=["P1", "P2", "P4"]),
    TurnNode(turn=7, trip="A", events=[ev("rollback", trip="A"), ev("explore"),
                                       ev("delete", replaces="P2")], active=["P1"]),
]
TASK = TripTask(task_id="t1", difficulty="hard", hard_set="AIS", trips={"A": A, "B": B, "M": M},
                preferences=PREFS, turns=TURNS, style="impatient")

PLAN = {"trip_plan": {"start_date": "2025-10-02", "end_date": "2025-10-04",
                      "number_of_people": 2,
                      "daily_schedule": [{"date": "2025-10-02", "cities": "Shanghai -> Nanjing",
                                          "activities": []}]}}
NO_CHANGE = {"trip_plan": {"start_date": "2025-10-02", "end_date": "2025-10-04",
                           "number_of_people": 2, "daily_schedule": []}}


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("proto")
    generate_world(out / "world.sqlite", "small", 0)
    (out / "tasks.jsonl").write_text("")
    return out


@pytest.fixture(scope="module")
def world(world_dir: Path):
    w = open_world(world_dir / "world.sqlite")
    yield w
    w.close()


def make_ctx(world, world_dir, agent, user, max_turns=15) -> EpisodeContext:
    task = Task(benchmark="tripbench", subset="hard", task_id="t1", payload=TASK,
                source=f"{world_dir / 'tasks.jsonl'}:2", extra={"world": "world.sqlite"})
    return EpisodeContext(unit=UnitId(run="r", task="tripbench/hard/t1", trial=0, seed=0),
                          task=task, agent=agent, sandbox=TripSandbox(world), user=user,
                          settings=ProtocolSettings(max_turns=max_turns, max_steps=3))


def agent_script() -> list[Any]:
    tool = ToolCall(id="c1", function=FunctionCall(name="get_city_center_coords",
                                                   arguments='{"city_name": "Hangzhou"}'))
    return [
        ChatMessage(role="assistant", content=None, tool_calls=[tool]),
        "Which dates exactly?",                                    # turn 1
        "Could you say what budget you mean?",                     # turn 2: a question
        "Sorry, I have no plan yet.",                              # turn 3
        "```json\n" + json.dumps(PLAN) + "\n```",                  # turn 4: a plan
        json.dumps(NO_CHANGE),                                     # turn 5: no change
        "Here is why.",                                            # turn 6
        "Noted.",                                                  # turn 7
    ]


def user_script() -> list[Any]:
    return [user_says("Plan a trip please.", "TRIP", "P1"),
            user_says("Cheap food. Also 5 stars.", "P2", "P3"),
            "not json at all",                                     # taken as the utterance
            user_says("Let's go to Nanjing.", "REDIRECT", "P4"),
            "",                                                    # empty: plain notes
            user_says("Both please.", "MERGE"),
            user_says("Back to Hangzhou.", "TRIP_BACK")]


def run(world, world_dir, max_turns=15):
    agent, user = Scripted("agent", agent_script()), Scripted("user", user_script())
    record = asyncio.run(run_trip(make_ctx(world, world_dir, agent, user, max_turns)))
    return record, agent, user


def notes_at(user: Scripted, turn: int) -> str:
    """The simulator's input for user turn `turn` (its last user-role message)."""
    return user.requests[turn - 1][-1].content or ""


def test_each_turn_shows_only_its_nodes_notes(world, world_dir):
    record, _, user = run(world, world_dir)
    assert record.termination == "completed" and record.n_user_turns == 7
    assert len(user.requests) == 7
    # the simulator's conversation only grows (a turn never rewrites an earlier one)
    for before, after in zip(user.requests, user.requests[1:]):
        assert after[: len(before)] == before
    texts = [notes_at(user, n) for n in range(1, 8)]
    assert "Your trip: 2 travellers, leaving Shanghai" in texts[0] and "Hangzhou" in texts[0]
    assert "P1: Hotels must be 3-star" in texts[0]
    # later wishes and trips are in no earlier prompt

    def whole(n: int) -> str:
        return "\n".join(m.content or "" for m in user.requests[n - 1])

    for n in (1,):
        assert "5-star" not in whole(n) and "pricey" not in whole(n)
    for n in (1, 2, 3):
        assert "Nanjing" not in whole(n) and "Sichuan" not in whole(n)
    for n in range(1, 6):
        assert "in one trip" not in whole(n)
    # change, AIS vague form, then FIT's rollback with its note, issue before any plan
    assert "instead of \"Hotels must be 3-star or above.\"" in texts[1]
    assert "Meals shouldn't be too pricey." in texts[1] and "1 yuan" not in texts[1]
    assert "Take back your last change (when the assistant finds no way)" in texts[2]
    assert "You have not received a complete itinerary yet" in texts[2]
    # the agent asked a question at turn 2: the explicit form is owed at turn 3
    assert "Make clear what you meant earlier: Restaurants should cost no more than 1" in \
        texts[2]
    assert "New idea: go somewhere else instead" in texts[3] and "Nanjing" in texts[3]
    assert "P4: We want to have Sichuan in Nanjing" in texts[3]
    assert "ContentMod" in texts[4] and "ISSUE: Point out these problems" in texts[4]
    assert "a wish is not met: We want to have Sichuan in Nanjing" in texts[4]
    assert "information completeness: " in texts[4]
    assert "MERGE" in texts[5] and "ClarifyExp" in texts[5] and "in one trip" in texts[5]
    assert "TRIP_BACK" in texts[6] and "ExploreQues" in texts[6]
    assert "P2: You no longer need this" in texts[6]
    assert "in a hurry" in user.requests[0][0].content
    log = record.extra["turns"]
    assert [t["revealed"] for t in log] == [
        ["TRIP", "P1"], ["P2", "P3"], ["P2", "P1", "ISSUE"], ["REDIRECT", "P4"],
        ["ContentMod", "ISSUE"], ["MERGE", "ClarifyExp"], ["TRIP_BACK", "ExploreQues", "P2"]]
    assert log[0]["instruction_ids"] == ["TRIP", "P1"] and log[2]["instruction_ids"] == []


def test_the_agent_sees_the_simulators_utterances(world, world_dir):
    record, _, _ = run(world, world_dir)
    users = [m.content for m in record.messages if m.role == "user"]
    assert users[:3] == ["Plan a trip please.", "Cheap food. Also 5 stars.", "not json at all"]
    assert users[4].startswith("The assistant's") is False and "small edit" in users[4]
    assert record.extra["scripted_user_turns"] == 1
    assert record.messages[0].role == "system" and "trip_plan" in record.messages[0].content
    assert record.tool_calls[0].name == "get_city_center_coords"
    assert record.tool_calls[0].source == "live"
    assert record.extra["prompt_version"] == PROMPT_VERSION
    assert record.usage["user"].prompt_tokens > 0


def test_the_final_plan_is_kept_and_no_change_keeps_it(world, world_dir):
    record, _, _ = run(world, world_dir)
    assert record.extra["final_plan_turn"] == 4
    assert json.loads(record.extra["final_plan"].strip("`json\n"))["trip_plan"]
    log = record.extra["turns"]
    assert log[3]["plan"] and not log[4]["plan"] and log[4]["no_change"]
    assert log[0]["tool_calls"] == 1 and record.extra["turn_reached"] == 7
    for entry in log:  # each turn's answer is where the log says
        reply = record.messages[entry["reply"]]
        assert reply.role == "assistant" and not reply.tool_calls
    assert "```json" in record.messages[log[3]["reply"]].content
    assert record.extra["context_tokens_max"] > 0


def test_max_turns_ends_the_dialogue_early(world, world_dir):
    record, _, user = run(world, world_dir, max_turns=3)
    assert record.termination == "max_turns" and record.extra["turn_reached"] == 3
    assert len(user.requests) == 3 and record.n_user_turns == 3


def test_a_plain_text_simulator_answer_and_json_parsing():
    assert parse_user('sure: {"instruction_ids": ["P1"], "user_query": "Hi"}') == ("Hi", ["P1"])
    assert parse_user("just text") == ("just text", [])
    assert parse_user('{"user_query": 3}') == ('{"user_query": 3}', [])


def test_the_rule_judge_scores_the_record(world, world_dir):
    record, _, _ = run(world, world_dir)
    ctx = make_ctx(world, world_dir, None, None)
    thash = trajectory_hash(record)
    judgement = rules(JudgeInput(record=record, task=ctx.task, thash=thash,
                                 settings=JudgeSettings(), prompts=None, tools=None))
    assert judgement.error is None and judgement.kind == RULES and judgement.score == 0.0
    assert judgement.prompt_version == RULES_VERSION and judgement.judge_model == "rule"
    s = judgement.scores
    assert s["f_feas"] >= 1 and "check:information_completeness" in s
    assert judgement.reasoning["turn"] == "7" and judgement.reasoning["active"] == "P1"
    assert [k for k in s if k.startswith("rubric:")] == ["rubric:0:STAR"]
    # turn level: the 6 solvable turns (turn 2 is FIT's infeasible one), none strict
    assert s["turns_judged"] == 6.0 and s["turn_strict"] == 0.0

    class Lookup:
        def get(self, h, kind, version):
            return judgement if (h, kind, version) == (thash, RULES, RULES_VERSION) else None

    unit = score(record, Lookup(), None)
    assert unit.score == 0.0 and unit.success is False
    assert unit.labels == {"difficulty": "hard", "hard_set": "AIS", "split": "AIS"}
    assert unit.dims["turns"] == 7 and unit.dims["viol:information_completeness"] >= 1.0
    assert unit.dims["turn_strict"] == 0.0
    assert BENCHMARK.judge_kinds(record, ctx.task, JudgeSettings()) == [RULES]


def test_a_vague_wish_stays_vague_while_the_plan_meets_it(world):
    """AIS: no question and a plan that satisfies the wish: the explicit form is not owed,
    and the wishes already stated show the vague form."""
    from evaluator.benchmarks.tripbench.protocol import Simulator

    prefs = {"P2": PREFS["P2"]}
    turns = [TurnNode(turn=1, trip="A", events=[ev("add", pref="P2")], active=["P2"]),
             TurnNode(turn=2, trip="A", events=[ev("explore")], active=["P2"]),
             TurnNode(turn=3, trip="A", events=[ev("clarify")], active=["P2"])]
    task = TripTask(task_id="v", difficulty="hard", hard_set="AIS", trips={"A": A},
                    preferences=prefs, turns=turns)
    sim = Simulator(task, world)
    first = sim.notes(turns[0], None, "", "")
    assert [n.id for n in first] == ["TRIP", "P2"] and "pricey" in first[1].text
    plan = json.dumps(PLAN)  # no restaurant: the price wish holds
    second = sim.notes(turns[1], turns[0], "Here is your plan.", plan)
    assert [n.id for n in second] == ["ExploreQues"]
    text = sim.message(second, "Here is your plan.", ["P2"])
    assert "Meals shouldn't be too pricey." in text and "1 yuan" not in text
    # a question, but not about the wish (nor inside the plan): still vague
    third = sim.notes(turns[2], turns[1], 'Anything else? ```json {"q": "price?"}```', plan)
    assert [n.id for n in third] == ["ClarifyExp"]
    # a question about it: now explicit
    fourth = sim.notes(turns[2], turns[1], "Noted. What price range do you have in mind?",
                       plan)
    assert [n.id for n in fourth] == ["P2", "ClarifyExp"] and "1 yuan" in fourth[0].text
