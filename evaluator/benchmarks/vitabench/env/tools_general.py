"""The general tools every domain (and the cross-domain set) offers."""

from __future__ import annotations

import math
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from . import fuzzy, render
from .common import DATE_FORMAT, check, has_format
from .state import EpisodeState

_EARTH_RADIUS_M = 6371000

# Festival dates the English-language reference answers get_holiday_date from (2023-2025).
FESTIVALS: dict[str, dict[str, str]] = {
    "2025": {
        "New Year's Day": "2025-01-01", "Start of Autumn": "2025-08-07",
        "Women's Day": "2025-03-08", "Laba Festival": "2025-01-07",
        "Dragon Head Festival": "2025-03-01", "Party Founding Day": "2025-07-01",
        "Qingming Festival": "2025-04-04", "Double Ninth Festival": "2025-10-29",
        "Dragon Boat Festival": "2025-05-31", "Mother's Day": "2025-05-11",
        "Lantern Festival": "2025-02-15", "Labor Day": "2025-05-01",
        "Qixi Festival": "2025-08-29", "Winter Solstice": "2025-12-21",
        "Christmas Day": "2025-12-25", "National Day": "2025-10-01",
        "Mid-Autumn Festival": "2025-10-06",
    },
    "2024": {
        "Double Ninth Festival": "2024-10-11", "Qixi Festival": "2024-08-10",
        "Valentine's Day": "2024-02-14", "Qingming Festival": "2024-04-04",
        "Dragon Boat Festival": "2024-06-10", "Lantern Festival": "2024-02-24",
        "Mid-Autumn Festival": "2024-09-17",
    },
    "2023": {
        "National Day": "2023-10-01", "Dragon Boat Festival": "2023-06-22",
        "Mid-Autumn Festival": "2023-09-29", "Qingming Festival": "2023-04-05",
        "Double Ninth Festival": "2023-10-23", "Father's Day": "2023-06-18",
    },
}


@cache
def public_holidays() -> dict[str, str]:
    """date (yyyy-mm-dd) -> name, from cn_holidays.txt (2010-2035)."""
    table: dict[str, str] = {}
    text = (Path(__file__).with_name("cn_holidays.txt")).read_text(encoding="utf-8")
    for line in text.splitlines():
        if line and not line.startswith("#"):
            date, _, name = line.partition("|")
            table[date] = name
    return table


def longitude_latitude_to_distance(st: EpisodeState, longitude1: Any, latitude1: Any,
                                   longitude2: Any, latitude2: Any) -> float:
    if longitude1 == longitude2 and latitude1 == latitude2:
        return 0.0
    lon1, lat1, lon2, lat2 = (math.radians(v) for v in (longitude1, latitude1, longitude2,
                                                         latitude2))
    h = (math.sin((lat2 - lat1) / 2) ** 2
         + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2)
    return round(_EARTH_RADIUS_M * 2 * math.asin(math.sqrt(h)), 0)


def weather(st: EpisodeState, address: Any, date_start: Any, date_end: Any) -> str:
    check(has_format(date_start, DATE_FORMAT),
          f"Invalid date_start format. Expected yyyy-mm-dd, got: {date_start}")
    check(has_format(date_end, DATE_FORMAT),
          f"Invalid date_end format. Expected yyyy-mm-dd, got: {date_end}")
    rows = st.base.weather
    cities = {w.city: w.city for w in rows}  # None raises, as in the reference
    city, _, score = fuzzy.rerank(address, cities)[0]
    if score < 50:
        raise ValueError(f"Weather information not found for {address}")
    start = datetime.strptime(date_start, DATE_FORMAT).date()
    end = datetime.strptime(date_end, DATE_FORMAT).date()
    found = [w for w in rows if w.city == city
             and start <= datetime.strptime(w.datetime, DATE_FORMAT).date() <= end]
    if not found:
        return f"No weather information found for {city} between {date_start} and {date_end}"
    found.sort(key=lambda w: w.datetime)
    return "\n".join(render.weather_repr(w) for w in found)


def geocode(st: EpisodeState, address: Any) -> list[float]:
    """The best fuzzy match among the addresses the task database knows."""
    known = {a: a for a in st.locations}
    best, _, score = fuzzy.rerank(address, known)[0]
    if score < 30 or fuzzy.round_score(fuzzy.ratio(address, best)) < 20:
        raise ValueError(f"Longitude and latitude not found for address {address}")
    return list(st.locations[best])


def address_to_longitude_latitude(st: EpisodeState, address: Any) -> list[float]:
    return geocode(st, address)


def get_date_holiday_info(st: EpisodeState, date: Any) -> str:
    check(has_format(date, DATE_FORMAT),
          f"Date format error, should be yyyy-mm-dd, actual: {date}")
    day = datetime.strptime(date, DATE_FORMAT).date().isoformat()
    name = public_holidays().get(day)
    return name if name is not None else f"Date {date} is not a holiday"


def get_holiday_date(st: EpisodeState, year: Any, holiday_name: Any) -> str:
    if year not in FESTIVALS:
        return f"Holiday data for year {year} not found"
    names = list(FESTIVALS[year])
    ranked = fuzzy.rank(holiday_name, names)
    if ranked and fuzzy.round_score(ranked[0][1]) >= 80:
        return FESTIVALS[year][names[ranked[0][0]]]
    return f"Holiday named '{holiday_name}' not found in year {year}"


def get_user_historical_behaviors(st: EpisodeState) -> str:
    return str(st.base.user_historical_behaviors)


def get_user_all_orders(st: EpisodeState) -> str:
    return "\n".join(render.order_full(o, st.resolve_line) for o in st.orders.values())


def get_nearby(st: EpisodeState, longitude: Any, latitude: Any, range: Any) -> str:
    def near(loc: Any) -> bool:
        d = longitude_latitude_to_distance(st, longitude, latitude, loc.longitude, loc.latitude)
        return d <= range

    found: list[str] = []
    if st.stores is not None:
        found += [render.store_head(s) for s in st.stores.values() if near(s.location)]
    if st.shops is not None:
        found += [render.shop_head(s) for s in st.shops.values() if near(s.location)]
    if st.hotels is not None:
        found += [render.hotel_head(h) for h in st.hotels.values() if near(h.location)]
    if st.attractions is not None:
        found += [render.attraction_head(a) for a in st.attractions.values()
                  if near(a.location)]
    if st.flights is not None:
        found += [render.flight_head(f) for f in st.flights.values()
                  if near(f.departure_airport_location) or near(f.arrival_airport_location)]
    if st.trains is not None:
        found += [render.train_head(t) for t in st.trains.values()
                  if near(t.departure_station_location) or near(t.arrival_station_location)]
    return "\n".join(found) if found else "No search results found"
