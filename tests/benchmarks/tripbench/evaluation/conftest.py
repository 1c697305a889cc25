from __future__ import annotations

import pytest

from evaluator.benchmarks.tripbench.evaluation.task import EvalTask, Stay

from .worldkit import shanghai_world


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return shanghai_world(tmp_path_factory.mktemp("world") / "world.db")


@pytest.fixture
def task() -> EvalTask:
    return EvalTask(task_id="t1", origin="Beijing", stays=[Stay("Shanghai", 2)],
                    start_date="2025-05-02", end_date="2025-05-04", number_of_people=2)
