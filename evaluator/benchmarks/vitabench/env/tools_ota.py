"""OTA tools: hotels, attractions, flights, trains and their orders.

Four near-identical families (info, search, create, pay, search orders, detail, cancel, and
modify for flights and trains) share helpers; each tool keeps its own parameter names and
its own messages, which differ between the families in the reference.
"""

from __future__ import annotations

from typing import Any

import msgspec

from . import fuzzy, render
from . import model as m
from .common import (
    DATE_FORMAT,
    Declined,
    as_int,
    check,
    check_user,
    fuzzy_match,
    has_format,
    join_keywords,
    user_matches,
)
from .state import EpisodeState

SEARCH_LIMIT = 100
_DATE_HINT = "Date format is incorrect, correct format is %Y-%m-%d"
# kind -> (table, info label, "a"/"an" + noun for the type check)
_KINDS = {"hotel": ("hotels", "Hotel", "a hotel"), "attraction": ("attractions", "Attraction",
                                                                   "an attraction"),
          "flight": ("flights", "Flight", "a flight"), "train": ("trains", "Train", "a train")}
_FULL = {"hotel": render.hotel_full, "attraction": render.attraction_full,
         "flight": render.flight_full, "train": render.train_full}


def _record(st: EpisodeState, kind: str, rec_id: Any) -> Any:
    table = st.table(_KINDS[kind][0])
    if rec_id not in table:
        raise ValueError(f"{kind} {rec_id} not found")
    return table[rec_id]


def _info(st: EpisodeState, kind: str, rec_id: Any) -> str:
    label = _KINDS[kind][1]
    check(rec_id, f"{label} ID cannot be empty")
    try:
        rec = _record(st, kind, rec_id)
    except ValueError as exc:  # answered, not raised, by the reference
        return Declined(f"Error: {exc}")
    return f"{label} Info:\n{_FULL[kind](rec)}"


def get_ota_hotel_info(st: EpisodeState, hotel_id: Any) -> str:
    return _info(st, "hotel", hotel_id)


def get_ota_attraction_info(st: EpisodeState, attraction_id: Any) -> str:
    return _info(st, "attraction", attraction_id)


def get_ota_flight_info(st: EpisodeState, flight_id: Any) -> str:
    return _info(st, "flight", flight_id)


def get_ota_train_info(st: EpisodeState, train_id: Any) -> str:
    return _info(st, "train", train_id)


def hotel_search_recommand(st: EpisodeState, city_name: Any, key_words: Any = None) -> str:
    hotels = [h for h in st.table("hotels").values() if fuzzy_match(city_name, h.location.address)]
    if not hotels:
        return ("No hotels found matching the criteria. Please check if the city name is "
                "correct and try again.")
    texts = {h.hotel_id: h.hotel_name + ",".join(h.tags) for h in hotels}
    ranked = fuzzy.rerank(join_keywords(key_words or []), texts)[:SEARCH_LIMIT]
    return "\n".join(render.hotel_head(_record(st, "hotel", key)) for key, _, _ in ranked)


def attractions_search_recommend(st: EpisodeState, city_name: Any, key_words: Any) -> str:
    found = [a for a in st.table("attractions").values()
             if fuzzy_match(city_name, a.location.address)]
    if not found:
        return ("No attractions found matching the criteria. Please check if the city name "
                "is correct and try again.")
    texts = {a.attraction_id: f"{a.attraction_name},{a.description},{a.location.address}"
             for a in found}
    ranked = fuzzy.rerank(join_keywords(key_words), texts)[:SEARCH_LIMIT]
    return "\n".join(render.attraction_head(_record(st, "attraction", key))
                     for key, _, _ in ranked)


def flight_search_recommend(st: EpisodeState, departure: Any, destination: Any) -> str:
    check(departure, "Departure city cannot be empty")
    check(destination, "Destination city cannot be empty")
    found = [f for f in st.table("flights").values()
             if fuzzy_match(departure, f.departure_city)
             and fuzzy_match(destination, f.arrival_city)]
    if not found:
        return "No flights found matching the criteria"
    return "\n".join(render.flight_head(f) for f in found)


def train_ticket_search(st: EpisodeState, departure: Any, destination: Any, date: Any) -> str:
    check(departure, "Departure city cannot be empty")
    check(destination, "Destination city cannot be empty")
    check(date, "Departure date cannot be empty")
    check(has_format(date, DATE_FORMAT), _DATE_HINT)
    found = []
    for train in st.table("trains").values():
        for product in train.products:  # one line per seat product on that date
            if (product.date == date and fuzzy_match(departure, train.departure_city)
                    and fuzzy_match(destination, train.arrival_city)):
                found.append(train)
    if not found:
        return "No trains found matching the criteria"
    return "\n".join(render.train_head(t) for t in found)


def _replace_product(st: EpisodeState, kind: str, key: str, index: int, product: Any) -> None:
    """Put a changed product (stock) into the record filed under `key`."""
    table = st.table(_KINDS[kind][0])
    rec = table[key]
    items = list(rec.products)
    items[index] = product
    table[key] = msgspec.structs.replace(rec, products=tuple(items))


def _new_order(st: EpisodeState, kind: str, store_id: str, user_id: Any, products: tuple,
               total: float, id_parts: tuple[str, ...]) -> str:
    now = st.now()
    order = m.Order(order_id=st.new_id(kind, *id_parts), order_type=kind, user_id=user_id,
                    store_id=store_id, total_price=float(total), create_time=now,
                    update_time=now, status="unpaid", products=products)
    st.orders[order.order_id] = order
    return render.order_full(order, st.resolve_line)


def create_hotel_order(st: EpisodeState, hotel_id: Any, room_id: Any, user_id: Any) -> str:
    check(hotel_id, "Hotel ID cannot be empty")
    check(user_id, "User ID cannot be empty")
    check(user_matches(st, user_id), "User ID does not match")
    hotel = _record(st, "hotel", hotel_id)
    rooms: tuple = ()
    for i, product in enumerate(hotel.products):
        if product.product_id == room_id:
            if product.quantity <= 0:
                return Declined("No available rooms at the moment")
            _replace_product(st, "hotel", hotel_id, i, msgspec.structs.replace(
                product, quantity=product.quantity - 1))
            rooms = (msgspec.structs.replace(product, quantity=1),)
            break
    # an unknown room id gives an empty order priced 0, as in the reference
    return _new_order(st, "hotel", hotel_id, user_id, rooms, sum(r.price for r in rooms),
                      (str(hotel_id), str(room_id), user_id))


def _create_dated(st: EpisodeState, kind: str, rec_id: Any, product_id: Any, user_id: Any,
                  date: Any, quantity: Any, id_label: str, what: str) -> str:
    check(rec_id, f"{_KINDS[kind][1]} ID cannot be empty")
    check(product_id, f"{id_label} ID cannot be empty")
    check(user_id, "User ID cannot be empty")
    check(quantity > 0, "Booking quantity must be greater than 0")
    check(user_matches(st, user_id), "User ID does not match")
    rec = _record(st, kind, rec_id)
    for i, product in enumerate(rec.products):
        if product.date == date and product.product_id == product_id:
            break
    else:
        return Declined(f"The {kind} does not have the specified {what} on the specified date")
    if product.quantity < quantity:
        return Declined(f"Insufficient {what} inventory for the specified date")
    _replace_product(st, kind, rec_id, i, msgspec.structs.replace(
        product, quantity=product.quantity - quantity))
    line = msgspec.structs.replace(product, quantity=as_int(quantity, "quantity"))
    return _new_order(st, kind, rec_id, user_id, (line,), line.price * line.quantity,
                      (user_id,))


def create_attraction_order(st: EpisodeState, attraction_id: Any, ticket_id: Any, user_id: Any,
                            date: Any, quantity: Any) -> str:
    return _create_dated(st, "attraction", attraction_id, ticket_id, user_id, date, quantity,
                         "Ticket", "ticket")


def create_flight_order(st: EpisodeState, flight_id: Any, seat_id: Any, user_id: Any,
                        date: Any, quantity: Any) -> str:
    return _create_dated(st, "flight", flight_id, seat_id, user_id, date, quantity, "Seat",
                         "seat")


def create_train_order(st: EpisodeState, train_id: Any, seat_id: Any, user_id: Any, date: Any,
                       quantity: Any) -> str:
    return _create_dated(st, "train", train_id, seat_id, user_id, date, quantity, "Seat", "seat")


def _order(st: EpisodeState, order_id: Any) -> m.Order:
    if order_id not in st.orders:
        raise ValueError(f"Order {order_id} not found")
    return st.orders[order_id]


def _pay(st: EpisodeState, order_id: Any) -> str:
    check(order_id, "Order ID cannot be empty")
    order = _order(st, order_id)  # any order type, as in the reference
    if order.status != "unpaid":
        return Declined("Order status must be unpaid")
    st.orders[order_id] = msgspec.structs.replace(order, status="paid", update_time=st.now())
    if order.order_id not in st.orders:  # filed under another key: changed, yet "not found"
        return Declined("Order not found")
    return "Payment successful"


def pay_hotel_order(st: EpisodeState, order_id: Any) -> str:
    return _pay(st, order_id)


def pay_attraction_order(st: EpisodeState, order_id: Any) -> str:
    return _pay(st, order_id)


def pay_flight_order(st: EpisodeState, order_id: Any) -> str:
    return _pay(st, order_id)


def pay_train_order(st: EpisodeState, order_id: Any) -> str:
    return _pay(st, order_id)


def _search(st: EpisodeState, kind: str, user_id: Any, date: Any, status: Any) -> str:
    check_user(st, user_id)
    of_kind = [o for o in st.orders.values() if o.order_type == kind]
    if kind == "hotel" and not any(o.user_id == user_id for o in of_kind):
        raise ValueError("User does not exist or has no order records")
    if date:
        check(has_format(date, DATE_FORMAT), _DATE_HINT)
    found = []
    for order in of_kind:
        if order.user_id != user_id or (status and order.status != status):
            continue
        # task-file products are dicts and never match a date, as in the reference
        if date and not any(getattr(p, "date", None) == date and not isinstance(p, dict)
                            for p in order.products):
            continue
        found.append(order)
    return "\n".join(render.order_short(o) for o in found)


def search_hotel_order(st: EpisodeState, user_id: Any, date: Any = None,
                       status: Any = "paid") -> str:
    return _search(st, "hotel", user_id, date, status)


def search_attraction_order(st: EpisodeState, user_id: Any, date: Any = None,
                            status: Any = "paid") -> str:
    return _search(st, "attraction", user_id, date, status)


def search_flight_order(st: EpisodeState, user_id: Any, date: Any = None,
                        status: Any = "paid") -> str:
    return _search(st, "flight", user_id, date, status)


def search_train_order(st: EpisodeState, user_id: Any, date: Any = None,
                       status: Any = "paid") -> str:
    return _search(st, "train", user_id, date, status)


def _detail(st: EpisodeState, kind: str, order_id: Any) -> str:
    check(order_id, "Order ID cannot be empty")
    order = _order(st, order_id)
    check(order.order_type == kind, f"Order type is not {_KINDS[kind][2]} order")
    return render.order_full(order, st.resolve_line)


def get_hotel_order_detail(st: EpisodeState, order_id: Any) -> str:
    return _detail(st, "hotel", order_id)


def get_attraction_order_detail(st: EpisodeState, order_id: Any) -> str:
    return _detail(st, "attraction", order_id)


def get_flight_order_detail(st: EpisodeState, order_id: Any) -> str:
    return _detail(st, "flight", order_id)


def get_train_order_detail(st: EpisodeState, order_id: Any) -> str:
    return _detail(st, "train", order_id)

