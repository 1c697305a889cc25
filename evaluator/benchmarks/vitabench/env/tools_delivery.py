"""Delivery tools: stores, food products, delivery orders."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import msgspec

from . import fuzzy, render
from . import model as m
from .common import TIME_FORMAT, Declined, check, check_user, has_format, join_keywords, parse_time
from .state import EpisodeState
from .tools_general import geocode, longitude_latitude_to_distance

SEARCH_LIMIT = 100


def _store(st: EpisodeState, store_id: Any) -> m.Store:
    stores = st.table("stores")
    if store_id not in stores:
        raise ValueError(f"Store {store_id} not found")
    return stores[store_id]


def _product(st: EpisodeState, product_id: Any) -> m.StoreProduct:
    if product_id not in st.products:
        raise ValueError(f"{product_id} not found")
    kind, product = st.product(product_id)
    if kind != "delivery":
        raise ValueError(f"{product_id} is not a delivery product")
    return product


def _order(st: EpisodeState, order_id: Any) -> m.Order:
    if order_id not in st.orders:
        raise ValueError(f"Order {order_id} not found")
    order = st.orders[order_id]
    if order.order_type != "delivery":
        raise ValueError(f"Order {order_id} is not a delivery order")
    return order


def _attributes(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    if isinstance(value, str):
        return value
    raise ValueError(f"attributes must be a string or a list of strings, got {value!r}")


def _count(value: Any) -> int:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int):
        return value
    raise ValueError(f"quantity should be a valid integer, got {value!r}")


def delivery_distance_to_time(st: EpisodeState, distance: Any) -> float:
    check(isinstance(distance, float | int),
          f"distance value type should be float or int, but get {type(distance)}")
    return round(25.00 + int(distance) * 0.006510, 0)


def get_delivery_store_info(st: EpisodeState, store_id: Any) -> str:
    return render.store_full(_store(st, store_id))


def get_delivery_product_info(st: EpisodeState, product_id: Any) -> str:
    return render.store_product_repr(_product(st, product_id))


def delivery_store_search_recommand(st: EpisodeState, keywords: Any) -> str:
    texts = {s.store_id: s.name + ",".join(s.tags) for s in st.table("stores").values()}
    ranked = fuzzy.rerank(join_keywords(keywords), texts)[:SEARCH_LIMIT]
    return "\n".join(render.store_head(_store(st, key)) for key, _, _ in ranked)


def delivery_product_search_recommand(st: EpisodeState, keywords: Any) -> str:
    texts: dict[str, str] = {}
    for pid in st.products:
        kind, p = st.product(pid)
        if kind == "delivery":
            texts[pid] = f"{p.store_name} {p.name} {list(p.tags)}"
    ranked = fuzzy.rerank(join_keywords(keywords), texts)[:SEARCH_LIMIT]
    return "\n".join(render.store_product_repr(_product(st, key)) for key, _, _ in ranked)


def create_delivery_order(st: EpisodeState, user_id: Any, store_id: Any, product_ids: Any,
                          product_cnts: Any, address: Any, dispatch_time: Any,
                          attributes: Any = None, note: Any = "") -> str:
    check_user(st, user_id)
    check(store_id in st.table("stores"), f"Store {store_id} not found")
    # lists, not generators: every element is evaluated (and may raise) before all() decides
    check(all([_product(st, pid) is not None for pid in product_ids]),  # noqa: C419
          f"products {product_ids} not found")
    check(address != "", f"Location {address} is empty")
    same_length = len(product_ids) == len(product_cnts)
    check(same_length and all([c > 0 for c in product_cnts]),  # noqa: C419
          f"product_cnts {product_cnts} list is invalid")
    check(dispatch_time and has_format(dispatch_time),
          f"dispatch_time {dispatch_time} time format is invalid, yyyy-mm-dd HH:MM:SS required")
    check(parse_time(dispatch_time) >= parse_time(st.now()),
          f"dispatch_time {dispatch_time} must be in the future")
    products = [_product(st, pid) for pid in product_ids]
    store = _store(st, store_id)
    longitude, latitude = geocode(st, address)
    distance = longitude_latitude_to_distance(st, longitude, latitude, store.location.longitude,
                                              store.location.latitude)
    shipping = delivery_distance_to_time(st, distance)
    arrival = (parse_time(dispatch_time) + timedelta(minutes=shipping)).strftime(TIME_FORMAT)
    total = sum([p.price * cnt for p, cnt in zip(products, product_cnts, strict=False)])
    chosen = [""] * len(products)
    for i, attr in enumerate((attributes if attributes is not None else [])[:len(products)]):
        if attr:
            chosen[i] = attr
    ordered = tuple(
        msgspec.structs.replace(p, quantity=_count(cnt), attributes=_attributes(attr))
        for p, cnt, attr in zip(products, product_cnts, chosen, strict=False))
    if note is not None and not isinstance(note, str):
        raise ValueError(f"note should be a valid string, got {note!r}")
    now = st.now()
    order = m.Order(
        order_id=st.new_id("delivery", user_id), order_type="delivery", user_id=user_id,
        store_id=store_id, location=m.Location(address=address, longitude=longitude,
                                               latitude=latitude),
        dispatch_time=dispatch_time, shipping_time=shipping, delivery_time=arrival,
        total_price=float(total), create_time=now, update_time=now, note=note,
        products=ordered, status="unpaid")
    # the reference's ordered products and the order's address join its global registries
    for p in ordered:
        st.products[p.product_id] = p
    st.locations[address] = (longitude, latitude)
    if order.order_id in st.orders:
        return Declined("Order already exists")
    st.orders[order.order_id] = order
    return render.order_full(order, st.resolve_line)


def pay_delivery_order(st: EpisodeState, order_id: Any) -> str:
    order = _order(st, order_id)
    if order.status != "unpaid":
        return Declined("Order is not in `unpaid` status.")
    st.orders[order_id] = msgspec.structs.replace(order, status="paid")
    return "Payment successful"


def get_delivery_order_status(st: EpisodeState, order_id: Any) -> str:
    return _order(st, order_id).status


def cancel_delivery_order(st: EpisodeState, order_id: Any) -> str:
    order = _order(st, order_id)
    check(order.status not in ["cancelled"], f"Order {order_id} is already cancelled")
    st.orders[order_id] = msgspec.structs.replace(order, status="cancelled")
    if order.order_id not in st.orders:  # filed under another key: changed, yet "not found"
        return Declined("Order not found")
    return f"Order {order.order_id} has been cancelled."


def modify_delivery_order(st: EpisodeState, order_id: Any, note: Any) -> str:
    order = _order(st, order_id)
    st.orders[order_id] = msgspec.structs.replace(order, note=note)
    if order.order_id not in st.orders:
        return Declined("Order not found")
    return f"Order {order.order_id} has been modified."


def search_delivery_orders(st: EpisodeState, user_id: Any, status: Any = "unpaid") -> str:
    check_user(st, user_id)
    found = [o for o in st.orders.values()
             if o.order_type == "delivery" and o.status == status and o.user_id == user_id]
    if not found:
        return "No delivery orders available"
    return "\n".join(render.order_short(o) for o in found)


def get_delivery_order_detail(st: EpisodeState, order_id: Any) -> str:
    check(order_id, "Order ID cannot be empty")
    return render.order_full(_order(st, order_id), st.resolve_line)
