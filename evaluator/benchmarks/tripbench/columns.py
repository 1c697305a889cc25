"""Column arrays of one city's attractions, hotels (with their rooms) or restaurants, for the
three searches: filters, distances and the first page in a few vectorised steps, whatever the
call shape (a tier-1 city holds 18k restaurants; an SQL search that filters on an unindexed
field or sorts by distance scans them all: tens of ms).

A city's columns are read from the world once per process (`World.memo`, shared by the
runner's per-thread connections: `World.clone`) and hold numbers and small codes only (about
30 MB for every city of the paper world); the page's rows are then read by rowid. The SQL
searches (search.py `Query`) stay the reference: a test compares the two on random calls.

Distances: the vectorised haversine term filters and ranks with a relative margin of 1e-9;
the rows at a threshold's edge and the rows of the page are measured again with
`world.geo.haversine_km`, so thresholds, order and the distances shown are those of the SQL
searches, bit for bit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .world.db import World
from .world.geo import EARTH_RADIUS_KM, haversine_km

REL, TINY = 1e-9, 1e-18
"""Relative and absolute margins on the vectorised haversine terms (their rounding is ~1e-16
relative); the rows within them are measured again exactly."""

# table -> (numeric columns, coded text columns)
SPECS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "attractions": (("lat", "lon", "heat_score", "comment_score", "comment_count",
                     "sight_level"), ("category",)),
    "hotels": (("lat", "lon", "star", "score", "review_count", "good_rate", "product_rating",
                "environment_rating", "service_rating"), ("brand", "facilities")),
    "restaurants": (("lat", "lon", "avg_price", "score", "review_count", "product_rating",
                     "environment_rating", "service_rating", "reservable", "must_reserve"),
                    ("cuisine",)),
}


@dataclass
class Columns:
    """One table's rows of one city, in id order (so index order breaks ties by id)."""

    rowid: np.ndarray
    num: dict[str, np.ndarray]
    codes: dict[str, np.ndarray]
    vocab: dict[str, list[str]]
    extra: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.rowid)

    def matching(self, column: str, words: list[str]) -> np.ndarray:
        """Rows whose `column` contains any of `words` (case-insensitive), as SQL LIKE '%w%'."""
        lows = [w.strip().lower() for w in words]
        hit = [i for i, v in enumerate(self.vocab[column]) if any(w in v.lower() for w in lows)]
        return np.isin(self.codes[column], np.asarray(hit, dtype=np.int32))


def _code(values: list[str]) -> tuple[np.ndarray, list[str]]:
    vocab = sorted(set(values))
    index = {v: i for i, v in enumerate(vocab)}
    return np.fromiter((index[v] for v in values), dtype=np.int32, count=len(values)), vocab


def tuples(world: World, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """Rows as tuples (the world's connection gives dicts)."""
    cur = world.conn.cursor()
    cur.row_factory = None
    try:
        return cur.execute(sql, params).fetchall()
    finally:
        cur.close()


def _load(world: World, table: str, city_id: str) -> Columns:
    nums, texts = SPECS[table]
    rows = tuples(world, f"SELECT rowid, {', '.join((*nums, *texts))} FROM {table} "
                  "WHERE city_id = ? ORDER BY id", (city_id,))
    cols = list(zip(*rows, strict=True)) if rows else [()] * (1 + len(nums) + len(texts))
    out = Columns(np.asarray(cols[0], dtype=np.int64),
                  {n: np.asarray(cols[1 + i], dtype=np.float64) for i, n in enumerate(nums)},
                  {}, {})
    for j, name in enumerate(texts):
        out.codes[name], out.vocab[name] = _code([str(v) for v in cols[1 + len(nums) + j]])
    if table == "attractions":
        low = tuples(world, "SELECT a.rowid, MIN(p.price) FROM attractions a JOIN "
                     "attraction_products p ON p.attraction_id = a.id WHERE a.city_id = ? "
                     "GROUP BY a.rowid", (city_id,))
        price = dict(low)
        out.num["min_price"] = np.asarray([price.get(r, 0.0) or 0.0 for r in cols[0]],
                                          dtype=np.float64)
    if table == "hotels":
        out.extra["rooms"] = _rooms(world, city_id, len(out))
        fac = out.vocab["facilities"]
        out.num["pet"] = np.asarray(['"pet-friendly"' in fac[c] for c in out.codes["facilities"]],
                                    dtype=bool)
    return out


@dataclass
class Rooms:
    """The rooms of a city's hotels, grouped by hotel in the hotels' order (`start[i]` is
    hotel i's first room; every hotel has at least one)."""

    start: np.ndarray
    price: np.ndarray
    breakfast: np.ndarray
    policy: np.ndarray
    policies: list[str]
    name: np.ndarray
    names: list[str]


def _rooms(world: World, city_id: str, hotels: int) -> Rooms:
    rows = tuples(world, "SELECT h.id, r.price, r.breakfast, r.cancel_policy, r.name FROM "
                  "hotels h JOIN hotel_rooms r ON r.hotel_id = h.id WHERE h.city_id = ? "
                  "ORDER BY h.id, r.id", (city_id,))
    hotel = [r[0] for r in rows]
    starts = [i for i in range(len(hotel)) if i == 0 or hotel[i] != hotel[i - 1]]
    if len(starts) != hotels:
        raise ValueError(f"{city_id}: {hotels} hotels but {len(starts)} with rooms")
    policy, policies = _code([r[3] for r in rows])
    name, names = _code([r[4] for r in rows])
    return Rooms(np.asarray(starts, dtype=np.int64),
                 np.asarray([r[1] for r in rows], dtype=np.float64),
                 np.asarray([r[2] for r in rows], dtype=np.int64), policy, policies, name,
                 names)


def city_columns(world: World, table: str, city_id: str) -> Columns:
    return world.memo(f"columns/{table}/{city_id}", lambda: _load(world, table, city_id))


@dataclass(frozen=True)
class Names:
    """A city's names, lower case, one per line in id order, and where each line starts."""

    text: str
    starts: np.ndarray

    def containing(self, part: str) -> np.ndarray:
        """The rows whose name contains `part` (already lower case)."""
        hits = np.zeros(len(self.starts), dtype=bool)
        if not part or "\n" in part:
            hits[:] = not part
            return hits
        found = np.fromiter((m.start() for m in re.finditer(re.escape(part), self.text)),
                            dtype=np.int64)
        if len(found):
            hits[np.searchsorted(self.starts, found, side="right") - 1] = True
        return hits


def city_names(world: World, table: str, city_id: str) -> Names:
    """The city's names (read on the first name search of the city, not with the columns)."""
    def load() -> Names:
        names = [r[0].lower() for r in tuples(world, f"SELECT name FROM {table} WHERE "
                                              "city_id = ? ORDER BY id", (city_id,))]
        starts = np.cumsum([0] + [len(n) + 1 for n in names[:-1]], dtype=np.int64)
        return Names("\n".join(names), starts if names else np.zeros(0, dtype=np.int64))
    return world.memo(f"names/{table}/{city_id}", load)


def distances(cols: Columns, lat: float, lon: float) -> np.ndarray:
    """For every row, the haversine term `a` of its distance from (lat, lon): the distance is
    2R asin(sqrt(a)), increasing in `a`, so `a` ranks and thresholds the rows (two sines a
    row, from the city's precomputed radians)."""
    rad = cols.extra.get("radians")
    if rad is None:
        p2 = np.radians(cols.num["lat"])
        rad = cols.extra["radians"] = (p2, np.cos(p2), np.radians(cols.num["lon"]))
    p2, cos_p2, lon2 = rad
    p1 = np.radians(lat)
    return (np.sin((p2 - p1) / 2) ** 2
            + np.cos(p1) * cos_p2 * np.sin((lon2 - np.radians(lon)) / 2) ** 2)


def _term(km: float) -> float:
    """The haversine term of a distance of `km`."""
    return math.sin(min(math.pi / 2, km / (2 * EARTH_RADIUS_KM))) ** 2


def exact(cols: Columns, lat: float, lon: float, index: np.ndarray) -> np.ndarray:
    return np.asarray([haversine_km(lat, lon, cols.num["lat"][i], cols.num["lon"][i])
                       for i in index], dtype=np.float64)


def within(cols: Columns, lat: float, lon: float, km: float, mask: np.ndarray,
           term: np.ndarray) -> np.ndarray:
    """`mask` and distance <= km, decided exactly (geo.haversine_km) near the edge."""
    edge_term = _term(km)
    inside = mask & (term <= edge_term * (1 + REL) + TINY)
    edge = np.flatnonzero(inside & (term >= edge_term * (1 - REL) - TINY))
    if len(edge):
        inside[edge[exact(cols, lat, lon, edge) > km]] = False
    return inside


def first_rows(key: np.ndarray, desc: bool, mask: np.ndarray, needed: int,
               near: tuple[Columns, float, float] | None = None) -> np.ndarray:
    """The indexes of the first `needed` rows of `mask` by `key` (descending when `desc`),
    ties by index; with `near` the key is a vectorised distance, refined exactly."""
    index = np.flatnonzero(mask)
    if not len(index) or needed <= 0:
        return index[:0]
    k = np.negative(key[index]) if desc else key[index]
    if needed < len(index):
        kth = np.partition(k, needed - 1)[needed - 1]
        if near is not None:      # a margin for the vectorised terms' rounding
            keep = k <= (kth * (1 - REL) + TINY if desc else kth * (1 + REL) + TINY)
        else:
            keep = k <= kth
        index, k = index[keep], k[keep]
    if near is not None:
        k = exact(near[0], near[1], near[2], index)
        k = np.negative(k) if desc else k
    order = np.lexsort((index, k))
    return index[order][:needed]
