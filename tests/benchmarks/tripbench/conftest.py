"""A small generated world shared by the TRIP-Bench tests (generated once per session)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluator.benchmarks.tripbench.world import World, open_world
from evaluator.benchmarks.tripbench.world.generate import generate_world


@pytest.fixture(scope="session")
def world_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate_world(tmp_path_factory.mktemp("tripbench") / "small.sqlite", "small", 0)


@pytest.fixture(scope="session")
def world(world_path: Path) -> Iterator[World]:
    w = open_world(world_path)
    yield w
    w.close()
