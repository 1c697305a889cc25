"""Benchmark: the generated TRIP-Bench world and its 18 tools (prints figures, asserts nothing).

    python -m perf.tripbench_world [--size paper|small] [--seed 0] [--workdir DIR]
        [--world PATH] [--calls 200] [--procs 8] [--concurrent 4] [--no-memory]

Reports: world generation time, database size and row counts; the search columns' load time
and size; tool-call latency p50/p99 per tool and call shape (`tools.execute` with the paper's
text answers, as the sandbox calls it; wall time and the thread's CPU time, which a busy
machine does not inflate) over randomly drawn arguments, half of the searches in the largest
cities; the three searches' column engine and SQL reference side by side; and memory of
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

from evaluator.benchmarks.tripbench.tools import SPECS, call, execute
from evaluator.benchmarks.tripbench.world import names, open_world
from evaluator.benchmarks.tripbench.world.db import World
from evaluator.benchmarks.tripbench.world.generate import generate_world, table_counts
from evaluator.benchmarks.tripbench.world.schema import TABLE_ORDER


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def _ids(world: World, table: str) -> list[str]:
    return [r["id"] for r in world.query(f"SELECT id FROM {table} ORDER BY id")]


def _stay(rng: random.Random, dates: list[str]) -> dict[str, str]:
    day = rng.choice(dates[:-5])
    out = dt.date.fromisoformat(day) + dt.timedelta(days=rng.randint(1, 4))
    return {"check_in_date": day, "check_out_date": out.isoformat()}


def call_shapes(world: World) -> list[tuple[str, str, Any]]:
    """(tool, shape, args(rng)) of every call shape measured: each search's filters, sorts and
    distance forms, in the world's largest cities half of the time; each other tool."""
    cities = world.query("SELECT name, lat, lon FROM cities ORDER BY id")
    big = [c for c in cities if c["name"] in {n for n, *_, t in names.CITIES if t == 1}]
    dates = [r["date"] for r in world.query("SELECT DISTINCT date FROM trains ORDER BY date")]
    ids = {t: _ids(world, t) for t in ("attractions", "hotels", "restaurants")}
    flights = world.query("SELECT f.id, a.name AS src, b.name AS dst, f.date FROM flights f "
                          "JOIN cities a ON a.id = f.from_city JOIN cities b ON "
                          "b.id = f.to_city ORDER BY f.id")
    trains = world.query("SELECT t.id, a.name AS src, b.name AS dst, t.date FROM trains t "
                         "JOIN cities a ON a.id = t.from_city JOIN cities b ON "
                         "b.id = t.to_city ORDER BY t.id")
    airports = sorted({r["from_airport"] for r in world.query(
        "SELECT DISTINCT from_airport FROM flights")})
    stations = sorted({r["from_station"] for r in world.query(
        "SELECT DISTINCT from_station FROM trains")})

    def city(rng: random.Random) -> dict[str, Any]:
        return rng.choice(big if big and rng.random() < 0.5 else cities)

    def near(rng: random.Random, c: dict[str, Any]) -> dict[str, Any]:
        return {"latitude": c["lat"] + rng.uniform(-0.04, 0.04),
                "longitude": c["lon"] + rng.uniform(-0.04, 0.04)}

    def search(tool: str, extra: Any) -> Any:
        def args(rng: random.Random) -> dict[str, Any]:
            c = city(rng)
            out = {"city": c["name"], "page": rng.choice((1, 1, 2))}
            if tool == "search_hotels":
                out.update(_stay(rng, dates))
            return {**out, **extra(rng, c)}
        return args

    cats = list(names.ATTRACTION_CATEGORIES)
    cuisines = list(names.CUISINES)
    shapes: list[tuple[str, str, Any]] = []
    for shape, extra in (
            ("default", lambda r, c: {}),
            ("sort rating", lambda r, c: {"sort_key": "rating"}),
            ("sort price", lambda r, c: {"sort_key": "price"}),
            ("sort distance", lambda r, c: {"sort_key": "distance"}),
            ("categories", lambda r, c: {"categories": r.sample(cats, 2)}),
            ("within 10 km", lambda r, c: {"distance_threshold": 10}),
            ("near a point, sorted", lambda r, c: {**near(r, c), "sort_key": "distance"}),
            ("free only", lambda r, c: {"free_only": True}),
            ("rating + level", lambda r, c: {"rating": 4.2, "sight_level": 3}),
            ("name", lambda r, c: {"attraction_name": r.choice(names.ATTRACTION_WORDS)})):
        shapes.append(("search_attractions", shape, search("search_attractions", extra)))
    for shape, extra in (
            ("default", lambda r, c: {}),
            ("sort price", lambda r, c: {"sort_key": "price"}),
            ("sort distance", lambda r, c: {"sort_key": "distance"}),
            ("price max", lambda r, c: {"price_max": 400}),
            ("within 5 km", lambda r, c: {"distance_threshold": 5}),
            ("near a point within 3 km", lambda r, c: {**near(r, c), "distance_threshold": 3}),
            ("type + stars", lambda r, c: {"hotel_type": ["upscale", "luxury"], "stars": 4}),
            ("rooms: king + breakfast", lambda r, c: {"room_types": ["King"],
                                                      "has_breakfast": True}),
            ("cancel + reviews + ratings", lambda r, c: {
                "cancel_policy": "free_24h", "review_count": 200, "good_remarks_rate": 90,
                "service_rating": 8}),
            ("name", lambda r, c: {"hotel_name": r.choice(names.DISTRICTS)})):
        shapes.append(("search_hotels", shape, search("search_hotels", extra)))
    for shape, extra in (
            ("default", lambda r, c: {}),
            ("sort price", lambda r, c: {"sort_key": "price"}),
            ("sort distance", lambda r, c: {"sort_key": "distance"}),
            ("near a point, sorted", lambda r, c: {**near(r, c), "sort_key": "distance"}),
            ("near a point within 3 km", lambda r, c: {**near(r, c), "distance_threshold": 3}),
            ("cuisines", lambda r, c: {"categories": r.sample(cuisines, 2)}),
            ("cuisine, sorted by distance", lambda r, c: {"categories": [r.choice(cuisines)],
                                                          "sort_key": "distance"}),
            ("price max + stars", lambda r, c: {"price_max": 80, "stars": 4.0}),
            ("reviews + ratings + reservable", lambda r, c: {
                "review_count": 300, "product_rating": 8.5, "reservable": True}),
            ("name", lambda r, c: {"restaurant_name": r.choice(names.RESTAURANT_WORDS)})):
        shapes.append(("search_restaurants", shape, search("search_restaurants", extra)))
    for tool, key, rows in (("search_flights", "date", flights),
                            ("search_trains", "date_str", trains)):
        for shape, extra in (("sort time", {}), ("sort price", {"sort_key": "price"}),
                             ("departure period", {"dep_period": "morning"}),
                             ("arrival window", {"arr_period": "12:00-24:00"})):
            shapes.append((tool, shape, lambda r, rows=rows, key=key, extra=extra: {
                "departure_city": (x := r.choice(rows))["src"], "arrival_city": x["dst"],
                key: x["date"], **extra}))
    shapes += [
        ("get_attraction_detail_with_products", "by id",
         lambda r: {"poi_id": r.choice(ids["attractions"])}),
        ("get_attraction_coordinates", "by id",
         lambda r: {"poi_id": r.choice(ids["attractions"])}),
        ("get_hotel_detail_with_products", "by id",
         lambda r: {"hotel_id": r.choice(ids["hotels"]), **_stay(r, dates),
                    "person_num": r.randint(1, 4)}),
        ("get_hotel_detail_with_products", "room filters",
         lambda r: {"hotel_id": r.choice(ids["hotels"]), **_stay(r, dates),
                    "min_breakfast_per_room": 1, "cancel_policy": "free_72h",
                    "has_window": True}),
        ("get_hotel_coordinates", "by id", lambda r: {"hotel_id": r.choice(ids["hotels"])}),
        ("get_flight_detail_with_products", "by id",
         lambda r: {"flight_id": (x := r.choice(flights))["id"], "date": x["date"]}),
        ("get_airport_coordinates", "fuzzy name",
         lambda r: {"airport_name": r.choice(airports)[:-8]}),
        ("get_train_detail_with_products", "by id + platform",
         lambda r: {"train_id": (x := r.choice(trains))["id"], "date_str": x["date"],
                    "source_platform": "12306"}),
        ("get_station_coordinates", "exact name",
         lambda r: {"station_name": r.choice(stations)}),
        ("get_restaurant_detail_with_products", "by id",
         lambda r: {"restaurant_id": r.choice(ids["restaurants"])}),
        ("get_restaurant_coordinates", "by id",
         lambda r: {"restaurant_id": r.choice(ids["restaurants"])}),
        ("get_route_estimate", "two points",
         lambda r: {"origin_lat": 31.2 + r.random(), "origin_lng": 121.4,
                    "destination_lat": 31.3, "destination_lng": 121.5}),
        ("get_city_center_coords", "name", lambda r: {"city_name": r.choice(cities)["name"]}),
        ("get_date_after", "date + days",
         lambda r: {"date_str": dates[0], "days": r.randint(0, 30)}),
    ]
    return shapes


def sample_calls(world: World, n: int, seed: int = 1) -> list[tuple[str, dict[str, Any]]]:
    """`n` calls of every shape, arguments drawn at random from the world."""
    rng = random.Random(seed)
    shapes = call_shapes(world)
    return [(tool, make(rng)) for _ in range(n) for tool, _, make in shapes]


def warm(world: World) -> float:
    """Load every city's search columns and names (what the first search, and the first name
    search, of a city does); seconds."""
    t0 = time.perf_counter()
    for (name,) in [(r["name"],) for r in world.query("SELECT name FROM cities")]:
        call(world, "search_attractions", {"city": name, "attraction_name": "x"})
        call(world, "search_hotels", {"city": name, "check_in_date": "2025-10-02",
                                      "check_out_date": "2025-10-03", "hotel_name": "x"})
        call(world, "search_restaurants", {"city": name, "restaurant_name": "x"})
    return time.perf_counter() - t0


def bench_latency(path: Path, n: int) -> tuple[list[tuple[str, str, list[float], list[float],
                                                          int]], float, float]:
    """Per shape: (tool, shape, wall seconds, thread-CPU seconds, errors) of `n` calls as the
    sandbox makes them (text answers), after `warm`; the warm-up time and column MiB."""
    world = open_world(path)
    warm_s = warm(world)
    mib = sum(v.nbytes for k, cols in world._memo.items() if k.startswith("columns/")
              for v in (*cols.num.values(), *cols.codes.values(), cols.rowid)) / 2**20
    mib += sum(len(v.text) + v.starts.nbytes for k, v in world._memo.items()
               if k.startswith("names/")) / 2**20
    rng = random.Random(1)
    out = []
    for tool, shape, make in call_shapes(world):
        walls, cpus, errors = [], [], 0
        for _ in range(n):
            args = make(rng)
            c0, t0 = time.thread_time(), time.perf_counter()
            result = execute(world, tool, args, "text")
            walls.append(time.perf_counter() - t0)
            cpus.append(time.thread_time() - c0)
            errors += result.category not in (None, "not_found")
        out.append((tool, shape, walls, cpus, errors))
    world.close()
    return out, warm_s, mib


def bench_engines(path: Path, n: int) -> list[tuple[str, str, list[float], list[float]]]:
    """The three searches' engines side by side on the same calls: columns (the tools') and
    the SQL reference (searches_sql.py), wall seconds, JSON answers without rendering."""
    from evaluator.benchmarks.tripbench import searches, searches_sql

    world = open_world(path)
    warm(world)
    rng = random.Random(2)
    out = []
    for tool, shape, make in call_shapes(world):
        if tool not in ("search_attractions", "search_hotels", "search_restaurants"):
            continue
        col, ref = [], []
        for _ in range(n):
            args = SPECS[tool].bind(make(rng))
            t0 = time.perf_counter()
            getattr(searches, tool)(world, **args)
            t1 = time.perf_counter()
            getattr(searches_sql, tool)(world, **args)
            col.append(t1 - t0)
            ref.append(time.perf_counter() - t1)
        out.append((tool, shape, col, ref))
    world.close()
    return out


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
        warm(world)
        for name, args in calls:
            call(world, name, args, "text")
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


def _ms(xs: list[float], p: float) -> float:
    return _pct(xs, p) * 1e3


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=("paper", "small"), default="paper")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--world", type=Path, default=None,
                    help="measure this generated world instead of generating one")
    ap.add_argument("--calls", type=int, default=200, help="calls per call shape")
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--concurrent", type=int, default=4, help="dict processes at a time")
    ap.add_argument("--no-memory", action="store_true", help="skip the memory comparison")
    args = ap.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="tripbench_world_"))
    path = args.world or workdir / f"world_{args.size}_{args.seed}.sqlite"

    if args.world is None:
        t0 = time.perf_counter()
        generate_world(path, args.size, args.seed)
        gen_s = time.perf_counter() - t0
    counts = table_counts(path)
    products = sum(counts[t] for t in ("attraction_products", "hotel_rooms",
                                       "restaurant_products", "flight_seats", "train_seats"))
    load = os.getloadavg()[0]
    _say(f"world: {path.name} cpus={os.cpu_count()} load average {load:.1f}")
    generated = f"generation {gen_s:.1f} s, " if args.world is None else ""
    _say(f"  {generated}database {path.stat().st_size / 2**20:.1f} MiB, "
         f"{sum(counts.values()):,} rows, {products:,} products")
    for table, count in counts.items():
        _say(f"    {table:22s} {count:>10,d}")

    shapes, warm_s, mib = bench_latency(path, args.calls)
    _say(f"\nsearch columns and names of every city: loaded in {warm_s:.1f} s, {mib:.1f} MiB")
    _say(f"tool-call latency per call shape ({args.calls} calls each, random arguments, text "
         "answers as the sandbox gives them; wall ms and the thread's CPU ms):")
    _say(f"  {'tool':36s} {'shape':30s} {'p50':>7s} {'p99':>7s} {'cpu p50':>8s} "
         f"{'cpu p99':>8s} {'err':>4s}")
    worst = 0.0
    for tool, shape, walls, cpus, errors in shapes:
        worst = max(worst, _ms(walls, 0.99))
        _say(f"  {tool:36s} {shape:30s} {_ms(walls, .5):7.3f} {_ms(walls, .99):7.3f} "
             f"{_ms(cpus, .5):8.3f} {_ms(cpus, .99):8.3f} {errors:4d}")
    _say(f"  slowest shape's p99: {worst:.2f} ms (target < 5 ms)")

    _say(f"\nsearch engines side by side ({args.calls} calls each, JSON answers): columns "
         "(the tools') vs the SQL reference")
    _say(f"  {'tool':20s} {'shape':30s} {'col p50':>8s} {'col p99':>8s} {'SQL p50':>8s} "
         f"{'SQL p99':>8s} {'p99 x':>6s}")
    for tool, shape, col, ref in bench_engines(path, args.calls):
        _say(f"  {tool:20s} {shape:30s} {_ms(col, .5):8.3f} {_ms(col, .99):8.3f} "
             f"{_ms(ref, .5):8.3f} {_ms(ref, .99):8.3f} "
             f"{_ms(ref, .99) / max(_ms(col, .99), 1e-9):6.1f}")

    if not args.no_memory:
        with open_world(path) as world:
            calls = sample_calls(world, 2, seed=2)
        _say(f"\nmemory, {args.procs} processes ({len(calls)} tool calls each, every city's "
             "search columns loaded):")
        s_rss, s_pss, s_t = measure_memory("sqlite", str(path), calls, args.procs, args.procs)
        d_rss, d_pss, d_t = measure_memory("dicts", str(path), calls, args.procs,
                                           args.concurrent)
        _say(f"  {'':28s} {'sum RSS MiB':>12s} {'sum PSS MiB':>12s} {'s/proc':>8s}")
        _say(f"  {'shared SQLite (mmap, ro)':28s} {s_rss:12.1f} {s_pss:12.1f} {s_t:8.2f}")
        _say(f"  {'whole world in dicts':28s} {d_rss:12.1f} {d_pss:12.1f} {d_t:8.2f}")
        _say(f"  ratio dicts / SQLite          {d_rss / s_rss:12.1f} {d_pss / s_pss:12.1f}")
    if args.world is None and args.workdir is None:
        path.unlink()
        workdir.rmdir()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
