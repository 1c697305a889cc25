"""TravelBench loaders: real files, limits, and malformed lines reported by file/line/field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench_data.types import TaskLoadError
from evaluator.benchmarks.travelbench.data import (
    load_tool_schemas,
    load_travelbench_file,
    subset_for_file,
)

GOOD = {"trace_id": "t1", "time": "2025-10-24 10:00", "query": "Weather in Hangzhou?"}


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def rec(**over: object) -> str:
    return json.dumps({**GOOD, **over}, ensure_ascii=False)


@pytest.mark.parametrize(("name", "subset", "count"), [
    ("single_turn.jsonl", "single_turn", 500),
    ("multi_turn.jsonl", "multi_turn", 500),
    ("unsolve.jsonl", "unsolvable", 100),
])
def test_real_files_load(travelbench_dir: Path, name: str, subset: str, count: int) -> None:
    result = load_travelbench_file(travelbench_dir / name)
    assert result.issues == []
    assert len(result.tasks) == count
    assert {t.subset for t in result.tasks} == {subset}
    assert len({t.task_id for t in result.tasks}) == count
    first = result.tasks[0]
    assert first.benchmark == "travelbench"
    assert first.source == f"{travelbench_dir / name}:1"
    assert first.payload is not None and first.payload.trace_id == first.task_id
    if subset == "multi_turn":
        assert all(t.payload and t.payload.user_profile for t in result.tasks)


def test_unsolvable_flags_present(travelbench_dir: Path) -> None:
    tasks = load_travelbench_file(travelbench_dir / "unsolve.jsonl").tasks
    flagged = [t for t in tasks if t.payload and (t.payload.missing_tool or t.payload.missing_info
                                                 or t.payload.no_actionable)]
    assert len(flagged) == 100


def test_limit_keeps_first_in_file_order(travelbench_dir: Path) -> None:
    full = load_travelbench_file(travelbench_dir / "single_turn.jsonl").tasks
    head = load_travelbench_file(travelbench_dir / "single_turn.jsonl", limit=7).tasks
    assert [t.task_id for t in head] == [t.task_id for t in full[:7]]


def test_tool_schemas_order(travelbench_dir: Path) -> None:
    tools = load_tool_schemas(travelbench_dir / "tool_schemas.json")
    assert [t["function"]["name"] for t in tools] == [
        "travel_search_flights", "travel_search_trains", "weather_current_conditions",
        "weather_forecast_days", "map_compute_routes", "map_search_places",
        "map_search_along_route", "map_search_central_places", "map_search_ranking_list",
        "web_search"]


def test_subset_for_file_names() -> None:
    assert subset_for_file(Path("x/unsolve.jsonl")) == "unsolvable"
    assert subset_for_file(Path("multi_turn.jsonl")) == "multi_turn"
    assert subset_for_file(Path("other.jsonl")) is None


def test_wrong_type_names_line_and_field(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "single_turn.jsonl", [rec(), rec(trace_id="t2", time=20251024)])
    with pytest.raises(TaskLoadError) as err:
        load_travelbench_file(path)
    (issue,) = err.value.issues
    assert (issue.path, issue.line, issue.field) == (str(path), 2, "time")
    assert "Expected `str`, got `int`" in issue.message
    assert f"{path}:2: field `time`" in str(err.value)


def test_missing_required_field(tmp_path: Path) -> None:
    bad = json.dumps({"trace_id": "t2", "time": "2025-10-24 10:00"})
    path = write_lines(tmp_path / "single_turn.jsonl", [rec(), bad])
    with pytest.raises(TaskLoadError) as err:
        load_travelbench_file(path)
    (issue,) = err.value.issues
    assert (issue.line, issue.field, issue.message) == (2, "query", "missing required field")


def test_bad_json_reports_column(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "single_turn.jsonl", [rec(), '{"trace_id": "t2", oops}'])
    with pytest.raises(TaskLoadError) as err:
        load_travelbench_file(path)
    (issue,) = err.value.issues
    assert issue.line == 2 and issue.field == ""
    assert "invalid JSON" in issue.message and "column 20" in issue.message  # the `o` of oops


def test_bool_flag_wrong_type(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "unsolve.jsonl", [rec(missing_tool="yes")])
    with pytest.raises(TaskLoadError) as err:
        load_travelbench_file(path)
    assert err.value.issues[0].field == "missing_tool"


def test_duplicate_id_is_an_error(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "single_turn.jsonl", [rec(), rec(query="again")])
    with pytest.raises(TaskLoadError) as err:
        load_travelbench_file(path)
    (issue,) = err.value.issues
    assert (issue.line, issue.field) == (2, "trace_id")
    assert "duplicate" in issue.message and "line 1" in issue.message


def test_multi_turn_requires_user_profile(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "multi_turn.jsonl",
                       [rec(user_profile="likes trains"), rec(trace_id="t2")])
    result = load_travelbench_file(path, skip_bad=True)
    assert [t.task_id for t in result.tasks] == ["t1"]
    assert [(i.line, i.field) for i in result.issues] == [(2, "user_profile")]


def test_unparseable_time_is_reported(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "single_turn.jsonl", [rec(time="tomorrow morning")])
    result = load_travelbench_file(path, skip_bad=True)
    assert result.tasks == [] and result.issues[0].field == "time"


def test_skip_bad_keeps_the_rest(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "single_turn.jsonl", [
        rec(), "", "{not json", rec(trace_id="t3", time=5), rec(trace_id="t4"),
        json.dumps({"trace_id": "t5"}), rec(), rec(trace_id="t8"),
    ])
    result = load_travelbench_file(path, skip_bad=True)
    assert [t.task_id for t in result.tasks] == ["t1", "t4", "t8"]
    # line 6 lacks both time and query; msgspec names the first missing field
    assert [(i.line, i.field) for i in result.issues] == [
        (3, ""), (4, "time"), (6, "time"), (7, "trace_id")]
    assert result.tasks[2].source.endswith(":8")


def test_tool_schema_errors_name_entry(tmp_path: Path) -> None:
    path = tmp_path / "tool_schemas.json"
    good = {"type": "function", "function": {"name": "web_search",
                                             "parameters": {"type": "object", "properties": {}}}}
    bad = {"type": "function", "function": {"name": 3, "parameters": {"type": "object"}}}
    path.write_text(json.dumps([good, bad], indent=2), encoding="utf-8")
    with pytest.raises(TaskLoadError) as err:
        load_tool_schemas(path)
    (issue,) = err.value.issues
    assert issue.field == "[1].function.name"
    assert issue.line == 12  # the line where the second element starts
