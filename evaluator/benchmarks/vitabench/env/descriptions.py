"""What the agent is told about each tool: this project's own wording.

Each entry: `summary` (what the tool does), `pre` (when to call it, what it needs), `post`
(what comes back) and `params` (one line per argument). The schema builder renders them as
"<summary>\\n\\nPreconditions:\\n    - <pre>\\nPostconditions:\\n    - <post>", the layout of
the reference's descriptions; the text itself is not the reference's.
"""

from __future__ import annotations

from typing import Any

_ORDER_ID = "Id of the order"
_USER_ID = "Id of the user"
_TIME = "yyyy-mm-dd HH:MM:SS"


def _d(summary: str, pre: str, post: str, **params: str) -> dict[str, Any]:
    return {"summary": summary, "pre": pre, "post": post, "params": params}


def _pay(what: str) -> dict[str, Any]:
    return _d(f"Pay for {what}.", "The order exists and the user has agreed to pay.",
              "Says whether the payment went through.", order_id=_ORDER_ID)


def _detail(what: str) -> dict[str, Any]:
    return _d(f"Full details of {what}, its products included.", "The order's id is known.",
              "Returns the order.", order_id=_ORDER_ID)


def _cancel(what: str) -> dict[str, Any]:
    return _d(f"Cancel {what}; a paid order is refunded.",
              "The order is not cancelled yet and the user wants it cancelled.",
              "Says whether it was cancelled and what is refunded.", order_id=_ORDER_ID,
              user_id=_USER_ID)


def _search(what: str) -> dict[str, Any]:
    return _d(f"The user's {what} orders with a given status (paid unless another is given), "
              "optionally only those for one date.", "The user's id is known.",
              "Returns one summary line per matching order.", user_id=_USER_ID,
              date="Date of the booked product, yyyy-mm-dd (optional)",
              status="Order status to list (default paid)")


def _info(what: str, key: str) -> dict[str, Any]:
    return _d(f"Full details of one {what}, with its products by date and their stock.",
              f"The {what}'s id is known.", f"Returns the {what}.", **{key: f"Id of the {what}"})


def _move(what: str) -> dict[str, Any]:
    return _d(f"Move a paid {what} order to another date, keeping its seat type. If the new "
              "fare is higher the order must be paid again; a lower fare is refunded.",
              f"The {what} order is paid, has one product, and the user chose the new date.",
              "Says whether it was moved and the price difference.", order_id=_ORDER_ID,
              user_id=_USER_ID, new_date="New travel date, yyyy-mm-dd")


def _dated(what: str, item: str, **params: str) -> dict[str, Any]:
    return _d(f"Buy {item}s of one {what} for one date.",
              f"The {what}, the {item} product, the date and the count are settled.",
              "Returns the new, unpaid order; ask the user to confirm payment.", **params)


DESCRIPTIONS: dict[str, dict[str, Any]] = {
    # -- general ---------------------------------------------------------------------------
    "longitude_latitude_to_distance": _d(
        "Great-circle distance in metres between two points given as longitude and latitude.",
        "The coordinates of both points are known.", "Returns the distance in whole metres.",
        longitude1="Longitude of the first point", latitude1="Latitude of the first point",
        longitude2="Longitude of the second point", latitude2="Latitude of the second point"),
    "weather": _d(
        "Weather for a place on each day of a date range.",
        "An address or city and the first and last day are known.",
        "Returns one line per day: city, conditions, temperature range, humidity.",
        address="Address or city", date_start="First day, yyyy-mm-dd",
        date_end="Last day, yyyy-mm-dd"),
    "address_to_longitude_latitude": _d(
        "Coordinates of an address.", "An address has to be turned into coordinates.",
        "Returns [longitude, latitude].", address="The address"),
    "get_date_holiday_info": _d(
        "Whether a date is a public holiday in China, and which.", "A date is given.",
        "Returns the holiday's name, or says the date is no holiday.",
        date="The date, yyyy-mm-dd"),
    "get_holiday_date": _d(
        "The date of a named holiday or festival in a given year.",
        "The year and the holiday's English name are known.",
        "Returns the date as yyyy-mm-dd, or says it is unknown.", year="The year, e.g. 2025",
        holiday_name="The holiday's name in English"),
    "get_user_historical_behaviors": _d(
        "The user's profile and habits: id, home and work addresses, and for each kind of "
        "occasion the usual categories, budget, preferred ratings, timing and recent orders.",
        "Useful before recommending or ordering for the user.",
        "Returns the stored profile and history."),
    "get_user_all_orders": _d(
        "Every order on record, with full details.", "The user's order history is needed.",
        "Returns all orders."),
    "get_nearby": _d(
        "Places within a radius of a point: stores, shops, hotels, attractions, and flights "
        "or trains whose airport or station lies in range.",
        "The centre's coordinates and a radius in metres are known.",
        "Returns a short description of each place found.",
        longitude="Longitude of the centre", latitude="Latitude of the centre",
        range="Radius in metres"),
    # -- delivery --------------------------------------------------------------------------
    "delivery_distance_to_time": _d(
        "Minutes a rider needs to cover a distance.",
        "The distance in metres from the store to the address is known.",
        "Returns the estimated minutes.", distance="Distance in metres"),
    "get_delivery_store_info": _d(
        "Full details of a delivery store: rating, address and coordinates, tags, and its "
        "whole menu.", "The store's id is known.", "Returns the store and all its products.",
        store_id="Id of the store"),
    "get_delivery_product_info": _d(
        "Details of a food product: name, id, store, price, attributes and tags.",
        "The product's id is known.", "Returns the product.", product_id="Id of the product"),
    "delivery_store_search_recommand": _d(
        "Search delivery stores with keywords taken from the user's request.",
        "Keywords describing the store or cuisine wanted.",
        "Returns stores, best matches first; help the user pick one.",
        keywords="Keywords describing the store"),
    "delivery_product_search_recommand": _d(
        "Search food products with keywords taken from the user's request.",
        "Keywords describing the dish wanted.",
        "Returns products, best matches first; help the user pick before ordering.",
        keywords="Keywords describing the food"),
    "create_delivery_order": _d(
        "Place a delivery order with one store; it may hold several of that store's products.",
        "Store, products and quantities, delivery address and the rider's pick-up time are "
        "settled, and the user's dietary needs are reflected in the order.",
        "Returns the new, unpaid order; ask the user to confirm payment.",
        user_id=_USER_ID, store_id="Id of the store",
        product_ids="Ids of the products to order",
        product_cnts="How many of each product, in the order of product_ids",
        address="Delivery address",
        dispatch_time=f"When the rider collects the order at the store, {_TIME}",
        attributes="The chosen specification of each product, in the order of product_ids",
        note="Remarks for the store, e.g. dietary restrictions (not time wishes)"),
    "pay_delivery_order": _pay("a delivery order"),
    "get_delivery_order_status": _d(
        "Current status of a delivery order.", "The order's id is known.",
        "Returns the status.", order_id=_ORDER_ID),
    "cancel_delivery_order": _d(
        "Cancel a delivery order or its pending payment.", "The order is not cancelled yet.",
        "Says whether it was cancelled.", order_id=_ORDER_ID),
    "modify_delivery_order": _d(
        "Replace the note of a delivery order.",
        "The order is identified and the user wants a different note.",
        "Says whether it changed; an unpaid order still needs the user's payment.",
        order_id=_ORDER_ID, note="The new note"),
    "search_delivery_orders": _d(
        "The user's delivery orders with a given status (unpaid unless another is given): "
        "id, type, user, store, total, creation and update times, status.",
        "The user's id is known.", "Returns one summary line per matching order.",
        user_id=_USER_ID, status="Order status to list (default unpaid)"),
    "get_delivery_order_detail": _d(
        "Full details of a delivery order: store, dispatch time, delivery minutes and time, "
        "total, times, note, status and products.", "The order's id is known.",
        "Returns the order.", order_id=_ORDER_ID),
    # -- in-store --------------------------------------------------------------------------
    "instore_shop_search_recommend": _d(
        "Search in-store businesses (restaurants, salons, gyms, ...) with keywords from the "
        "user's request.", "Keywords describing the business wanted.",
        "Returns shops, best matches first.", keywords="Keywords describing the shop"),
    "instore_product_search_recommend": _d(
        "Search the packages and vouchers shops sell, with keywords from the user's request.",
        "Keywords describing the package wanted.", "Returns packages, best matches first.",
        keywords="Keywords describing the package"),
    "create_instore_product_order": _d(
        "Buy a shop's package.", "The shop, the package and how many are settled.",
        "Returns the new, unpaid order; ask the user to confirm payment.", user_id=_USER_ID,
        shop_id="Id of the shop", product_id="Id of the package",
        quantity="How many to buy (default 1)"),
    "pay_instore_order": _pay("an in-store order"),
    "instore_cancel_order": _d(
        "Cancel an in-store order.", "The order is not cancelled yet.",
        "Says whether it was cancelled.", order_id=_ORDER_ID),
    "instore_book": _d(
        "Book a table at a shop that takes bookings; a booking with a fee must then be paid.",
        "The shop, the time and the party size are settled.", "Returns the booking.",
        user_id=_USER_ID, shop_id="Id of the shop", time=f"Time of the booking, {_TIME}",
        customer_count="Number of people (default 1)"),
    "pay_instore_book": _d(
        "Pay the fee of a table booking.", "The booking exists and the user agreed to pay.",
        "Says whether the payment went through.", book_id="Id of the booking"),
    "instore_cancel_book": _d(
        "Cancel a table booking.", "The booking is not cancelled yet.",
        "Says whether it was cancelled.", book_id="Id of the booking"),
    "instore_reservation": _d(
        "Reserve a service slot at a shop (a class, a treatment, a visit).",
        "The shop, the time and the number of people are settled.",
        "Returns the reservation.", user_id=_USER_ID, shop_id="Id of the shop",
        time=f"Time of the reservation, {_TIME}",
        customer_count="Number of people (default 1)"),
    "instore_modify_reservation": _d(
        "Change the time and number of people of a reservation.",
        "The reservation is neither used nor cancelled.", "Returns the changed reservation.",
        reservation_id="Id of the reservation", time=f"New time, {_TIME}",
        customer_count="New number of people"),
    "instore_cancel_reservation": _d(
        "Cancel a reservation.", "The reservation is not cancelled yet.",
        "Says whether it was cancelled.", reservation_id="Id of the reservation"),
    "get_instore_orders": _d(
        "All of the user's in-store orders.", "The user's id is known.",
        "Returns the orders in full.", user_id=_USER_ID),
    "get_instore_reservations": _d(
        "All of the user's reservations.", "The user's id is known.",
        "Returns the reservations.", user_id=_USER_ID),
    "get_instore_books": _d(
        "All of the user's table bookings.", "The user's id is known.",
        "Returns the bookings.", user_id=_USER_ID),
    "search_instore_book": _d(
        "One of the user's table bookings, or all of them when no id is given.",
        "The user's id is known.", "Returns the booking(s).", user_id=_USER_ID,
        book_id="Id of the booking (optional)"),
    "search_instore_reservation": _d(
        "One of the user's reservations, or all of them when no id is given.",
        "The user's id is known.", "Returns the reservation(s).", user_id=_USER_ID,
        reservation_id="Id of the reservation (optional)"),
    # -- OTA -------------------------------------------------------------------------------
    "get_ota_hotel_info": _info("hotel", "hotel_id"),
    "get_ota_attraction_info": _info("attraction", "attraction_id"),
    "get_ota_flight_info": _info("flight", "flight_id"),
    "get_ota_train_info": _info("train", "train_id"),
    "hotel_search_recommand": _d(
        "Hotels in a city, ranked by keywords.", "The city is known; keywords are optional.",
        "Returns hotels, best matches first.", city_name="The city",
        key_words="Keywords about the hotel (name, facilities, features)"),
    "attractions_search_recommend": _d(
        "Attractions in a city, ranked by keywords.", "The city and some keywords are known.",
        "Returns attractions, best matches first.", city_name="The city",
        key_words="Keywords about the attraction (name, area, features)"),
    "flight_search_recommend": _d(
        "Flights from one city to another.", "Both cities are known.",
        "Returns the flights; their details list seats by date.",
        departure="Departure city", destination="Arrival city"),
    "train_ticket_search": _d(
        "Trains from one city to another that run on a date.",
        "Both cities and the date are known.", "Returns the trains.",
        departure="Departure city", destination="Arrival city",
        date="Travel date, yyyy-mm-dd"),
    "create_hotel_order": _d(
        "Book one room for one night: the room id names a room type on one date.",
        "The hotel and the room product are settled.",
        "Returns the new, unpaid order; ask the user to confirm payment.",
        hotel_id="Id of the hotel", room_id="Id of the room product", user_id=_USER_ID),
    "create_attraction_order": _dated(
        "attraction", "ticket", attraction_id="Id of the attraction",
        ticket_id="Id of the ticket product", user_id=_USER_ID, date="Visit date, yyyy-mm-dd",
        quantity="Number of tickets"),
    "create_flight_order": _dated(
        "flight", "seat", flight_id="Id of the flight", seat_id="Id of the seat product",
        user_id=_USER_ID, date="Flight date, yyyy-mm-dd", quantity="Number of seats"),
    "create_train_order": _dated(
        "train", "seat", train_id="Id of the train", seat_id="Id of the seat product",
        user_id=_USER_ID, date="Travel date, yyyy-mm-dd", quantity="Number of seats"),
    **{f"pay_{k}_order": _pay(f"{a} {k} order") for k, a in
       (("hotel", "a"), ("attraction", "an"), ("flight", "a"), ("train", "a"))},
    **{f"search_{k}_order": _search(k) for k in ("hotel", "attraction", "flight", "train")},
    **{f"get_{k}_order_detail": _detail(f"{a} {k} order") for k, a in
       (("hotel", "a"), ("attraction", "an"), ("flight", "a"), ("train", "a"))},
    "modify_train_order": _move("train"),
    "modify_flight_order": _move("flight"),
    **{f"cancel_{k}_order": _cancel(f"{a} {k} order") for k, a in
       (("hotel", "a"), ("attraction", "an"), ("flight", "a"), ("train", "a"))},
}
