"""The graph an episode walks: replaying a task's events gives its nodes; table 5's
single-turn and no-issue protocols; FIT's rollback brought forward when the agent finds no
solution; the options and the paper profile's pinned protocol."""

from __future__ import annotations

import asyncio
from pathlib import Path

import msgspec
import pytest

from bench_data.tripbench import TripTask
from evaluator.benchmarks.base import JudgeInput
from evaluator.benchmarks.tripbench import BENCHMARK
from evaluator.benchmarks.tripbench.graph import (
    declares_infeasible,
    replay,
    variant_task,
)
from evaluator.benchmarks.tripbench.judging import rules
from evaluator.benchmarks.tripbench.protocol import run_no_issue, run_single_turn, run_trip
from evaluator.benchmarks.tripbench.settings import PAPER, TripOptions, options_of
from evaluator.benchmarks.tripbench.synthesis import generate_taskset
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.protocols import ProtocolSettings

from .test_protocol import PREFS, TASK, A, Scripted, ev, make_ctx, notes_at, user_says


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory: pytest.TempPathFactory, world_path: Path) -> Path:
    out = tmp_path_factory.mktemp("episodes")
    (out / "world.sqlite").symlink_to(world_path)
    return out


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> list[TripTask]:
    path, _ = generate_taskset(tmp_path_factory.mktemp("var"), seed=0, tasks=7)
    return [msgspec.json.decode(x, type=TripTask) for x in path.read_bytes().splitlines()[1:]]


def test_replaying_a_tasks_events_gives_its_nodes(generated):
    for task in [*generated, TASK]:
        nodes = replay(task, [n.events for n in task.turns])
        assert [(n.trip, n.active, n.feasible) for n in nodes] == [
            (n.trip, n.active, n.feasible) for n in task.turns], task.task_id


def test_the_variants_keep_the_final_requirements(generated):
    for task in [*generated, TASK]:
        last = task.turns[-1]
        single = variant_task(task, "single_turn")
        assert len(single.turns) == 1 and single.turns[0].trip == last.trip
        assert single.turns[0].active == last.active
        assert [e.pref for e in single.turns[0].events] == last.active
        assert not any(p.vague for p in single.preferences.values())
        quiet = variant_task(task, "no_issue")
        assert not any(e.op == "issue" for n in quiet.turns for e in n.events)
        assert (quiet.turns[-1].trip, quiet.turns[-1].active) == (last.trip, last.active)
        assert [n.turn for n in quiet.turns] == list(range(1, len(quiet.turns) + 1))
        assert len(quiet.turns) <= len(task.turns)
        assert variant_task(task, "multi_turn") is task
    with pytest.raises(ValueError, match="unknown TRIP-Bench protocol"):
        variant_task(TASK, "two_turn")


def _run(world, world_dir, fn, agent, user, task=TASK):
    ctx = make_ctx(world, world_dir, agent, user)
    ctx.task = msgspec.structs.replace(ctx.task, payload=task)
    return asyncio.run(fn(ctx))


def test_single_turn_states_every_final_requirement_at_once(world, world_dir):
    agent, user = Scripted("agent", ["Here is a plan."]), Scripted("user", [
        user_says("Plan it with 3-star hotels.", "TRIP", "P1")])
    record = _run(world, world_dir, run_single_turn, agent, user)
    assert record.termination == "completed" and record.extra["protocol"] == "single_turn"
    assert record.extra["graph_turns"] == record.extra["turn_reached"] == 1
    text = notes_at(user, 1)
    assert "Your trip: 2 travellers, leaving Shanghai" in text and "Hangzhou" in text
    assert "P1: Hotels must be 3-star or above." in text
    assert "P2" not in text and "5-star" not in text          # deleted / rolled back before


def test_no_issue_drops_the_issue_reports(world, world_dir):
    agent = Scripted("agent", ["Which dates?"] * 7)
    user = Scripted("user", [user_says("Hi.", "TRIP")] * 7)
    record = _run(world, world_dir, run_no_issue, agent, user)
    assert record.termination == "completed" and record.extra["protocol"] == "no_issue"
    revealed = [x for t in record.extra["turns"] for x in t["revealed"]]
    assert "ISSUE" not in revealed and "ContentMod" in revealed
    assert record.extra["graph_turns"] == 7          # no turn held issue reports alone
    base = _run(world, world_dir, run_trip, Scripted("agent", ["Which dates?"] * 7),
                Scripted("user", [user_says("Hi.", "TRIP")] * 7))
    assert "ISSUE" in [x for t in base.extra["turns"] for x in t["revealed"]]


FIT = TripTask(task_id="f", difficulty="hard", hard_set="FIT", trips={"A": A},
               preferences={k: PREFS[k] for k in ("P1", "P3")},
               turns=replay(TripTask(task_id="f", difficulty="hard", trips={"A": A},
                                     preferences=PREFS, turns=[]), [
                   [ev("add", pref="P1")],
                   [ev("change", pref="P3", replaces="P1")],
                   [ev("explore")],
                   [ev("rollback", pref="P1", replaces="P3", note="at the latest now")],
                   [ev("issue")]]))


def test_fits_rollback_comes_when_the_agent_finds_no_solution(world, world_dir):
    assert [n.feasible for n in FIT.turns] == [True, False, False, True, True]
    gave_up = ["Plan coming.", "Sorry, there is no 5-star hotel available in Hangzhou.",
               "Ok.", "Ok.", "Ok."]
    record = _run(world, world_dir, run_trip, Scripted("agent", gave_up),
                  Scripted("user", [user_says("x", "TRIP")] * 5), FIT)
    assert record.termination == "completed"
    assert record.extra["rollbacks_moved"] == [{"pref": "P3", "from": 4, "to": 3}]
    log = record.extra["turns"]
    assert record.extra["graph_turns"] == len(log) == 4
    assert [(t["active"], t["feasible"]) for t in log] == [
        (["P1"], True), (["P3"], False), (["P1"], True), (["P1"], True)]
    assert log[2]["revealed"] == ["P1", "ExploreQues"] or log[2]["revealed"] == [
        "ExploreQues", "P1"]
    # the judge reads the turns as played: the infeasible one is left out of the turn level
    ctx = make_ctx(world, world_dir, None, None)
    task = msgspec.structs.replace(ctx.task, payload=FIT)
    judged = rules(JudgeInput(record=record, task=task, thash=trajectory_hash(record),
                              settings=JudgeSettings(), prompts=None, tools=None))
    assert judged.error is None and judged.scores["turns_judged"] == 3.0
    assert judged.reasoning["active"] == "P1" and judged.scores["finished"] == 1.0
    kept = _run(world, world_dir, run_trip, Scripted("agent", ["Plan coming.", "Done."] + [
        "Ok."] * 3), Scripted("user", [user_says("x", "TRIP")] * 5), FIT)
    assert "rollbacks_moved" not in kept.extra and kept.extra["graph_turns"] == 5
    assert [t["feasible"] for t in kept.extra["turns"]] == [True, False, False, True, True]


def test_what_counts_as_finding_no_solution():
    for text in ("I cannot find a 5-star hotel there.", "That is not possible, sorry.",
                 "There are no flights available that day.", "No hotel meets all of it."):
        assert declares_infeasible(text), text
    for text in ("Here is your plan.", "```json\n{\"note\": \"cannot\"}\n```",
                 "Everything is booked as you asked."):
        assert not declares_infeasible(text), text


def test_options_and_the_paper_profile():
    assert options_of(ProtocolSettings()) == TripOptions()
    assert TripOptions().tool_output == "text" and TripOptions().protocol == "multi_turn"
    assert options_of({"protocol": "single_turn"}).protocol == "single_turn"
    with pytest.raises(msgspec.ValidationError):
        options_of({"protocol": "two_turn"})
    with pytest.raises(msgspec.ValidationError):
        options_of({"simulator_reply_chars": -1})
    assert PAPER["protocol"]["entry"] == ""            # another protocol is a deviation
    assert set(BENCHMARK.protocols) == {"easy", "mid", "hard"}



def test_the_options_are_the_runs_options_table(tmp_path):
    """`[options]` of a TRIP-Bench run: checked against TripOptions, completed with the paper's
    values, a deviation when changed (where tool calls run is not one)."""
    from evaluator.config import ConfigError, load_config, profile_deviations

    def load(*items):
        base = [("data.benchmark", "tripbench", "--set"), ("data.dataset", str(tmp_path),
                                                            "--set")]
        return load_config(None, [*base, *items])[0]

    paper = load()
    assert paper.profile == "paper" and options_of(paper.options) == TripOptions()
    assert profile_deviations(paper) == {}
    single = load(("options.protocol", "single_turn", "--set"),
                  ("options.tool_workers", 8, "--set"))
    assert options_of(single.options).protocol == "single_turn"
    assert profile_deviations(single) == {
        "options.protocol": {"profile": "multi_turn", "used": "single_turn"}}
    with pytest.raises(ConfigError, match="options.tool_output"):
        load(("options.tool_output", "xml", "--set"))
    with pytest.raises(ConfigError, match="unknown key `options.protocl`"):
        load(("options.protocl", "x", "--set"))
