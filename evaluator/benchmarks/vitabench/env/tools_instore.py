"""In-store tools: shops, packages (products), in-store orders, table bookings, reservations."""

from __future__ import annotations

from typing import Any

import msgspec

from . import fuzzy, render
from . import model as m
from .common import TIME_FORMAT, Declined, as_int, check, check_user, has_format, join_keywords
from .database import ProductRef
from .state import EpisodeState

SEARCH_LIMIT = 1000
_TIME_HINT = "correct format is %Y-%m-%d %H:%M:%S"


def _shop(st: EpisodeState, shop_id: Any) -> m.Shop:
    shops = st.table("shops")
    if shop_id not in shops:
        raise ValueError(f"Shop {shop_id} does not exist")
    return shops[shop_id]


def _product_entry(st: EpisodeState, product_id: Any) -> ProductRef:
    if product_id not in st.products:
        raise ValueError(f"Product {product_id} does not exist")
    entry = st.products[product_id]
    if not isinstance(entry, ProductRef) or entry.kind != "instore":
        raise ValueError(f"Product {product_id} is not an instore scenario product")
    return entry


def _order(st: EpisodeState, order_id: Any) -> m.Order:
    if order_id not in st.orders:
        raise ValueError(f"Order {order_id} not found")
    order = st.orders[order_id]
    if order.order_type != "instore":
        raise ValueError(f"Order {order_id} is not an instore order")
    return order


def _book(st: EpisodeState, book_id: Any) -> m.Book:
    books = st.table("books")
    if book_id not in books:
        raise ValueError(f"BookInfo {book_id} not found")
    return books[book_id]


def _reservation(st: EpisodeState, reservation_id: Any) -> m.Reservation:
    table = st.table("reservations")
    if reservation_id not in table:
        raise ValueError(f"ReservationInfo {reservation_id} not found")
    return table[reservation_id]


def instore_shop_search_recommend(st: EpisodeState, keywords: Any) -> str:
    texts = {s.shop_id: s.shop_name + "," + ",".join(s.tags)
             for s in st.table("shops").values()}
    ranked = fuzzy.rerank(join_keywords(keywords), texts)[:SEARCH_LIMIT]
    return "\n".join(render.shop_head(_shop(st, key)) for key, _, _ in ranked)


def instore_product_search_recommend(st: EpisodeState, keywords: Any) -> str:
    texts: dict[str, str] = {}
    for pid in st.products:
        kind, p = st.product(pid)
        if kind == "instore":
            texts[pid] = p.name + "," + ",".join(p.tags)
    ranked = fuzzy.rerank(join_keywords(keywords), texts)[:SEARCH_LIMIT]
    return "\n".join(render.shop_product_repr(_catalogue_product(st, key))
                     for key, _, _ in ranked)


def _catalogue_product(st: EpisodeState, product_id: Any) -> m.ShopProduct:
    _product_entry(st, product_id)
    return st.product(product_id)[1]


def create_instore_product_order(st: EpisodeState, user_id: Any, shop_id: Any,
                                 product_id: Any, quantity: Any = 1) -> str:
    check_user(st, user_id)
    check(shop_id in st.table("shops"), "Shop does not exist")
    check(product_id in [p.product_id for p in _shop(st, shop_id).products],
          "Product does not exist")
    check(quantity > 0, "Quantity must be greater than 0")
    # the catalogue entry registered last under this id (another shop's, for a duplicate id)
    # takes the ordered quantity, and the order shows that very entry
    ref = _product_entry(st, product_id)
    _, product = st.product(product_id)
    st.set_catalogue_product(ref, msgspec.structs.replace(product, quantity=quantity))
    now = st.now()
    order = m.Order(order_id=st.new_id("instore", user_id), order_type="instore",
                    user_id=user_id, store_id=shop_id, total_price=quantity * product.price,
                    create_time=now, update_time=now, status="unpaid",
                    products=(m.CatalogueRef(shop_key=ref.key, index=ref.index),))
    st.orders[order.order_id] = order
    return render.order_full(order, st.resolve_line)


def pay_instore_order(st: EpisodeState, order_id: Any) -> str:
    check(order_id, "Order ID cannot be empty")
    order = _order(st, order_id)
    if order.status != "unpaid":
        return Declined(f"Order {order_id} is not in `unpaid` status.")
    st.orders[order_id] = msgspec.structs.replace(order, status="paid", update_time=st.now())
    return "Payment successful"


def instore_cancel_order(st: EpisodeState, order_id: Any) -> str:
    check(order_id, "Order ID cannot be empty")
    order = _order(st, order_id)
    if order.status == "cancelled":
        return Declined(f"Order {order.order_id} is already cancelled.")
    st.orders[order_id] = msgspec.structs.replace(order, status="cancelled",
                                                  update_time=st.now())
    if order.order_id not in st.orders:  # filed under another key: changed, yet "not found"
        return Declined(f"Order {order.order_id} not found")
    return f"Order {order.order_id} is cancelled."


def instore_book(st: EpisodeState, user_id: Any, shop_id: Any, time: Any,
                 customer_count: Any = 1) -> str:
    check_user(st, user_id)
    check(shop_id in st.table("shops"), "Shop does not exist")
    check(customer_count > 0, "Number of customers for table booking must be greater than 0")
    check(time, "Table booking time cannot be empty")
    check(has_format(time, TIME_FORMAT), f"Table booking time format is incorrect, {_TIME_HINT}")
    shop = st.table("shops")[shop_id]
    check(shop.enable_book, "Shop does not support table booking")
    book = m.Book(book_id=st.new_id("instore_book", user_id), shop_id=shop_id, book_time=time,
                  customer_count=as_int(customer_count, "customer_count"),
                  book_price=shop.book_price, customer_id=user_id,
                  status="unpaid" if shop.book_price > 0 else "paid", update_time=st.now())
    st.table("books")[book.book_id] = book
    return render.book_repr(book)


def pay_instore_book(st: EpisodeState, book_id: Any) -> str:
    check(book_id, "Booking ID cannot be empty")
    book = _book(st, book_id)
    if book.status != "unpaid":
        return Declined(f"BookInfo {book.book_id} is not in `unpaid` status.")
    st.table("books")[book_id] = msgspec.structs.replace(book, status="paid",
                                                         update_time=st.now())
    if book.book_id not in st.table("books"):
        return Declined(f"BookInfo {book.book_id} not found")
    return "Payment successful"


def instore_cancel_book(st: EpisodeState, book_id: Any) -> str:
    check(book_id, "Booking ID cannot be empty")
    book = _book(st, book_id)
    if book.status == "cancelled":
        return Declined(f"BookInfo {book.book_id} is already cancelled.")
    st.table("books")[book_id] = msgspec.structs.replace(book, status="cancelled",
                                                         update_time=st.now())
    if book.book_id not in st.table("books"):
        return Declined(f"BookInfo {book.book_id} not found")
    return f"BookInfo {book.book_id} is cancelled."


def instore_reservation(st: EpisodeState, user_id: Any, shop_id: Any, time: Any,
                        customer_count: Any = 1) -> str:
    check_user(st, user_id)
    check(shop_id in st.table("shops"), "Shop does not exist")
    check(has_format(time, TIME_FORMAT), f"Reservation time format is incorrect, {_TIME_HINT}")
    check(customer_count > 0, "Number of customers for reservation must be greater than 0")
    # enable_reservation is not consulted, as in the reference
    rec = m.Reservation(reservation_id=st.new_id("instore_reservation", user_id),
                        shop_id=shop_id, reservation_time=time, customer_id=user_id,
                        customer_count=as_int(customer_count, "customer_count"),
                        status="unconsumed", update_time=st.now())
    st.table("reservations")[rec.reservation_id] = rec
    return render.reservation_repr(rec)


def instore_modify_reservation(st: EpisodeState, reservation_id: Any, time: Any,
                               customer_count: Any = 0) -> str:
    check(reservation_id, "Reservation ID cannot be empty")
    rec = _reservation(st, reservation_id)
    if rec.status in ("consumed", "cancelled"):
        return Declined(f"ReservationInfo {rec.reservation_id} is already {rec.status}.")
    check(customer_count >= 0,
          "Number of customers for reservation must be greater than or equal to 0")
    check(time, "Reservation time cannot be empty")
    check(has_format(time, TIME_FORMAT), f"Reservation time format is incorrect, {_TIME_HINT}")
    rec = msgspec.structs.replace(rec, reservation_time=time, customer_count=customer_count,
                                  update_time=st.now())
    st.table("reservations")[reservation_id] = rec
    if rec.reservation_id not in st.table("reservations"):
        return Declined(f"ReservationInfo {rec.reservation_id} not found")
    return render.reservation_repr(rec)


def instore_cancel_reservation(st: EpisodeState, reservation_id: Any) -> str:
    check(reservation_id, "Reservation ID cannot be empty")
    rec = _reservation(st, reservation_id)
    if rec.status == "cancelled":
        return Declined(f"ReservationInfo {rec.reservation_id} is already cancelled.")
    st.table("reservations")[reservation_id] = msgspec.structs.replace(
        rec, status="cancelled", update_time=st.now())
    if rec.reservation_id not in st.table("reservations"):
        return Declined(f"ReservationInfo {rec.reservation_id} not found")
    return f"ReservationInfo {rec.reservation_id} is cancelled."


def _owned(st: EpisodeState, user_id: Any, records: Any, owner: str) -> list[Any]:
    check_user(st, user_id)
    return [r for r in records if getattr(r, owner) == user_id]


def get_instore_orders(st: EpisodeState, user_id: Any) -> str:
    found = _owned(st, user_id, (o for o in st.orders.values() if o.order_type == "instore"),
                   "user_id")
    if not found:
        return f"User {user_id} has no order information."
    return "\n".join(render.order_full(o, st.resolve_line) for o in found)


def get_instore_reservations(st: EpisodeState, user_id: Any) -> str:
    found = _owned(st, user_id, st.table("reservations").values(), "customer_id")
    if not found:
        return f"User {user_id} has no reservation information."
    return "\n".join(render.reservation_repr(r) for r in found)


def get_instore_books(st: EpisodeState, user_id: Any) -> str:
    found = _owned(st, user_id, st.table("books").values(), "customer_id")
    if not found:
        return f"User {user_id} has no book information."
    return "\n".join(render.book_repr(b) for b in found)


def search_instore_book(st: EpisodeState, user_id: Any, book_id: Any = None) -> str:
    if book_id is None:
        return get_instore_books(st, user_id)
    check_user(st, user_id)
    book = _book(st, book_id)
    if book.customer_id != user_id:
        return Declined(f"BookInfo {book_id} is not belong to user {user_id}.")
    return render.book_repr(book)


def search_instore_reservation(st: EpisodeState, user_id: Any,
                               reservation_id: Any = None) -> str:
    if reservation_id is None:
        return get_instore_reservations(st, user_id)
    check_user(st, user_id)
    rec = _reservation(st, reservation_id)
    if rec.customer_id != user_id:
        return Declined(f"ReservationInfo {reservation_id} is not belong to user {user_id}.")
    return render.reservation_repr(rec)
