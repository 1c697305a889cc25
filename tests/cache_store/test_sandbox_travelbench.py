"""TravelBench's sandbox behaviour that must follow the reference: failed simulations, the
sample's table (the cached sandbox opened with TravelBench's validator and texts)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from backends.errors import ConnectionFailed
from cache_store.importer import import_cache
from cache_store.persist import read_misses
from cache_store.sandbox import SandboxSettings, open_sandbox
from evaluator.benchmarks.base import EnvironmentRequest
from evaluator.benchmarks.travelbench.adcode import (
    SAMPLE_TABLE,
    AdcodeTableError,
    RegionTable,
    load_regions,
    parse_rows,
    regions_for,
)
from evaluator.benchmarks.travelbench.environment import TEXTS, validator

from .conftest import TIME, FakeClient, mini_schemas


class FailingClient(FakeClient):
    def __init__(self, exc: BaseException) -> None:
        super().__init__()
        self.exc = exc

    async def chat(self, messages, **kw):
        self.calls.append(list(messages))
        raise self.exc


async def _sandbox(tmp: Path, client, **kw):
    settings = SandboxSettings(miss_log=str(tmp / "m.jsonl"), simulated_store=str(tmp / "sim"),
                               **kw)
    request = EnvironmentRequest(
        config=SimpleNamespace(sandbox=settings), run_dir=tmp,  # type: ignore[arg-type]
        taskset=SimpleNamespace(tool_schemas=mini_schemas(), files=[], builtin=True))  # type: ignore[arg-type]
    check, info = validator(request)
    return await open_sandbox(settings, tool_schemas=mini_schemas(), simulator_client=client,
                              simulator_model="sim", validator=check, validator_info=info,
                              texts=TEXTS)


async def test_failed_simulation_is_an_answer_not_a_tool_error(tmp_path: Path,
                                                               release_dir: Path) -> None:
    store = tmp_path / "c.store"
    import_cache(release_dir, store)
    client = FailingClient(ValueError("bad gateway text"))
    sb = await _sandbox(tmp_path, client, store=str(store))
    out = await sb.call("weather_current_conditions", '{"location": "南京市"}', task_time=TIME)
    assert out.source == "simulated" and out.error_category == "simulation_failed"
    assert not out.is_error  # reference: has_error=False, a cache miss
    assert json.loads(out.content) == {"error": "LLM simulation failed: bad gateway text"}
    again = await sb.call("weather_current_conditions", '{"location": "南京市"}', task_time=TIME)
    assert again.content == out.content and len(client.calls) == 2  # not persisted
    sb.close()
    assert [r.source for r in read_misses(tmp_path / "m.jsonl")] == ["error", "error"]


async def test_infrastructure_failure_still_raises(tmp_path: Path, release_dir: Path) -> None:
    store = tmp_path / "c.store"
    import_cache(release_dir, store)
    sb = await _sandbox(tmp_path, FailingClient(ConnectionFailed("down")), store=str(store))
    with pytest.raises(ConnectionFailed):
        await sb.call("weather_current_conditions", '{"location": "南京市"}', task_time=TIME)
    sb.close()


@pytest.mark.skipif(len(mini_schemas()) < 10, reason="TravelBench tool schemas not present")
async def test_builtin_sample_resolves_its_english_city_names(tmp_path: Path) -> None:
    sb = await _sandbox(tmp_path, None, simulator=False)
    d = sb.describe()
    assert d["validation"] == "reference" and d["adcode_source"] == "built-in sample table"
    ok = await sb.call("travel_search_trains", json.dumps(
        {"origin": "Suzhou", "destination": "Xi'an", "date": "2025-10-25"}), task_time=TIME)
    assert not ok.is_error
    bad = await sb.call("map_search_places", '{"query": "tea", "region": "Atlantis"}',
                        task_time=TIME)
    assert bad.is_error and bad.error_category == "out_of_range"
    sb.close()


def test_region_table_rules() -> None:
    text = ("name\tadcode\tcitycode\n甲省\t110000\t1\n甲省市辖区\t110100\t1\n东区\t110101\t1\n"
            "乙省\t120000\t2\n丙市\t120100\t2\n东区\t120101\t2\n新东区\t120102\t2\n")
    t = RegionTable(parse_rows(text))
    assert set(t.full) == {"甲省", "甲省市辖区", "甲省东区", "乙省", "乙省丙市", "乙省丙市东区",
                           "乙省丙市新东区"}
    assert t.lookup("甲省东区").status == "exact"
    assert t.lookup("新东区").status == "suffix" and t.lookup("新东区").adcode == 120102
    assert t.lookup("东区").status == "ambiguous"  # three full names end with it
    assert t.lookup("丙").status == "none" and t.lookup("").status == "ambiguous"
    assert t.ending_with("区") == sorted((n for n in t.full if n.endswith("区")),
                                         key=lambda n: n[::-1])
    with pytest.raises(AdcodeTableError, match="t.txt:2: expected 3"):
        parse_rows("h\tx\ty\nbad row\n", "t.txt")
    with pytest.raises(AdcodeTableError, match="6 digits"):
        parse_rows("h\tx\ty\nA\t12\t\n", "t.txt")


REAL_TABLE = Path(__file__).resolve().parents[2] / "../shared/data/travelbench/adcode.txt"


@pytest.mark.skipif(not REAL_TABLE.is_file(), reason="TravelBench's adcode.txt not present")
def test_suffix_index_matches_a_scan_of_every_name() -> None:
    """The bisection index gives, for every suffix of every full name of TravelBench's
    table (and a few that match nothing), exactly the names a scan finds."""
    t = load_regions(REAL_TABLE)
    names = list(t.full)
    queries = {name[i:] for name in names[::7] for i in range(len(name))} | {"县", "无此地"}
    for q in queries:
        scan = [n for n in names if n.endswith(q)]
        assert sorted(t.ending_with(q)) == sorted(scan), q
        res = t.lookup(q)
        if q not in t.full:
            status = {0: "none", 1: "suffix"}.get(len(scan), "ambiguous")
            assert res.status == status and res.candidates == tuple(
                sorted(scan, key=lambda n: (len(n), n))[:5]), q


def test_regions_for_choices(tmp_path: Path) -> None:
    tools = ["travel_search_trains", "web_search"]
    assert regions_for("", ["web_search"], data_root=tmp_path)[0] is None  # not needed
    assert regions_for("", tools)[1]["adcode_source"] == "not given"
    assert regions_for("off", tools, data_root=tmp_path)[0] is None
    table, info = regions_for("", tools, data_root=tmp_path, builtin_sample=True)
    assert table is load_regions(SAMPLE_TABLE) and info["adcode_checks"] is True
    with pytest.raises(AdcodeTableError, match=r"adcode\.txt.*sandbox\.adcode_table"):
        regions_for("", tools, data_root=tmp_path)
    (tmp_path / "adcode.txt").write_text("h\ta\tb\nX\t110000\t\n", encoding="utf-8")
    table, info = regions_for("", tools, data_root=tmp_path, builtin_sample=True)
    assert info["adcode_source"] == "dataset" and set(table.full) == {"X"}
