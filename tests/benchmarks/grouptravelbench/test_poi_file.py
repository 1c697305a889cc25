"""The reference's POI table as a file: where a run finds it (`--poi-table`, else
`poi2category/all_poi_by_city.json` beside the tasks, "none" for no table), what `check_poi_file`
reports (file, line of the place, field), what `agentsweep data check` prints for it, and what
the rule judge records about the table it used."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from bench_data.types import Task
from evaluator.benchmarks.base import JudgeInput
from evaluator.benchmarks.grouptravelbench.chat import message
from evaluator.benchmarks.grouptravelbench.options import GroupOptions
from evaluator.benchmarks.grouptravelbench.poi_file import (
    PoiTableError,
    beside,
    check_poi_file,
    is_poi_file,
    load_poi_table,
    path_tag,
    resolve,
)
from evaluator.benchmarks.grouptravelbench.scoring import metrics, metrics_version
from evaluator.cli.data import check_path
from evaluator.judges.settings import JudgeSettings
from evaluator.records import EpisodeRecord, UnitId

from .conftest import GROUP, PLAN, POIS, USERS


def _write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), "utf-8")
    return path


def test_the_table_is_found_by_option_beside_the_tasks_or_not_at_all(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    assert beside(tasks) == tmp_path / "poi2category" / "all_poi_by_city.json"
    assert resolve("", tasks) is None                       # nothing beside the tasks yet
    table = _write(beside(tasks), POIS)
    assert resolve("", tasks) == table
    assert resolve("", None) is None
    other = _write(tmp_path / "elsewhere.json", POIS)
    assert resolve(str(other), tasks) == other              # the option wins
    assert resolve("none", tasks) is None                   # "none" even with one beside
    assert is_poi_file(table) and is_poi_file(tmp_path / "all_poi_by_city.json")
    assert not is_poi_file(tasks) and not is_poi_file(other)
    assert path_tag(None) == "none" and path_tag(table) == path_tag(table) != path_tag(other)


def test_a_good_table_has_no_issues_and_loads_once(tmp_path):
    path = _write(tmp_path / "all_poi_by_city.json", POIS)
    data, issues = check_poi_file(path)
    assert issues == [] and data == POIS
    first = load_poi_table(path)
    assert load_poi_table(path) is first                    # cached per file and mtime
    assert first.category("大雁塔", "西安市") == "寺庙" and len(first) == 8


def test_problems_are_named_by_file_line_and_field(tmp_path):
    bad = {"西安市": [
        {"name": "大雁塔", "poi_type": "attractions", "custom_category": "寺庙",
         "opening_hours": None},
        {"name": "兵马俑", "poi_type": "attractions", "custom_category": 3,
         "opening_hours": {"always_open": "yes", "rules": [
             {"weekdays": [0, 8], "date_range": {"start": "13-01", "end": "12-31"},
              "time_windows": [{"open": "8:00", "close": "17:00"}]}]}},
        {"name": "", "poi_type": "food"},
    ], "北京市": "not a list"}
    path = _write(tmp_path / "all_poi_by_city.json", bad)
    lines = path.read_text("utf-8").split("\n")
    _, issues = check_poi_file(path)
    where = {i.field: i for i in issues}
    line_of_second = next(n for n, s in enumerate(lines, 1) if '"兵马俑"' in s) - 1   # its "{"
    assert lines[line_of_second - 1].strip() == "{"
    for field in ("西安市[1].custom_category", "西安市[1].opening_hours.always_open",
                  "西安市[1].opening_hours.rules[0].weekdays",
                  "西安市[1].opening_hours.rules[0].date_range.start",
                  "西安市[1].opening_hours.rules[0].time_windows[0].open"):
        assert where[field].line == line_of_second, field
        assert str(where[field]).startswith(f"{path}:{line_of_second}: ")
    third = next(n for n, s in enumerate(lines, 1) if '"name": ""' in s) - 1
    assert where["西安市[2].name"].line == third
    assert "北京市" in where and "must be a list" in where["北京市"].message
    assert "date_range.end" not in " ".join(where)          # "12-31" is a date
    # the loader refuses with the first problem and points at data check
    with pytest.raises(PoiTableError) as exc:
        load_poi_table(path)
    assert f"{path}:{line_of_second}" in str(exc.value) and "agentsweep data check" in str(exc.value)


def test_broken_json_and_other_shapes_are_named_once(tmp_path):
    path = tmp_path / "all_poi_by_city.json"
    path.write_text('{"西安市": [\n {"name": "大雁塔"},\n {"name": "x",}\n]}', "utf-8")
    data, issues = check_poi_file(path)
    assert data is None and len(issues) == 1
    assert issues[0].line == 3 and "not valid JSON" in issues[0].message
    path.write_text("[1, 2]", "utf-8")
    _, issues = check_poi_file(path)
    assert issues[0].line == 1 and "city -> list of places" in issues[0].message
    _, issues = check_poi_file(tmp_path / "missing.json")
    assert "cannot be read" in issues[0].message
    with pytest.raises(PoiTableError, match="not found"):
        load_poi_table(tmp_path / "missing.json")


def test_data_check_reads_the_table_beside_the_tasks_and_the_file_itself(tmp_path, sample_path):
    data = tmp_path / "grouptravelbench"
    data.mkdir()
    shutil.copy(sample_path, data / sample_path.name)
    loaded, issues = check_path(str(data))
    assert issues == [] and "POI table" not in loaded       # none beside the tasks: no line
    table = _write(data / "poi2category" / "all_poi_by_city.json", POIS)
    loaded, issues = check_path(str(data))
    assert issues == [] and f"POI table {table}: 8 places in 1 cities" in loaded
    loaded, issues = check_path(str(table))
    assert issues == [] and loaded == f"POI table {table}: 8 places in 1 cities"
    broken = dict(POIS, 北京市=[{"name": "故宫", "opening_hours": {"rules": "daily"}}])
    _write(table, broken)
    _, issues = check_path(str(data))
    assert [(i.field, i.message) for i in issues] == [
        ("北京市[0].opening_hours.rules", "must be a list")]
    assert issues[0].line > 1 and issues[0].path == str(table)


def _input(task_file: Path, options: GroupOptions) -> JudgeInput:
    chat = [message("User1", "我想去西安"),
            message("Agent", "```json\n" + json.dumps(PLAN, ensure_ascii=False) + "\n```")]
    record = EpisodeRecord(unit=UnitId("r", "grouptravelbench/test/t1", 0, 1),
                           benchmark="grouptravelbench", subset="test", task_id="t1",
                           messages=[], termination="plan_generated",
                           extra={"chat": chat, "users": USERS, "plan_generated": True,
                                  "effective": GROUP, "agent_table": None})
    task = Task(benchmark="grouptravelbench", subset="test", task_id="t1",
                source=f"{task_file}:1")
    return JudgeInput(record=record, task=task, thash="h", settings=JudgeSettings(),
                      prompts=None, tools=None, options=options)


def test_the_rule_judge_names_the_table_it_used(tmp_path):
    tasks = tmp_path / "test.jsonl"
    tasks.write_text("", "utf-8")
    default, none = GroupOptions(), GroupOptions(poi_table="none")
    bare = metrics(_input(tasks, default))
    assert bare.reasoning["_poi_table"] == "none" and bare.error is None
    table = _write(beside(tasks), POIS)
    found = metrics(_input(tasks, default))
    assert found.reasoning["_poi_table"] == str(table)
    assert found.scores["gu"] > bare.scores["gu"]           # restaurants, hotels now count
    assert found.prompt_version == metrics_version(default) == "gtb-metrics-v3"
    skipped = metrics(_input(tasks, none))
    assert skipped.reasoning["_poi_table"] == "none" and skipped.scores == bare.scores
    assert skipped.prompt_version == "gtb-metrics-v3+poi=none"
    given = GroupOptions(poi_table=str(table))
    assert metrics(_input(tasks, given)).prompt_version == f"gtb-metrics-v3+poi={path_tag(table)}"
    # a broken table is the judgement's error (file, line, field), never a silent score
    _write(table, {"西安市": [{"name": "大雁塔", "custom_category": 1}]})
    os.utime(table, ns=(1, 1))                               # a new mtime for the cache key
    broken = metrics(_input(tasks, default))
    assert broken.score is None and "custom_category" in broken.error
    assert f"{table}:" in broken.error
