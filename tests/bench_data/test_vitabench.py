"""VitaBench and GroupTravelBench loaders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench_data.types import TaskLoadError
from evaluator.benchmarks.grouptravelbench.data import GroupTravelTask, load_grouptravel_file
from evaluator.benchmarks.vitabench.data import load_vitabench_file


@pytest.mark.parametrize("domain", ["delivery", "instore"])
def test_real_vitabench_loads(vitabench_dir: Path, domain: str) -> None:
    result = load_vitabench_file(vitabench_dir / domain / "tasks_en.json")
    assert result.issues == []
    assert len(result.tasks) == 100
    for task in result.tasks:
        assert task.benchmark == "vitabench" and task.subset == domain
        assert task.rubrics and all(isinstance(r, str) and r for r in task.rubrics)
        assert task.instructions.strip()
        assert "environment" in task.extra and task.extra["time"]
    first = result.tasks[0]
    raw = json.loads((vitabench_dir / domain / "tasks_en.json").read_text(encoding="utf-8"))[0]
    assert first.task_id == raw["id"]
    state = [r for es in raw["evaluation_criteria"]["expected_states"]
             for r in es["state_rubrics"]]
    assert first.rubrics == list(dict.fromkeys(state))
    assert first.instructions.startswith(raw["instructions"].strip())
    assert first.extra["environment"] == raw["environment"]
    assert first.source.endswith(":2")  # first element starts on line 2 of the array file


# Rubrics judged per domain by `judge.rubric_set`, counted with python3 on the English files
# (exact strings, de-duplicated per task): the Chinese originals' overall and state lists are
# one set, so `state` (the default) judges each requirement once; the reference code's
# `union` keeps both English wordings of most of them.
RUBRIC_COUNTS = {"delivery": {"state": 735, "overall": 735, "union": 931},
                 "instore": {"state": 1264, "overall": 1263, "union": 2104}}


@pytest.mark.parametrize("domain", ["delivery", "instore"])
def test_rubric_set_counts_on_the_real_files(vitabench_dir: Path, domain: str) -> None:
    tasks = load_vitabench_file(vitabench_dir / domain / "tasks_en.json").tasks
    counts = {name: sum(len(t.extra["rubric_sets"][name]) for t in tasks)
              for name in ("state", "overall", "union")}
    assert counts == RUBRIC_COUNTS[domain]
    assert sum(len(t.rubrics) for t in tasks) == counts["state"]


def vita_record(task_id: str, rubrics: object = ("The order is for 2 people",)) -> dict:
    return {"id": task_id, "domain": "delivery", "instructions": "Order lunch.",
            "environment": {"time": "2025-06-21 11:20:00"},
            "user_scenario": {"user_profile": {"occupation": "Nurse"}},
            "evaluation_criteria": {"overall_rubrics": list(rubrics) if isinstance(rubrics, tuple)
                                    else rubrics, "expected_states": []}}


def test_vitabench_bad_records(tmp_path: Path) -> None:
    path = tmp_path / "delivery" / "tasks_en.json"
    path.parent.mkdir()
    records = [vita_record("a"), vita_record("b", rubrics="not a list"), vita_record("a"),
               vita_record("c", rubrics=()), vita_record("d")]
    path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    with pytest.raises(TaskLoadError):
        load_vitabench_file(path)
    result = load_vitabench_file(path, skip_bad=True)
    assert [t.task_id for t in result.tasks] == ["a", "d"]
    fields = [i.field for i in result.issues]
    assert fields == ["[1].evaluation_criteria.overall_rubrics", "[2].id",
                      "[3].evaluation_criteria.overall_rubrics"]
    assert all(i.line > 1 for i in result.issues)
    assert "Your profile:\n- occupation: Nurse" in result.tasks[0].instructions


def test_vitabench_truncated_file(tmp_path: Path) -> None:
    path = tmp_path / "tasks_en.json"
    path.write_text(json.dumps([vita_record("a")], indent=1)[:-20], encoding="utf-8")
    result = load_vitabench_file(path, skip_bad=True)
    assert result.tasks == [] and "invalid JSON" in result.issues[0].message


def test_real_grouptravelbench_loads(grouptravel_dir: Path) -> None:
    result = load_grouptravel_file(grouptravel_dir / "test_sample.jsonl")
    assert len(result.tasks) == 120 and result.issues == []
    task = result.tasks[0]
    assert task.benchmark == "grouptravelbench" and task.subset == "test"
    assert isinstance(task.payload, GroupTravelTask) and task.payload.query == task.instructions
    assert task.extra["user_preferences"] and task.extra["initial_messages"]


def test_vitabench_state_rubrics_must_be_strings(tmp_path: Path) -> None:
    record = vita_record("t1")
    record["evaluation_criteria"]["expected_states"] = [
        {"state_rubrics": ["paid"]}, {"state_rubrics": ["ok", 3]}]
    path = tmp_path / "delivery" / "tasks_en.json"
    path.parent.mkdir()
    path.write_text(json.dumps([record]))
    with pytest.raises(TaskLoadError) as info:
        load_vitabench_file(path)
    assert "[0].evaluation_criteria.expected_states[1].state_rubrics" in str(info.value)
    assert "must be a list of strings" in str(info.value)
