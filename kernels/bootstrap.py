"""Percentile bootstrap confidence intervals over tasks, seeded and vectorized.

Input is a per-task matrix `values` of shape (T, K) (e.g. pass@k at K values of k), NaN where a
task has no value at that column. One bootstrap replicate draws T tasks with replacement and
takes, per column, the mean over the drawn tasks that have a value (the same rule as the point
estimate, `kernels.passk.mean_over_tasks`). A replicate is written as a count vector w (how
often each task was drawn), so all replicates of a chunk are two matrix products:

    mean_b = (W @ V0) / (W @ M)     W: (B, T) counts, V0: values with NaN -> 0, M: not-NaN mask

which runs with numpy, or with torch on a GPU when one is present (`backend="auto"`).
Replicates where no drawn task has a value are NaN and ignored by the quantiles.

Results are deterministic for a given (seed, backend, device); numpy and torch draw different
random streams, so their intervals agree only statistically.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kernels.passk import mean_over_tasks

__all__ = ["BootstrapCI", "bootstrap_ci", "torch_device"]

_CHUNK_ELEMENTS = 4_000_000  # B_chunk * T kept below this (about 32 MB of float64 counts)


@dataclass(frozen=True)
class BootstrapCI:
    """Point estimate and percentile interval per column; `n_tasks` contributors per column."""

    point: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n_tasks: np.ndarray
    confidence: float
    n_boot: int
    backend: str


def torch_device() -> Any | None:
    """The CUDA device when torch and a GPU are present, else None (torch imported lazily)."""
    try:
        import torch
    except ImportError:
        return None
    if torch.cuda.is_available():
        return torch.device("cuda")
    return None


def _replicate_means_numpy(v0: np.ndarray, mask: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    t, k = v0.shape
    rng = np.random.default_rng(seed)
    out = np.empty((n_boot, k), dtype=np.float64)
    chunk = max(1, _CHUNK_ELEMENTS // max(t, 1))
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        idx = rng.integers(0, t, size=(b, t))
        flat = (idx + (np.arange(b) * t)[:, None]).ravel()
        w = np.bincount(flat, minlength=b * t).reshape(b, t).astype(np.float64)
        sums = w @ v0
        cnt = w @ mask
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + b] = np.where(cnt > 0, sums / np.maximum(cnt, 1.0), np.nan)
    return out


def _replicate_means_torch(
    v0: np.ndarray, mask: np.ndarray, n_boot: int, seed: int, device: Any
) -> np.ndarray:
    import torch

    t, k = v0.shape
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    v0_t = torch.as_tensor(v0, dtype=torch.float64, device=device)
    m_t = torch.as_tensor(mask, dtype=torch.float64, device=device)
    out = torch.empty((n_boot, k), dtype=torch.float64, device=device)
    chunk = max(1, _CHUNK_ELEMENTS // max(t, 1))
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        idx = torch.randint(0, t, (b, t), generator=gen, device=device)
        w = torch.zeros((b, t), dtype=torch.float64, device=device)
        w.scatter_add_(1, idx, torch.ones((b, t), dtype=torch.float64, device=device))
        sums = w @ v0_t
        cnt = w @ m_t
        mean = sums / cnt.clamp(min=1.0)
        out[start : start + b] = torch.where(cnt > 0, mean, torch.full_like(mean, float("nan")))
    return out.cpu().numpy()


def bootstrap_ci(
    values: np.ndarray,
    *,
    n_boot: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    backend: str = "auto",
) -> BootstrapCI:
    """Percentile bootstrap CI of the mean over tasks, per column of `values` ((T,) or (T, K)).

    backend: "auto" (torch on a GPU when present, else numpy), "numpy", "torch" (torch on the
    GPU when present, else on the CPU).
    """
    v = np.asarray(values, dtype=np.float64)
    squeeze = v.ndim == 1
    if squeeze:
        v = v[:, None]
    if v.ndim != 2:
        raise ValueError(f"values must be (T,) or (T, K), got shape {v.shape}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if backend not in ("auto", "numpy", "torch"):
        raise ValueError(f"backend must be auto, numpy or torch, got {backend!r}")

    point, n_tasks = mean_over_tasks(v)
    t, k = v.shape
    mask = (~np.isnan(v)).astype(np.float64)
    v0 = np.where(mask > 0, v, 0.0)
    used = "numpy"
    if t == 0:
        reps = np.full((n_boot, k), np.nan)
    else:
        device = None
        if backend in ("auto", "torch"):
            device = torch_device()
            if device is None and backend == "torch":
                import torch  # noqa: F401  (fails clearly when torch is missing)

                device = "cpu"
        if device is not None:
            reps = _replicate_means_torch(v0, mask, n_boot, seed, device)
            used = f"torch:{device}"
        else:
            reps = _replicate_means_numpy(v0, mask, n_boot, seed)

    alpha = (1.0 - confidence) / 2.0
    ok_cols = ~np.all(np.isnan(reps), axis=0)
    low = np.full(k, np.nan)
    high = np.full(k, np.nan)
    if ok_cols.any():
        q = np.nanquantile(reps[:, ok_cols], [alpha, 1.0 - alpha], axis=0)
        low[ok_cols], high[ok_cols] = q[0], q[1]
    if squeeze:
        point, low, high, n_tasks = point[:1], low[:1], high[:1], n_tasks[:1]
    return BootstrapCI(
        point=point,
        low=low,
        high=high,
        n_tasks=n_tasks,
        confidence=confidence,
        n_boot=n_boot,
        backend=used,
    )
