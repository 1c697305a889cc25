"""The loader on files the tests build in the release's format: a well-formed file loads
(under any name, as its own subset); a member whose preference table has the wrong shape is
one issue naming the file, the line and the member's field, and the rest still loads."""

from __future__ import annotations

import copy
import json

import pytest

from bench_data.types import TaskLoadError
from evaluator.benchmarks.grouptravelbench.data import load_grouptravel_file

from .conftest import GROUP


def _line(task_id: str, group=GROUP) -> str:
    return json.dumps({"task_id": task_id, "time": "2025-09-01", "query": "西安两日游",
                       "context": "出发城市：北京市", "user_preferences": group,
                       "initial_messages": [{"role": "User1", "content": "去西安"}],
                       "metadata": {"cities": ["西安市"]}, "difficulty_type": "easy"},
                      ensure_ascii=False)


def test_a_built_file_loads_as_its_own_subset(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(_line("a") + "\n" + _line("b") + "\n", encoding="utf-8")
    tasks = load_grouptravel_file(path).tasks
    assert [t.task_id for t in tasks] == ["a", "b"] and {t.subset for t in tasks} == {"mine"}
    assert tasks[0].payload.difficulty_type == "easy"


@pytest.mark.parametrize("path, value", [
    (("User2", "preference", "global_constraints", "avg_budget"), "lots"),
    (("User1", "preference", "global_constraints", "transport", "must"), "高铁"),
    (("User1", "preference", "city_specific_preferences"), []),
])
def test_a_bad_table_is_one_issue_naming_file_line_and_member(tmp_path, path, value):
    group = copy.deepcopy(GROUP)
    slot = group
    for key in path[:-1]:
        slot = slot[key]
    slot[path[-1]] = value
    f = tmp_path / "bad.jsonl"
    f.write_text(_line("ok") + "\n" + _line("bad", group) + "\n", encoding="utf-8")
    result = load_grouptravel_file(f, skip_bad=True)
    assert [t.task_id for t in result.tasks] == ["ok"] and len(result.issues) == 1
    issue = str(result.issues[0])
    assert issue.startswith(f"{f}:2: field `user_preferences.{path[0]}`") and "\n" not in issue
    with pytest.raises(TaskLoadError):
        load_grouptravel_file(f)
