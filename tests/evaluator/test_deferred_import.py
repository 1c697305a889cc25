"""`base.deferred`: the first calls from several threads at once all reach the function, even
while one of them is still importing its module (a half-built module is in sys.modules then:
TRIP-Bench's tool threads once answered "partially initialized module ... has no attribute
'search_restaurants'")."""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from evaluator.benchmarks.base import deferred


def test_first_calls_from_many_threads_wait_for_the_import(tmp_path: Path,
                                                          monkeypatch) -> None:
    (tmp_path / "slow_module_for_deferred.py").write_text(
        "import time\ntime.sleep(0.3)\n\ndef answer(x):\n    return x * 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    call = deferred("slow_module_for_deferred", "answer")
    start = threading.Barrier(8)

    def first(x: int) -> int:
        start.wait()
        return call(x)

    try:
        with ThreadPoolExecutor(8) as pool:
            assert list(pool.map(first, range(8))) == [x * 2 for x in range(8)]
    finally:
        sys.modules.pop("slow_module_for_deferred", None)
