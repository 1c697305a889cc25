"""The attraction, hotel and restaurant searches over a city's column arrays (columns.py):
every filter, distance and sort the tools offer in a few vectorised steps, then the page's
rows read by rowid. Same answers as the SQL reference (searches_sql.py), faster on every call
shape (perf/tripbench_world.py prints both)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .columns import Columns, city_columns, city_names, distances, first_rows, within
from .poi_common import (
    ATTRACTION_SORT,
    HOTEL_SORT,
    RATINGS,
    RESTAURANT_SORT,
    STAR_OF_TYPE,
    as_flexible,
    attraction_out,
    hotel_out,
    nights_of,
    restaurant_out,
)
from .search import city_named, descending, paged, ref_point
from .world import names
from .world.db import World
from .world.geo import haversine_km


class _Search:
    """One search over one city's columns: a row mask, then the page."""

    def __init__(self, world: World, table: str, city: dict[str, Any], a: dict[str, Any]
                 ) -> None:
        self.world, self.table, self.a = world, table, a
        self.cols: Columns = city_columns(world, table, city["id"])
        self.mask = np.ones(len(self.cols), dtype=bool)
        self.ref = ref_point(city, a)
        self.dist: np.ndarray | None = None

    def at_least(self, column: str, value: float | None) -> None:
        if value is not None:
            self.mask &= self.cols.num[column] >= value

    def at_most(self, column: str, value: float | None) -> None:
        if value is not None:
            self.mask &= self.cols.num[column] <= value

    def words(self, column: str, values: list[str] | None) -> None:
        if values:
            self.mask &= self.cols.matching(column, values)

    def named(self, value: str | None, city_id: str) -> None:
        """A part of the name, case-insensitively (the city's names are read on the first
        name search of the city, not with the columns)."""
        if value:
            self.mask &= city_names(self.world, self.table, city_id).containing(
                value.strip().lower())

    def near(self, threshold: float | None, by_distance: bool) -> None:
        if threshold is None and not by_distance:
            return
        self.dist = distances(self.cols, *self.ref)
        if threshold is not None:
            self.mask = within(self.cols, *self.ref, threshold, self.mask, self.dist)

    def page(self, sort: tuple[str, bool], select: str, extra: dict[str, np.ndarray]
             ) -> tuple[int, list[dict[str, Any]]]:
        column, default_desc = sort
        desc = descending(self.a, default_desc)
        size, page = self.a["page_size"], self.a["page"]
        total = int(self.mask.sum())
        needed = min(total, page * size)
        if column == "distance_km":
            assert self.dist is not None
            index = first_rows(self.dist, desc, self.mask, needed, (self.cols, *self.ref))
        else:
            key = extra[column] if column in extra else self.cols.num[column]
            index = first_rows(key, desc, self.mask, needed)
        index = index[(page - 1) * size:]
        rowids = [int(self.cols.rowid[i]) for i in index]
        found = {r["rowid"]: r for r in self.world.query(
            f"SELECT rowid, {select} FROM {self.table} WHERE rowid IN "
            f"({','.join('?' * len(rowids))})", rowids)} if rowids else {}
        rows = []
        for i, rowid in zip(index, rowids, strict=True):
            row = found[rowid]
            del row["rowid"]
            for name, values in extra.items():
                row[name] = float(values[i])
            row["distance_km"] = round(haversine_km(*self.ref, row["lat"], row["lon"]), 2)
            rows.append(row)
        return total, rows


def search_attractions(world: World, **a: Any) -> dict[str, Any]:
    city = city_named(world, a["city"])
    s = _Search(world, "attractions", city, a)
    s.named(a["attraction_name"], city["id"])
    s.words("category", a["categories"])
    s.at_least("comment_score", a["rating"])
    s.at_least("sight_level", a["sight_level"])
    s.at_least("comment_count", a["comment_count"])
    price = s.cols.num["min_price"]
    if a["free_only"]:
        s.mask &= price == 0
    s.near(a["distance_threshold"], a["sort_key"] == "distance")
    total, rows = s.page(ATTRACTION_SORT[a["sort_key"]],
                         "id, name, category, comment_score, heat_score, comment_count, "
                         "sight_level, open_time, close_time, closed_weekdays, duration_min, "
                         "lat, lon", {"min_price": price})
    return paged(total, [attraction_out(r) for r in rows], a["page"], a["page_size"],
                 "attractions")


def _room_prices(cols: Columns, a: dict[str, Any]) -> tuple[np.ndarray, bool]:
    """Each hotel's lowest nightly price among the rooms the filters keep (inf: none), and
    whether a room filter was given."""
    rooms = cols.extra["rooms"]
    keep = np.ones(len(rooms.price), dtype=bool)
    if a["price_min"] is not None:
        keep &= rooms.price >= a["price_min"]
    if a["price_max"] is not None:
        keep &= rooms.price <= a["price_max"]
    if a["room_types"]:
        lows = [w.strip().lower() for w in a["room_types"]]
        hit = [i for i, n in enumerate(rooms.names) if any(w in n.lower() for w in lows)]
        keep &= np.isin(rooms.name, np.asarray(hit, dtype=np.int32))
    if a["has_breakfast"] is not None:
        keep &= (rooms.breakfast > 0) if a["has_breakfast"] else (rooms.breakfast == 0)
    if a["cancel_policy"]:
        flexible = set(as_flexible(a["cancel_policy"]))
        codes = [i for i, p in enumerate(rooms.policies) if p in flexible]
        keep &= np.isin(rooms.policy, np.asarray(codes, dtype=np.int32))
    filtered = any(a[k] is not None for k in ("price_min", "price_max", "has_breakfast")) \
        or bool(a["room_types"] or a["cancel_policy"])
    prices = np.where(keep, rooms.price, np.inf)
    return np.minimum.reduceat(prices, rooms.start) if len(prices) else prices, filtered


def search_hotels(world: World, **a: Any) -> dict[str, Any]:
    city = city_named(world, a["city"])
    nights = nights_of(a)
    s = _Search(world, "hotels", city, a)
    low, filtered = _room_prices(s.cols, a)
    if filtered:                     # every hotel has rooms: only a room filter can drop one
        s.mask &= np.isfinite(low)
    s.named(a["hotel_name"], city["id"])
    if a["brand"]:
        wanted = [i for i, b in enumerate(s.cols.vocab["brand"])
                  if b.lower() == a["brand"].strip().lower()]
        s.mask &= np.isin(s.cols.codes["brand"], np.asarray(wanted, dtype=np.int32))
    if a["hotel_type"]:
        stars = sorted({STAR_OF_TYPE[names.hotel_type(t) or t] for t in a["hotel_type"]})
        s.mask &= np.isin(s.cols.num["star"], np.asarray(stars, dtype=np.float64))
    s.at_least("star", a["stars"])
    s.at_least("score", a["rating"])
    s.at_least("review_count", a["review_count"])
    s.at_least("good_rate", a["good_remarks_rate"])
    for rating in RATINGS:
        s.at_least(rating, a[rating])
    if a["is_pet_friendly"] is not None:
        pet = s.cols.num["pet"].astype(bool)
        s.mask &= pet if a["is_pet_friendly"] else ~pet
    s.near(a["distance_threshold"], a["sort_key"] == "distance")
    total, rows = s.page(HOTEL_SORT[a["sort_key"]],
                         "id, name, star, brand, score, review_count, good_rate, "
                         "product_rating, environment_rating, service_rating, facilities, lat, "
                         "lon", {"min_price": low})
    for row in rows:
        hotel_out(row)
        row["min_price_per_night"] = row.pop("min_price")
        row["min_total_price"] = round(row["min_price_per_night"] * nights, 2)
    out = paged(total, rows, a["page"], a["page_size"], "hotels")
    return {"check_in_date": a["check_in_date"], "check_out_date": a["check_out_date"],
            "nights": nights, **out}


def search_restaurants(world: World, **a: Any) -> dict[str, Any]:
    city = city_named(world, a["city"])
    s = _Search(world, "restaurants", city, a)
    s.named(a["restaurant_name"], city["id"])
    s.words("cuisine", a["categories"])
    s.at_least("avg_price", a["price_min"])
    s.at_most("avg_price", a["price_max"])
    s.at_least("score", a["stars"])
    s.at_least("review_count", a["review_count"])
    for rating in RATINGS:
        s.at_least(rating, a[rating])
    if a["reservable"] is not None:
        s.mask &= s.cols.num["reservable"] == int(a["reservable"])
    s.near(a["distance_threshold"], a["sort_key"] == "distance")
    total, rows = s.page(RESTAURANT_SORT[a["sort_key"]],
                         "id, name, cuisine, avg_price, score, review_count, product_rating, "
                         "environment_rating, service_rating, reservable, must_reserve, "
                         "open_time, close_time, lat, lon", {})
    return paged(total, [restaurant_out(r) for r in rows], a["page"], a["page_size"],
                 "restaurants")
