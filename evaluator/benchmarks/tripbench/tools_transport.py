"""The flight and train tools (paper appendix B.1.3, B.1.4).

A flight or train row is one service on one date, so its id already names the date; the
detail tools still take the date, as the paper's do, and refuse one that does not match.
"""

from __future__ import annotations

import difflib
from typing import Any

from .periods import describe
from .search import city_named, descending, paged
from .toolspec import PAGE, Param, ToolError, ToolSpec, sort_params
from .world import names
from .world.db import World

_SORT = {"time": "dep_time", "price": "min_price", "duration": "duration_min"}
CABINS = ("economy", "business", "first")
SEAT_CLASSES = tuple(dict.fromkeys(s for seats in names.TRAIN_SEATS.values() for s, _ in seats))


class _Mode:
    def __init__(self, table: str, seats: str, seat_key: str, seat_col: str, station: str,
                 what: str, extra: str) -> None:
        self.table, self.seats, self.seat_key, self.seat_col = table, seats, seat_key, seat_col
        self.station, self.what, self.extra = station, what, extra


FLIGHTS = _Mode("flights", "flight_seats", "flight_id", "cabin", "airport", "flights", "airline")
TRAINS = _Mode("trains", "train_seats", "train_id", "seat_class", "station", "trains",
               "train_type")


def _row_out(world: World, mode: _Mode, row: dict[str, Any]) -> dict[str, Any]:
    out = {"id": row["id"], "number": row["number"], mode.extra: row[mode.extra],
           "date": row["date"], "dep_time": row["dep_time"], "arr_time": row["arr_time"],
           "arrives_next_day": row["arr_time"] < row["dep_time"],
           "duration_min": row["duration_min"],
           f"from_{mode.station}": row[f"from_{mode.station}"],
           f"to_{mode.station}": row[f"to_{mode.station}"]}
    if "on_time_rate" in row:
        out["on_time_rate"], out["avg_delay_min"] = row["on_time_rate"], row["avg_delay_min"]
    if "min_price" in row:
        out["min_price"] = row["min_price"]
        if row["min_price"] is None:
            out["sold_out"] = True
    return out


def _search(world: World, mode: _Mode, a: dict[str, Any], date: str) -> dict[str, Any]:
    src = city_named(world, a["departure_city"], "departure_city")
    dst = city_named(world, a["arrival_city"], "arrival_city")
    where, params = ["t.from_city = ?", "t.to_city = ?", "t.date = ?"], [src["id"], dst["id"],
                                                                         date]
    for param, column in (("dep_period", "dep_time"), ("arr_period", "arr_time")):
        if a[param] is not None:
            where.append(f"t.{column} BETWEEN ? AND ?")
            params += list(a[param])
    column = _SORT[a["sort_key"]]
    desc = "DESC" if descending(a, False) else "ASC"
    sql = (f"SELECT t.*, (SELECT MIN(s.price) FROM {mode.seats} s WHERE s.{mode.seat_key} = "
           f"t.id AND s.remaining > 0) AS min_price, COUNT(*) OVER () AS _total "
           f"FROM {mode.table} t WHERE {' AND '.join(where)} "
           f"ORDER BY {column} IS NULL, {column} {desc}, t.dep_time, t.id LIMIT ? OFFSET ?")
    size, page = a["page_size"], a["page"]
    rows = world.query(sql, [*params, size, (page - 1) * size])
    total = rows[0]["_total"] if rows else world.one(
        f"SELECT COUNT(*) AS n FROM {mode.table} t WHERE {' AND '.join(where)}", params)["n"]
    out = paged(total, [_row_out(world, mode, r) for r in rows], page, size, mode.what)
    start, end = world.meta.get("date_start", ""), world.meta.get("date_end", "")
    if not total and not start <= date <= end:
        out["note"] = f"Timetables cover {start} to {end}."
    return {"departure_city": src["name"], "arrival_city": dst["name"], "date": date, **out}


def search_flights(world: World, **a: Any) -> dict[str, Any]:
    return _search(world, FLIGHTS, a, a["date"])


def search_trains(world: World, **a: Any) -> dict[str, Any]:
    return _search(world, TRAINS, a, a["date_str"])


def _detail(world: World, mode: _Mode, id_: str, date: str, seat: str | None,
            platform: str | None) -> dict[str, Any]:
    row = world.one(f"SELECT * FROM {mode.table} WHERE id = ?", (id_,))
    if row is None:
        raise ToolError("not_found", f"no {mode.what[:-1]} with id {id_!r}")
    if row["date"] != date:
        raise ToolError("out_of_range", f"{mode.what[:-1]} {id_} runs on {row['date']}, not "
                        f"{date}; search again for {date}")
    sql = (f"SELECT id AS product_id, {mode.seat_col}, platform, price, remaining "
           f"FROM {mode.seats} WHERE {mode.seat_key} = ?")
    params = [id_]
    if seat:
        sql, params = sql + f" AND {mode.seat_col} = ?", params + [seat]
    if platform:
        sql, params = sql + " AND platform = ?", params + [platform]
    products = world.query(sql + " ORDER BY price, id", params)
    for p in products:
        p["available"] = p["remaining"] > 0
    names_ = {r["id"]: r["name"] for r in world.query(
        "SELECT id, name FROM cities WHERE id IN (?, ?)", (row["from_city"], row["to_city"]))}
    summary = {**_row_out(world, mode, row), "departure_city": names_.get(row["from_city"]),
               "arrival_city": names_.get(row["to_city"])}
    for end in ("from", "to"):
        summary[f"{end}_lat"], summary[f"{end}_lon"] = row[f"{end}_lat"], row[f"{end}_lon"]
    out: dict[str, Any] = {mode.what[:-1]: summary, "products": products}
    if not products:
        out["message"] = "No ticket products match."
    return out


def get_flight_detail_with_products(world: World, **a: Any) -> dict[str, Any]:
    return _detail(world, FLIGHTS, a["flight_id"], a["date"], a["seat_type"],
                   a["source_platform"])


def get_train_detail_with_products(world: World, **a: Any) -> dict[str, Any]:
    return _detail(world, TRAINS, a["train_id"], a["date_str"], a["seat_type"],
                   a["source_platform"])


def _terminals(world: World, mode: _Mode) -> dict[str, dict[str, Any]]:
    col = mode.station
    rows = world.query(
        f"SELECT from_{col} AS name, from_lat AS lat, from_lon AS lon, from_city AS city_id "
        f"FROM {mode.table} GROUP BY from_{col} UNION "
        f"SELECT to_{col}, to_lat, to_lon, to_city FROM {mode.table} GROUP BY to_{col}")
    cities = {r["id"]: r["name"] for r in world.query("SELECT id, name FROM cities")}
    return {r["name"].lower(): {"name": r["name"], "lat": r["lat"], "lon": r["lon"],
                                "city": cities.get(r["city_id"])}
            for r in sorted(rows, key=lambda r: r["name"])}


def _coordinates(world: World, mode: _Mode, query: str) -> dict[str, Any]:
    index = world.memo(f"terminals/{mode.table}", lambda: _terminals(world, mode))
    key = query.strip().lower()
    if key in index:
        return {**index[key], "match": "exact"}
    contains = sorted((k for k in index if key and key in k), key=lambda k: (len(k), k))
    best = contains[:1] or difflib.get_close_matches(key, list(index), n=1, cutoff=0.6)
    if not best:
        raise ToolError("not_found", f"no {mode.station} matches {query!r}")
    return {**index[best[0]], "match": "fuzzy"}


def get_airport_coordinates(world: World, airport_name: str) -> dict[str, Any]:
    return _coordinates(world, FLIGHTS, airport_name)


def get_station_coordinates(world: World, station_name: str) -> dict[str, Any]:
    return _coordinates(world, TRAINS, station_name)


def _route(date: str) -> tuple[Param, ...]:
    return (Param("departure_city", "string", "Departure city name.", required=True),
            Param("arrival_city", "string", "Arrival city name.", required=True),
            Param(date, "date", "Travel date YYYY-MM-DD.", required=True),
            Param("dep_period", "period", "Departure window 'HH:MM-HH:MM' (inclusive) or a "
                  f"period: {describe()}."),
            Param("arr_period", "period", "Arrival window, same format as dep_period."),
            *sort_params(tuple(_SORT), "time", "them"), *PAGE)


SPECS = (
    ToolSpec("search_flights", "Search flights between two cities on a date, with departure "
             "and arrival time windows, sorting (time, price, duration) and pagination. "
             "Returns schedule, airline, airports and the lowest available price.",
             _route("date"), search_flights, aliases={"date_str": "date"}),
    ToolSpec("get_flight_detail_with_products", "A flight's details with its punctuality "
             "statistics (on-time rate %, average delay) and its ticket products (product id, "
             "cabin, booking platform, price, seats remaining).",
             (Param("flight_id", "string", "The flight id from search_flights.", required=True),
              Param("date", "date", "The flight's date YYYY-MM-DD.", required=True),
              Param("source_platform", "string", "Only tickets sold on this platform.",
                    enum=names.FLIGHT_PLATFORMS),
              Param("seat_type", "string", "Only this cabin.", enum=CABINS)),
             get_flight_detail_with_products, aliases={"date_str": "date"}),
    ToolSpec("get_airport_coordinates", "Coordinates of an airport by exact or fuzzy name.",
             (Param("airport_name", "string", "Airport name, e.g. Hangzhou Xiaoshan.",
                    required=True),), get_airport_coordinates),
    ToolSpec("search_trains", "Search trains between two cities on a date, with departure and "
             "arrival time windows, sorting (time, price, duration) and pagination. Returns "
             "train id and number, schedule, stations and the lowest available price.",
             _route("date_str"), search_trains, aliases={"date": "date_str"}),
    ToolSpec("get_train_detail_with_products", "A train's details and its ticket products "
             "(product id, seat class, booking platform, price, seats remaining); trains run "
             "on time.",
             (Param("train_id", "string", "The train id from search_trains.", required=True),
              Param("date_str", "date", "The train's date YYYY-MM-DD.", required=True),
              Param("source_platform", "string", "Only tickets sold on this platform.",
                    enum=names.TRAIN_PLATFORMS),
              Param("seat_type", "string", "Only this seat class.", enum=SEAT_CLASSES)),
             get_train_detail_with_products, aliases={"date": "date_str"}),
    ToolSpec("get_station_coordinates", "Coordinates of a railway station by exact or fuzzy "
             "name.", (Param("station_name", "string", "Station name, e.g. Nanjing South "
                             "Station.", required=True),), get_station_coordinates),
)
