"""perf.cache_store_index on a tiny matrix: both designs measured side by side, the same
neighbours, the copy design's larger process counts extrapolated and labelled, files removed."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("faiss")
pytest.importorskip("psutil")
from kernels.mapped import mapped_flat_supported
from perf import cache_store_index


@pytest.mark.skipif(not mapped_flat_supported(), reason="needs FAISS >= 1.11 on Linux or macOS")
def test_small_run_compares_the_designs(tmp_path: Path, capsys) -> None:
    result = cache_store_index.run(tmp_path, rows=2000, dim=16, procs=(1, 2), old_procs=(1,),
                                   exact_queries=3, ivf_queries=20)
    assert result["same"] == {"approximate": (60, 60), "exact": (9, 9)}
    assert set(result["runs"]) == {(d, m, c) for m in ("approximate", "exact")
                                   for d, c in (("copy", 1), ("mapped", 1), ("mapped", 2))}
    for r in result["runs"].values():
        assert all(p > 0 for p in r["pss"])
    out = capsys.readouterr().out
    assert "SYNTHETIC 2,000 x 16" in out and "(extrapolated)" in out
    assert "approximate: mapped and copy return the same top-8 (ids, order) on 60/60" in out
    assert list(tmp_path.iterdir()) == []        # matrix and IVF deleted without --keep
