"""Seeded, reproducible generator of the TRIP-Bench world (the SQLite database of the schema
contract; the paper's TripTailor POI data is not released).

    python -m evaluator.benchmarks.tripbench.world.generate OUT.sqlite [--size small|paper]
        [--seed 0]

The same (seed, size) gives the same database content (`content_digest`): every draw comes
from a `random.Random` seeded by a string of (seed, size, what, where) and rows are inserted in
a fixed order. Built in one transaction with journaling off, then indexed, analysed and
vacuumed, in a temporary file renamed into place (a reader never sees a half-built world).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import itertools
import json
import math
import os
import random
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from . import names, schema
from .geo import offset
from .transport import City, flight_rows, make_cities, routes, train_rows

GENERATOR = "agentsweep.tripbench.world"
VERSION = "2"


@dataclass(frozen=True)
class WorldSize:
    """Counts are for a tier-2 city; tier-1 cities get 1.6x, tier-3 cities 0.6x."""

    name: str
    cities: int
    attractions: int
    hotels: int
    restaurants: int
    rooms: tuple[int, int]               # room products per hotel (min, max)
    days: int                            # operating days of flights and trains
    flight_services: tuple[int, int]     # daily flights per connected route (before busyness)
    train_services: tuple[int, int]
    date_start: str = "2025-10-01"


SIZES = {
    "small": WorldSize("small", 6, 8, 5, 10, (2, 4), 7, (1, 2), (1, 2)),
    # the paper's scale: 40 cities, 6k+ attractions, 80k+ hotels, 400k+ restaurants, ~1M products
    "paper": WorldSize("paper", 40, 170, 2250, 11300, (3, 7), 60, (0, 2), (1, 2)),
}
TIER_SCALE = {1: 1.6, 2: 1.0, 3: 0.6}
PRICE_SCALE = {1: 1.25, 2: 1.0, 3: 0.85}


def _count(base: int, tier: int) -> int:
    return max(1, round(base * TIER_SCALE[tier]))


def _place(rng: random.Random, city: City, spread_km: float) -> tuple[float, float]:
    dist = min(abs(rng.gauss(0, spread_km)), spread_km * 3)
    angle = rng.uniform(0, 6.283185307179586)
    return offset(city.lat, city.lon, dist * math.cos(angle), dist * math.sin(angle))


def _unique(name: str, seen: dict[str, int]) -> str:
    n = seen.get(name, 0) + 1
    seen[name] = n
    return name if n == 1 else f"{name} ({n})"


def attraction_rows(city: City, size: WorldSize, seed: int, ids: dict[str, itertools.count]
                    ) -> tuple[list[tuple], list[tuple]]:
    rng = random.Random(f"{seed}/{size.name}/attractions/{city.id}")
    cats = list(names.ATTRACTION_CATEGORIES)
    weights = [3, 4, 3, 2, 1, 1, 1, 1.5, 1.5, 1.5, 0.7, 1, 1.2, 1, 1]
    rows, products, seen = [], [], {}
    levels = (0, 1, 2, 3, 4, 5)
    for _ in range(_count(size.attractions, city.tier)):
        cat = rng.choices(cats, weights)[0]
        nouns, (opens, closes), closed, durations, free_p, (lo, hi) = \
            names.ATTRACTION_CATEGORIES[cat]
        word = city.name if rng.random() < 0.15 else rng.choice(names.ATTRACTION_WORDS)
        name = _unique(f"{word} {rng.choice(nouns)}", seen)
        level = rng.choices(levels, (35, 5, 10, 20, 20, 10))[0]
        heat = round(min(10.0, max(0.0, rng.gauss(2.5 + level, 1.5))), 1)
        spread = 25.0 if cat in ("mountain", "lake & river", "theme park", "zoo") else 8.0
        lat, lon = _place(rng, city, spread)
        aid = f"A{next(ids['A']):06d}"
        rows.append((aid, city.id, name, cat, heat, round(rng.triangular(3.2, 5.0, 4.5), 1),
                     int(rng.lognormvariate(4.0 + heat / 2.5, 1.0)), level, lat, lon, opens,
                     closes, closed if rng.random() < 0.8 else "", rng.choice(durations)))
        if rng.random() < free_p:
            tickets = []        # free admission, no ticket needed: the agent plans products []
        else:
            adult = float(round(rng.uniform(lo, hi) * PRICE_SCALE[city.tier]))
            tickets = [("Adult ticket", adult)]
            if rng.random() < 0.6:
                tickets.append(("Student ticket", float(round(adult / 2))))
            if rng.random() < 0.25:
                tickets.append(("Family package (2 adults + 1 child)", float(round(adult * 2.4))))
            if rng.random() < 0.2:
                tickets.append(("Ticket + guided tour", adult + 60.0))
        for tname, price in tickets:
            products.append((f"AP{next(ids['AP']):07d}", aid, tname, price))
    return rows, products


def hotel_rows(city: City, size: WorldSize, seed: int, ids: dict[str, itertools.count]
               ) -> tuple[list[tuple], list[tuple]]:
    rng = random.Random(f"{seed}/{size.name}/hotels/{city.id}")
    brands = list(names.HOTEL_BRANDS)
    weights = [1.5 if star == 5 else 2 if star == 4 else 3 if star == 3 else 4 if star else 12
               for star in names.HOTEL_BRANDS.values()]
    room_types = list(names.ROOM_TYPES)
    rows, rooms, seen = [], [], {}
    for _ in range(_count(size.hotels, city.tier)):
        brand = rng.choices(brands, weights)[0]
        star = names.HOTEL_BRANDS[brand] or rng.choices((2, 3, 4, 5), (4, 4, 2, 1))[0]
        district = rng.choice(names.DISTRICTS)
        if brand:
            name = f"{brand} {city.name} {district}"
        else:
            name = f"{rng.choice(names.ATTRACTION_WORDS)} {rng.choice(names.INDEPENDENT_HOTEL_WORDS)}"
        name = _unique(name, seen)
        facilities = [f for i, f in enumerate(names.HOTEL_FACILITIES)
                      if i == 0 or rng.random() < 0.15 + 0.12 * star - 0.02 * i]
        lat, lon = _place(rng, city, 6.0)
        hid = f"H{next(ids['H']):06d}"
        score = round(rng.triangular(3.0, 5.0, 3.6 + 0.2 * star), 1)
        reviews = int(rng.lognormvariate(4.2 + 0.35 * star, 1.0))
        good = round(min(100.0, max(60.0, rng.gauss(62 + 7.5 * score, 3.0))), 1)
        aspects = [_rating(rng, score) for _ in range(3)]
        rows.append((hid, city.id, name, star, brand, json.dumps(facilities), score, lat, lon,
                     reviews, good, *aspects))
        base = names.STAR_BASE_PRICE[star] * PRICE_SCALE[city.tier] * rng.uniform(0.7, 1.4)
        breakfast = "breakfast" in facilities
        for rtype in sorted(rng.sample(room_types, rng.randint(*size.rooms)),
                            key=room_types.index):
            capacity, mult = names.ROOM_TYPES[rtype]
            price = float(round(base * mult * rng.uniform(0.9, 1.1)))
            meals = rng.choices((0, 1, 2), (3, 3, 4))[0] if breakfast else 0
            policy = rng.choices(list(names.CANCEL_POLICIES), (2, 4, 2, 2))[0]
            window = int(rng.random() < (0.7 if rtype == "Single Room" else 0.9))
            rooms.append((f"HR{next(ids['HR']):07d}", hid, rtype, capacity, price,
                          min(meals, capacity), policy, window))
    return rows, rooms


def _rating(rng: random.Random, score: float) -> float:
    """A 0-10 aspect rating around twice the 0-5 score (the paper's 8.0 / 8.7 / 8.2)."""
    return round(min(10.0, max(5.0, rng.gauss(2 * score - 0.4, 0.5))), 1)


def restaurant_rows(city: City, size: WorldSize, seed: int, ids: dict[str, itertools.count]
                    ) -> tuple[list[tuple], list[tuple]]:
    rng = random.Random(f"{seed}/{size.name}/restaurants/{city.id}")
    cuisines = list(names.CUISINES)
    rows, products = [], []
    hours = (("10:30", "21:30"), ("11:00", "22:00"), ("10:00", "20:30"), ("11:00", "23:30"),
             ("06:30", "14:00"), ("17:00", "23:59"), ("09:00", "21:00"))
    for _ in range(_count(size.restaurants, city.tier)):
        cuisine = rng.choice(cuisines)
        style = rng.random()
        if style < 0.4:
            name = f"{rng.choice(names.RESTAURANT_WORDS)} {cuisine} {rng.choice(names.RESTAURANT_NOUNS)}"
        elif style < 0.7:
            name = f"{rng.choice(names.SURNAMES)}'s {cuisine}"
        else:
            name = f"{rng.choice(names.RESTAURANT_WORDS)} {rng.choice(names.RESTAURANT_NOUNS)}"
        name = f"{name} ({rng.choice(names.DISTRICTS)})" if rng.random() < 0.5 else name
        avg = float(round(names.CUISINES[cuisine] * PRICE_SCALE[city.tier]
                          * rng.uniform(0.6, 1.6)))
        lat, lon = _place(rng, city, 5.0)
        opens, closes = rng.choices(hours, (5, 5, 2, 2, 1, 1, 2))[0]
        rid = f"R{next(ids['R']):06d}"
        score = round(rng.triangular(2.8, 5.0, 4.2), 1)
        reviews = int(rng.lognormvariate(3.5 + 0.4 * score, 1.1))
        reservable = rng.random() < 0.55
        must = reservable and rng.random() < 0.15
        rows.append((rid, city.id, name, cuisine, avg, score, lat, lon, opens, closes, reviews,
                     *(_rating(rng, score) for _ in range(3)), int(reservable), int(must)))
        n = rng.choices((0, 1, 2, 3), (45, 35, 14, 6))[0]
        for people in sorted(rng.sample((1, 2, 3, 4, 6), n)):
            label = "Set menu for 1" if people == 1 else f"Set menu for {people}"
            products.append((f"RP{next(ids['RP']):07d}", rid, label,
                             float(round(avg * people * rng.uniform(0.75, 1.0))), people))
    return rows, products


def _insert(conn: sqlite3.Connection, table: str, rows: list[tuple]) -> None:
    if rows:
        marks = ",".join("?" * len(rows[0]))
        conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)


def _dates(size: WorldSize) -> list[str]:
    start = dt.date.fromisoformat(size.date_start)
    return [(start + dt.timedelta(days=i)).isoformat() for i in range(size.days)]


def generate_world(out: str | os.PathLike[str], size: str = "small", seed: int = 0) -> Path:
    """Write the world of (size, seed) to `out` (replaced atomically); returns its path."""
    if size not in SIZES:
        raise ValueError(f"unknown world size {size!r} (one of {', '.join(SIZES)})")
    spec, out = SIZES[size], Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    conn = sqlite3.connect(tmp, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("PRAGMA page_size=4096")
        conn.execute("BEGIN")
        for stmt in schema.create_tables_sql():
            conn.execute(stmt)
        dates = _dates(spec)
        meta = {"generator": GENERATOR, "version": VERSION, "seed": str(seed), "size": size,
                "date_start": dates[0], "date_end": dates[-1]}
        _insert(conn, "meta", sorted(meta.items()))
        cities = make_cities(spec.cities, seed, size)
        _insert(conn, "cities", [(c.id, c.name, c.lat, c.lon) for c in cities])
        ids = {k: itertools.count(1) for k in ("A", "AP", "H", "HR", "R", "RP", "F", "FS", "T",
                                                "TS")}
        for city in cities:
            for make, parent, child in ((attraction_rows, "attractions", "attraction_products"),
                                        (hotel_rows, "hotels", "hotel_rooms"),
                                        (restaurant_rows, "restaurants", "restaurant_products")):
                rows, products = make(city, spec, seed, ids)
                _insert(conn, parent, rows)
                _insert(conn, child, products)
        for a, b, flights, trains in routes(cities, seed, size, spec.flight_services,
                                            spec.train_services):
            rows, seats = flight_rows(a, b, flights, dates, seed, size, ids["F"], ids["FS"])
            _insert(conn, "flights", rows)
            _insert(conn, "flight_seats", seats)
            rows, seats = train_rows(a, b, trains, dates, seed, size, ids["T"], ids["TS"])
            _insert(conn, "trains", rows)
            _insert(conn, "train_seats", seats)
        for stmt in schema.create_indexes_sql():
            conn.execute(stmt)
        conn.execute("COMMIT")
        conn.execute("ANALYZE")
        conn.execute("VACUUM")
    except BaseException:
        conn.close()
        tmp.unlink(missing_ok=True)
        raise
    conn.close()
    os.replace(tmp, out)
    return out


def content_digest(path: str | os.PathLike[str]) -> str:
    """sha256 of a canonical dump: every table's rows in primary-key order (schema included)."""
    h = hashlib.sha256()
    conn = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    try:
        for (sql,) in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL "
                                   "AND name NOT LIKE 'sqlite_stat%' ORDER BY type, name"):
            h.update(sql.encode() + b"\n")
        for table in schema.TABLE_ORDER:
            key = "key" if table == "meta" else "id"
            for row in conn.execute(f"SELECT * FROM {table} ORDER BY {key}"):
                h.update(repr(row).encode() + b"\n")
    finally:
        conn.close()
    return h.hexdigest()


def table_counts(path: str | os.PathLike[str]) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    try:
        return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                for t in schema.TABLE_ORDER}
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--size", choices=sorted(SIZES), default="small")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    path = generate_world(args.out, args.size, args.seed)
    print(f"{path}: {args.size} world, seed {args.seed}, {time.perf_counter() - t0:.1f} s, "
          f"{path.stat().st_size / 2**20:.1f} MiB")
    for table, n in table_counts(path).items():
        print(f"  {table:22s} {n:>9,d}")


if __name__ == "__main__":
    main()
