"""In-store tools on the real task databases: every tool, its success and its error cases."""

from __future__ import annotations

import copy
from typing import Any

from .helpers import failed, first_id, make_env, ok, refused, run


def _env(tasks: list[dict[str, Any]], task_id: str | None = None) -> tuple[Any, dict]:
    task = next(t for t in tasks if task_id in (None, t["id"]))
    return make_env(task["environment"], "instore"), task["environment"]


def _shop(raw: dict[str, Any], *, book: bool | None = None, price: bool | None = None,
          reserve: bool | None = None) -> tuple[str, dict[str, Any]]:
    for key, shop in raw["shops"].items():
        if key != shop["shop_id"] or not shop["products"]:
            continue
        if book is not None and shop["enable_book"] != book:
            continue
        if price is not None and (shop["book_price"] > 0) != price:
            continue
        if reserve is not None and shop["enable_reservation"] != reserve:
            continue
        return key, shop
    raise LookupError


def _task_with(tasks: list[dict[str, Any]], **want: Any) -> tuple[Any, dict, str, dict]:
    for task in tasks:
        try:
            key, shop = _shop(task["environment"], **want)
        except LookupError:
            continue
        return make_env(task["environment"], "instore"), task["environment"], key, shop
    raise AssertionError(f"no shop with {want}")


def test_shop_and_package_searches(instore_tasks: list[dict[str, Any]]) -> None:
    env, raw = _env(instore_tasks)
    shops = list(raw["shops"].values())
    found = ok(run(env, "instore_shop_search_recommend", keywords=[shops[-1]["shop_name"]]))
    assert len(found.splitlines()) == len(shops)
    assert found.splitlines()[0].startswith(f"Shop(shop_name={shops[-1]['shop_name']},")
    assert "products=" not in found and "shop_type" not in found
    product = shops[0]["products"][-1]
    found = ok(run(env, "instore_product_search_recommend", keywords=[product["name"]]))
    assert found.splitlines()[0].startswith(f"ShopProduct(shop_id={product['shop_id']}, "
                                            f"product_id={product['product_id']}")
    assert "product_type" not in found and "target" not in found


def test_order_pay_cancel(instore_tasks: list[dict[str, Any]]) -> None:
    env, raw, key, shop = _task_with(instore_tasks)
    user, product = raw["user_id"], shop["products"][0]
    text = ok(run(env, "create_instore_product_order", user_id=user, shop_id=key,
                  product_id=product["product_id"], quantity=2))
    assert f"shop_id:{key}, total_price:{2 * float(product['price'])}" in text
    assert "status:unpaid" in text and "quantity=2" in text
    oid = first_id(text)
    assert oid.startswith("OI")
    assert ok(run(env, "pay_instore_order", order_id=oid)) == "Payment successful"
    assert refused(run(env, "pay_instore_order", order_id=oid)) == \
        f"Order {oid} is not in `unpaid` status."
    assert ok(run(env, "instore_cancel_order", order_id=oid)) == f"Order {oid} is cancelled."
    assert refused(run(env, "instore_cancel_order", order_id=oid)) == \
        f"Order {oid} is already cancelled."
    assert refused(run(env, "pay_instore_order", order_id="")) == "Order ID cannot be empty"
    assert failed(run(env, "pay_instore_order", order_id="O404")) == "Error: Order O404 not found"
    final = env.database()["orders"][oid]
    assert final["status"] == "cancelled" and final["update_time"] == raw["time"]


def test_order_refusals(instore_tasks: list[dict[str, Any]]) -> None:
    env, raw, key, shop = _task_with(instore_tasks)
    args = {"user_id": raw["user_id"], "shop_id": key,
            "product_id": shop["products"][0]["product_id"], "quantity": 1}

    def create(**over: Any) -> Any:
        return run(env, "create_instore_product_order", **{**args, **over})

    assert refused(create(user_id="U_OTHER")) == "User ID does not match"
    assert refused(create(shop_id="S404")) == "Shop does not exist"
    assert refused(create(product_id="P404")) == "Product does not exist"
    assert refused(create(quantity=0)) == "Quantity must be greater than 0"
    assert failed(create(quantity="2"), "wrong_type").startswith("Error: '>' not supported")
    other = next(k for k in raw["shops"] if k != key)
    foreign = raw["shops"][other]["products"][0]["product_id"]
    if foreign not in {p["product_id"] for p in shop["products"]}:
        assert refused(create(product_id=foreign)) == "Product does not exist"
    assert env.changes() == {}


def test_ordered_quantity_is_shared_with_the_catalogue(instore_tasks: list[dict]) -> None:
    """Reference behaviour: the order holds the catalogue product itself after setting its
    quantity, so a second order of it changes what the first order shows."""
    env, raw, key, shop = _task_with(instore_tasks)
    pid = shop["products"][0]["product_id"]
    args = {"user_id": raw["user_id"], "shop_id": key, "product_id": pid}
    first = first_id(ok(run(env, "create_instore_product_order", **args, quantity=2)))
    ok(run(env, "create_instore_product_order", **args, quantity=5))
    orders = ok(run(env, "get_instore_orders", user_id=raw["user_id"]))
    line = next(ln for ln in orders.splitlines() if first in ln)
    assert "quantity=5" in line and f"total_price:{2 * float(shop['products'][0]['price'])}" in line
    listed = ok(run(env, "instore_product_search_recommend", keywords=[pid]))
    assert "quantity=5" in next(ln for ln in listed.splitlines() if pid in ln)


def test_duplicate_product_id_takes_the_later_shops_price(instore_tasks: list[dict]) -> None:
    env, raw = _env(instore_tasks, "10826067")
    pid = "S17567836667757115_P00028"
    first, later = "S17567836667757115_I00003", "S17567836667757115_I00004"
    assert {p["price"] for s in (first, later) for p in raw["shops"][s]["products"]
            if p["product_id"] == pid} == {36, 8}
    text = ok(run(env, "create_instore_product_order", user_id=raw["user_id"], shop_id=first,
                  product_id=pid, quantity=1))
    assert f"shop_id:{first}, total_price:8.0" in text and f"ShopProduct(shop_id={later}" in text


def test_table_booking(instore_tasks: list[dict[str, Any]]) -> None:
    env, raw, key, shop = _task_with(instore_tasks, book=True, price=True)
    user, when = raw["user_id"], raw["time"]
    text = ok(run(env, "instore_book", user_id=user, shop_id=key, time=when, customer_count=3))
    assert text.startswith("BookInfo(book_id=OI") and "customer_count=3" in text
    assert f"book_price={float(shop['book_price'])}, status=unpaid" in text
    bid = first_id(text)
    assert ok(run(env, "pay_instore_book", book_id=bid)) == "Payment successful"
    assert refused(run(env, "pay_instore_book", book_id=bid)) == \
        f"BookInfo {bid} is not in `unpaid` status."
    assert bid in ok(run(env, "get_instore_books", user_id=user))
    assert bid in ok(run(env, "search_instore_book", user_id=user, book_id=bid))
    assert ok(run(env, "instore_cancel_book", book_id=bid)) == f"BookInfo {bid} is cancelled."
    assert refused(run(env, "instore_cancel_book", book_id=bid)) == \
        f"BookInfo {bid} is already cancelled."
    assert failed(run(env, "pay_instore_book", book_id="B404")) == \
        "Error: BookInfo B404 not found"
    assert refused(run(env, "instore_book", user_id=user, shop_id=key, time="tonight")) \
        .startswith("Table booking time format is incorrect")
    assert refused(run(env, "instore_book", user_id=user, shop_id=key, time=when,
                       customer_count=0)).startswith("Number of customers")
    env2, raw2, free_key, _ = _task_with(instore_tasks, book=True, price=False)
    free = ok(run(env2, "instore_book", user_id=raw2["user_id"], shop_id=free_key,
                  time=raw2["time"]))
    assert free.endswith("book_price=0.0, status=paid")
    env3, raw3, closed, _ = _task_with(instore_tasks, book=False)
    assert refused(run(env3, "instore_book", user_id=raw3["user_id"], shop_id=closed,
                       time=raw3["time"])) == "Shop does not support table booking"


def test_reservations(instore_tasks: list[dict[str, Any]]) -> None:
    env, raw, key, _ = _task_with(instore_tasks, reserve=False)
    user, when = raw["user_id"], raw["time"]
    # enable_reservation is not consulted (reference); past times are accepted
    text = ok(run(env, "instore_reservation", user_id=user, shop_id=key, time="2001-01-01 10:00:00",
                  customer_count=2))
    assert text.endswith("customer_count=2, status=unconsumed")
    rid = first_id(text)
    changed = ok(run(env, "instore_modify_reservation", reservation_id=rid, time=when))
    assert f"reservation_time={when}" in changed and "customer_count=0" in changed  # omitted
    assert refused(run(env, "instore_reservation", user_id=user, shop_id=key,
                       time="noon")).startswith("Reservation time format is incorrect")
    assert refused(run(env, "instore_reservation", user_id=user, shop_id=key, time=when,
                       customer_count=0)).startswith("Number of customers for reservation")
    assert rid in ok(run(env, "get_instore_reservations", user_id=user))
    assert rid in ok(run(env, "search_instore_reservation", user_id=user))
    assert ok(run(env, "instore_cancel_reservation", reservation_id=rid)) == \
        f"ReservationInfo {rid} is cancelled."
    assert refused(run(env, "instore_cancel_reservation", reservation_id=rid)) == \
        f"ReservationInfo {rid} is already cancelled."
    assert refused(run(env, "instore_modify_reservation", reservation_id=rid, time=when)) == \
        f"ReservationInfo {rid} is already cancelled."
    assert failed(run(env, "instore_cancel_reservation", reservation_id="R404")) == \
        "Error: ReservationInfo R404 not found"


def test_someone_elses_records(instore_tasks: list[dict[str, Any]]) -> None:
    env, raw = _env(instore_tasks, "10826247")  # a task booking, owned by the task's user
    bid = next(iter(raw["books"]))
    owner = raw["books"][bid]["customer_id"]
    assert owner == raw["user_id"]
    assert bid in ok(run(env, "search_instore_book", user_id=owner, book_id=bid))
    other = copy.deepcopy(raw)
    other["books"][bid]["customer_id"] = "U_OTHER"
    env_other = make_env(other, "instore")
    assert refused(run(env_other, "search_instore_book", user_id=owner, book_id=bid)) == \
        f"BookInfo {bid} is not belong to user {owner}."
    assert ok(run(env_other, "search_instore_book", user_id=owner)) == \
        f"User {owner} has no book information."
    env2, raw2 = _env(instore_tasks, "10826079")
    rid = next(iter(raw2["reservations"]))
    assert rid in ok(run(env2, "search_instore_reservation", user_id=raw2["user_id"],
                         reservation_id=rid))
    assert refused(run(env2, "get_instore_books", user_id="U_OTHER")) == "User ID does not match"
    assert ok(run(env2, "get_instore_books", user_id=raw2["user_id"])) == \
        f"User {raw2['user_id']} has no book information."


def test_order_filed_under_another_key(instore_tasks: list[dict[str, Any]]) -> None:
    """Reference behaviour: cancelling an order whose dict key differs from its order_id
    changes it, then answers that its id is not found."""
    env, raw = _env(instore_tasks, "10826054")
    key, order = next(iter(raw["orders"].items()))
    assert key != order["order_id"]
    assert refused(run(env, "instore_cancel_order", order_id=key)) == \
        f"Order {order['order_id']} not found"
    assert env.database()["orders"][key]["status"] == "cancelled"
    assert order["order_id"] not in env.database()["orders"]
