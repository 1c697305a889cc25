"""`agentsweep data list` / `data check` output and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.cli import main


def test_data_list_shows_sample_and_real(shared_data: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "list", "--data-dir", str(shared_data)]) == 0
    out = capsys.readouterr().out
    assert "travelbench  [TravelBench; data found]" in out
    assert "subsets: single_turn, multi_turn, unsolvable; protocols: single_turn" in out
    assert "vitabench  [VitaBench; data found]" in out
    assert "sample  [built-in sample of travelbench]" in out
    assert "tasks:   12 (single_turn 5, multi_turn 4, unsolvable 3)" in out
    assert "tasks:   1100 (single_turn 500, multi_turn 500, unsolvable 100)" in out
    assert "license: CC BY-NC 4.0" in out
    assert str(shared_data / "vitabench") in out


def test_data_list_without_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "list", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "travelbench  [TravelBench; data not found]" in out
    assert "no benchmark data found" in out


def test_data_check_prints_every_issue(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "multi_turn.jsonl"
    good = {"trace_id": "a", "time": "2025-10-24 10:00", "query": "q", "user_profile": "p"}
    path.write_text("\n".join([json.dumps(good), json.dumps({**good, "trace_id": "b",
                                                             "user_profile": None}),
                               "{broken", json.dumps(good)]) + "\n", encoding="utf-8")
    assert main(["data", "check", str(path)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.strip().splitlines()
    assert lines == [
        (f"{path}:2: field `user_profile`: required for multi_turn tasks "
         "(the user simulator's persona)"),
        f"{path}:3: invalid JSON: JSON is malformed: object keys must be strings at column 2",
        f"{path}:4: field `trace_id`: duplicate task id 'a' (first on line 1)",
    ]
    assert "1 good tasks, 3 issue(s)" in captured.err


def test_data_check_clean_file_and_schemas(shared_data: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "check", "sample"]) == 0
    assert "12 good tasks, 10 tools, 0 issue(s)" in capsys.readouterr().out
    schemas = shared_data / "travelbench" / "tool_schemas.json"
    assert main(["data", "check", str(schemas)]) == 0
    assert "10 good tools" in capsys.readouterr().out


def test_data_check_missing_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "check", "/no/such/file.jsonl"]) == 2
    assert "neither a dataset name" in capsys.readouterr().err
