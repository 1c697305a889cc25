"""VitaBench environment at scale: tool calls per second and memory per live episode for N
concurrent episodes over the real task databases, copy-on-write view vs a deep copy.

    python -m perf.vitabench_env [--episodes 1000] [--data ../shared/data/vitabench]

Each episode is one task (round robin over the delivery and in-store task files) with its own
`VitaEnvironment`. Copy-on-write: every episode of a task views the task's one shared base
database (how runs work). Deep copy: every episode gets `copy.deepcopy` of the base (what a
design without overlays would hold). All N episodes are created first and stay alive; then
each runs the same scripted mix of reads and writes drawn from its task's own records
(searches, store/shop info, geocoding and distance, weather, create + pay + detail of an
order, the user's orders), interleaved on one asyncio loop (`await asyncio.sleep(0)` between
calls), so all N are live at once.

Printed per mode: set-up time per episode, tool calls per second over the interleaved run,
and memory per live episode: tracemalloc's traced bytes after creating the N episodes and
running their calls, minus the bytes before, over N (a second pass, since tracing slows the
calls). The shared base databases are built before either measure starts and count in
neither (their size is printed beside). Both modes must give identical answers (checked).
This is a benchmark, not a test: it prints figures; docs/vitabench.md records them.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gc
import hashlib
import json
import re
import sys
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.benchmarks.vitabench.env import DatabaseCache, TaskDatabase, VitaEnvironment

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "vitabench"
DOMAINS = ("delivery", "instore")
_ID = re.compile(r"O[TI][0-9a-f]{10}")


@dataclass
class Task:
    task_id: str
    domain: str
    env: dict[str, Any]


def load_tasks(root: Path) -> list[Task]:
    tasks: dict[str, list[Task]] = {}
    for domain in DOMAINS:
        path = root / domain / "tasks_en.json"
        if not path.is_file():
            raise SystemExit(f"perf.vitabench_env: no task file at {path}")
        tasks[domain] = [Task(str(t["id"]), domain, t["environment"])
                         for t in json.loads(path.read_text(encoding="utf-8"))]
    mixed = []  # delivery and in-store alternate, so any N covers both
    for pair in zip(*(tasks[d] for d in DOMAINS), strict=False):
        mixed.extend(pair)
    return mixed


def _word(text: str) -> str:
    return (text.split() or ["food"])[0]


def script(task: Task) -> list[tuple[str, dict[str, Any]]]:
    """The calls of one episode, from the task's own records. `{order}` is filled with the
    id the create call answers."""
    env, user, now = task.env, task.env["user_id"], task.env["time"]
    here = (env.get("location") or [{"address": "x", "longitude": 0, "latitude": 0}])[0]
    day = now[:10]
    common = [("get_user_historical_behaviors", {}),
              ("address_to_longitude_latitude", {"address": here["address"]}),
              ("weather", {"address": here["address"], "date_start": day, "date_end": day})]
    if task.domain == "delivery":
        key, store = next(iter(env["stores"].items()))
        product = store["products"][0]
        where = store["location"]
        return [
            *common,
            ("delivery_store_search_recommand", {"keywords": [_word(store["name"])]}),
            ("get_delivery_store_info", {"store_id": key}),
            ("delivery_product_search_recommand", {"keywords": [_word(product["name"])]}),
            ("longitude_latitude_to_distance", {
                "longitude1": here["longitude"], "latitude1": here["latitude"],
                "longitude2": where["longitude"], "latitude2": where["latitude"]}),
            ("delivery_distance_to_time", {"distance": 1500}),
            ("create_delivery_order", {
                "user_id": user, "store_id": key, "product_ids": [product["product_id"]],
                "product_cnts": [1], "address": here["address"], "dispatch_time": now}),
            ("pay_delivery_order", {"order_id": "{order}"}),
            ("get_delivery_order_detail", {"order_id": "{order}"}),
            ("search_delivery_orders", {"user_id": user, "status": "paid"}),
        ]
    key, shop = next(iter(env["shops"].items()))
    product = shop["products"][0]
    return [
        *common,
        ("instore_shop_search_recommend", {"keywords": [_word(shop["shop_name"])]}),
        ("instore_product_search_recommend", {"keywords": [_word(product["name"])]}),
        ("create_instore_product_order", {"user_id": user, "shop_id": key,
                                          "product_id": product["product_id"], "quantity": 2}),
        ("pay_instore_order", {"order_id": "{order}"}),
        ("get_instore_orders", {"user_id": user}),
        ("instore_reservation", {"user_id": user, "shop_id": key, "time": now,
                                 "customer_count": 2}),
        ("get_instore_reservations", {"user_id": user}),
        ("get_user_all_orders", {}),
    ]


async def episode(env: VitaEnvironment, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    answers: list[str] = []
    order = ""
    for name, args in calls:
        if args.get("order_id") == "{order}":
            args = {**args, "order_id": order}
        out = await env.call(name, json.dumps(args))
        if name.startswith("create_") and (m := _ID.search(out.content)):
            order = m.group(0)
        answers.append(out.content)
        await asyncio.sleep(0)  # let every other live episode take a step
    return answers


def make_envs(mode: str, bases: list[TaskDatabase], tasks: list[Task], n: int
              ) -> list[VitaEnvironment]:
    envs = []
    for i in range(n):
        base = bases[i % len(bases)]
        db = base if mode == "copy-on-write" else copy.deepcopy(base)
        envs.append(VitaEnvironment(db, id_seed=tasks[i % len(tasks)].task_id))
    return envs


@dataclass
class Figures:
    mode: str
    setup_us: float        # per episode
    calls: int
    calls_per_s: float
    fresh_bytes: float     # per live episode, created, before its calls
    bytes_per_episode: float  # per live episode after all its calls (writes included)
    digest: str            # of every answer, in order


async def _run(envs: list[VitaEnvironment], scripts: list[list[tuple[str, dict[str, Any]]]]
               ) -> list[list[str]]:
    return await asyncio.gather(*(episode(e, s) for e, s in zip(envs, scripts, strict=True)))


def measure(mode: str, bases: list[TaskDatabase], tasks: list[Task], n: int) -> Figures:
    scripts = [script(tasks[i % len(tasks)]) for i in range(n)]
    gc.collect()
    t0 = time.perf_counter()
    envs = make_envs(mode, bases, tasks, n)
    setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    answers = asyncio.run(_run(envs, scripts))
    wall = time.perf_counter() - t0
    calls = sum(len(a) for a in answers)
    digest = hashlib.sha256("\x00".join(x for a in answers for x in a).encode()).hexdigest()
    del envs, answers
    gc.collect()
    # memory: a second pass under tracemalloc, every episode kept alive after its calls
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    envs = make_envs(mode, bases, tasks, n)
    gc.collect()
    fresh = tracemalloc.get_traced_memory()[0]
    asyncio.run(_run(envs, scripts))
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    live = len(envs)
    del envs
    gc.collect()
    return Figures(mode, 1e6 * setup / n, calls, calls / wall, (fresh - before) / live,
                   (after - before) / live, digest)


def warm_up(bases: list[TaskDatabase], tasks: list[Task]) -> None:
    """One untimed pass over every task in both modes (imports, lookup tables, caches)."""
    for mode in ("copy-on-write", "deep copy"):
        envs = make_envs(mode, bases, tasks, len(tasks))
        asyncio.run(_run(envs, [script(t) for t in tasks]))


def base_bytes(tasks: list[Task]) -> tuple[list[TaskDatabase], float]:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    cache = DatabaseCache()
    bases = [cache.get(t.task_id, t.env, t.domain) for t in tasks]
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return bases, (after - before) / len(bases)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.vitabench_env", description=__doc__.split(
        "\n\n")[0])
    p.add_argument("--episodes", type=int, default=1000, help="live episodes (default 1000)")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA,
                   help="VitaBench data directory (delivery/ and instore/ task files)")
    args = p.parse_args(argv)
    tasks = load_tasks(args.data)
    bases, per_base = base_bytes(tasks)
    n = args.episodes
    print(f"VitaBench environment: {n:,} live episodes over {len(tasks)} real task databases "
          f"({', '.join(DOMAINS)}), python {sys.version.split()[0]}")
    print(f"shared base databases: {len(bases)}, {per_base / 1024:.1f} KiB each on average "
          "(built once per task, in neither figure below)")
    warm_up(bases, tasks)
    rows = [measure(mode, bases, tasks, n) for mode in ("copy-on-write", "deep copy")]
    cow, deep = rows
    if cow.digest != deep.digest:
        print("error: the two modes gave different answers", file=sys.stderr)
        return 1
    print(f"{'mode':<15}{'set-up/episode':>16}{'tool calls':>12}{'calls/s':>11}"
          f"{'memory/episode fresh':>22}{'after its calls':>17}")
    for r in rows:
        print(f"{r.mode:<15}{r.setup_us:>13.1f} us{r.calls:>12,}{r.calls_per_s:>11,.0f}"
              f"{r.fresh_bytes / 1024:>18.2f} KiB{r.bytes_per_episode / 1024:>13.2f} KiB")
    print(f"deep copy / copy-on-write: memory per live episode "
          f"{deep.fresh_bytes / cow.fresh_bytes:.1f}x fresh, "
          f"{deep.bytes_per_episode / cow.bytes_per_episode:.1f}x after its calls; "
          f"set-up {deep.setup_us / cow.setup_us:.0f}x; "
          f"copy-on-write calls/s {cow.calls_per_s / deep.calls_per_s:.2f}x deep copy's "
          f"(answers identical: {cow.digest[:12]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
