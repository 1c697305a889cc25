"""perf.index_search_lag on a small index: both modes run side by side with the same
neighbours, and the printed table has its rows and ratio line."""

from __future__ import annotations

import pytest

pytest.importorskip("faiss")
from perf import index_search_lag


def test_small_run_prints_both_modes_with_the_same_neighbours(tmp_path, monkeypatch,
                                                               capsys) -> None:
    monkeypatch.setenv("AGENTSWEEP_PERF_DIR", str(tmp_path))
    code = index_search_lag.main(["--rows", "3000", "--dim", "64", "--searches", "20",
                                  "--episodes", "4"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "3,000 rows x 64 dims" in out
    assert "inline (before)" in out and "search thread (now)" in out
    assert "same neighbours: True" in out
    assert list(tmp_path.iterdir()) == []  # the store and index are removed
