"""Intercity transport of the generated world: airports, stations, timetables, and one flight /
train row per service per operating day with its seat products.

A route between two cities gets a fixed daily timetable (services with a number, departure
time and terminals), as airlines and railways publish; each day a service runs with
probability 0.92 and, for flights, its fares move with the day. Every draw comes from a
`random.Random` seeded by (seed, size, route), so the rows depend only on seed and size.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass

from . import names
from .geo import haversine_km, offset


@dataclass(frozen=True)
class Terminal:
    name: str
    lat: float
    lon: float


@dataclass(frozen=True)
class City:
    id: str
    name: str
    lat: float
    lon: float
    tier: int
    airports: tuple[Terminal, ...]
    stations: tuple[Terminal, ...]


def make_cities(n: int, seed: int, size: str) -> list[City]:
    out = []
    for i, (name, lat, lon, tier) in enumerate(names.CITIES[:n]):
        rng = random.Random(f"{seed}/{size}/terminals/{name}")
        airports = []
        for word in names.AIRPORTS.get(name, ()):
            kind = names.AIRPORT_WORDS[0] if tier < 3 or rng.random() < 0.5 else \
                names.AIRPORT_WORDS[1]
            dist, angle = rng.uniform(15, 40), rng.uniform(0, 6.283)
            alat, alon = offset(lat, lon, dist * math.cos(angle), dist * math.sin(angle))
            airports.append(Terminal(f"{name} {word} {kind}", alat, alon))
        stations = []
        for suffix in names.STATION_SUFFIXES[: {1: 3, 2: 2, 3: 1}[tier]]:
            dist, angle = rng.uniform(1, 12), rng.uniform(0, 6.283)
            slat, slon = offset(lat, lon, dist * math.cos(angle), dist * math.sin(angle))
            stations.append(Terminal(f"{name} {suffix}", slat, slon))
        out.append(City(f"C{i + 1:04d}", name, lat, lon, tier, tuple(airports), tuple(stations)))
    return out


def _hhmm(minutes: int) -> str:
    minutes %= 24 * 60
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


@dataclass(frozen=True)
class Service:
    number: str
    kind: str            # airline name (flights) or train type G/D/K (trains)
    dep_min: int         # minutes after midnight
    duration_min: int
    origin: Terminal
    destination: Terminal
    base_fare: float


def _flight_services(rng: random.Random, a: City, b: City, km: float,
                     lo: int, hi: int) -> list[Service]:
    if not a.airports or not b.airports or km < 400:
        return []
    busy = 3 - (a.tier + b.tier) / 2          # 2 for tier-1 pairs, 0 for tier-3 pairs
    if busy < 0.6 and rng.random() < 0.45:
        return []
    count = rng.randint(lo, hi) + int(busy)
    fly = int(km / 780 * 60 + 35)
    out = []
    for _ in range(count):
        airline, code = names.AIRLINES[rng.randrange(len(names.AIRLINES))]
        dep = rng.randrange(6 * 12 + 6, 22 * 12 + 6) * 5
        out.append(Service(f"{code}{rng.randint(1000, 9899)}", airline, dep,
                           fly + rng.choice((-5, 0, 5, 10, 15)),
                           rng.choice(a.airports), rng.choice(b.airports),
                           round(max(280.0, 300 + km * rng.uniform(0.45, 0.75)), -1)))
    return out


def _train_services(rng: random.Random, a: City, b: City, km: float,
                    lo: int, hi: int) -> list[Service]:
    if km > 2600:
        return []
    if km <= 1300:
        kinds = ["G", "G", "D"] if km > 150 else ["G", "D", "D"]
        count = rng.randint(lo, hi) + (1 if km < 350 else 0)
        if km > 700:
            kinds.append("K")
    else:
        if rng.random() < 0.35:
            return []
        kinds, count = ["K", "K", "G"], rng.randint(1, 2)
    out = []
    rail = km * 1.18
    for _ in range(count):
        kind = rng.choice(kinds)
        minutes = int(rail / names.TRAIN_SPEED_KMH[kind] * 60) + rng.randint(5, 40)
        if minutes >= 23 * 60:       # under a day, so arr_time < dep_time means "next day"
            kind, minutes = "G", int(rail / names.TRAIN_SPEED_KMH["G"] * 60) + 30
        start = (6 * 60, 21 * 60) if kind != "K" else (0, 24 * 60)
        dep = rng.randrange(start[0] // 5, start[1] // 5) * 5
        number = f"{kind}{rng.randint(1, 9999 if kind == 'K' else 4999)}"
        fare = round(rail * names.TRAIN_FARE_PER_KM[kind] * rng.uniform(0.95, 1.05) * 2) / 2
        out.append(Service(number, kind, dep, minutes, rng.choice(a.stations),
                           rng.choice(b.stations), max(fare, 19.5)))
    return out


def routes(cities: list[City], seed: int, size: str, flights: tuple[int, int],
           trains: tuple[int, int]) -> Iterator[tuple[City, City, list[Service], list[Service]]]:
    """Every ordered city pair with its flight and train timetables (possibly empty)."""
    for a in cities:
        for b in cities:
            if a.id == b.id:
                continue
            rng = random.Random(f"{seed}/{size}/route/{a.id}/{b.id}")
            km = haversine_km(a.lat, a.lon, b.lat, b.lon)
            yield a, b, _flight_services(rng, a, b, km, *flights), \
                _train_services(rng, a, b, km, *trains)


def flight_rows(a: City, b: City, services: list[Service], dates: list[str], seed: int,
                size: str, next_id: Iterator[int], next_seat: Iterator[int]
                ) -> tuple[list[tuple], list[tuple]]:
    rng = random.Random(f"{seed}/{size}/flights/{a.id}/{b.id}")
    punctual = random.Random(f"{seed}/{size}/punctuality/{a.id}/{b.id}")
    stats = []      # a flight number's punctuality statistics hold on every day it flies
    for _ in services:
        rate = round(min(98.0, max(55.0, punctual.gauss(82.0, 9.0))), 1)
        stats.append((rate, round(5 + (100 - rate) * punctual.uniform(0.8, 1.6))))
    rows, seats = [], []
    for date in dates:
        for s, (rate, delay) in zip(services, stats):
            if rng.random() >= 0.92:
                continue
            fid = f"F{next(next_id):07d}"
            rows.append((fid, s.number, a.id, b.id, date, _hhmm(s.dep_min),
                         _hhmm(s.dep_min + s.duration_min), s.duration_min, s.kind,
                         s.origin.name, s.destination.name, s.origin.lat, s.origin.lon,
                         s.destination.lat, s.destination.lon, rate, delay))
            economy = round(s.base_fare * rng.uniform(0.45, 1.25), -1)
            cabins = [("economy", economy)]
            if rng.random() < 0.7:
                cabins.append(("business", round(s.base_fare * rng.uniform(2.2, 3.0), -1)))
            if a.tier == 1 and b.tier == 1 and rng.random() < 0.4:
                cabins.append(("first", round(s.base_fare * rng.uniform(3.5, 4.5), -1)))
            for cabin, price in cabins:
                for platform, fare in _platforms(rng, names.FLIGHT_PLATFORMS, price, 10.0):
                    left = 0 if rng.random() < 0.05 else rng.randint(1, 60)
                    seats.append((f"FS{next(next_seat):07d}", fid, cabin, fare, left,
                                  platform))
    return rows, seats


def _platforms(rng: random.Random, platforms: tuple[str, ...], price: float,
               step: float) -> list[tuple[str, float]]:
    """One to three booking platforms selling a seat class, each at its own fare (within a
    few percent of the class's price, rounded to `step`)."""
    chosen = sorted(rng.sample(range(len(platforms)), rng.choices((1, 2, 3), (3, 4, 3))[0]))
    return [(platforms[i], float(max(step, round(price * rng.uniform(0.96, 1.06) / step)
                                       * step))) for i in chosen]


def train_rows(a: City, b: City, services: list[Service], dates: list[str], seed: int,
               size: str, next_id: Iterator[int], next_seat: Iterator[int]
               ) -> tuple[list[tuple], list[tuple]]:
    rng = random.Random(f"{seed}/{size}/trains/{a.id}/{b.id}")
    rows, seats = [], []
    for date in dates:
        for s in services:
            if rng.random() >= 0.92:
                continue
            tid = f"T{next(next_id):07d}"
            rows.append((tid, s.number, a.id, b.id, date, _hhmm(s.dep_min),
                         _hhmm(s.dep_min + s.duration_min), s.duration_min, s.kind,
                         s.origin.name, s.destination.name, s.origin.lat, s.origin.lon,
                         s.destination.lat, s.destination.lon))
            for seat_class, mult in names.TRAIN_SEATS[s.kind]:
                if mult > 2 and rng.random() < 0.4:
                    continue
                fare = round(s.base_fare * mult * 2) / 2
                for platform, price in _platforms(rng, names.TRAIN_PLATFORMS, fare, 0.5):
                    left = 0 if rng.random() < 0.08 else rng.randint(1, 300)
                    seats.append((f"TS{next(next_seat):07d}", tid, seat_class, price, left,
                                  platform))
    return rows, seats
