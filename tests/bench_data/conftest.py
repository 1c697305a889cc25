"""Fixtures for bench_data tests: where the real benchmark data is, if present."""

from __future__ import annotations

from pathlib import Path

import pytest

import evaluator  # noqa: F401  (hands the dataset registry the built-in benchmarks' formats)

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def _need(sub: str) -> Path:
    path = SHARED_DATA / sub
    if not path.is_dir():
        pytest.skip(f"real benchmark data not present at {path} (read-only shared data)")
    return path


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real benchmark data not present at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture
def travelbench_dir() -> Path:
    return _need("travelbench")


@pytest.fixture
def vitabench_dir() -> Path:
    return _need("vitabench")


@pytest.fixture
def grouptravel_dir() -> Path:
    return _need("grouptravelbench")
