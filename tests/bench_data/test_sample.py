"""The built-in sample benchmark: shapes, cache key normalisation, size, reproducibility."""

from __future__ import annotations

import json
from pathlib import Path

from bench_data.registry import SAMPLE_DIR, load_tasks
from bench_data.samples import build_sample_cache


def reference_key(args: dict, task_time: str) -> str:
    """TravelBench's stored key, recomputed here with the stdlib only."""
    params = json.dumps(args, sort_keys=True, ensure_ascii=False)
    inter = json.dumps({"params": params, "time": task_time}, sort_keys=True, ensure_ascii=False)
    return json.dumps(sorted(json.loads(inter).items()), separators=(",", ":"),
                      ensure_ascii=False)


def test_sample_loads_all_subsets() -> None:
    ts = load_tasks("sample")
    assert ts.subsets() == {"single_turn": 5, "multi_turn": 4, "unsolvable": 3}
    assert ts.issues == [] and ts.cache_dir == SAMPLE_DIR / "cache"
    for task in ts.tasks:
        assert task.payload is not None
        if task.subset == "multi_turn":
            assert task.payload.user_profile
    flags = [(t.payload.missing_tool, t.payload.missing_info, t.payload.no_actionable)
             for t in ts.tasks if t.subset == "unsolvable" and t.payload]
    assert sorted(flags) == [(False, False, True), (False, True, False), (True, False, False)]


def test_sample_tools_match_travelbench_names_and_parameters(shared_data: Path) -> None:
    ours = load_tasks("sample").tool_schemas
    theirs = json.loads((shared_data / "travelbench" / "tool_schemas.json").read_text("utf-8"))

    def strip(x: object) -> object:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k != "description"}
        return [strip(v) for v in x] if isinstance(x, list) else x

    assert [t["function"]["name"] for t in ours] == [t["function"]["name"] for t in theirs]
    assert strip(ours) == strip(theirs)
    assert all(o["function"]["description"] != t["function"]["description"]
               for o, t in zip(ours, theirs, strict=True))


def test_cache_keys_follow_reference_normalisation() -> None:
    cache_dir = SAMPLE_DIR / "cache"
    tools = [t["function"]["name"] for t in load_tasks("sample").tool_schemas]
    assert sorted(p.name for p in cache_dir.glob("*_cache.json")) == sorted(
        f"{t}_cache.json" for t in tools)
    total = 0
    for path in cache_dir.glob("*_cache.json"):
        cache = json.loads(path.read_text(encoding="utf-8"))
        assert len(cache) >= 5, path.name
        for key, value in cache.items():
            pairs = json.loads(key)
            assert [p[0] for p in pairs] == ["params", "time"]
            args = json.loads(pairs[0][1])
            assert reference_key(args, pairs[1][1]) == key
            assert isinstance(value, str) and value
        total += len(cache)
    assert total >= 60


def test_task_calls_hit_the_cache() -> None:
    ts = load_tasks("sample")
    hangzhou = next(t for t in ts.tasks if t.task_id == "st-001")
    assert hangzhou.payload is not None
    key = reference_key({"location": "Hangzhou", "date": "2025-11-15"}, hangzhou.payload.time)
    forecast = json.loads((SAMPLE_DIR / "cache" / "weather_forecast_days_cache.json").read_text())
    assert key in forecast
    assert json.loads(forecast[key])["forecast"][0]["date"] == "2025-11-15"
    times = {t.payload.time for t in ts.tasks if t.payload and t.subset != "unsolvable"}
    assert times <= set(build_sample_cache.TASK_CALLS)


def test_cache_is_reproducible_and_small() -> None:
    assert build_sample_cache.main(["--check"]) == 0
    size = sum(p.stat().st_size for p in SAMPLE_DIR.rglob("*") if p.is_file())
    assert size < 300_000
