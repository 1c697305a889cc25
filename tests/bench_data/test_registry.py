"""Dataset registry: names, paths, data-dir resolution, subsets and limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench_data import registry
from bench_data.registry import list_datasets, load_tasks
from bench_data.types import TaskLoadError


def test_real_travelbench_by_name(shared_data: Path) -> None:
    ts = load_tasks("travelbench", data_dir=shared_data)
    assert ts.subsets() == {"single_turn": 500, "multi_turn": 500, "unsolvable": 100}
    assert len(ts.tool_schemas) == 10 and ts.license == "CC BY-NC 4.0"
    assert [p.name for p in ts.files] == ["single_turn.jsonl", "multi_turn.jsonl",
                                          "unsolve.jsonl", "tool_schemas.json"]


def test_subsets_and_limit_per_subset(shared_data: Path) -> None:
    ts = load_tasks("travelbench", data_dir=shared_data, subsets=["unsolve", "multi_turn"],
                    limit=4)
    assert ts.subsets() == {"multi_turn": 4, "unsolvable": 4}
    assert [t.task_id for t in ts.tasks if t.subset == "unsolvable"] == [
        t.task_id for t in load_tasks("travelbench", data_dir=shared_data,
                                      subsets=["unsolvable"]).tasks[:4]]
    assert [p.name for p in ts.files] == ["multi_turn.jsonl", "unsolve.jsonl",
                                          "tool_schemas.json"]


def test_vitabench_by_name(shared_data: Path) -> None:
    ts = load_tasks("vitabench", data_dir=shared_data)
    assert ts.subsets() == {"delivery": 100, "instore": 100}
    assert all(t.rubrics for t in ts.tasks) and ts.tool_schemas == []


def test_env_data_dir(shared_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(registry.DATA_DIR_ENV, str(shared_data))
    assert registry.resolve_data_dir() == shared_data
    assert load_tasks("travelbench", subsets=["single_turn"], limit=1).tasks[0].task_id


def test_missing_data_dir_is_a_clear_error(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(registry.DATA_DIR_ENV, str(tmp_path / "nope"))
    with pytest.raises(FileNotFoundError, match="AGENTSWEEP_DATA_DIR"):
        load_tasks("travelbench")
    with pytest.raises(FileNotFoundError, match="travelbench"):
        load_tasks("travelbench", data_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="neither a dataset name"):
        load_tasks(str(tmp_path / "missing.jsonl"))


def test_unknown_subset_lists_available() -> None:
    with pytest.raises(ValueError, match="available: single_turn, multi_turn, unsolvable"):
        load_tasks("sample", subsets=["triple_turn"])


def test_sample_needs_no_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(registry.DATA_DIR_ENV, str(tmp_path / "absent"))
    ts = load_tasks("sample", limit=1)
    assert ts.subsets() == {"single_turn": 1, "multi_turn": 1, "unsolvable": 1}


def test_directory_path_with_bad_line(tmp_path: Path) -> None:
    good = {"trace_id": "a", "time": "2025-10-24 10:00", "query": "q"}
    (tmp_path / "single_turn.jsonl").write_text(
        json.dumps(good) + "\n" + json.dumps({**good, "trace_id": 7}) + "\n", encoding="utf-8")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "web_search_cache.json").write_text("{}", encoding="utf-8")
    with pytest.raises(TaskLoadError) as err:
        load_tasks(str(tmp_path))
    assert err.value.issues[0].line == 2 and err.value.issues[0].field == "trace_id"
    ts = load_tasks(str(tmp_path), skip_bad=True)
    assert len(ts.tasks) == 1 and len(ts.issues) == 1
    assert ts.cache_dir == tmp_path / "cache" and ts.tool_schemas == []
    assert ts.license == "unknown (no LICENSE file)"


def test_single_file_path_infers_subset(shared_data: Path) -> None:
    ts = load_tasks(str(shared_data / "travelbench" / "unsolve.jsonl"), limit=2)
    assert ts.subsets() == {"unsolvable": 2} and len(ts.tool_schemas) == 10
    ts = load_tasks(str(shared_data / "vitabench" / "instore" / "tasks_en.json"), limit=3)
    assert ts.benchmark == "vitabench" and ts.subsets() == {"instore": 3}
    ts = load_tasks(str(shared_data / "grouptravelbench" / "test_sample.jsonl"), limit=3)
    assert ts.benchmark == "grouptravelbench" and ts.subsets() == {"test": 3}


def test_list_datasets(shared_data: Path) -> None:
    infos = {i.name: i for i in list_datasets(shared_data)}
    assert infos["sample"].builtin and infos["sample"].task_count == 12
    assert infos["travelbench"].subsets == {"single_turn": 500, "multi_turn": 500,
                                            "unsolvable": 100}
    assert infos["vitabench"].subsets == {"delivery": 100, "instore": 100}
    assert infos["vitabench"].license == "MIT"
    assert infos["grouptravelbench"].task_count == 120


def test_list_datasets_without_data(tmp_path: Path) -> None:
    infos = {i.name: i for i in list_datasets(tmp_path)}
    assert infos["sample"].available
    assert not infos["travelbench"].available and infos["travelbench"].subsets == {}
