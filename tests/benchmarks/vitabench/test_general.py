"""The general tools (every domain has them) on real task databases."""

from __future__ import annotations

import json
from typing import Any

from .helpers import failed, make_env, ok, refused, run


def _task(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    return next(t for t in tasks if t["environment"]["orders"] and t["environment"]["weather"])


def test_distance() -> None:
    env = make_env({"time": "2025-01-01 10:00:00", "user_id": "U1"})
    # Beijing -> Shanghai, haversine on a 6,371 km sphere, whole metres, numbers as strings
    assert ok(run(env, "longitude_latitude_to_distance", longitude1=116.4, latitude1=39.9,
                  longitude2=121.47, latitude2=31.23)) == '"1067077.0"'
    assert ok(run(env, "longitude_latitude_to_distance", longitude1=1, latitude1=2,
                  longitude2=1, latitude2=2)) == '"0.0"'
    assert failed(run(env, "longitude_latitude_to_distance", longitude1="116.4", latitude1=39.9,
                      longitude2=121.47, latitude2=31.23), "wrong_type") == \
        "Error: must be real number, not str"


def test_weather(delivery_tasks: list[dict[str, Any]]) -> None:
    raw = _task(delivery_tasks)["environment"]
    env = make_env(raw)
    row = raw["weather"][0]
    text = ok(run(env, "weather", address=row["city"], date_start=row["datetime"],
                  date_end=row["datetime"]))
    low, high = row["temperature"]
    assert text == (f"city: {row['city']}, weather: {row['category']}, datetime: "
                    f"{row['datetime']}, temperature: {float(low)}~{float(high)}, "
                    f"humidity: {float(row['humidity'])}")
    assert ok(run(env, "weather", address=row["city"], date_start="1999-01-01",
                  date_end="1999-01-02")).startswith("No weather information found")
    assert refused(run(env, "weather", address=row["city"], date_start="2025/01/01",
                       date_end="2025-01-02")).startswith("Invalid date_start format")
    assert failed(run(env, "weather", address="qqqq", date_start="2025-01-01",
                      date_end="2025-01-02")) == "Error: Weather information not found for qqqq"


def test_geocoding(delivery_tasks: list[dict[str, Any]]) -> None:
    raw = _task(delivery_tasks)["environment"]
    env = make_env(raw)
    loc = raw["location"][0]
    want = json.dumps([str(float(loc["longitude"])), str(float(loc["latitude"]))])
    assert ok(run(env, "address_to_longitude_latitude", address=loc["address"])) == want
    assert ok(run(env, "address_to_longitude_latitude", address=loc["address"][:30])) == want
    assert failed(run(env, "address_to_longitude_latitude", address="qqqq zzzz")) == \
        "Error: Longitude and latitude not found for address qqqq zzzz"
    # store addresses are known too
    store = next(iter(raw["stores"].values()))
    assert ok(run(env, "address_to_longitude_latitude", address=store["location"]["address"])) \
        == json.dumps([str(float(store["location"]["longitude"])),
                       str(float(store["location"]["latitude"]))])


def test_holidays() -> None:
    env = make_env({"time": "2025-01-01 10:00:00", "user_id": "U1"})
    assert ok(run(env, "get_date_holiday_info", date="2025-10-01")) == "National Day"
    assert ok(run(env, "get_date_holiday_info", date="2025-01-29")).startswith("Chinese New Year")
    assert ok(run(env, "get_date_holiday_info", date="2025-10-07")).startswith("Day off")
    assert ok(run(env, "get_date_holiday_info", date="2025-03-12")) == \
        "Date 2025-03-12 is not a holiday"
    assert refused(run(env, "get_date_holiday_info", date="2025-13-01")).startswith(
        "Date format error")
    assert ok(run(env, "get_holiday_date", year="2025", holiday_name="Mid-Autumn")) == \
        "2025-10-06"
    assert ok(run(env, "get_holiday_date", year="2024", holiday_name="dragon boat")) == \
        "2024-06-10"
    assert ok(run(env, "get_holiday_date", year="2025", holiday_name="Xyzzy")) == \
        "Holiday named 'Xyzzy' not found in year 2025"
    assert ok(run(env, "get_holiday_date", year="2031", holiday_name="National Day")) == \
        "Holiday data for year 2031 not found"
    assert ok(run(env, "get_holiday_date", year=2025, holiday_name="National Day")) == \
        "Holiday data for year 2025 not found"  # the year is a string key


def test_user_history_and_orders(delivery_tasks: list[dict[str, Any]]) -> None:
    raw = _task(delivery_tasks)["environment"]
    env = make_env(raw)
    assert ok(run(env, "get_user_historical_behaviors")) == str(raw["user_historical_behaviors"])
    orders = ok(run(env, "get_user_all_orders"))
    assert len(orders.splitlines()) == len(raw["orders"])
    empty = next(t for t in delivery_tasks if not t["environment"]["orders"])
    assert ok(run(make_env(empty["environment"]), "get_user_all_orders")) == ""


def test_nearby(delivery_tasks: list[dict[str, Any]]) -> None:
    raw = _task(delivery_tasks)["environment"]
    env = make_env(raw)
    store = next(iter(raw["stores"].values()))
    here = store["location"]
    found = ok(run(env, "get_nearby", longitude=here["longitude"], latitude=here["latitude"],
                   range=1))
    assert found.splitlines()[0].startswith(f"Store(name={store['name']},")
    assert "products=" not in found
    assert ok(run(env, "get_nearby", longitude=0.0, latitude=0.0, range=10)) == \
        "No search results found"
    assert len(ok(run(env, "get_nearby", longitude=0, latitude=0, range=3e7)).splitlines()) \
        == len(raw["stores"])
