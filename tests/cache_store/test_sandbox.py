"""Sandbox call paths, concurrency, cross-process determinism, miss log, live overlay."""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
from pathlib import Path

import pytest

from cache_store.importer import import_cache
from cache_store.index import build_index
from cache_store.persist import MissLog, MissRecord, export_misses, read_misses
from cache_store.sandbox import NO_SIMULATOR, SandboxSettings, open_sandbox
from cache_store.types import SandboxStyle

from .conftest import TIME, FakeClient, FakeEmbedder, mini_schemas


async def _sandbox(store: Path, tmp: Path, client=None, **kw):
    settings = SandboxSettings(store=str(store), miss_log=str(tmp / "misses.jsonl"),
                               simulated_store=str(tmp / "sim"), **kw)
    return await open_sandbox(settings, tool_schemas=mini_schemas(), simulator_client=client,
                              simulator_model="sim-model", embedder=FakeEmbedder())


@pytest.fixture
def store(release_dir: Path, tmp_path: Path) -> Path:
    out = tmp_path / "c.store"
    import_cache(release_dir, out)
    return out


async def test_hit_miss_error_paths(store: Path, tmp_path: Path) -> None:
    client = FakeClient()
    sb = await _sandbox(store, tmp_path, client)
    hit = await sb.call("weather_current_conditions", '{"location": "上海市"}', task_time=TIME)
    assert (hit.source, hit.content) == ("hit", "上海市: 晴, 20度")
    bad = await sb.call("weather_current_conditions", '{"location": ', task_time=TIME)
    assert (bad.source, bad.error_category) == ("error", "malformed_json")
    arr = await sb.call("weather_current_conditions", "[1]", task_time=TIME)
    assert arr.error_category == "malformed_json"
    unk = await sb.call("no_such_tool", "{}", task_time=TIME)
    assert unk.error_category == "unknown_tool"
    miss = await sb.call("weather_current_conditions", '{"location": "南京市"}', task_time=TIME)
    assert miss.source == "simulated" and miss.content.startswith("simulated ")
    assert miss.n_examples == 5 and len(client.calls) == 1
    assert "北京市: 晴, 20度" in client.calls[0][0].content  # examples are in the prompt
    again = await sb.call("weather_current_conditions", '{"location":"南京市"}', task_time=TIME)
    assert again.content == miss.content and len(client.calls) == 1  # persisted, not re-asked
    sb.close()
    recs = read_misses(tmp_path / "misses.jsonl")
    assert [r.source for r in recs] == ["simulated"]
    inner = json.loads(recs[0].params)
    assert inner["time"] == TIME and json.loads(inner["params"]) == {"location": "南京市"}


async def test_a_style_simulates_with_the_builtin_prompt(store: Path, tmp_path: Path) -> None:
    """A reference style changes the answers' content address (its version suffix), not the
    built-in prompt file the simulator reads; the schema is shown as Python renders it."""
    client = FakeClient()
    settings = SandboxSettings(store=str(store), miss_log=str(tmp_path / "misses.jsonl"),
                               simulated_store=str(tmp_path / "sim"))
    sb = await open_sandbox(settings, tool_schemas=mini_schemas(), simulator_client=client,
                            simulator_model="sim-model", embedder=FakeEmbedder(),
                            style=SandboxStyle(parameters="python"))
    miss = await sb.call("weather_current_conditions", '{"location": "南京市"}', task_time=TIME)
    assert miss.source == "simulated" and sb.sim_version == "v1+py-schema"
    schema = next(t["function"]["parameters"] for t in mini_schemas()
                  if t["function"]["name"] == "weather_current_conditions")
    assert str(schema) in client.calls[0][0].content
    sb.close()


async def test_no_simulator(store: Path, tmp_path: Path) -> None:
    sb = await _sandbox(store, tmp_path, None, simulator=False)
    out = await sb.call("weather_current_conditions", '{"location": "火星"}', task_time=TIME)
    assert out.source == "miss" and out.content == NO_SIMULATOR and not out.is_error
    sb.close()


async def test_concurrent_episodes_share_one_simulation(store: Path, tmp_path: Path) -> None:
    client = FakeClient()
    sb = await _sandbox(store, tmp_path, client)
    calls = []
    for i in range(200):
        loc = ["上海市", "杭州市", "南京市", "苏州市"][i % 4]
        calls.append(sb.call("weather_current_conditions", json.dumps({"location": loc}),
                             task_time=TIME))
    outs = await asyncio.gather(*calls)
    assert [o.source for o in outs[:4]] == ["hit", "hit", "simulated", "simulated"]
    assert len({o.content for o in outs[2::4]}) == 1 and len({o.content for o in outs[3::4]}) == 1
    assert len(client.calls) == 2  # one simulation per distinct miss
    sb.close()


def _simulate_in_process(store: str, tmp: str, tag: str, q: mp.Queue) -> None:
    async def go() -> str:
        sb = await _sandbox(Path(store), Path(tmp), FakeClient(tag))
        out = await sb.call("weather_current_conditions", '{"location": "拉萨市"}', task_time=TIME)
        sb.close()
        return out.content

    q.put(asyncio.run(go()))


def test_simulated_answers_identical_across_processes(store: Path, tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    answers = []
    for tag in ("-first", "-second"):  # each process's simulator would answer differently
        p = ctx.Process(target=_simulate_in_process, args=(str(store), str(tmp_path), tag, q))
        p.start()
        answers.append(q.get(timeout=120))
        p.join(60)
    assert answers[0] == answers[1] and answers[0].endswith("-first")


@pytest.mark.parametrize("backend", ["torch", "faiss"])
async def test_embedding_retrieval_orders_examples(store: Path, tmp_path: Path, backend: str) -> None:
    if backend == "faiss":
        pytest.importorskip("faiss")
    await build_index(store, FakeEmbedder(), embedder_name="fake", progress=False)
    client = FakeClient()
    sb = await _sandbox(store, tmp_path, client, top_k=2, index_backend=backend)
    assert sb.index is not None
    assert sb.index.tool("weather_current_conditions").backend == backend
    examples = await sb.retrieve("weather_current_conditions", '{"location": "成都市"}', "a")
    assert examples[0][0] == '{"location": "成都市"}' and len(examples) == 2
    sb.close()


def test_miss_log_crash_loses_only_inflight(tmp_path: Path) -> None:
    log = MissLog(tmp_path / "m.jsonl")
    for i in range(3):
        log.append(MissRecord(tool="web_search", params=f"p{i}", simulated_result="r", timestamp=1.0))
    log.close()
    with open(tmp_path / "m.jsonl", "ab") as f:  # a crash in the middle of the 4th write
        f.write(b'{"tool":"web_search","params":"p3","simu')
    recs = read_misses(tmp_path / "m.jsonl")
    assert [r.params for r in recs] == ["p0", "p1", "p2"]
    counts = export_misses(tmp_path / "m.jsonl", tmp_path / "out")
    assert counts == {"web_search": 3}
    rows = json.loads((tmp_path / "out" / "web_search_missed.json").read_text())
    assert set(rows[0]) == {"params", "simulated_result", "timestamp"}


async def test_live_mode_writes_overlay_not_store(store: Path, tmp_path: Path) -> None:
    before = store.read_bytes()
    sb = await _sandbox(store, tmp_path, None, live_hook="tests.cache_store.live_hook:answer",
                        overlay_store=str(tmp_path / "overlay"))
    first = await sb.call("weather_current_conditions", '{"location": "哈尔滨市"}', task_time=TIME)
    second = await sb.call("weather_current_conditions", '{"location": "哈尔滨市"}', task_time=TIME)
    hit = await sb.call("weather_current_conditions", '{"location": "上海市"}', task_time=TIME)
    assert (first.source, second.source, hit.source) == ("live", "overlay", "hit")
    assert first.content == second.content == "live:哈尔滨市"
    sb.close()
    assert store.read_bytes() == before
