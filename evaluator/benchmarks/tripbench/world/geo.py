"""Distances and the in-city travel-time model (shared by the generator, the tools and the
validators, so every number about distance comes from one place)."""

from __future__ import annotations

import math

EARTH_RADIUS_KM = 6371.0088
CITY_SPEED_KMH = 30.0       # in-city door-to-door speed of `get_route_estimate`
CITY_OVERHEAD_MIN = 10.0    # waiting / walking added to every in-city trip


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in km between two WGS84 points (degrees)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


def route_estimate(lat1: float, lon1: float, lat2: float, lon2: float) -> tuple[float, int]:
    """(straight-line km rounded to 0.01, estimated minutes): minutes = round(10 + 2 x km), i.e.
    30 km/h door to door plus 10 minutes; the paper's four worked examples (appendix G: 5.15 km
    -> 20 min, 4.73 -> 19, 10.56 -> 31, 2.08 -> 14) all fit it."""
    km = round(haversine_km(lat1, lon1, lat2, lon2), 2)
    return km, round(CITY_OVERHEAD_MIN + km / CITY_SPEED_KMH * 60.0)


def offset(lat: float, lon: float, north_km: float, east_km: float) -> tuple[float, float]:
    """The point `north_km` north and `east_km` east of (lat, lon), rounded to 6 decimals."""
    dlat = north_km / 111.195
    dlon = east_km / (111.195 * max(0.05, math.cos(math.radians(lat))))
    return round(lat + dlat, 6), round(lon + dlon, 6)
