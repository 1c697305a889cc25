"""perf.gpu_check: every backend this machine has is measured and scored against exact search;
those it lacks are listed with the reason (here: no GPU)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")
from perf import gpu_check


def test_small_run_scores_each_backend_and_lists_the_missing(tmp_path, capsys) -> None:
    out = tmp_path / "g.json"
    assert gpu_check.main(["--rows", "3000", "--dim", "32", "--queries", "30", "--single", "3",
                           "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    names = [r["backend"] for r in data["results"]]
    assert "torch cpu fp32" in names
    for r in data["results"]:
        if "ivf" in r["backend"]:                     # approximate
            assert r["agree_at_k"] > 0.9
        else:
            assert r["agree_at_k"] == pytest.approx(1.0)
        assert r["qps"] > 0 and r["single_p50_ms"] > 0
    import torch

    if not torch.cuda.is_available():
        assert any("torch top-k cuda" in line for line in data["not_run"])
    assert "SYNTHETIC" in capsys.readouterr().out


def test_agreement_counts_ties_with_the_kth_as_hits() -> None:
    x = np.array([[1, 0], [1, 0], [0, 1], [0.5, 0.5]], np.float32)
    q = np.array([[1, 0]], np.float32)
    exact_s, exact_i = gpu_check.exact_topk(x, q, 1)
    assert exact_i.tolist() == [[0]]
    assert gpu_check.agreement(np.array([[1]]), exact_i, exact_s, x, q) == 1.0   # tie
    assert gpu_check.agreement(np.array([[2]]), exact_i, exact_s, x, q) == 0.0
