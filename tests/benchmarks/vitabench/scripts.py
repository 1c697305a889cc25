"""Scripted tool-call sequences built from a task's own database (shared by the tests).

`script(environment, domains)` returns a list of calls `(tool, arguments)` that exercise
every tool of the domains on that task: reads of every store/shop/product, searches with the
user's own search history, orders created, paid, paid twice, modified, cancelled and
cancelled twice, bookings and reservations, and the error cases (unknown ids, another user,
past or malformed times, missing, unexpected or mistyped arguments). An argument "$N" is the
N-th record id (order, booking, reservation) the environment created, counted in its answers;
"$last" the latest one.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

NEW_ID = re.compile(r"\b(?:OT|OI|OO)[0-9a-f]{10}\b")

Call = tuple[str, dict[str, Any]]


def _later(time: str, hours: int) -> str:
    t = datetime.strptime(time, "%Y-%m-%d %H:%M:%S") + timedelta(hours=hours)
    return t.strftime("%Y-%m-%d %H:%M:%S")


def _history_words(env: dict[str, Any]) -> list[str]:
    words: list[str] = []
    for value in (env.get("user_historical_behaviors") or {}).values():
        if isinstance(value, dict):
            for key, item in value.items():
                if "search" in key and isinstance(item, list):
                    words += [w for w in item if isinstance(w, str)]
    return words[:4] or ["food"]


def general_calls(env: dict[str, Any]) -> list[Call]:
    calls: list[Call] = [("get_user_historical_behaviors", {}), ("get_user_all_orders", {})]
    locs = env.get("location") or []
    for loc in locs[:2]:
        calls.append(("address_to_longitude_latitude", {"address": loc["address"]}))
        calls.append(("address_to_longitude_latitude", {"address": loc["address"][:25]}))
    calls.append(("address_to_longitude_latitude", {"address": "qqqq zzzz"}))
    day = (env.get("time") or "2025-01-01")[:10]
    for w in (env.get("weather") or [])[:2]:
        calls.append(("weather", {"address": w["city"], "date_start": w["datetime"],
                                  "date_end": w["datetime"]}))
    city = (env.get("weather") or [{"city": "Beijing"}])[0]["city"]
    calls += [("weather", {"address": city, "date_start": day, "date_end": "2099-01-01"}),
              ("weather", {"address": city, "date_start": "2025/01/01", "date_end": day}),
              ("weather", {"address": "Atlantis Undersea", "date_start": day, "date_end": day}),
              ("get_date_holiday_info", {"date": day}),
              ("get_date_holiday_info", {"date": "2025-10-01"}),
              ("get_date_holiday_info", {"date": "2025-13-01"}),
              ("get_holiday_date", {"year": "2025", "holiday_name": "Mid-Autumn"}),
              ("get_holiday_date", {"year": "2024", "holiday_name": "dragon boat festival"}),
              ("get_holiday_date", {"year": "2025", "holiday_name": "Xyzzy"}),
              ("get_holiday_date", {"year": "2031", "holiday_name": "National Day"}),
              ("longitude_latitude_to_distance", {"longitude1": 116.4, "latitude1": 39.9,
                                                  "longitude2": 121.47, "latitude2": 31.23}),
              ("longitude_latitude_to_distance", {"longitude1": 1, "latitude1": 2,
                                                  "longitude2": 1, "latitude2": 2}),
              ("longitude_latitude_to_distance", {"longitude1": "116.4", "latitude1": 39.9,
                                                  "longitude2": 121.47, "latitude2": 31.23}),
              ("weather", {"address": city}),
              ("get_nearby", {"longitude": 116.4, "latitude": 39.9, "range": 10}),
              ("no_such_tool", {})]
    if locs:
        for radius in (500, 3000, 50000):
            calls.append(("get_nearby", {"longitude": locs[0]["longitude"],
                                         "latitude": locs[0]["latitude"], "range": radius}))
    return calls


def delivery_calls(env: dict[str, Any]) -> list[Call]:
    user, time = env["user_id"], env["time"]
    stores = env.get("stores") or {}
    calls: list[Call] = [("delivery_distance_to_time", {"distance": 1501.0}),
                         ("delivery_distance_to_time", {"distance": 3000}),
                         ("delivery_distance_to_time", {"distance": "3000"})]
    for word in _history_words(env):
        calls.append(("delivery_store_search_recommand", {"keywords": [word]}))
        calls.append(("delivery_product_search_recommand", {"keywords": word.split()}))
    calls += [("delivery_store_search_recommand", {"keywords": []}),
              ("delivery_store_search_recommand", {"keywords": "noodles"}),
              ("get_delivery_store_info", {"store_id": "S_NOPE"}),
              ("get_delivery_product_info", {"product_id": "P_NOPE"})]
    for key, store in stores.items():
        calls.append(("get_delivery_store_info", {"store_id": key}))
        for p in store.get("products", [])[:3]:
            calls.append(("get_delivery_product_info", {"product_id": p["product_id"]}))
    address = (env.get("location") or [{"address": "x"}])[0]["address"]
    for key, store in list(stores.items())[:2]:
        pids = [p["product_id"] for p in store.get("products", [])[:2]]
        if not pids:
            continue
        good = {"user_id": user, "store_id": key, "product_ids": pids,
                "product_cnts": [2] * len(pids), "address": address,
                "dispatch_time": _later(time, 1), "attributes": ["less spicy"],
                "note": "no cilantro"}
        calls += [("create_delivery_order", good),
                  ("create_delivery_order", {**good, "user_id": "U_OTHER"}),
                  ("create_delivery_order", {**good, "user_id": ""}),
                  ("create_delivery_order", {**good, "store_id": "S_NOPE"}),
                  ("create_delivery_order", {**good, "product_ids": ["P_NOPE"]}),
                  ("create_delivery_order", {**good, "product_cnts": [1]}),
                  ("create_delivery_order", {**good, "product_cnts": [0] * len(pids)}),
                  ("create_delivery_order", {**good, "product_cnts": ["2"] * len(pids)}),
                  ("create_delivery_order", {**good, "dispatch_time": _later(time, -2)}),
                  ("create_delivery_order", {**good, "dispatch_time": "tomorrow noon"}),
                  ("create_delivery_order", {**good, "address": ""}),
                  ("create_delivery_order", {**good, "colour": "red"}),
                  ("get_delivery_product_info", {"product_id": pids[0]})]
    calls += [("pay_delivery_order", {"order_id": "$1"}),
              ("pay_delivery_order", {"order_id": "$1"}),
              ("get_delivery_order_status", {"order_id": "$1"}),
              ("modify_delivery_order", {"order_id": "$1", "note": "ring twice"}),
              ("get_delivery_order_detail", {"order_id": "$1"}),
              ("search_delivery_orders", {"user_id": user}),
              ("search_delivery_orders", {"user_id": user, "status": "paid"}),
              ("search_delivery_orders", {"user_id": "U_OTHER"}),
              ("cancel_delivery_order", {"order_id": "$1"}),
              ("cancel_delivery_order", {"order_id": "$1"}),
              ("pay_delivery_order", {"order_id": "$1"}),
              ("pay_delivery_order", {"order_id": "O_NOPE"}),
              ("get_delivery_order_detail", {"order_id": ""}),
              ("modify_delivery_order", {"order_id": "$1"})]
    for oid in list(env.get("orders") or {})[:2]:
        calls += [("get_delivery_order_detail", {"order_id": oid}),
                  ("pay_delivery_order", {"order_id": oid}),
                  ("cancel_delivery_order", {"order_id": oid})]
    calls.append(("get_user_all_orders", {}))
    return calls


def instore_calls(env: dict[str, Any]) -> list[Call]:
    user, time = env["user_id"], env["time"]
    shops = env.get("shops") or {}
    calls: list[Call] = []
    for word in _history_words(env):
        calls.append(("instore_shop_search_recommend", {"keywords": [word]}))
        calls.append(("instore_product_search_recommend", {"keywords": word.split()}))
    first = True
    for key, shop in list(shops.items())[:3]:
        products = shop.get("products", [])
        if not products:
            continue
        pid = products[0]["product_id"]
        good = {"user_id": user, "shop_id": key, "product_id": pid, "quantity": 2}
        calls += [("create_instore_product_order", good),
                  ("create_instore_product_order", {**good, "quantity": 3}),
                  ("create_instore_product_order", {**good, "user_id": "U_OTHER"}),
                  ("create_instore_product_order", {**good, "shop_id": "S_NOPE"}),
                  ("create_instore_product_order", {**good, "product_id": "P_NOPE"}),
                  ("create_instore_product_order", {**good, "quantity": 0}),
                  ("create_instore_product_order", {**good, "quantity": "2"}),
                  ("instore_book", {"user_id": user, "shop_id": key,
                                    "time": _later(time, 3), "customer_count": 2}),
                  ("pay_instore_book", {"book_id": "$last"}),
                  ("instore_cancel_book", {"book_id": "$last"}),
                  ("instore_book", {"user_id": user, "shop_id": key, "time": "tonight"}),
                  ("instore_reservation", {"user_id": user, "shop_id": key,
                                           "time": _later(time, 24), "customer_count": 2}),
                  ("instore_reservation", {"user_id": user, "shop_id": key,
                                           "time": _later(time, -24), "customer_count": 0})]
        if first:
            calls.append(("instore_product_search_recommend", {"keywords": [products[0]["name"]]}))
            first = False
    calls += duplicate_calls(env)
    calls += [("get_instore_orders", {"user_id": user}),
              ("pay_instore_order", {"order_id": "$1"}),
              ("pay_instore_order", {"order_id": "$1"}),
              ("instore_cancel_order", {"order_id": "$2"}),
              ("instore_cancel_order", {"order_id": "$2"}),
              ("pay_instore_order", {"order_id": "O_NOPE"}),
              ("pay_instore_order", {"order_id": ""}),
              ("get_instore_books", {"user_id": user}),
              ("get_instore_reservations", {"user_id": user}),
              ("get_instore_orders", {"user_id": "U_OTHER"}),
              ("search_instore_book", {"user_id": user}),
              ("search_instore_reservation", {"user_id": user}),
              ("pay_instore_book", {"book_id": "B_NOPE"}),
              ("instore_modify_reservation", {"reservation_id": "R_NOPE", "time": time}),
              ("instore_cancel_reservation", {"reservation_id": ""}),
              ("get_user_all_orders", {})]
    for bid in list(env.get("books") or {}):
        calls += [("search_instore_book", {"user_id": user, "book_id": bid}),
                  ("pay_instore_book", {"book_id": bid}),
                  ("instore_cancel_book", {"book_id": bid}),
                  ("instore_cancel_book", {"book_id": bid})]
    for rid in list(env.get("reservations") or {}):
        calls += [("search_instore_reservation", {"user_id": user, "reservation_id": rid}),
                  ("instore_modify_reservation", {"reservation_id": rid,
                                                  "time": _later(time, 48)}),
                  ("instore_cancel_reservation", {"reservation_id": rid}),
                  ("instore_modify_reservation", {"reservation_id": rid, "time": time})]
    for oid in list(env.get("orders") or {})[:2]:
        calls += [("pay_instore_order", {"order_id": oid}),
                  ("instore_cancel_order", {"order_id": oid})]
    return calls


def duplicate_ids(env: dict[str, Any]) -> dict[str, list[str]]:
    """product id -> the shops listing it, for ids listed by more than one shop."""
    where: dict[str, list[str]] = {}
    for key, shop in (env.get("shops") or {}).items():
        for p in shop.get("products", []):
            where.setdefault(p["product_id"], []).append(key)
    return {pid: shops for pid, shops in where.items() if len(shops) > 1}


def duplicate_calls(env: dict[str, Any]) -> list[Call]:
    calls: list[Call] = []
    for pid, shops in duplicate_ids(env).items():
        for n, key in enumerate(shops, start=1):
            calls.append(("create_instore_product_order", {"user_id": env["user_id"],
                                                           "shop_id": key, "product_id": pid,
                                                           "quantity": n}))
        calls.append(("instore_product_search_recommend", {"keywords": [pid]}))
    return calls


def script(env: dict[str, Any], domains: tuple[str, ...]) -> list[Call]:
    calls = general_calls(env)
    if "delivery" in domains:
        calls += delivery_calls(env)
    if "instore" in domains:
        calls += instore_calls(env)
    return calls


def resolve(args: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    """Replace "$N" values by the N-th id created so far, "$last" by the latest one."""
    out = {}
    for key, value in args.items():
        if value == "$last":
            value = ids[-1] if ids else "O_MISSING"
        elif isinstance(value, str) and value.startswith("$") and value[1:].isdigit():
            n = int(value[1:])
            value = ids[n - 1] if len(ids) >= n else "O_MISSING"
        out[key] = value
    return out


def note_ids(text: str, ids: list[str]) -> None:
    for found in NEW_ID.findall(text):
        if found not in ids:
            ids.append(found)


def normalise(text: str, ids: list[str]) -> str:
    return NEW_ID.sub(lambda mt: f"<ID{ids.index(mt.group(0)) + 1}>"
                      if mt.group(0) in ids else mt.group(0), text)


CREATES = frozenset({"create_delivery_order", "create_instore_product_order", "instore_book",
                     "instore_reservation", "create_hotel_order", "create_attraction_order",
                     "create_flight_order", "create_train_order"})
