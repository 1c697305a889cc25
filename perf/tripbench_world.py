"""Benchmark: the generated TRIP-Bench world and its 18 tools (prints figures, asserts nothing).

    python -m perf.tripbench_world [--size paper|small] [--seed 0] [--workdir DIR]
        [--calls 200] [--procs 8] [--concurrent 4]

Reports: world generation time, database size and row counts; tool-call latency p50/p99 per
tool (`tools.call`, JSON encoding included) over randomly drawn arguments; and memory of
`--procs` processes that share the SQLite file (each opens its own read-only connection and
runs the same calls) vs `--procs` processes that each load every table into Python dicts (id ->
row dict: a lower bound for the load-it-all approach), read from /proc/<pid>/smaps_rollup
(RSS, and PSS, which splits shared pages fairly among the processes mapping them), side by
side with the ratio. The dict processes run `--concurrent` at a time (their memory is
private, so the sums hold); the SQLite ones all at once.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import multiprocessing as mp
import os
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from evaluator.benchmarks.tripbench.tools import TOOL_NAMES, call
from evaluator.benchmarks.tripbench.world import names, open_world
from evaluator.benchmarks.tripbench.world.db import World
from evaluator.benchmarks.tripbench.world.generate import generate_world, table_counts
from evaluator.benchmarks.tripbench.world.schema import TABLE_ORDER


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def _ids(world: World, table: str) -> list[str]:
    return [r["id"] for r in world.query(f"SELECT id FROM {table} ORDER BY id")]


def sample_calls(world: World, n: int, seed: int = 1) -> list[tuple[str, dict[str, Any]]]:
    """`n` calls of each tool, arguments drawn at random from the world (mostly answerable)."""
    rng = random.Random(seed)
    cities = [r["name"] for r in world.query("SELECT name FROM cities ORDER BY id")]
    start = world.meta["date_start"]
    dates = [r["date"] for r in world.query("SELECT DISTINCT date FROM trains ORDER BY date")]
    ids = {t: _ids(world, t) for t in ("attractions", "hotels", "restaurants")}
    flights = world.query("SELECT id, from_city, to_city, date FROM flights ORDER BY id")
    trains = world.query("SELECT id, from_city, to_city, date FROM trains ORDER BY id")
    city_name = {r["id"]: r["name"] for r in world.query("SELECT id, name FROM cities")}
    airports = sorted({r["from_airport"] for r in world.query(
        "SELECT DISTINCT from_airport FROM flights")})
    stations = sorted({r["from_station"] for r in world.query(
        "SELECT DISTINCT from_station FROM trains")})
    out: list[tuple[str, dict[str, Any]]] = []

    def pick_sort(keys: tuple[str, ...]) -> dict[str, Any]:
        return {"sort_key": rng.choice(keys), "page": rng.choice((1, 1, 2)), "page_size": 10}

    for _ in range(n):
        city, day = rng.choice(cities), rng.choice(dates)
        nights = rng.randint(1, 4)
        stay = {"check_in_date": day, "check_out_date": (
            dt.date.fromisoformat(day) + dt.timedelta(days=nights)).isoformat()}
        fl, tr = rng.choice(flights), rng.choice(trains)
        out += [
            ("search_attractions", {"city": city, **pick_sort(
                ("heat", "rating", "price", "distance")), **rng.choice((
                    {}, {"categories": [rng.choice(list(names.ATTRACTION_CATEGORIES))]},
                    {"distance_threshold": 10}, {"free_only": True}))}),
            ("get_attraction_detail_with_products", {"poi_id": rng.choice(ids["attractions"])}),
            ("get_attraction_coordinates", {"poi_id": rng.choice(ids["attractions"])}),
            ("search_hotels", {"city": city, **stay, **pick_sort(
                ("rating", "price", "distance", "star")), **rng.choice((
                    {}, {"price_max": 400}, {"distance_threshold": 5}, {"stars": 4},
                    {"room_types": ["King"], "has_breakfast": True}))}),
            ("get_hotel_detail_with_products", {"hotel_id": rng.choice(ids["hotels"]), **stay,
                                                "person_num": rng.randint(1, 4)}),
            ("get_hotel_coordinates", {"hotel_id": rng.choice(ids["hotels"])}),
            ("search_flights", {"departure_city": city_name[fl["from_city"]],
                                "arrival_city": city_name[fl["to_city"]], "date": fl["date"],
                                **pick_sort(("time", "price"))}),
            ("get_flight_detail_with_products", {"flight_id": fl["id"], "date": fl["date"]}),
            ("get_airport_coordinates", {"airport_name": rng.choice(airports)[:-8]}),
            ("search_trains", {"departure_city": city_name[tr["from_city"]],
                               "arrival_city": city_name[tr["to_city"]], "date_str": tr["date"],
                               **pick_sort(("time", "price"))}),
            ("get_train_detail_with_products", {"train_id": tr["id"], "date_str": tr["date"]}),
            ("get_station_coordinates", {"station_name": rng.choice(stations)}),
            ("search_restaurants", {"city": city, **pick_sort(("rating", "price", "distance")),
                                    **rng.choice(({}, {"categories": ["Hotpot", "Sichuan"]},
                                                  {"distance_threshold": 3},
                                                  {"price_max": 80, "stars": 4.0}))}),
            ("get_restaurant_detail_with_products",
             {"restaurant_id": rng.choice(ids["restaurants"])}),
            ("get_restaurant_coordinates", {"restaurant_id": rng.choice(ids["restaurants"])}),
            ("get_route_estimate", {"origin_lat": 31.2 + rng.random(), "origin_lng": 121.4,
                                    "destination_lat": 31.3, "destination_lng": 121.5}),
            ("get_city_center_coords", {"city_name": city}),
            ("get_date_after", {"date_str": start, "days": rng.randint(0, 30)}),
        ]
    return out


def bench_latency(path: Path, n: int) -> dict[str, tuple[float, float, int]]:
    world = open_world(path)
    calls = sample_calls(world, n)
    for name, args in calls[: len(TOOL_NAMES)]:        # warm the memo indexes
        call(world, name, args)
    times: dict[str, list[float]] = {name: [] for name in TOOL_NAMES}
    errors = dict.fromkeys(TOOL_NAMES, 0)
    for name, args in calls:
        t0 = time.perf_counter()
        text = call(world, name, args)
        times[name].append(time.perf_counter() - t0)
        errors[name] += text.startswith('{"error"')
    world.close()
    return {k: (_pct(v, 0.5) * 1e3, _pct(v, 0.99) * 1e3, errors[k]) for k, v in times.items()}


def _smaps(pid: int) -> tuple[float, float]:
    """(RSS, PSS) in MiB from /proc/<pid>/smaps_rollup."""
    vals = {}
    with open(f"/proc/{pid}/smaps_rollup") as fh:
        for line in fh:
            key, _, rest = line.partition(":")
            if key in ("Rss", "Pss"):
                vals[key] = int(rest.split()[0]) / 1024
    return vals["Rss"], vals["Pss"]


def load_dicts(path: str) -> dict[str, dict[str, dict[str, Any]]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    out = {}
    for table in TABLE_ORDER:
        key = "key" if table == "meta" else "id"
        out[table] = {row[key]: dict(row) for row in conn.execute(f"SELECT * FROM {table}")}
    conn.close()
    return out


def _worker(kind: str, path: str, calls: list, ready: Any, go: Any) -> None:
    t0 = time.perf_counter()
    if kind == "sqlite":
        world = open_world(path)
        for name, args in calls:
            call(world, name, args)
    else:
        dicts = load_dicts(path)
        for name, args in calls:       # the same look-ups by id where the dicts can answer
            for value in args.values():
                if isinstance(value, str) and value[:1] in "AHRFT" and value[1:2].isdigit():
                    table = {"A": "attractions", "H": "hotels", "R": "restaurants",
                             "F": "flights", "T": "trains"}[value[0]]
                    dicts[table].get(value)
    gc.collect()
    ready.put((os.getpid(), time.perf_counter() - t0))
    go.wait()


def measure_memory(kind: str, path: str, calls: list, procs: int, concurrent: int
                   ) -> tuple[float, float, float]:
    """(sum RSS MiB, sum PSS MiB, mean seconds to load + run) over `procs` workers."""
    ctx = mp.get_context("spawn")
    rss = pss = 0.0
    secs: list[float] = []
    for first in range(0, procs, concurrent):
        ready, go = ctx.Queue(), ctx.Event()
        ps = [ctx.Process(target=_worker, args=(kind, path, calls, ready, go))
              for _ in range(min(concurrent, procs - first))]
        for p in ps:
            p.start()
        for _ in ps:
            secs.append(ready.get(timeout=3600)[1])
        for p in ps:
            r, s = _smaps(p.pid)
            rss, pss = rss + r, pss + s
        go.set()
        for p in ps:
            p.join()
    return rss, pss, statistics.mean(secs)


def _say(*args: object) -> None:
    print(*args, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=("paper", "small"), default="paper")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--calls", type=int, default=200, help="calls per tool for latency")
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--concurrent", type=int, default=4, help="dict processes at a time")
    args = ap.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="tripbench_world_"))
    path = workdir / f"world_{args.size}_{args.seed}.sqlite"

    t0 = time.perf_counter()
    generate_world(path, args.size, args.seed)
    gen_s = time.perf_counter() - t0
    counts = table_counts(path)
    products = sum(counts[t] for t in ("attraction_products", "hotel_rooms",
                                       "restaurant_products", "flight_seats", "train_seats"))
    _say(f"world: size={args.size} seed={args.seed} cpus={os.cpu_count()}")
    _say(f"  generation {gen_s:.1f} s, database {path.stat().st_size / 2**20:.1f} MiB, "
          f"{sum(counts.values()):,} rows, {products:,} products")
    for table, count in counts.items():
        _say(f"    {table:22s} {count:>10,d}")

    _say(f"\ntool-call latency ({args.calls} calls per tool, random arguments):")
    _say(f"  {'tool':38s} {'p50 ms':>8s} {'p99 ms':>8s} {'errors':>7s}")
    for name, (p50, p99, errs) in bench_latency(path, args.calls).items():
        _say(f"  {name:38s} {p50:8.3f} {p99:8.3f} {errs:7d}")

    with open_world(path) as world:
        calls = sample_calls(world, 20, seed=2)
    _say(f"\nmemory, {args.procs} processes ({len(calls)} tool calls each):")
    s_rss, s_pss, s_t = measure_memory("sqlite", str(path), calls, args.procs, args.procs)
    d_rss, d_pss, d_t = measure_memory("dicts", str(path), calls, args.procs, args.concurrent)
    _say(f"  {'':28s} {'sum RSS MiB':>12s} {'sum PSS MiB':>12s} {'s/proc':>8s}")
    _say(f"  {'shared SQLite (mmap, ro)':28s} {s_rss:12.1f} {s_pss:12.1f} {s_t:8.2f}")
    _say(f"  {'whole world in dicts':28s} {d_rss:12.1f} {d_pss:12.1f} {d_t:8.2f}")
    _say(f"  ratio dicts / SQLite          {d_rss / s_rss:12.1f} {d_pss / s_pss:12.1f}")
    if args.workdir is None:
        path.unlink()
        workdir.rmdir()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
