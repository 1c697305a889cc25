"""The default validation counts exactly the tool errors the TravelBench reference counts.

data/validation_parity.jsonl (written by make_validation_parity.py, verdicts from the
reference's validators): hand-picked edge cases for every rule of the notes §4 plus seeded
random calls. Each goes through a real Sandbox (no store, no simulator), so unknown tools and
unparseable arguments are covered too. Needs ../shared/data/travelbench (tool schemas and
adcode.txt) beside the repository.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

from cache_store.sandbox import SandboxSettings, open_sandbox
from evaluator.benchmarks.base import BenchmarkError, EnvironmentRequest
from evaluator.benchmarks.travelbench.adcode import load_regions
from evaluator.benchmarks.travelbench.environment import TEXTS, validator
from evaluator.benchmarks.travelbench.validation import validate

ROOT = Path(__file__).resolve().parents[2]
TB = ROOT / ".." / "shared" / "data" / "travelbench"
SCHEMAS, ADCODE = TB / "tool_schemas.json", TB / "adcode.txt"
PARITY = Path(__file__).resolve().parent / "data" / "validation_parity.jsonl"
pytestmark = pytest.mark.skipif(
    not (SCHEMAS.is_file() and ADCODE.is_file()),
    reason=f"TravelBench tool schemas / adcode.txt not found under {TB.resolve()} "
           "(../shared/data/travelbench beside the repository)")


def _rows() -> list[dict]:
    return [json.loads(line) for line in PARITY.read_text(encoding="utf-8").splitlines()]


def _schemas() -> list[dict]:
    return json.loads(SCHEMAS.read_text(encoding="utf-8"))


async def _sandbox(tmp: Path, data_root: Path = TB, **kw):
    """A Sandbox opened with TravelBench's validator and texts, its data in `data_root`."""
    settings = SandboxSettings(simulator=False, miss_log=str(tmp / "m.jsonl"),
                               simulated_store=str(tmp / "sim"), **kw)
    request = EnvironmentRequest(
        config=SimpleNamespace(sandbox=settings), run_dir=tmp,  # type: ignore[arg-type]
        taskset=SimpleNamespace(tool_schemas=_schemas(), files=[data_root / "single_turn.jsonl"],
                                builtin=False))  # type: ignore[arg-type]
    check, info = validator(request)
    return await open_sandbox(settings, tool_schemas=_schemas(), simulator_client=None,
                              simulator_model="none", validator=check, validator_info=info,
                              texts=TEXTS)


def test_parity_table_shape() -> None:
    rows = _rows()
    assert len(rows) >= 200
    hand = [r for r in rows if r["source"] == "hand"]
    assert len(hand) >= 150 and {r["tool"] for r in hand} >= {
        "travel_search_flights", "travel_search_trains", "weather_current_conditions",
        "weather_forecast_days", "map_compute_routes", "map_search_places",
        "map_search_along_route", "map_search_central_places", "map_search_ranking_list",
        "web_search"}
    n_err = sum(r["error"] for r in rows)
    assert 0.3 < n_err / len(rows) < 0.7  # both verdicts well represented


async def test_default_mode_matches_reference(tmp_path: Path) -> None:
    sb = await _sandbox(tmp_path)
    assert sb.settings.validation == "reference" and sb.describe()["adcode_checks"]
    wrong = []
    for r in _rows():
        out = await sb.call(r["tool"], r["arguments"], task_time=r["time"])
        if out.is_error != r["error"]:
            wrong.append(f"#{r['id']} {r['tool']} {r['arguments']} @{r['time']!r}: reference "
                         f"{'error' if r['error'] else 'ok'}, got {out.source}/"
                         f"{out.error_category} {out.content[:80]} [{r['why']}]")
    sb.close()
    assert not wrong, f"{len(wrong)} disagreements:\n" + "\n".join(wrong)


async def test_strict_flags_more(tmp_path: Path) -> None:
    sb = await _sandbox(tmp_path, validation="strict")
    extra: Counter[str] = Counter()
    for r in _rows():
        out = await sb.call(r["tool"], r["arguments"], task_time=r["time"])
        if r["error"]:
            assert out.is_error, r  # strict is a superset of the reference
        elif out.is_error:
            extra[out.error_category or ""] += 1
    sb.close()
    assert extra["wrong_type"] > 0 and extra["bad_enum"] > 0


def test_strict_specific_calls() -> None:
    fns = {t["function"]["name"]: t["function"]["parameters"] for t in _schemas()}
    regions = load_regions(ADCODE)
    cases = [
        ("weather_current_conditions", {"location": 3}, "wrong_type"),
        ("map_search_places", {"query": "q", "sort_by": "cheapest"}, "bad_enum"),
        ("map_compute_routes", {"origin": "1,2", "destination": "3,4", "preference": "x"},
         "bad_enum"),
        ("weather_forecast_days", {"location": "北京市", "date": None}, "wrong_type"),
        ("travel_search_flights", {"origin": "北京市", "destination": "上海市",
                                   "date": "2025-10-25", "days": True}, "wrong_type"),
    ]
    for tool, args, category in cases:
        assert validate(tool, args, fns[tool], "2025-10-24 10:00", "reference", regions) is None
        bad = validate(tool, args, fns[tool], "2025-10-24 10:00", "strict", regions)
        assert bad is not None and bad[0] == category, (tool, args, bad)


async def test_adcode_table_resolution(tmp_path: Path) -> None:
    sb = await _sandbox(tmp_path)  # "" -> <data_root>/adcode.txt
    d = sb.describe()
    assert d["adcode_source"] == "dataset" and len(d["adcode_sha256"]) == 64
    assert d["adcode_names"] > 3000
    sb.close()
    off = await _sandbox(tmp_path, adcode_table="off")
    assert off.validator.keywords["regions"] is None and off.describe()["adcode_checks"] is False
    out = await off.call("travel_search_trains", json.dumps(
        {"origin": "朝阳区", "destination": "火星", "date": "2025-10-25"}), task_time="2025-10-24 10:00")
    assert not out.is_error  # place names not resolved; everything else still is
    off.close()
    with pytest.raises(BenchmarkError, match="sandbox: .*sandbox.adcode_table"):
        await _sandbox(tmp_path, data_root=tmp_path)
    with pytest.raises(BenchmarkError, match=str(tmp_path / "nope.txt")):
        await _sandbox(tmp_path, adcode_table=str(tmp_path / "nope.txt"))
