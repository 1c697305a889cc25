"""TRIP-Bench task synthesis: byte-identical per seed, solvable tasks (the generators' feasible
ids pass the validators, every turn's constraints leave enough candidates, a reference plan
passes every check and constraint), table 4's tiers,
the hard sets, and a dialogue graph whose turns never see a later change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from bench_data.tripbench import HARD_SETS, TripTask
from evaluator.benchmarks.tripbench.evaluation import evaluate, rubrics
from evaluator.benchmarks.tripbench.judging import eval_task
from evaluator.benchmarks.tripbench.synthesis import generate_taskset
from evaluator.benchmarks.tripbench.synthesis.dialogue import MAX_IDS_PER_TURN, MAX_TURNS, TIERS
from evaluator.benchmarks.tripbench.synthesis.generate import FACTOR, GENERATOR, VERSION
from evaluator.benchmarks.tripbench.synthesis.meta import to_trip
from evaluator.benchmarks.tripbench.synthesis.planner import plan_for, why_not
from evaluator.benchmarks.tripbench.synthesis.solvability import Checker
from evaluator.benchmarks.tripbench.world import open_world

N_TASKS = 7  # one of each: easy, mid, hard, LIT, FIT, AIS, PMR


@pytest.fixture(scope="module")
def taskset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tasks, _ = generate_taskset(tmp_path_factory.mktemp("ts0"), seed=0, tasks=N_TASKS)
    return tasks


@pytest.fixture(scope="module")
def tasks(taskset: Path) -> list[TripTask]:
    lines = taskset.read_bytes().splitlines()
    return [msgspec.json.decode(line, type=TripTask) for line in lines[1:]]


@pytest.fixture(scope="module")
def gworld(taskset: Path):
    w = open_world(taskset.parent / "world.sqlite")
    yield w
    w.close()


def test_a_seed_gives_a_byte_identical_file_and_another_seed_another(taskset, tmp_path):
    again, _ = generate_taskset(tmp_path / "again", seed=0, tasks=N_TASKS)
    assert again.read_bytes() == taskset.read_bytes()
    other, _ = generate_taskset(tmp_path / "other", seed=1, tasks=N_TASKS)
    assert other.read_bytes() != taskset.read_bytes()


def test_workers_write_the_same_file(taskset, tmp_path):
    """Each task depends only on (seed, size, index): two worker processes give the bytes
    one gives."""
    from evaluator.benchmarks.tripbench.synthesis.generate import write_tasks

    path = write_tasks(tmp_path / "tasks.jsonl", taskset.parent / "world.sqlite", 0, "small",
                       N_TASKS, workers=2)
    assert path.read_bytes() == taskset.read_bytes()


def test_the_file_does_not_depend_on_the_hash_seed(taskset, tmp_path):
    """No set or dict order of str hashes leaks into the file (a fresh interpreter with
    another PYTHONHASHSEED writes the same bytes)."""
    repo = Path(__file__).resolve().parents[3]
    code = ("from evaluator.benchmarks.tripbench.synthesis import generate_taskset; "
            f"generate_taskset({str(tmp_path / 'h')!r}, seed=0, tasks={N_TASKS})")
    env = dict(os.environ, PYTHONHASHSEED="12345", PYTHONPATH=str(repo))
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)
    assert (tmp_path / "h" / "tasks.jsonl").read_bytes() == taskset.read_bytes()


def test_the_header_names_generator_version_seed_and_world(taskset):
    header = json.loads(taskset.read_text().splitlines()[0])["header"]
    assert header["format"] == "tripbench-tasks"
    assert (header["generator"], header["version"], header["seed"]) == (GENERATOR, VERSION, 0)
    assert header["world"] == "world.sqlite" and len(header["world_digest"]) == 64
    assert header["tasks"] == N_TASKS and header["size"] == "small"


def test_generator_ids_pass_the_validators(tasks, gworld):
    """For every preference: ids of G(e)'s feasible set satisfy V(e, i); candidates outside
    it do not (checked on a few of each)."""
    checked = 0
    checker = Checker(gworld, FACTOR["small"])
    for task in tasks:
        for pref in task.preferences.values():
            e = rubrics.decode_spec(pref.rubric)
            d = rubrics.definition(e)
            for trip_key in {n.trip for n in task.turns if pref.id in n.active} or {"A"}:
                trip = to_trip(task.trips[trip_key])
                g = rubrics.generate(e, gworld, trip)
                if pref.infeasible:  # FIT's versions are unsolvable on their own
                    assert not checker.check(trip, [e]).ok, (task.task_id, pref.id)
                for i in g.feasible[:4]:
                    assert d.item(e, i, gworld, trip), (task.task_id, pref.id, i)
                for i in [c for c in g.candidates if c not in set(g.feasible)][:4]:
                    assert not d.item(e, i, gworld, trip), (task.task_id, pref.id, i)
                checked += 1
    assert checked > 50


def test_every_turn_is_solvable_except_fits_infeasible_steps(tasks, gworld):
    checker = Checker(gworld, FACTOR["small"])
    for task in tasks:
        for node in task.turns:
            specs = [rubrics.decode_spec(task.preferences[p].rubric) for p in node.active]
            result = checker.check(to_trip(task.trips[node.trip]), specs)
            assert result.ok == node.feasible, (task.task_id, node.turn, result.reason)
        assert task.turns[-1].feasible
        final = task.solvability
        assert final["ok"] and final["candidates"] >= final["required"] >= 2 * 2


def test_every_task_has_a_plan_passing_every_check_and_constraint(tasks, gworld):
    """Quality control end to end: the reference planner's plan for the last turn passes
    all twelve checks and every active constraint (Overall_strict)."""
    checker = Checker(gworld, FACTOR["small"])
    for task in tasks:
        plan = plan_for(gworld, checker, task)
        assert plan is not None, (task.task_id, why_not(gworld, checker, task))
        result = evaluate(json.dumps(plan), eval_task(task, task.turns[-1]), gworld)
        assert result.strict, (task.task_id, result.violations[:3])
        assert task.solvability["reference_plan"] == "strict"
        assert len(result.rubrics) == len(task.turns[-1].active)


def test_tiers_follow_table_4(tasks, gworld):
    window = len(gworld.query("SELECT DISTINCT date FROM flights"))
    for task in tasks:
        tier = TIERS[task.difficulty]
        trip = to_trip(task.trips["A"])
        days = len(trip.dates())
        assert tier.days[0] <= days <= min(tier.days[1], window), task.task_id
        if task.hard_set != "PMR":
            assert len(trip.stays) + 1 in tier.cities
        chains = {p.chain for p in task.preferences.values()}
        assert tier.constraints[0] <= len(chains) <= tier.constraints[1], task.task_id
        first = len([e for e in task.turns[0].events if e.op == "add"])
        lo, hi = (1, 3) if task.hard_set == "LIT" else tier.first
        assert min(lo, len(chains)) <= first <= hi or (task.difficulty == "easy" and first == 0)
        assert len(task.turns) <= MAX_TURNS
        for node in task.turns[1:]:
            said = [e for e in node.events if e.pref or e.replaces]
            assert len(said) <= (1 if task.hard_set == "LIT" and len(task.turns) < MAX_TURNS
                                 else MAX_IDS_PER_TURN)
        ops = {e.op for n in task.turns for e in n.events}
        allowed = {"add", "change", "rollback", "delete", *tier.extras}
        if task.hard_set == "PMR":
            allowed |= {"redirect", "merge"}
        assert ops <= allowed, (task.task_id, ops - allowed)


def test_the_hard_sets(tasks):
    by = {t.hard_set: t for t in tasks if t.hard_set}
    assert set(by) == set(HARD_SETS)
    fit = by["FIT"]
    infeasible = [p for p in fit.preferences.values() if p.infeasible]
    assert 2 <= len(infeasible) <= 4
    assert any(not n.feasible for n in fit.turns) and fit.turns[-1].feasible
    for p in infeasible:  # each is rolled back to the version before it
        back = [e for n in fit.turns for e in n.events if e.op == "rollback"
                and e.replaces == p.id]
        assert len(back) == 1 and back[0].note
    pmr = by["PMR"]
    assert set(pmr.trips) == {"A", "B", "M"}
    assert [e.op for n in pmr.turns for e in n.events if e.trip][:1] == ["redirect"]
    assert pmr.turns[-1].trip in ("A", "M")
    assert {p.scope for p in pmr.preferences.values()} == {"all", "A", "B"}
    shared = {p.chain for p in pmr.preferences.values() if p.scope == "all"}
    assert len(shared) >= 6
    ais = by["AIS"]
    assert ais.style
    vague = [p.id for p in ais.preferences.values() if p.vague]
    assert len(vague) >= 2 * len(ais.preferences) // 3 - 1     # throughout the dialogue
    first = [e.pref for e in ais.turns[0].events if e.op == "add"]
    assert not first or set(first) & set(vague)                 # the first turn's too
    lit = by["LIT"]
    assert len([e for e in lit.turns[0].events if e.op == "add"]) <= 3
    assert len(lit.turns) > len(by["FIT"].turns) // 2


def test_a_turn_never_sees_a_later_change(tasks):
    """A preference is active only from the turn whose events introduce it, and the active
    list follows the events turn by turn."""
    for task in tasks:
        introduced: dict[str, int] = {}
        for node in task.turns:
            for e in node.events:
                if e.pref:
                    introduced.setdefault(e.pref, node.turn)
            for pid in node.active:
                assert introduced.get(pid, 99) <= node.turn, (task.task_id, node.turn, pid)
        chains = [[p for p in node.active] for node in task.turns]
        for active in chains:  # one version per chain at a time
            owners = [task.preferences[p].chain for p in active]
            assert len(owners) == len(set(owners))


def test_every_task_covers_its_tiers_behaviours(tasks):
    for task in tasks:
        assert "error_reporting" in task.behaviours
        if task.difficulty != "easy":
            assert {"clarification", "exploratory_inquiry", "local_revision"} <= set(
                task.behaviours), task.task_id
    pmr = next(t for t in tasks if t.hard_set == "PMR")
    assert "intent_redirection" in pmr.behaviours


def test_the_paper_mix_is_the_papers_400_tasks(tmp_path):
    """The paper's evaluation set: 100 easy, 100 mid, 50 of each hard set and no plain hard,
    interleaved so any prefix keeps the proportions; --size paper generates it by default."""
    from collections import Counter

    from bench_data.tripbench import PAPER_SPLITS, split_of
    from evaluator.benchmarks.tripbench.synthesis.generate import (
        DEFAULT_MIX,
        DEFAULT_TASKS,
        mix_of,
    )

    order = mix_of("paper", None)
    assert DEFAULT_MIX["paper"] == "paper" and DEFAULT_TASKS["paper"] == 400
    counts = Counter(split_of(*order[i % len(order)]) for i in range(400))
    assert counts == Counter(PAPER_SPLITS)
    assert Counter(split_of(*order[i]) for i in range(8)) == Counter(
        {k: v // 50 for k, v in PAPER_SPLITS.items()})
    with pytest.raises(ValueError, match="unknown task mix"):
        mix_of("small", "both")
    path, _ = generate_taskset(tmp_path, seed=0, tasks=8, mix="paper")
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["header"]["mix"] == "paper"
    got = Counter(split_of(json.loads(x)["difficulty"], json.loads(x).get("hard_set", ""))
                  for x in lines[1:])
    assert got == Counter({"easy": 2, "mid": 2, "LIT": 1, "FIT": 1, "AIS": 1, "PMR": 1})
