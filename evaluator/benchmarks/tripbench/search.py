"""The search machinery the tools share: city look-up, reference point and distance filter,
sorting with a stable tie-break (id), pagination with the total in the same query."""

from __future__ import annotations

import math
from typing import Any

from .toolspec import ToolError
from .world.db import World
from .world.geo import EARTH_RADIUS_KM, haversine_km

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def city_named(world: World, name: str, param: str = "city") -> dict[str, Any]:
    city = world.city_by_name(name)
    if city is None:
        known = world.memo("city_names", lambda: [r["name"] for r in world.query(
            "SELECT name FROM cities ORDER BY name")])
        raise ToolError("not_found", f"unknown {param} {name!r}; the cities are: "
                        f"{', '.join(known)}")
    return city


def reference(city: dict[str, Any], lat: float | None, lon: float | None) -> tuple[float, float]:
    """The point distances are measured from: (latitude, longitude) if given, else the centre."""
    if (lat is None) != (lon is None):
        raise ToolError("missing_required", "give both latitude and longitude, or neither "
                        "(then distances are from the city centre)")
    return (lat, lon) if lat is not None and lon is not None else (city["lat"], city["lon"])


def ref_point(city: dict[str, Any], args: dict[str, Any]) -> tuple[float, float]:
    return reference(city, args.get("latitude"), args.get("longitude"))


class Query:
    """SELECT ... FROM one table aliased `t`, built up with filters; then one page of it."""

    def __init__(self, select: str, table: str, params: list[Any] | None = None) -> None:
        self.select, self.table = select, table
        self.select_params: list[Any] = list(params or [])
        self.where: list[str] = []
        self.params: list[Any] = []
        self.outer: list[str] = []           # filters on computed columns
        self.outer_params: list[Any] = []
        self.distance = False
        self.ref: tuple[float, float] | None = None
        self.sql_math = False

    def add(self, clause: str, *params: Any) -> Query:
        self.where.append(clause)
        self.params.extend(params)
        return self

    def add_outer(self, clause: str, *params: Any) -> Query:
        self.outer.append(clause)
        self.outer_params.extend(params)
        return self

    def near(self, world: World, lat: float, lon: float, threshold: float | None,
             by_distance: bool) -> None:
        """Compute `distance_km` in SQL when a filter or the order needs it (with a bounding
        box first); otherwise `page` computes it for the returned rows only."""
        self.ref = (lat, lon)
        if threshold is None and not by_distance:
            return
        self.sql_math = world.sql_math
        self.distance = True
        self.select += f", {distance_sql(self.sql_math)} AS distance_km"
        self.select_params += distance_params(lat, lon, self.sql_math)
        if threshold is not None:
            dlat = threshold / 111.0 + 1e-6
            dlon = threshold / (111.0 * max(0.05, math.cos(math.radians(lat)))) + 1e-6
            self.add("t.lat BETWEEN ? AND ? AND t.lon BETWEEN ? AND ?",
                     lat - dlat, lat + dlat, lon - dlon, lon + dlon)
            self.add_outer("distance_km <= ?", threshold)

    def _inner(self) -> tuple[str, list[Any]]:
        where = f" WHERE {' AND '.join(self.where)}" if self.where else ""
        return (f"SELECT {self.select} FROM {self.table} t{where}",
                [*self.select_params, *self.params])

    def page(self, world: World, order: str, descending: bool, page: int, size: int
             ) -> tuple[int, list[dict[str, Any]]]:
        inner, params = self._inner()
        outer = f" WHERE {' AND '.join(self.outer)}" if self.outer else ""
        direction = "DESC" if descending else "ASC"
        # a separate COUNT beats COUNT(*) OVER () (which buffers every row) by ~10x
        rows = world.query(f"SELECT * FROM ({inner}){outer} "
                           f"ORDER BY {order} {direction}, id ASC LIMIT ? OFFSET ?",
                           [*params, *self.outer_params, size, (page - 1) * size])
        if page == 1 and len(rows) < size:
            total = len(rows)
        else:
            total = world.one(f"SELECT COUNT(*) AS n FROM ({inner}){outer}",
                              [*params, *self.outer_params])["n"]
        for row in rows:
            if not self.distance and self.ref is not None and "lat" in row:
                row["distance_km"] = haversine_km(*self.ref, row["lat"], row["lon"])
            if "distance_km" in row and row["distance_km"] is not None:
                row["distance_km"] = round(row["distance_km"], 2)
        return total, rows


def distance_sql(math_functions: bool) -> str:
    """`geo.haversine_km(?, ?, t.lat, t.lon)` as SQL: the same operations in the same order
    (so the same doubles) without a Python call per row; else the `dist_km` function."""
    if not math_functions:
        return "dist_km(?, ?, t.lat, t.lon)"
    return (f"2 * {EARTH_RADIUS_KM!r} * asin(min(1.0, sqrt(pow(sin((radians(t.lat) - ?) / 2), 2)"
            " + ? * cos(radians(t.lat)) * pow(sin(radians(t.lon - ?) / 2), 2))))")


def distance_params(lat: float, lon: float, math_functions: bool) -> list[float]:
    if not math_functions:
        return [lat, lon]
    p1 = math.radians(lat)
    return [p1, math.cos(p1), lon]


def paged(total: int, rows: list[dict[str, Any]], page: int, size: int, what: str
          ) -> dict[str, Any]:
    first = (page - 1) * size
    out: dict[str, Any] = {"total": total, "page": page, "page_size": size}
    if rows:
        out["showing"] = f"{first + 1}-{first + len(rows)} of {total}"
    elif total:
        out["message"] = f"Page {page} is past the end: {total} {what} in all."
    else:
        out["message"] = f"No matching {what} found."
    out["results"] = rows
    return out


def descending(args: dict[str, Any], default_desc: bool) -> bool:
    order = args.get("sort_order")
    return default_desc if order is None else order == "desc"


def closed_on(closed_weekdays: str) -> list[str]:
    return [WEEKDAYS[int(d)] for d in closed_weekdays.split(",") if d.strip().isdigit()]
