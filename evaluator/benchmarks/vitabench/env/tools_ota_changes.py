"""OTA tools that change or cancel an existing order (flight/train date changes, cancels)."""

from __future__ import annotations

from typing import Any

import msgspec

from .common import DATE_FORMAT, Declined, check, has_format, user_matches
from .state import EpisodeState
from .tools_ota import _DATE_HINT, _KINDS, _order, _replace_product


def _field(product: Any, name: str) -> Any:
    return product.get(name) if isinstance(product, dict) else getattr(product, name)


def _move(st: EpisodeState, kind: str, key: Any, order: Any, new_date: Any) -> str:
    """Move a one-line paid order to the same seat type on another date; stock follows."""
    check(len(order.products) == 1,
          f"Only single {kind} ticket order modification is supported")
    old = order.products[0]
    seat_type, quantity = _field(old, "seat_type"), _field(old, "quantity")
    table = st.table(_KINDS[kind][0])
    rec = table[order.store_id]  # KeyError for a vanished flight/train, as in the reference
    target = next((i for i, p in enumerate(rec.products)
                   if p.date == new_date and p.seat_type == seat_type), None)
    check(target is not None, f"New date {new_date} does not have {seat_type} type seats")
    check(rec.products[target].quantity >= quantity,
          f"Insufficient {seat_type} seat inventory for new date {new_date}")
    old_date = _field(old, "date")
    back = next((i for i, p in enumerate(rec.products)
                 if p.date == old_date and p.seat_type == seat_type), None)
    if back is not None:  # the first product of the old date and seat type gets the seats back
        p = rec.products[back]
        _replace_product(st, kind, order.store_id, back, msgspec.structs.replace(
            p, quantity=p.quantity + quantity))
        rec = table[order.store_id]
    new = rec.products[target]
    _replace_product(st, kind, order.store_id, target, msgspec.structs.replace(
        new, quantity=new.quantity - quantity))
    old_total = _field(old, "price") * quantity
    new_total = new.price * quantity
    diff = new_total - old_total
    line = type(new)(product_id=new.product_id, price=new.price, date=new_date,
                     seat_type=seat_type, quantity=quantity)
    st.orders[key] = msgspec.structs.replace(
        order, products=(line,), total_price=new_total, update_time=st.now(),
        status="unpaid" if diff > 0 else order.status)
    if order.order_id not in st.orders:  # filed under another key: changed, yet "not found"
        return Declined("Modification failed, Order not found")
    if diff > 0:
        return (f"Modification successful, need to pay additional amount: {diff}, "
                "please pay as soon as possible")
    return f"Modification successful, price difference: {diff}, refunded"


def modify_train_order(st: EpisodeState, order_id: Any, user_id: Any, new_date: Any) -> str:
    check(order_id, "Order ID cannot be empty")
    check(user_id, "User ID cannot be empty")
    check(new_date, "New departure date cannot be empty")
    check(user_matches(st, user_id), "User ID does not match")
    check(has_format(new_date, DATE_FORMAT), _DATE_HINT)
    order = _order(st, order_id)
    check(order.order_type == "train", "Order type is not a train order")
    check(order.user_id == user_id, f"Order {order_id} does not belong to user {user_id}")
    check(order.status == "paid",
          f"Only paid orders can be modified, current status: {order.status}")
    return _move(st, "train", order_id, order, new_date)


def modify_flight_order(st: EpisodeState, order_id: Any, user_id: Any, new_date: Any) -> str:
    check(order_id, "Order ID cannot be empty")
    check(user_id, "User ID cannot be empty")
    check(new_date, "New departure date cannot be empty")
    check(has_format(new_date, DATE_FORMAT), _DATE_HINT)
    check(user_matches(st, user_id), "User ID does not match")
    order = _order(st, order_id)
    check(order.order_type == "flight", "Order type is not a flight order")
    check(order.user_id == user_id,
          f"User {user_id} does not have permission to modify this order")
    check(order.status == "paid", "Only paid orders can be modified")
    return _move(st, "flight", order_id, order, new_date)


def _cancel(st: EpisodeState, kind: str, order_id: Any, user_id: Any) -> str:
    check(order_id, "Order ID cannot be empty")
    check(user_id, "User ID cannot be empty")
    check(user_matches(st, user_id), "User ID does not match")  # the owner is not checked
    order = _order(st, order_id)
    check(order.order_type == kind, f"Order type is not {_KINDS[kind][2]} order")
    check(order.status not in ["cancelled"], "Order is already in cancelled status")
    refund = order.total_price if order.status == "paid" else 0
    # stock is not given back, as in the reference
    st.orders[order_id] = msgspec.structs.replace(order, status="cancelled",
                                                  update_time=st.now())
    if order.order_id not in st.orders:  # filed under another key: changed, yet "not found"
        return Declined("Cancellation failed, Order not found")
    return f"Cancellation successful, refund amount: {refund}"


def cancel_hotel_order(st: EpisodeState, order_id: Any, user_id: Any) -> str:
    return _cancel(st, "hotel", order_id, user_id)


def cancel_attraction_order(st: EpisodeState, order_id: Any, user_id: Any) -> str:
    return _cancel(st, "attraction", order_id, user_id)


def cancel_flight_order(st: EpisodeState, order_id: Any, user_id: Any) -> str:
    return _cancel(st, "flight", order_id, user_id)


def cancel_train_order(st: EpisodeState, order_id: Any, user_id: Any) -> str:
    return _cancel(st, "train", order_id, user_id)
