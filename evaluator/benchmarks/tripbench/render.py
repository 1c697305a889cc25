"""The tools' answers as text lines, the paper's rendering (appendix G: "Showing 1-3 of 3
results.", "Train_id: ... | D3142/D3143 | 9:48-16:54 | A → B | minimum price: 337.0",
"distance: 5.15 km, estimated travel time: 20 min", "No matching flights found.").

`render(tool, answer)` turns the JSON answer of a tool (tools.py; one source of truth for
both renderings) into the text `TripOptions.tool_output = "text"` gives the agent; an error
is its message. Field names follow the paper's where it shows them (`Hotel_id`, `POI ID`,
`Restaurant_id`, `minimum price`, `review_count`, `product_rating`, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Answer = dict[str, Any]


def _n(v: Any) -> str:
    return str(v)


def _showing(a: Answer, what: str) -> list[str]:
    if a.get("results"):
        return [f"Showing {a['showing']} results."]
    if a.get("total"):
        return [a.get("message", f"No more {what}.")]
    return [f"No matching {what} found."]


def _where(r: Answer) -> str:
    out = f"longitude: {_n(r['lon'])}, latitude: {_n(r['lat'])}"
    if r.get("distance_km") is not None:
        out += f" | distance: {_n(r['distance_km'])}km"
    return out


def _level(r: Answer) -> str:
    return f"{r['sight_level']}A" if r.get("sight_level") else "None"


def _visit(r: Answer) -> str:
    return f"{r['duration_min']} min"


def _attraction(r: Answer) -> str:
    price = "Free" if r.get("free") or not r.get("min_price") else _n(r["min_price"])
    closed = f" | closed on: {', '.join(r['closed_on'])}" if r.get("closed_on") else ""
    return (f"POI ID: {r['id']} | {r.get('city', '')}{' | ' if r.get('city') else ''}"
            f"{r['name']} | category: {r['category']} | level: {_level(r)} | {_where(r)}\n"
            f"rating: {_n(r['comment_score'])} ({r['comment_count']} comments) | popularity "
            f"Score: {_n(r['heat_score'])} | opening hours: {r['open_time']} - "
            f"{r['close_time']}{closed} | reference visit time: {_visit(r)} | ticket price: "
            f"{price}")


def search_attractions(a: Answer) -> str:
    if not a["results"]:
        return "No attractions found." if not a["total"] else a["message"]
    return "\n\n".join(_showing(a, "attractions") + [_attraction(r) for r in a["results"]])


def attraction_detail(a: Answer) -> str:
    lines = [_attraction({**a["attraction"], "min_price": min(
        (p["price"] for p in a["products"]), default=0)})]
    lines += [f"product_id: {p['product_id']} | {p['name']} | price: {_n(p['price'])}"
              for p in a["products"]]
    if a.get("message"):
        lines.append(a["message"])
    return "\n".join(lines)


def _hotel(r: Answer) -> str:
    price = f" | price: {_n(r['min_price_per_night'])}+" if "min_price_per_night" in r else ""
    return (f"Hotel_id: {r['id']} | {r['name']} | type: {r['hotel_type'].title()}{price} | "
            f"stars: {r['star']} | rating: {_n(r['score'])}/5 | review_count: "
            f"{r['review_count']} | good reviews: {_n(r['good_rate'])}% | product_rating: "
            f"{_n(r['product_rating'])} | environment_rating: {_n(r['environment_rating'])} | "
            f"service_rating: {_n(r['service_rating'])} | facilities: "
            f"{', '.join(r['facilities'])} | {_where(r)}")


def search_hotels(a: Answer) -> str:
    lines = _showing(a, "hotels")
    if a["results"]:
        lines[0] += f" {a['nights']} night(s), {a['check_in_date']} to {a['check_out_date']}."
    return "\n".join(lines + [_hotel(r) for r in a["results"]])


def _room(p: Answer) -> str:
    return (f"product_id: {p['product_id']} | {p['room_type']} | capacity: {p['capacity']} | "
            f"breakfast: {p['breakfast_per_room']} | cancellation: {p['cancellation']} | "
            f"window: {'yes' if p['has_window'] else 'no'} | price per night: "
            f"{_n(p['price_per_night'])} | total: {_n(p['total_price'])}")


def hotel_detail(a: Answer) -> str:
    stay = (f"Stay {a['check_in_date']} to {a['check_out_date']} ({a['nights']} night(s)), "
            f"{a['room_num']} room(s) for {a['person_num']} guest(s).")
    lines = [_hotel(a["hotel"]), stay]
    if a["products"]:
        lines.append(f"Showing {a['showing']} room products.")
    else:
        lines.append(a.get("message", "No room product matches."))
    lines += [_room(p) for p in a["products"]]
    if a["not_meeting_occupancy"]:
        lines.append("Not meeting the occupancy:")
        lines += [_room(p) for p in a["not_meeting_occupancy"]]
    return "\n".join(lines)


def _service(r: Answer, what: str, station: str) -> str:
    kind = r.get("airline") or r.get("train_type") or ""
    head = f"{what}_id: {r['id']} | {r['number']}"
    if what == "Flight":
        head += f" | {kind}"
    next_day = " (+1 day)" if r.get("arrives_next_day") else ""
    out = (f"{head} | {r['dep_time']}-{r['arr_time']}{next_day} | "
           f"{r[f'from_{station}']} → {r[f'to_{station}']}")
    if "min_price" in r:
        out += (" | sold out" if r["min_price"] is None
                else f" | minimum price: {_n(r['min_price'])}")
    return out


def _search_service(what: str, station: str) -> Callable[[Answer], str]:
    def render_(a: Answer) -> str:
        plural = what.lower() + "s"
        lines = _showing(a, plural)
        if not a["results"] and a.get("note"):
            lines.append(a["note"])
        return "\n".join(lines + [_service(r, what, station) for r in a["results"]])
    return render_


def _service_detail(what: str, station: str, seat: str) -> Callable[[Answer], str]:
    def render_(a: Answer) -> str:
        r = a[what.lower()]
        head = _service(r, what, station) + f" | date: {r['date']}"
        if "on_time_rate" in r:
            head += (f" | on-time rate: {_n(r['on_time_rate'])}% | average delay: "
                     f"{r['avg_delay_min']} min")
        lines = [head]
        lines += [f"product_id: {p['product_id']} | {p[seat]} | platform: {p['platform']} | "
                  f"price: {_n(p['price'])} | remaining: {p['remaining']}"
                  for p in a["products"]]
        if not a["products"]:
            lines.append(a.get("message", "No ticket products match."))
        return "\n".join(lines)
    return render_


def _restaurant(r: Answer) -> str:
    return (f"Restaurant_id: {r['id']} | {r['name']} | category: {r['cuisine']} | avg_price: "
            f"{_n(r['avg_price'])} | stars: {_n(r['score'])}/5 | review_count: "
            f"{r['review_count']} | {_where(r)} | open_hours: {r['open_time']}-"
            f"{r['close_time']} | product_rating: {_n(r['product_rating'])} | "
            f"environment_rating: {_n(r['environment_rating'])} | service_rating: "
            f"{_n(r['service_rating'])} | reservable: {r['reservable']} | must_reserve: "
            f"{r['must_reserve']}")


def search_restaurants(a: Answer) -> str:
    return "\n".join(_showing(a, "restaurants") + [_restaurant(r) for r in a["results"]])


def restaurant_detail(a: Answer) -> str:
    r = a["restaurant"]
    hours = f"{r['open_time']}-{r['close_time']}"
    line = _restaurant(r)
    for p in a["products"]:
        line += (f" | product_id: {p['product_id']} | people: {p['people']} | price: "
                 f"{_n(p['price'])} | available_time_ranges: {hours}")
    if not a["products"]:
        line += " | No set menus: order on site."
    return line


def _coordinates(a: Answer) -> str:
    return f"{a['name']} ({a['id']}): longitude: {_n(a['lon'])}, latitude: {_n(a['lat'])}"


def _terminal(a: Answer) -> str:
    return (f"{a['name']} ({a.get('city') or ''}): longitude: {_n(a['lon'])}, latitude: "
            f"{_n(a['lat'])}")


RENDER: dict[str, Callable[[Answer], str]] = {
    "search_attractions": search_attractions,
    "get_attraction_detail_with_products": attraction_detail,
    "get_attraction_coordinates": _coordinates,
    "search_hotels": search_hotels,
    "get_hotel_detail_with_products": hotel_detail,
    "get_hotel_coordinates": _coordinates,
    "search_flights": _search_service("Flight", "airport"),
    "get_flight_detail_with_products": _service_detail("Flight", "airport", "cabin"),
    "get_airport_coordinates": _terminal,
    "search_trains": _search_service("Train", "station"),
    "get_train_detail_with_products": _service_detail("Train", "station", "seat_class"),
    "get_station_coordinates": _terminal,
    "search_restaurants": search_restaurants,
    "get_restaurant_detail_with_products": restaurant_detail,
    "get_restaurant_coordinates": _coordinates,
    "get_route_estimate": lambda a: a["summary"],
    "get_city_center_coords": lambda a: f"{a['city']}: longitude: {_n(a['lon'])}, "
                                        f"latitude: {_n(a['lat'])}",
    "get_date_after": lambda a: a["date"],
}


def render(tool: str, answer: Answer) -> str:
    return RENDER[tool](answer)
