"""The TRIP-Bench loader on a generated task set and on mutated files: tasks per difficulty,
the world next to the file, the flat task shape, and one-line issues naming file, line and
field; `agentsweep data check` / `data list` on a generated set."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench_data import registry
from bench_data.tripbench import FORMAT, TripTask, load_tripbench_file
from bench_data.types import TaskLoadError
from evaluator.benchmarks.tripbench.environment import ENVIRONMENT
from evaluator.benchmarks.tripbench.synthesis import generate_taskset
from evaluator.cli import main as cli


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tasks, _ = generate_taskset(tmp_path_factory.mktemp("gen"), seed=0, tasks=7)
    return tasks.parent


def _copy(generated: Path, tmp_path: Path) -> Path:
    out = tmp_path / "set"
    shutil.copytree(generated, out)
    return out


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _write(path: Path, rows: list) -> None:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")


def test_a_generated_set_loads_by_difficulty_with_its_world(generated):
    ts = registry.load_tasks(str(generated))
    assert ts.benchmark == "tripbench" and not ts.issues
    assert ts.subsets() == {"easy": 1, "mid": 1, "hard": 5}
    task = ts.tasks[0]
    assert task.source.endswith("tasks.jsonl:2") and task.extra["world"] == "world.sqlite"
    assert isinstance(task.payload, TripTask) and task.instructions.startswith(
        str(task.payload.trips["A"].number_of_people))
    assert ENVIRONMENT.world_path(task) == (generated / "world.sqlite").resolve()
    assert {t.extra["hard_set"] for t in registry.load_tasks(str(generated)).tasks} == {
        "", "LIT", "FIT", "AIS", "PMR"}


def test_the_subsets_are_the_evaluation_splits(generated):
    """`--subset` names a split (a hard set too, in any usual spelling) and `--limit N` takes
    N of each split; a task's subset stays its difficulty (its record key)."""
    assert FORMAT.subsets == ("easy", "mid", "hard", "LIT", "FIT", "AIS", "PMR")
    lit = registry.load_tasks(str(generated), subsets=["Hard LIT"])
    assert [(t.subset, t.extra["hard_set"], t.extra["split"]) for t in lit.tasks] == [
        ("hard", "LIT", "LIT")]
    assert [t.extra["split"] for t in registry.load_tasks(
        str(generated), subsets=["hard-fit", "pmr"]).tasks] == ["FIT", "PMR"]
    plain = registry.load_tasks(str(generated), subsets=["hard"])
    assert [t.extra["hard_set"] for t in plain.tasks] == [""]
    each = registry.load_tasks(str(generated), limit=1)
    assert sorted(t.extra["split"] for t in each.tasks) == sorted(FORMAT.subsets)
    with pytest.raises(ValueError, match="unknown subset"):
        registry.load_tasks(str(generated), subsets=["hardest"])


def test_the_file_alone_and_the_format(generated):
    path = generated / "tasks.jsonl"
    assert FORMAT.file_subset(path) == ""
    assert len(registry.load_tasks(str(path)).tasks) == 7
    assert FORMAT.file_subset(generated / "world.sqlite") is None


@pytest.mark.parametrize("mutate, field, needle", [
    (lambda r: r.pop("turns"), "turns", "missing required field"),
    (lambda r: r.update(difficulty="extreme"), "difficulty", "must be one of"),
    (lambda r: r.update(hard_set="XYZ"), "hard_set", "must be one of"),
    (lambda r: r["turns"][0].update(turn=5), "turns[0].turn", "expected 1"),
    (lambda r: r["turns"][-1]["active"].append("P999"), "active", "unknown preference"),
    (lambda r: r["turns"][0]["events"].append({"op": "dance"}), "op", "unknown op"),
    (lambda r: r["turns"][0].update(trip="Z"), "turns[0].trip", "unknown trip"),
    (lambda r: r["trips"]["A"].update(number_of_people=0), "number_of_people", ">= 1"),
    (lambda r: r["trips"]["A"].pop("origin"), "origin", "missing required field"),
    (lambda r: next(iter(r["preferences"].values()))["rubric"].update(type="NOPE"),
     "rubric", "NOPE"),
    (lambda r: next(iter(r["preferences"].values())).update(
        rubric={"type": "STAR", "bound": "high"}), "rubric", "Expected `object`"),
])
def test_a_mutated_record_is_one_issue_naming_file_line_and_field(generated, tmp_path, mutate,
                                                                  field, needle):
    out = _copy(generated, tmp_path)
    path = out / "tasks.jsonl"
    rows = _lines(path)
    mutate(rows[3])
    _write(path, rows)
    result = load_tripbench_file(path, skip_bad=True)
    assert len(result.tasks) == 6 and len(result.issues) == 1
    issue = result.issues[0]
    assert issue.path == str(path) and issue.line == 4
    if field:
        assert field in issue.field, issue
    assert needle in str(issue)
    assert str(issue).startswith(f"{path}:4: ") and "\n" not in str(issue)
    with pytest.raises(TaskLoadError, match=r"tasks\.jsonl:4"):
        load_tripbench_file(path)


def test_broken_json_a_duplicate_id_and_a_foreign_header(generated, tmp_path):
    out = _copy(generated, tmp_path)
    path = out / "tasks.jsonl"
    rows = _lines(path)
    rows[0]["header"]["format"] = "something-else"
    rows.append(rows[2])
    raw = [json.dumps(r) for r in rows]
    raw.insert(3, '{"task_id": "x", "turns": [')
    _write(path, raw)
    issues = load_tripbench_file(path, skip_bad=True).issues
    got = sorted((i.line, i.field) for i in issues)
    assert got == [(1, "header.format"), (4, ""), (10, "task_id")], issues
    assert "invalid JSON" in str(issues[1]) and "duplicate task id" in str(issues[2])


def test_the_flat_evaluation_shape_is_a_one_turn_task(tmp_path):
    path = tmp_path / "flat.jsonl"
    _write(path, [{"task_id": "f1", "origin": "Beijing", "stays": [{"city": "Shanghai",
                                                                    "nights": 2}],
                   "start_date": "2025-10-02", "end_date": "2025-10-04",
                   "number_of_people": 2,
                   "rubrics": [{"type": "STAR", "bound": {"min": 4}}], "difficulty": "mid"}])
    task = registry.load_tasks(str(path)).tasks[0]
    payload = task.payload
    assert task.subset == "mid" and len(payload.turns) == 1
    assert payload.active_rubrics(1) == [{"type": "STAR", "bound": {"min": 4}}]


def test_data_check_and_list_report_a_generated_set(generated, tmp_path, capsys):
    assert cli(["data", "check", str(generated)]) == 0
    assert "7 good tasks, 0 issue(s)" in capsys.readouterr().out
    data_dir = tmp_path / "data"
    shutil.copytree(generated, data_dir / "tripbench")
    assert cli(["data", "list", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    block = out[out.index("tripbench  [TRIP-Bench"):]
    assert "data found" in block.splitlines()[0]
    assert "tasks:   7 (easy 1, mid 1, hard 1, LIT 1, FIT 1, AIS 1, PMR 1)" in block
    bad = _copy(generated, tmp_path)
    rows = _lines(bad / "tasks.jsonl")
    rows[2]["difficulty"] = "extreme"
    _write(bad / "tasks.jsonl", rows)
    assert cli(["data", "check", str(bad)]) == 1
    captured = capsys.readouterr()
    assert captured.out.count("tasks.jsonl:3: field `difficulty`") == 1


def test_generate_refuses_a_non_empty_directory_without_force(tmp_path, capsys):
    out = tmp_path / "g"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    assert cli(["data", "tripbench", "generate", "--out", str(out), "--tasks", "2"]) == 2
    assert "not empty" in capsys.readouterr().err
    assert cli(["data", "tripbench", "generate", "--out", str(out), "--tasks", "2",
                "--force"]) == 0
    assert (out / "tasks.jsonl").is_file() and (out / "keep.txt").is_file()
    assert "tasks: " in capsys.readouterr().out
