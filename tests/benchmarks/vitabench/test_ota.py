"""OTA tools on constructed databases (no OTA task file is available)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from .helpers import failed, first_id, make_env, ok, refused, run
from .ota_fixture import USER, ota_environment


@pytest.fixture
def env() -> Any:
    return make_env(ota_environment(), "ota")


def _stock(env: Any, table: str, key: str, pid: str) -> int:
    rec = env.database()[table][key]
    return next(p["quantity"] for p in rec["products"] if p["product_id"] == pid)


def test_info(env: Any) -> None:
    text = ok(run(env, "get_ota_hotel_info", hotel_id="H1"))
    assert text.startswith("Hotel Info:\nHotel(hotel_id=H1, hotel_name=West Lake Lakeside Hotel")
    assert "location=address='18 Beishan Street, Xihu District, Hangzhou' longitude=120.146" in text
    assert ("HotelProduct(room_type=King, date=2025-05-02, price=500.0, quantity=2, "
            "room_id=R1)") in text
    assert "shop_type" not in text
    assert "AttractionProduct(ticket_type=Adult" in ok(run(env, "get_ota_attraction_info",
                                                           attraction_id="A1"))
    assert "seat_id=S4)" in ok(run(env, "get_ota_flight_info", flight_id="F1"))
    assert "seat_id=C3)" in ok(run(env, "get_ota_train_info", train_id="TR1"))
    # an unknown id is answered, not raised (reference)
    assert refused(run(env, "get_ota_hotel_info", hotel_id="H404")) == "Error: hotel H404 not found"
    assert refused(run(env, "get_ota_train_info", train_id="")) == "Train ID cannot be empty"


def test_searches(env: Any) -> None:
    hotels = ok(run(env, "hotel_search_recommand", city_name="Hangzhou", key_words=["spa"]))
    assert hotels.splitlines()[0].startswith("Hotel(hotel_id=H1,") and "products=" not in hotels
    assert ok(run(env, "hotel_search_recommand", city_name="Reykjavik")).startswith(
        "No hotels found")
    assert ok(run(env, "attractions_search_recommend", city_name="Hangzhou",
                  key_words=["temple"])).startswith("Attraction(attraction_id=A1,")
    assert ok(run(env, "flight_search_recommend", departure="Hangzhou",
                  destination="Beijing")).startswith("Flight(flight_id=F1,")
    assert ok(run(env, "flight_search_recommend", departure="Hangzhou",
                  destination="Lhasa")) == "No flights found matching the criteria"
    trains = ok(run(env, "train_ticket_search", departure="Hangzhou", destination="Shanghai",
                    date="2025-05-02"))
    assert len(trains.splitlines()) == 2  # once per seat product on that date (reference)
    assert ok(run(env, "train_ticket_search", departure="Hangzhou", destination="Shanghai",
                  date="2025-05-09")) == "No trains found matching the criteria"
    assert refused(run(env, "train_ticket_search", departure="Hangzhou",
                       destination="Shanghai", date="05/02/2025")).startswith(
        "Date format is incorrect")


def test_hotel_orders_and_stock(env: Any) -> None:
    args = {"hotel_id": "H1", "room_id": "R1", "user_id": USER}
    first = first_id(ok(run(env, "create_hotel_order", **args)))
    assert first.startswith("OO")
    ok(run(env, "create_hotel_order", **args))
    assert _stock(env, "hotels", "H1", "R1") == 0
    assert refused(run(env, "create_hotel_order", **args)) == "No available rooms at the moment"
    empty = ok(run(env, "create_hotel_order", **{**args, "room_id": "R404"}))
    assert "total_price:0.0" in empty and empty.endswith("products:[])")
    assert refused(run(env, "create_hotel_order", **{**args, "user_id": "U999"})) == \
        "User ID does not match"
    assert failed(run(env, "create_hotel_order", **{**args, "hotel_id": "H404"})) == \
        "Error: hotel H404 not found"
    assert ok(run(env, "pay_hotel_order", order_id=first)) == "Payment successful"
    assert refused(run(env, "pay_hotel_order", order_id=first)) == "Order status must be unpaid"
    assert first in ok(run(env, "search_hotel_order", user_id=USER))
    assert first in ok(run(env, "search_hotel_order", user_id=USER, date="2025-05-02"))
    assert ok(run(env, "search_hotel_order", user_id=USER, date="2025-05-03")) == ""
    assert "status:paid" in ok(run(env, "get_hotel_order_detail", order_id=first))
    assert refused(run(env, "get_flight_order_detail", order_id=first)) == \
        "Order type is not a flight order"
    assert ok(run(env, "cancel_hotel_order", order_id=first, user_id=USER)) == \
        "Cancellation successful, refund amount: 500.0"
    assert refused(run(env, "cancel_hotel_order", order_id=first, user_id=USER)) == \
        "Order is already in cancelled status"
    assert _stock(env, "hotels", "H1", "R1") == 0  # not given back (reference)


def test_search_hotel_order_without_hotel_orders_raises(env: Any) -> None:
    assert failed(run(env, "search_hotel_order", user_id=USER)) == \
        "Error: User does not exist or has no order records"


def test_dated_orders(env: Any) -> None:
    base = {"attraction_id": "A1", "ticket_id": "T1", "user_id": USER, "date": "2025-05-02"}
    oid = first_id(ok(run(env, "create_attraction_order", **base, quantity=2)))
    assert _stock(env, "attractions", "A1", "T1") == 1
    assert refused(run(env, "create_attraction_order", **base, quantity=2)) == \
        "Insufficient ticket inventory for the specified date"
    assert refused(run(env, "create_attraction_order", **{**base, "date": "2025-05-09"},
                       quantity=1)) == \
        "The attraction does not have the specified ticket on the specified date"
    assert refused(run(env, "create_attraction_order", **base, quantity=0)) == \
        "Booking quantity must be greater than 0"
    flight = {"flight_id": "F1", "seat_id": "S1", "user_id": USER, "date": "2025-05-03"}
    fid = first_id(ok(run(env, "create_flight_order", **flight, quantity=2)))
    assert refused(run(env, "create_flight_order", **{**flight, "seat_id": "S9"}, quantity=1)) \
        == "The flight does not have the specified seat on the specified date"
    tid = first_id(ok(run(env, "create_train_order", train_id="TR1", seat_id="C1",
                          user_id=USER, date="2025-05-02", quantity=1)))
    # the pay tools do not check the order type (reference)
    assert ok(run(env, "pay_train_order", order_id=oid)) == "Payment successful"
    assert ok(run(env, "pay_flight_order", order_id=fid)) == "Payment successful"
    assert ok(run(env, "pay_train_order", order_id=tid)) == "Payment successful"
    assert oid in ok(run(env, "search_attraction_order", user_id=USER))
    assert "status:paid" in ok(run(env, "get_attraction_order_detail", order_id=oid))
    assert "TrainProduct(seat_type=second class" in ok(run(env, "get_train_order_detail",
                                                           order_id=tid))
    assert ok(run(env, "cancel_attraction_order", order_id=oid, user_id=USER)) == \
        "Cancellation successful, refund amount: 90.0"
    assert refused(run(env, "cancel_train_order", order_id=fid, user_id=USER)) == \
        "Order type is not a train order"


def test_flight_date_change(env: Any) -> None:
    flight = {"flight_id": "F1", "seat_id": "S1", "user_id": USER, "date": "2025-05-03"}
    fid = first_id(ok(run(env, "create_flight_order", **flight, quantity=2)))
    move = {"order_id": fid, "user_id": USER}
    assert refused(run(env, "modify_flight_order", **move, new_date="2025-05-04")) == \
        "Only paid orders can be modified"
    ok(run(env, "pay_flight_order", order_id=fid))
    assert ok(run(env, "modify_flight_order", **move, new_date="2025-05-04")) == \
        ("Modification successful, need to pay additional amount: 200.0, please pay as soon "
         "as possible")
    assert _stock(env, "flights", "F1", "S1") == 3 and _stock(env, "flights", "F1", "S2") == 0
    assert fid in ok(run(env, "search_flight_order", user_id=USER, status="unpaid"))
    ok(run(env, "pay_flight_order", order_id=fid))
    assert ok(run(env, "modify_flight_order", **move, new_date="2025-05-05")) == \
        "Modification successful, price difference: -400.0, refunded"
    assert refused(run(env, "modify_flight_order", **move, new_date="2025-05-09")) == \
        "New date 2025-05-09 does not have economy type seats"
    assert refused(run(env, "modify_flight_order", order_id=fid, user_id="U999",
                       new_date="2025-05-05")) == "User ID does not match"
    # a task-file order with untyped products moves too
    assert ok(run(env, "modify_flight_order", order_id="OF1", user_id=USER,
                  new_date="2025-05-04")).startswith("Modification successful")


def test_train_date_change_and_ownership(env: Any) -> None:
    tid = first_id(ok(run(env, "create_train_order", train_id="TR1", seat_id="C1",
                          user_id=USER, date="2025-05-02", quantity=1)))
    ok(run(env, "pay_train_order", order_id=tid))
    assert ok(run(env, "modify_train_order", order_id=tid, user_id=USER,
                  new_date="2025-05-06")) == \
        "Modification successful, price difference: -13.0, refunded"
    other = copy.deepcopy(ota_environment())
    other["orders"]["OT9"] = {"order_id": "OT9", "order_type": "train", "user_id": "U999",
                              "store_id": "TR1", "status": "paid", "total_price": 73,
                              "products": [{"product_id": "C1", "date": "2025-05-02",
                                            "seat_type": "second class", "price": 73,
                                            "quantity": 1}]}
    env2 = make_env(other, "ota")
    assert refused(run(env2, "modify_train_order", order_id="OT9", user_id=USER,
                       new_date="2025-05-06")) == "Order OT9 does not belong to user U100"
    # cancelling checks the caller against the task user only, not the order's owner
    assert ok(run(env2, "cancel_train_order", order_id="OT9", user_id=USER)) == \
        "Cancellation successful, refund amount: 73.0"
