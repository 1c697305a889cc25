"""The answer store: one append-only log per store, first writer wins across processes,
torn and damaged records never returned, old one-file-per-answer stores still read."""

from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path

from cache_store.answers import LOG_NAME, AnswerStore, frame
from cache_store.persist import content_address


def addr(i: int) -> str:
    return content_address("tool", f"params {i}", "model", "v1")


def test_round_trip_in_one_file_and_reopened(tmp_path: Path) -> None:
    s = AnswerStore(tmp_path / "sim")
    assert s.get(addr(0)) is None
    texts = {addr(i): f"answer {i} 雨\n{{\"x\": {i}}}" for i in range(200)}
    for a, t in texts.items():
        assert s.put(a, t) == t
    assert s.put(addr(0), "a later, different answer") == texts[addr(0)]  # first one wins
    s.close()
    assert [p.name for p in (tmp_path / "sim").iterdir()] == [LOG_NAME]  # no file per answer
    again = AnswerStore(tmp_path / "sim")
    assert len(again) == 200 and all(again.get(a) == t for a, t in texts.items())
    lone = "\ud800 lone surrogate"
    assert again.put(addr(999), lone) == lone and AnswerStore(tmp_path / "sim").get(addr(999)) == lone


def test_a_second_store_object_sees_the_first_ones_answers(tmp_path: Path) -> None:
    a, b = AnswerStore(tmp_path / "s"), AnswerStore(tmp_path / "s")
    assert b.get(addr(1)) is None  # indexed an empty log
    a.put(addr(1), "from a")
    assert b.get(addr(1)) == "from a" and b.put(addr(1), "from b") == "from a"
    assert len(a) == len(b) == 1


def test_a_torn_tail_is_ignored_then_cut_off_by_the_next_writer(tmp_path: Path) -> None:
    s = AnswerStore(tmp_path / "s")
    s.put(addr(1), "one")
    s.put(addr(2), "two")
    log = tmp_path / "s" / LOG_NAME
    before = log.read_bytes()
    good = len(before)
    with open(log, "ab") as f:  # a crash mid-write: a record's first half
        f.write(frame(addr(3), "three, never finished")[:50])
    fresh = AnswerStore(tmp_path / "s")
    assert fresh.get(addr(3)) is None and fresh.get(addr(2)) == "two"
    assert fresh.put(addr(3), "three") == "three"
    data = log.read_bytes()
    assert data[:good] == before and data[good:] == frame(addr(3), "three")
    assert [AnswerStore(tmp_path / "s").get(addr(i)) for i in (1, 2, 3)] == ["one", "two", "three"]


def test_a_damaged_record_inside_the_log_is_skipped(tmp_path: Path) -> None:
    s = AnswerStore(tmp_path / "s")
    for i in range(3):
        s.put(addr(i), f"answer {i}")
    log = tmp_path / "s" / LOG_NAME
    data = bytearray(log.read_bytes())
    at = data.index(b"answer 1")
    data[at] ^= 0x20  # a flipped bit: the checksum no longer matches
    log.write_bytes(bytes(data))
    fresh = AnswerStore(tmp_path / "s")
    assert fresh.get(addr(1)) is None and fresh.skipped >= 1
    assert fresh.get(addr(0)) == "answer 0" and fresh.get(addr(2)) == "answer 2"
    assert fresh.put(addr(1), "answer 1 again") == "answer 1 again"
    assert AnswerStore(tmp_path / "s").get(addr(1)) == "answer 1 again"


def test_an_old_one_file_per_answer_store_is_still_read_and_wins(tmp_path: Path) -> None:
    root = tmp_path / "old"
    a = addr(7)
    (root / a[:2]).mkdir(parents=True)
    (root / a[:2] / a).write_bytes("老答案".encode())
    s = AnswerStore(root)
    assert s.get(a) == "老答案" and s.put(a, "new") == "老答案"
    assert s.put(addr(8), "eight") == "eight" and AnswerStore(root).get(addr(8)) == "eight"


def _writer(root: str, tag: str, n: int, q: mp.Queue, go: mp.Event) -> None:
    s = AnswerStore(root)
    go.wait(60)  # all processes write at once
    q.put({i: s.put(addr(i), f"{tag}-{i}") for i in range(n)})


def test_concurrent_processes_agree_on_every_answer(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    q, go = ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=_writer, args=(str(tmp_path / "s"), f"p{k}", 100, q, go))
             for k in range(4)]
    for p in procs:
        p.start()
    go.set()
    results = [q.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(60)
    assert all(r == results[0] for r in results)  # every process got the same answers
    s = AnswerStore(tmp_path / "s")
    assert len(s) == 100 and {s.get(addr(i)) for i in range(100)} == set(results[0].values())
    size = os.path.getsize(tmp_path / "s" / LOG_NAME)
    assert size == sum(len(frame(addr(i), results[0][i])) for i in range(100))  # one record each
