"""Fictional, deterministic tool responses for the built-in travel sample's cache.

Every response is derived from a seed made of the tool name, the task time and the arguments,
so rebuilding the cache gives the same bytes. Place names, flight numbers, prices and URLs are
invented for this project; only city names and rough city-centre coordinates are real.
Responses are compact JSON text (the sandbox returns tool output as a string).
"""

from __future__ import annotations

import hashlib
import json
import random
from datetime import date, timedelta
from typing import Any

CITY_COORDS: dict[str, tuple[float, float]] = {
    "Beijing": (39.9042, 116.4074), "Shanghai": (31.2304, 121.4737),
    "Hangzhou": (30.2741, 120.1551), "Suzhou": (31.2989, 120.5853),
    "Nanjing": (32.0603, 118.7969), "Chengdu": (30.5728, 104.0668),
    "Xi'an": (34.3416, 108.9398), "Kunming": (25.0389, 102.7183),
    "Dali": (25.6065, 100.2676), "Guilin": (25.2736, 110.2900),
    "Guangzhou": (23.1291, 113.2644), "Shenzhen": (22.5431, 114.0579),
    "Wuhan": (30.5928, 114.3055), "Xiamen": (24.4798, 118.0894),
    "Qingdao": (36.0671, 120.3826),
}
AIRLINES = [("Skyline Air", "SK"), ("Eastern Crane Airlines", "EC"), ("Blue Panda Airways", "BP"),
            ("Southern Lotus Air", "SL"), ("Jade Wing Airlines", "JW")]
AIRCRAFT = ["A320", "A321", "B737-800", "B787-9", "A330-300", "C919"]
CONDITIONS = ["Sunny", "Partly cloudy", "Cloudy", "Overcast", "Light rain", "Showers", "Fog"]
WINDS = ["N 2", "NE 3", "E 2", "SE 3", "S 2", "SW 4", "W 3", "NW 4", "Calm"]
NAME_A = ["Jade", "Willow", "Lantern", "Pine", "Cloud", "Lotus", "Maple", "River", "Crane",
          "Amber", "Bamboo", "Stone", "Silk", "Harbor", "Plum"]
NAME_B = ["Garden", "Corner", "Court", "Terrace", "Lane", "House", "Gate", "Pavilion", "Bridge"]
STREETS = ["Pine Street", "Lakeside Road", "Market Lane", "Station Avenue", "Riverbank Road",
           "Garden Street", "Temple Road", "Orchard Lane", "Harbor Road", "Scholar Street"]
DISTRICTS = ["Old Town District", "Lakeside District", "Station District", "North Gate District",
             "Riverside District", "University District"]


def rng_for(tool: str, time: str, args: dict[str, Any]) -> random.Random:
    seed = json.dumps([tool, time, args], sort_keys=True, ensure_ascii=False)
    return random.Random(int(hashlib.sha256(seed.encode()).hexdigest()[:16], 16))


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _hhmm(minutes: int) -> str:
    return f"{(minutes // 60) % 24:02d}:{minutes % 60:02d}"


def _dur(minutes: int) -> str:
    return f"{minutes // 60}h{minutes % 60:02d}m"


def _dates(start: str, extra_days: int) -> list[str]:
    first = date.fromisoformat(start)
    return [(first + timedelta(days=i)).isoformat() for i in range(int(extra_days) + 1)]


def _distance_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    # equirectangular approximation, good enough for invented travel times
    dx = (a[1] - b[1]) * 111.32 * 0.85
    dy = (a[0] - b[0]) * 110.57
    return round((dx * dx + dy * dy) ** 0.5, 1)


def _city(name: str) -> str:
    for city in CITY_COORDS:
        if city.lower() in name.lower():
            return city
    return name


def _coords(text: str) -> tuple[float, float]:
    lat, lon = (float(x) for x in text.split(","))
    return lat, lon


def _place_name(r: random.Random, kind: str) -> str:
    return f"{r.choice(NAME_A)} {r.choice(NAME_B)} {kind}"


def _address(r: random.Random, city: str) -> str:
    return f"No. {r.randint(3, 388)} {r.choice(STREETS)}, {r.choice(DISTRICTS)}, {city}"


def flights(r: random.Random, args: dict[str, Any]) -> str:
    origin, dest = _city(args["origin"]), _city(args["destination"])
    out = []
    for day in _dates(args["date"], args.get("days", 0)):
        for _ in range(r.randint(3, 4)):
            airline, code = r.choice(AIRLINES)
            dep = r.randrange(6 * 60, 22 * 60, 5)
            length = r.randrange(80, 260, 5)
            low = r.randrange(380, 1200, 10)
            out.append({
                "date": day, "flight_no": f"{code}{r.randint(1001, 9899)}", "airline": airline,
                "from_airport": f"{origin} {r.choice(['International', 'Central'])} Airport",
                "to_airport": f"{dest} {r.choice(['International', 'Central'])} Airport",
                "departure": _hhmm(dep), "arrival": _hhmm(dep + length),
                "duration": _dur(length), "aircraft": r.choice(AIRCRAFT),
                "price_cny": {"min": low, "max": low + r.randrange(300, 1800, 10)},
                "direct": r.random() > 0.15,
            })
    out.sort(key=lambda f: (f["date"], f["departure"]))
    return dumps({"origin": origin, "destination": dest, "flights": out})


def trains(r: random.Random, args: dict[str, Any]) -> str:
    origin, dest = _city(args["origin"]), _city(args["destination"])
    km = _distance_km(CITY_COORDS.get(origin, (30.0, 115.0)), CITY_COORDS.get(dest, (31.0, 118.0)))
    out = []
    for day in _dates(args["date"], args.get("days", 0)):
        for _ in range(r.randint(3, 5)):
            dep = r.randrange(6 * 60, 21 * 60, 5)
            length = max(25, int(km / r.uniform(3.8, 4.8)) + r.randrange(0, 40, 5))
            second = round(km * r.uniform(0.42, 0.5) + 10, 1)
            out.append({
                "date": day, "train_no": f"{r.choice('GGGD')}{r.randint(1, 2999)}",
                "direct": True, "departure": _hhmm(dep), "arrival": _hhmm(dep + length),
                "from_station": f"{origin} {r.choice(['', 'South ', 'East ', 'West '])}Station",
                "to_station": f"{dest} {r.choice(['', 'North ', 'East ', 'South '])}Station",
                "duration": _dur(length),
                "price_cny": {"second_class": second, "first_class": round(second * 1.6, 1),
                              "business": round(second * 3.1, 1)},
            })
    out.sort(key=lambda t: (t["date"], t["departure"]))
    return dumps({"origin": origin, "destination": dest, "trains": out})


def weather_now(r: random.Random, args: dict[str, Any]) -> str:
    temp = r.randint(4, 24)
    aqi = r.randint(18, 130)
    return dumps({
        "location": args["location"], "condition": r.choice(CONDITIONS),
        "temperature_c": temp, "feels_like_c": temp - r.randint(0, 3),
        "low_c": temp - r.randint(2, 6), "high_c": temp + r.randint(1, 5),
        "wind": r.choice(WINDS), "aqi": aqi,
        "air_quality": "good" if aqi <= 50 else "moderate" if aqi <= 100 else "unhealthy for some",
    })


def weather_forecast(r: random.Random, args: dict[str, Any], today: str) -> str:
    base = date.fromisoformat(today[:10])
    out = []
    for day in _dates(args["date"], args.get("days", 1)):
        delta = (date.fromisoformat(day) - base).days
        label = {0: "Today", 1: "Tomorrow"}.get(delta, date.fromisoformat(day).strftime("%A"))
        low = r.randint(2, 16)
        out.append({"date": day, "day_label": label, "condition": r.choice(CONDITIONS),
                    "low_c": low, "high_c": low + r.randint(4, 10), "wind": r.choice(WINDS),
                    "aqi": r.randint(20, 110)})
    return dumps({"location": args["location"], "forecast": out})


def routes(r: random.Random, args: dict[str, Any]) -> str:
    a, b = _coords(args["origin"]), _coords(args["destination"])
    km = max(0.6, _distance_km(a, b) * r.uniform(1.2, 1.4))
    speed = {"driving": 32, "walking": 4.8, "bicycling": 14, "transit": 24, "motorcycle": 30,
             "truck": 26}
    out = []
    for mode in args.get("modes", ["driving"]):
        minutes = int(km / speed[mode] * 60) + r.randint(2, 9)
        item: dict[str, Any] = {"mode": mode, "distance_km": round(km, 1),
                                "duration_min": minutes,
                                "summary": f"via {r.choice(STREETS)} and {r.choice(STREETS)}"}
        if mode == "transit":
            item["steps"] = [f"Walk {r.randint(200, 800)} m",
                             f"Metro Line {r.randint(1, 10)} for {r.randint(3, 12)} stops",
                             f"Walk {r.randint(100, 600)} m"]
            item["fare_cny"] = r.choice([2, 3, 4, 5])
        if mode in ("driving", "motorcycle", "truck"):
            item["traffic"] = r.choice(["light", "moderate", "heavy"])
            item["tolls_cny"] = 0 if km < 40 else int(km * 0.45)
        out.append(item)
    return dumps({"routes": out})


def places(r: random.Random, args: dict[str, Any]) -> str:
    kind = args["query"].title()
    if "center" in args:
        center = _coords(args["center"])
        city = min(CITY_COORDS, key=lambda c: _distance_km(CITY_COORDS[c], center))
    else:
        city = _city(args.get("region", "Hangzhou"))
        center = CITY_COORDS.get(city, (30.0, 120.0))
    limit = min(int(args.get("limit", 10)), 5)
    radius = int(args.get("radius", 5000))
    cost_key = args.get("price_category", "average_cost")
    items = []
    for _ in range(limit):
        dist = r.randrange(80, radius, 10)
        cost = r.randrange(25, 120) if cost_key == "average_cost" else r.randrange(180, 900, 10)
        if "price_max" in args:
            cost = min(cost, int(args["price_max"]) - r.randrange(0, 60))
        lat = center[0] + r.uniform(-1, 1) * dist / 111_000
        lon = center[1] + r.uniform(-1, 1) * dist / 95_000
        items.append({"name": _place_name(r, kind), "address": _address(r, city),
                      "location": f"{lat:.5f},{lon:.5f}", "distance_m": dist,
                      "rating": round(r.uniform(3.6, 4.9), 1), cost_key: cost,
                      "open_hours": r.choice(["09:00-21:00", "10:00-22:00", "00:00-24:00",
                                              "11:00-14:00, 17:00-21:30"])})
    sort_by = args.get("sort_by", "weight")
    if sort_by == "distance":
        items.sort(key=lambda p: p["distance_m"])
    elif sort_by == "rating:d":
        items.sort(key=lambda p: -p["rating"])
    elif sort_by in ("price:a", "price:d"):
        items.sort(key=lambda p: p[cost_key], reverse=sort_by == "price:d")
    return dumps({"query": args["query"], "total": limit + r.randint(0, 30), "places": items})


def along_route(r: random.Random, args: dict[str, Any]) -> str:
    a, b = _coords(args["origin"]), _coords(args["destination"])
    km = _distance_km(a, b) * 1.3
    buffer = int(args.get("buffer_radius", 2000))
    items = sorted(({"name": _place_name(r, args["query"].title()),
                     "km_from_origin": round(r.uniform(0.05, 0.95) * km, 1),
                     "detour_m": r.randrange(50, buffer, 10),
                     "rating": round(r.uniform(3.5, 4.8), 1)}
                    for _ in range(min(int(args.get("limit", 10)), 5))),
                   key=lambda p: p["km_from_origin"])
    return dumps({"route": {"distance_km": round(km, 1), "duration_min": int(km / 70 * 60)},
                  "places": items})


def central_places(r: random.Random, args: dict[str, Any]) -> str:
    pts = [_coords(o) for o in args["origins"]]
    mid = (sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts))
    city = min(CITY_COORDS, key=lambda c: _distance_km(CITY_COORDS[c], mid))
    items = []
    for _ in range(min(int(args.get("limit", 10)), 4)):
        dists = [r.randrange(800, 7000, 10) for _ in pts]
        items.append({"name": _place_name(r, args["query"].title()),
                      "address": _address(r, city), "rating": round(r.uniform(3.8, 4.9), 1),
                      "average_cost": r.randrange(60, 160), "distances_m": dists,
                      "max_distance_m": max(dists), "total_distance_m": sum(dists)})
    key = {"min_max_distance": "max_distance_m", "total_distance": "total_distance_m"}.get(
        args.get("sort_by", "balanced"))
    items.sort(key=(lambda p: p[key]) if key else (lambda p: -p["rating"]))
    return dumps({"query": args["query"], "places": items})


def ranking_list(r: random.Random, args: dict[str, Any]) -> str:
    city = _city(args["region"])
    topic = args["query"].title()
    lists = []
    titles = [f"{city} {topic}: Local Favourites", f"{city} {topic}: Best Rated This Year",
              f"{city} {topic}: Hidden Gems", f"{city} {topic}: Family Picks"]
    for title in titles[: int(args.get("max_lists", 5))]:
        lists.append({"title": title, "items": [
            {"rank": i + 1, "name": _place_name(r, topic), "rating": round(r.uniform(4.0, 4.9), 1),
             "highlight": r.choice(["quiet in the morning", "long queues at weekends",
                                    "good for photos", "booking recommended", "cash not needed"])}
            for i in range(int(args.get("max_items", 3)))]})
    return dumps({"region": args["region"], "lists": lists})


def web_search(r: random.Random, args: dict[str, Any]) -> str:
    words = args["query"]
    slug = "-".join(w.lower() for w in words.split()[:5] if w.isalnum()) or "travel"
    results = [
        {"title": f"{words} - traveller guide", "url": f"https://guide.example.org/{slug}",
         "snippet": f"Updated notes on {words.lower()}: opening times, typical prices of "
                    f"CNY {r.randrange(40, 260, 10)} and tips from recent visitors."},
        {"title": f"FAQ: {words}", "url": f"https://faq.example.com/{slug}",
         "snippet": "Tickets can be bought online up to 7 days ahead; bring the ID used "
                    "when booking. Weekends sell out earlier."},
        {"title": f"{words} (forum thread)", "url": f"https://forum.example.net/t/{slug}",
         "snippet": f"Went last month, took about {r.randint(2, 6)} hours in total. "
                    "Go early to avoid crowds."},
    ]
    return dumps({"query": words, "results": results})


def respond(tool: str, time: str, args: dict[str, Any]) -> str:
    """The fictional response text for one call of `tool` at task time `time`."""
    r = rng_for(tool, time, args)
    if tool == "travel_search_flights":
        return flights(r, args)
    if tool == "travel_search_trains":
        return trains(r, args)
    if tool == "weather_current_conditions":
        return weather_now(r, args)
    if tool == "weather_forecast_days":
        return weather_forecast(r, args, time)
    if tool == "map_compute_routes":
        return routes(r, args)
    if tool == "map_search_places":
        return places(r, args)
    if tool == "map_search_along_route":
        return along_route(r, args)
    if tool == "map_search_central_places":
        return central_places(r, args)
    if tool == "map_search_ranking_list":
        return ranking_list(r, args)
    if tool == "web_search":
        return web_search(r, args)
    raise KeyError(f"unknown tool {tool!r}")
