"""Tiny TRIP-Bench worlds for tests: a SQLite DB with exactly the schema of
`world/schema.py`, built from Python dicts, and a reader with `World`'s interface.

`build_world(path, tables)` writes the DB; `open_test_world(path)` opens it with the real
`world.db.open_world` when that module exists, else with `KitWorld` (same interface).
`shanghai_world(path)` is the shared fixture world and `baseline_plan()` a plan over it that
passes all twelve checks and that the tests mutate.
"""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

COLUMNS: dict[str, list[str]] = {
    "meta": ["key", "value"],
    "cities": ["id", "name", "lat", "lon"],
    "attractions": ["id", "city_id", "name", "category", "heat_score", "comment_score",
                    "comment_count", "sight_level", "lat", "lon", "open_time", "close_time",
                    "closed_weekdays", "duration_min"],
    "attraction_products": ["id", "attraction_id", "name", "price"],
    "hotels": ["id", "city_id", "name", "star", "brand", "facilities", "score", "lat", "lon",
               "review_count", "good_rate", "product_rating", "environment_rating",
               "service_rating"],
    "hotel_rooms": ["id", "hotel_id", "name", "capacity", "price", "breakfast",
                    "cancel_policy", "has_window"],
    "restaurants": ["id", "city_id", "name", "cuisine", "avg_price", "score", "lat", "lon",
                    "open_time", "close_time", "review_count", "product_rating",
                    "environment_rating", "service_rating", "reservable", "must_reserve"],
    "restaurant_products": ["id", "restaurant_id", "name", "price", "people"],
    "flights": ["id", "number", "from_city", "to_city", "date", "dep_time", "arr_time",
                "duration_min", "airline", "from_airport", "to_airport", "from_lat", "from_lon",
                "to_lat", "to_lon", "on_time_rate", "avg_delay_min"],
    "flight_seats": ["id", "flight_id", "cabin", "price", "remaining", "platform"],
    "trains": ["id", "number", "from_city", "to_city", "date", "dep_time", "arr_time",
               "duration_min", "train_type", "from_station", "to_station", "from_lat",
               "from_lon", "to_lat", "to_lon"],
    "train_seats": ["id", "train_id", "seat_class", "price", "remaining", "platform"],
}
DEFAULTS: dict[str, dict[str, Any]] = {
    "hotels": {"review_count": 500, "good_rate": 92.0, "product_rating": 8.5,
               "environment_rating": 8.5, "service_rating": 8.5},
    "hotel_rooms": {"breakfast": 0, "cancel_policy": "free_24h", "has_window": 1},
    "restaurants": {"review_count": 300, "product_rating": 8.0, "environment_rating": 8.0,
                    "service_rating": 8.0, "reservable": 1, "must_reserve": 0},
    "flights": {"on_time_rate": 85.0, "avg_delay_min": 20},
    "flight_seats": {"platform": "Ctrip"},
    "train_seats": {"platform": "12306"},
}
"""Values of the columns a test row does not give."""
GETTERS = {
    "attraction": "attractions", "attraction_product": "attraction_products", "hotel": "hotels",
    "room": "hotel_rooms", "restaurant": "restaurants",
    "restaurant_product": "restaurant_products", "flight": "flights",
    "flight_seat": "flight_seats", "train": "trains", "train_seat": "train_seats",
    "city": "cities",
}


def build_world(path: str | Path, tables: dict[str, list[dict[str, Any]]]) -> Path:
    path = Path(path)
    con = sqlite3.connect(path)
    for table, columns in COLUMNS.items():
        key = "PRIMARY KEY" if columns[0] in ("id", "key") else ""
        cols = ", ".join(f"{c} {key if i == 0 else ''}".strip() for i, c in enumerate(columns))
        con.execute(f"CREATE TABLE {table} ({cols})")
        for row in tables.get(table, []):
            values = []
            for column in columns:
                value = row.get(column, DEFAULTS.get(table, {}).get(column))
                values.append(json.dumps(value) if isinstance(value, list) else value)
            con.execute(f"INSERT INTO {table} VALUES ({', '.join('?' * len(columns))})", values)
    con.commit()
    con.close()
    return path


class KitWorld:
    """Read-only reader with the interface of `world.db.World`."""

    def __init__(self, path: str | Path):
        self._con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self._con.row_factory = sqlite3.Row

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        return [dict(row) for row in self._con.execute(sql, tuple(params))]

    def _get(self, table: str, id: str) -> dict[str, Any] | None:
        rows = self.query(f"SELECT * FROM {table} WHERE id = ?", (id,))
        return rows[0] if rows else None

    def city_by_name(self, name: str) -> dict[str, Any] | None:
        rows = self.query("SELECT * FROM cities WHERE name = ?", (name,))
        return rows[0] if rows else None

    def __getattr__(self, name: str) -> Any:
        if name in GETTERS:
            return lambda id: self._get(GETTERS[name], id)
        raise AttributeError(name)


def open_test_world(path: str | Path) -> Any:
    try:
        from evaluator.benchmarks.tripbench.world.db import open_world
    except ImportError:
        return KitWorld(path)
    return open_world(path)


# --- the shared fixture: Beijing -> Shanghai (2 nights) -> Beijing, 2025-05-02..04, 2 people

CENTER = (31.2304, 121.4737)
KM = 1 / 111.195  # degrees of latitude per km


def north(km: float) -> dict[str, float]:
    """Coordinates `km` north (negative: south) of the Shanghai centre."""
    return {"lat": CENTER[0] + km * KM, "lon": CENTER[1]}


def _attraction(id: str, km: float, **kw: Any) -> dict[str, Any]:
    row = {"id": id, "city_id": "C0002", "name": f"Sight {id}", "category": "museum",
           "heat_score": 5.0, "comment_score": 4.0, "comment_count": 1000, "sight_level": 4,
           "open_time": "08:00", "close_time": "17:00", "closed_weekdays": "",
           "duration_min": 120, **north(km)}
    row.update(kw)
    return row


def _restaurant(id: str, km: float, **kw: Any) -> dict[str, Any]:
    row = {"id": id, "city_id": "C0002", "name": f"Eatery {id}", "cuisine": "Shanghai",
           "avg_price": 80.0, "score": 4.5, "open_time": "10:00", "close_time": "22:00",
           **north(km)}
    row.update(kw)
    return row


def fixture_tables() -> dict[str, list[dict[str, Any]]]:
    airport = north(-12)
    station = north(14)
    return {
        "meta": [{"key": "generator", "value": "worldkit"}],
        "cities": [
            {"id": "C0001", "name": "Beijing", "lat": 39.9042, "lon": 116.4074},
            {"id": "C0002", "name": "Shanghai", "lat": CENTER[0], "lon": CENTER[1]},
            {"id": "C0003", "name": "Hangzhou", "lat": 30.2741, "lon": 120.1551},
        ],
        "attractions": [
            _attraction("A000001", 2, category="museum", heat_score=8.0, sight_level=5),
            _attraction("A000002", 3, category="park", duration_min=60, open_time="09:00",
                        close_time="18:00", comment_count=50, heat_score=3.0),
            _attraction("A000003", -1, category="temple", duration_min=180, comment_score=4.8),
            _attraction("A000004", -3, category="park", duration_min=180, closed_weekdays="0",
                        comment_score=3.5, sight_level=3),
            _attraction("A000005", 5, category="shopping", heat_score=9.5, sight_level=0),
            _attraction("A000006", 30, category="museum", heat_score=1.0, sight_level=2),
            {**_attraction("A000007", 0), "city_id": "C0003", "lat": 30.2741, "lon": 120.1551},
            _attraction("A000008", 25, category="zoo"),
            _attraction("A000009", -25, category="zoo"),
            _attraction("A000010", -30, category="zoo"),
        ],
        "attraction_products": [
            {"id": "AP0000001", "attraction_id": "A000001", "name": "Adult", "price": 50.0},
            {"id": "AP0000003", "attraction_id": "A000003", "name": "Adult", "price": 100.0},
            {"id": "AP0000005", "attraction_id": "A000005", "name": "Pass", "price": 300.0},
            {"id": "AP0000006", "attraction_id": "A000006", "name": "Adult", "price": 20.0},
        ],
        "hotels": [
            {"id": "H000001", "city_id": "C0002", "name": "Bund Hotel", "star": 5,
             "brand": "Grand", "facilities": ["wifi", "pet-friendly"], "score": 4.7, **north(0),
             "review_count": 1200, "good_rate": 96.0, "product_rating": 9.2,
             "environment_rating": 9.0, "service_rating": 8.6},
            {"id": "H000002", "city_id": "C0002", "name": "Far Inn", "star": 3, "brand": "Inn",
             "facilities": ["wifi"], "score": 4.0, **north(12)},
            {"id": "H000003", "city_id": "C0003", "name": "Lake Hotel", "star": 4,
             "brand": "Lake", "facilities": [], "score": 4.2, "lat": 30.27, "lon": 120.15},
        ],
        "hotel_rooms": [
            {"id": "HR0000001", "hotel_id": "H000001", "name": "Twin", "capacity": 2,
             "price": 500.0, "breakfast": 2, "cancel_policy": "free_24h", "has_window": 1},
            {"id": "HR0000002", "hotel_id": "H000001", "name": "Single", "capacity": 1,
             "price": 300.0},
            {"id": "HR0000003", "hotel_id": "H000002", "name": "Twin", "capacity": 2,
             "price": 200.0, "cancel_policy": "non_refundable", "has_window": 0},
            {"id": "HR0000004", "hotel_id": "H000003", "name": "Twin", "capacity": 2,
             "price": 250.0},
        ],
        "restaurants": [
            _restaurant("R000001", 1, cuisine="Shanghai", review_count=800),
            _restaurant("R000002", 4, cuisine="Sichuan", avg_price=150.0, score=4.0,
                        review_count=150, reservable=0),
            _restaurant("R000003", -2, cuisine="Cantonese", avg_price=60.0, review_count=400),
            _restaurant("R000004", -4, cuisine="Japanese", avg_price=200.0, score=4.8,
                        review_count=900, product_rating=9.5),
            _restaurant("R000005", 6, cuisine="Hunan", avg_price=40.0, score=3.8,
                        review_count=60, service_rating=7.0),
            _restaurant("R000006", 40, cuisine="Sichuan", avg_price=50.0, must_reserve=1),
        ],
        "restaurant_products": [
            {"id": "RP0000001", "restaurant_id": "R000001", "name": "Duo", "price": 200.0,
             "people": 2},
            {"id": "RP0000003", "restaurant_id": "R000003", "name": "Family", "price": 400.0,
             "people": 4},
            {"id": "RP0000005", "restaurant_id": "R000005", "name": "Solo", "price": 50.0,
             "people": 1},
        ],
        "flights": [
            {"id": "F0000001", "number": "MU5101", "from_city": "C0001", "to_city": "C0002",
             "date": "2025-05-02", "dep_time": "09:00", "arr_time": "11:15", "duration_min": 135,
             "airline": "China Eastern", "from_airport": "PEK", "to_airport": "PVG",
             "from_lat": 40.08, "from_lon": 116.58, "to_lat": airport["lat"],
             "to_lon": airport["lon"], "on_time_rate": 88.0, "avg_delay_min": 15},
            {"id": "F0000002", "number": "CA1501", "from_city": "C0001", "to_city": "C0002",
             "date": "2025-05-02", "dep_time": "15:00", "arr_time": "17:10", "duration_min": 130,
             "airline": "Air China", "from_airport": "PEK", "to_airport": "PVG",
             "from_lat": 40.08, "from_lon": 116.58, "to_lat": airport["lat"],
             "to_lon": airport["lon"]},
            {"id": "F0000003", "number": "CA1502", "from_city": "C0002", "to_city": "C0001",
             "date": "2025-05-04", "dep_time": "19:00", "arr_time": "21:15", "duration_min": 135,
             "airline": "Air China", "from_airport": "PVG", "to_airport": "PEK",
             "from_lat": airport["lat"], "from_lon": airport["lon"], "to_lat": 40.08,
             "to_lon": 116.58},
        ],
        "flight_seats": [
            {"id": "FS0000001", "flight_id": "F0000001", "cabin": "economy", "price": 800.0,
             "remaining": 10},
            {"id": "FS0000002", "flight_id": "F0000001", "cabin": "business", "price": 2000.0,
             "remaining": 1},
            {"id": "FS0000003", "flight_id": "F0000002", "cabin": "economy", "price": 600.0,
             "remaining": 10},
            {"id": "FS0000004", "flight_id": "F0000003", "cabin": "economy", "price": 700.0,
             "remaining": 10},
        ],
        "trains": [
            {"id": "T0000001", "number": "G2", "from_city": "C0002", "to_city": "C0001",
             "date": "2025-05-04", "dep_time": "12:50", "arr_time": "17:20", "duration_min": 270,
             "train_type": "G", "from_station": "Shanghai Hongqiao",
             "to_station": "Beijing South", "from_lat": station["lat"],
             "from_lon": station["lon"], "to_lat": 39.865, "to_lon": 116.379},
            {"id": "T0000002", "number": "G1", "from_city": "C0001", "to_city": "C0002",
             "date": "2025-05-02", "dep_time": "07:00", "arr_time": "11:30", "duration_min": 270,
             "train_type": "G", "from_station": "Beijing South",
             "to_station": "Shanghai Hongqiao", "from_lat": 39.865, "from_lon": 116.379,
             "to_lat": station["lat"], "to_lon": station["lon"]},
        ],
        "train_seats": [
            {"id": "TS0000001", "train_id": "T0000001", "seat_class": "second", "price": 550.0,
             "remaining": 20},
            {"id": "TS0000002", "train_id": "T0000001", "seat_class": "first", "price": 900.0,
             "remaining": 20},
            {"id": "TS0000003", "train_id": "T0000002", "seat_class": "second", "price": 550.0,
             "remaining": 20},
        ],
    }


def shanghai_world(path: str | Path, tables: dict[str, list[dict[str, Any]]] | None = None):
    return open_test_world(build_world(path, tables or fixture_tables()))


def act(time: str, type: str, id: str | None = None, products: list | None = None,
        description: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"time": time, "type": type, "description": description or type}
    if id is not None:
        out["id"] = id
    if products is not None:
        out["products"] = products
    return out


LOCAL = "Local Transportation"
HOTEL = {"id": "H000001", "products": [{"id": "HR0000001", "room_num": 1}]}

_BASELINE = {"trip_plan": {
    "start_date": "2025-05-02", "end_date": "2025-05-04", "number_of_people": 2,
    "daily_schedule": [
        {"date": "2025-05-02", "cities": "Beijing -> Shanghai", "hotel": HOTEL, "activities": [
            act("07:00-09:00", "Flight Check-in"),
            act("09:00-11:15", "Intercity Transportation", "F0000001",
                [{"id": "FS0000001", "quantity": 2}]),
            act("11:15-11:55", LOCAL),
            act("11:55-12:25", "Hotel Check-in"),
            act("12:25-12:35", LOCAL),
            act("12:35-13:35", "Restaurant", "R000001", [{"id": "RP0000001", "quantity": 1}]),
            act("13:35-13:45", LOCAL),
            act("13:45-16:15", "Attraction", "A000001", [{"id": "AP0000001", "quantity": 2}]),
            act("16:15-16:30", LOCAL),
            act("16:30-17:30", "Attraction", "A000002", []),
            act("17:30-17:45", LOCAL),
            act("17:45-18:45", "Restaurant", "R000002", []),
            act("18:45-19:00", LOCAL),
        ]},
        {"date": "2025-05-03", "cities": "Shanghai", "hotel": HOTEL, "activities": [
            act("08:30-08:45", LOCAL),
            act("08:45-11:45", "Attraction", "A000003", [{"id": "AP0000003", "quantity": 2}]),
            act("11:45-12:00", LOCAL),
            act("12:00-13:00", "Restaurant", "R000003", []),
            act("13:00-13:15", LOCAL),
            act("13:15-16:15", "Attraction", "A000004", []),
            act("16:15-16:30", LOCAL),
            act("16:30-17:30", "Restaurant", "R000004", []),
            act("17:30-17:45", LOCAL),
        ]},
        {"date": "2025-05-04", "cities": "Shanghai -> Beijing", "activities": [
            act("08:30-08:45", LOCAL),
            act("08:45-10:45", "Attraction", "A000005", [{"id": "AP0000005", "quantity": 2}]),
            act("10:45-11:00", LOCAL),
            act("11:00-12:00", "Restaurant", "R000005", [{"id": "RP0000005", "quantity": 2}]),
            act("12:00-12:30", LOCAL),
            act("12:50-17:20", "Intercity Transportation", "T0000001",
                [{"id": "TS0000001", "quantity": 2}]),
        ]},
    ]}}


def baseline_plan() -> dict[str, Any]:
    """A fresh copy of the plan that passes every check on `shanghai_world`."""
    return copy.deepcopy(_BASELINE)


def plan_text(plan: dict[str, Any]) -> str:
    return "Here is your plan:\n```json\n" + json.dumps(plan) + "\n```"


def day(plan: dict[str, Any], index: int) -> dict[str, Any]:
    return plan["trip_plan"]["daily_schedule"][index]
