"""`python -m perf.vitabench_env` runs (a smoke run over 20 episodes; the figures themselves
are in docs/vitabench.md). Skipped without the shared VitaBench data."""

from __future__ import annotations

import pytest

from perf import vitabench_env as bench

pytestmark = pytest.mark.skipif(not (bench.DEFAULT_DATA / "delivery" / "tasks_en.json")
                                .is_file(), reason="VitaBench data not present")


def test_both_modes_give_the_same_answers_and_copy_on_write_is_smaller(capsys):
    assert bench.main(["--episodes", "20"]) == 0
    out = capsys.readouterr().out
    assert "20 live episodes over 200 real task databases" in out
    rows = {line[:15].strip(): line[15:].split() for line in out.splitlines()
            if line.startswith(("copy-on-write  ", "deep copy  "))}
    cow, deep = rows["copy-on-write"], rows["deep copy"]
    assert cow[2] == deep[2] == "230"  # 10 delivery x 12 calls + 10 in-store x 11
    assert float(cow[4]) < float(deep[4]) and float(cow[6]) < float(deep[6])  # KiB
    assert "answers identical" in out


def test_scripts_use_the_tasks_own_records():
    tasks = bench.load_tasks(bench.DEFAULT_DATA)
    assert [t.domain for t in tasks[:4]] == ["delivery", "instore", "delivery", "instore"]
    delivery, instore = bench.script(tasks[0]), bench.script(tasks[1])
    assert len(delivery) == 12 and len(instore) == 11
    store_id = next(iter(tasks[0].env["stores"]))
    assert ("get_delivery_store_info", {"store_id": store_id}) in delivery
