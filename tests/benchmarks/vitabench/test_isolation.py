"""Copy-on-write: one shared, never-written task database; each episode its own overlay.

32 trials of one task run at once (asyncio, yielding between calls so their calls interleave)
and each writes differently; afterwards every trial sees exactly its own writes, the base is
byte-identical, and a fresh episode sees the task as the file gives it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import msgspec

from evaluator.benchmarks.vitabench.env import DatabaseCache, TaskDatabase, VitaEnvironment

from .helpers import first_id, load_tasks, make_env, ok, run
from .ota_fixture import USER, ota_environment

TRIALS = 32


def _snapshot(base: TaskDatabase) -> bytes:
    return msgspec.json.encode(base)


def _delivery_task() -> dict[str, Any]:
    for t in load_tasks("delivery"):
        env = t["environment"]
        if env["location"] and all(k == s["store_id"] for k, s in env["stores"].items()):
            return t
    raise AssertionError


async def _call(env: VitaEnvironment, name: str, **args: Any) -> str:
    out = await env.call(name, json.dumps(args), task_time="ignored")
    assert out.source == "live", out
    await asyncio.sleep(0)  # let the other trials run between two calls
    return out.content


async def _delivery_trial(base: TaskDatabase, raw: dict[str, Any], i: int) -> VitaEnvironment:
    env = VitaEnvironment(base)
    key, store = next(iter(raw["stores"].items()))
    pid = store["products"][0]["product_id"]
    text = await _call(env, "create_delivery_order", user_id=raw["user_id"], store_id=key,
                       product_ids=[pid], product_cnts=[i + 1],
                       address=raw["location"][0]["address"], dispatch_time=raw["time"],
                       note=f"trial {i}")
    oid = first_id(text)
    if i % 2 == 0:
        await _call(env, "pay_delivery_order", order_id=oid)
    if i % 3 == 0:
        await _call(env, "cancel_delivery_order", order_id=oid)
    return env


async def test_32_concurrent_delivery_trials_keep_their_own_writes() -> None:
    task = _delivery_task()
    raw = task["environment"]
    cache = DatabaseCache()
    base = cache.get(task["id"], raw, "delivery")
    before = _snapshot(base)
    envs = await asyncio.gather(*(
        _delivery_trial(cache.get(task["id"], raw, "delivery"), raw, i) for i in range(TRIALS)))
    assert len(cache) == 1 and all(env.base is base for env in envs)
    pid = next(iter(raw["stores"].values()))["products"][0]["product_id"]
    ids = set()
    for i, env in enumerate(envs):
        written = env.changes()["orders"]
        assert len(written) == 1
        oid, order = next(iter(written.items()))
        ids.add(oid)
        want = "cancelled" if i % 3 == 0 else "paid" if i % 2 == 0 else "unpaid"
        assert order["status"] == want and order["note"] == f"trial {i}"
        assert order["products"][0]["quantity"] == i + 1
        assert len(env.database()["orders"]) == len(raw["orders"]) + 1
        info = ok(run(env, "get_delivery_product_info", product_id=pid))
        assert f"quantity={i + 1}," in info
    assert len(ids) == 1  # same calls, same ids: deterministic per trial, private per trial
    assert _snapshot(base) == before
    fresh = VitaEnvironment(base)
    assert fresh.changes() == {} and fresh.database()["orders"].keys() == raw["orders"].keys()
    assert "quantity=0," in ok(run(fresh, "get_delivery_product_info", product_id=pid))


async def _ota_trial(base: TaskDatabase, i: int) -> VitaEnvironment:
    env = VitaEnvironment(base)
    for _ in range(2):  # both rooms left
        first_id(await _call(env, "create_hotel_order", hotel_id="H1", room_id="R1",
                             user_id=USER))
    if i % 2:
        await _call(env, "create_flight_order", flight_id="F1", seat_id="S1", user_id=USER,
                    date="2025-05-03", quantity=3)
    return env


async def test_32_concurrent_trials_each_see_the_full_stock() -> None:
    base = TaskDatabase.load(ota_environment(), "ota")
    before = _snapshot(base)
    envs = await asyncio.gather(*(_ota_trial(base, i) for i in range(TRIALS)))
    for i, env in enumerate(envs):
        hotel = env.database()["hotels"]["H1"]
        assert hotel["products"][0]["quantity"] == 0
        seats = env.database()["flights"]["F1"]["products"][0]["quantity"]
        assert seats == (0 if i % 2 else 3)
        assert len(env.changes()["orders"]) == (3 if i % 2 else 2)
    assert _snapshot(base) == before
    assert VitaEnvironment(base).database()["hotels"]["H1"]["products"][0]["quantity"] == 2


async def test_concurrent_instore_catalogue_quantities_stay_private() -> None:
    task = next(t for t in load_tasks("instore")
                if all(k == s["shop_id"] for k, s in t["environment"]["shops"].items()))
    raw = task["environment"]
    base = TaskDatabase.load(raw, "instore")
    before = _snapshot(base)
    key, shop = next(iter(raw["shops"].items()))
    pid = shop["products"][0]["product_id"]

    async def trial(i: int) -> VitaEnvironment:
        env = VitaEnvironment(base)
        await _call(env, "create_instore_product_order", user_id=raw["user_id"], shop_id=key,
                    product_id=pid, quantity=i + 1)
        await _call(env, "instore_book" if i % 2 else "instore_reservation",
                    user_id=raw["user_id"], shop_id=key, time=raw["time"])
        return env

    envs = await asyncio.gather(*(trial(i) for i in range(TRIALS)))
    for i, env in enumerate(envs):
        listed = ok(run(env, "instore_product_search_recommend", keywords=[pid]))
        assert f"quantity={i + 1}," in next(ln for ln in listed.splitlines() if pid in ln)
        tables = env.changes()
        assert set(tables) >= {"orders", "shops"}
        assert ("books" in tables) != ("reservations" in tables) or not shop["enable_book"]
    assert _snapshot(base) == before


def test_writes_never_reach_the_task_dict() -> None:
    task = _delivery_task()
    raw = task["environment"]
    frozen = json.dumps(raw, sort_keys=True)
    env = make_env(raw)
    for oid in raw["orders"]:
        run(env, "cancel_delivery_order", order_id=oid)
    assert json.dumps(raw, sort_keys=True) == frozen
