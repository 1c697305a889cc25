"""The single-writer results file: batches, torn last lines, corrupt lines."""

from __future__ import annotations

import pytest

from backends.types import ChatMessage
from evaluator.records import EpisodeRecord, UnitId
from evaluator.run.results import (
    EPISODES_FILE,
    ResultsCorrupt,
    ResultWriter,
    finished_keys,
    iter_records,
    scan_lines,
)


def record(task: str, trial: int = 0) -> EpisodeRecord:
    return EpisodeRecord(
        unit=UnitId(run="r", task=f"b/s/{task}", trial=trial, seed=1), benchmark="b",
        subset="s", task_id=task, messages=[ChatMessage(role="user", content="hi " + task)],
    )


async def test_writer_appends_every_record_once(tmp_path):
    writer = ResultWriter(tmp_path / EPISODES_FILE).start()
    for i in range(50):
        writer.put(record(f"t{i}"))
    await writer.flush()
    assert writer.written == 50
    for i in range(50, 60):
        writer.put(record(f"t{i}"))
    await writer.close()
    recs = list(iter_records(tmp_path))
    assert [r.task_id for r in recs] == [f"t{i}" for i in range(60)]
    assert recs[3].messages[0].content == "hi t3"
    assert writer.batches < 60  # batched


async def test_torn_last_line_is_ignored_then_repaired(tmp_path):
    writer = ResultWriter(tmp_path / EPISODES_FILE).start()
    writer.put(record("a"))
    writer.put(record("b"))
    await writer.close()
    path = tmp_path / EPISODES_FILE
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"unit":{"run":"r","task":"b/s/c","tri')  # kill -9 mid-write
    assert finished_keys(tmp_path) == {"b/s/a#0", "b/s/b#0"}
    assert path.read_bytes() != whole  # reading alone does not modify
    assert finished_keys(tmp_path, repair=True) == {"b/s/a#0", "b/s/b#0"}
    assert path.read_bytes() == whole
    writer = ResultWriter(path).start()  # a resumed writer appends on a clean line
    writer.put(record("c"))
    await writer.close()
    assert [r.task_id for r in iter_records(tmp_path)] == ["a", "b", "c"]


async def test_writer_start_repairs_a_torn_tail(tmp_path):
    path = tmp_path / EPISODES_FILE
    path.write_bytes(b'{"unit": {"run"')
    writer = ResultWriter(path).start()
    writer.put(record("x"))
    await writer.close()
    assert [r.task_id for r in iter_records(tmp_path)] == ["x"]


def test_corrupt_middle_line_names_file_and_line(tmp_path):
    path = tmp_path / EPISODES_FILE
    path.write_bytes(b"\n".join([
        __import__("msgspec").json.encode(record("a")), b"garbage", b""]))
    with pytest.raises(ResultsCorrupt, match=r"episodes.jsonl:2"):
        finished_keys(tmp_path)


def test_scan_missing_file_is_empty(tmp_path):
    assert list(scan_lines(tmp_path / "none.jsonl")) == []
    assert finished_keys(tmp_path) == set()
