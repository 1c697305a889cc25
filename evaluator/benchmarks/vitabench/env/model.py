"""Typed records of a VitaBench task database (msgspec Structs, frozen: the base is shared).

Field names, types and defaults follow the task files and the reference's models: numbers are
coerced as the reference's validation coerces them (an integer price becomes 25.0, a list of
attributes becomes one ", "-joined string), unknown keys are dropped (so the answer-leaking
`shop_type`, `product_type`, `category` and `target_reason` never reach a record), and the
untyped `products` of an order keep the task file's dicts (minus those leaking keys).

Lists are tuples so that a record, once built, cannot be changed in place: an episode changes
a record by putting a new one into its own overlay (`state.EpisodeState`).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

OrderStatus = Literal["unpaid", "paid", "unconsumed", "consumed", "processed", "in-progress",
                      "delivered", "cancelled"]
OrderType = Literal["delivery", "instore", "hotel", "attraction", "flight", "train"]
InstoreStatus = Literal["unpaid", "paid", "unconsumed", "consumed", "cancelled"]

# keys the task files carry for the benchmark's authors, never for the agent
HIDDEN_KEYS = frozenset({"shop_type", "product_type", "category", "target_reason"})

_RECORD = {"frozen": True, "kw_only": True}


class Location(msgspec.Struct, **_RECORD):
    address: str
    longitude: float
    latitude: float


class Weather(msgspec.Struct, **_RECORD):
    city: str
    category: str
    datetime: str
    temperature: tuple[float, float]
    humidity: float


# -- delivery --------------------------------------------------------------------------------
class StoreProduct(msgspec.Struct, **_RECORD):
    product_id: str = ""
    price: float = 0.0
    quantity: int | None = 0
    name: str
    store_id: str
    store_name: str
    attributes: str
    tags: tuple[str, ...]


class Store(msgspec.Struct, **_RECORD):
    store_id: str | None = ""
    name: str
    score: float
    location: Location
    tags: tuple[str, ...]
    products: tuple[StoreProduct, ...]


# -- in-store --------------------------------------------------------------------------------
class ShopProduct(msgspec.Struct, **_RECORD):
    product_id: str = ""
    price: float = 0.0
    quantity: int | None = 0
    name: str
    shop_id: str
    tags: tuple[str, ...]


class Shop(msgspec.Struct, **_RECORD):
    shop_id: str
    shop_name: str
    score: float
    location: Location
    tags: tuple[str, ...]
    enable_book: bool
    book_price: float
    enable_reservation: bool
    products: tuple[ShopProduct, ...]


class Book(msgspec.Struct, **_RECORD):
    """A table booking (the reference's BookInfo)."""

    book_id: str
    shop_id: str
    book_time: str
    update_time: str
    customer_id: str
    customer_count: int
    book_price: float
    status: InstoreStatus


class Reservation(msgspec.Struct, **_RECORD):
    """A service reservation (the reference's ReservationInfo)."""

    reservation_id: str
    shop_id: str
    reservation_time: str
    update_time: str
    customer_id: str
    customer_count: int
    status: InstoreStatus


class CatalogueRef(msgspec.Struct, **_RECORD):
    """An in-store order line: the catalogue product itself, not a copy.

    The reference puts the catalogue object into the order after setting its `quantity` to the
    ordered quantity, so a later order of the same product changes what earlier orders show.
    An order line therefore points at the catalogue entry and is read through it."""

    shop_key: str
    index: int


# -- OTA -------------------------------------------------------------------------------------
class HotelProduct(msgspec.Struct, **_RECORD):
    product_id: str = ""
    price: float = 0.0
    quantity: int | None = 0
    date: str
    room_type: str


class AttractionProduct(msgspec.Struct, **_RECORD):
    product_id: str = ""
    price: float = 0.0
    quantity: int | None = 0
    date: str
    ticket_type: str


class FlightProduct(msgspec.Struct, **_RECORD):
    product_id: str = ""
    price: float = 0.0
    quantity: int | None = 0
    date: str
    seat_type: str


class TrainProduct(msgspec.Struct, **_RECORD):
    product_id: str = ""
    price: float = 0.0
    quantity: int | None = 0
    date: str
    seat_type: str


class Hotel(msgspec.Struct, **_RECORD):
    hotel_id: str
    hotel_name: str
    score: float
    star_rating: int
    location: Location
    tags: tuple[str, ...]
    products: tuple[HotelProduct, ...]


class Attraction(msgspec.Struct, **_RECORD):
    attraction_id: str
    attraction_name: str
    location: Location
    description: str
    score: float
    opening_hours: str
    ticket_price: float
    products: tuple[AttractionProduct, ...]


class Flight(msgspec.Struct, **_RECORD):
    flight_id: str
    flight_number: str
    departure_city: str
    arrival_city: str
    departure_airport_location: Location
    arrival_airport_location: Location
    departure_time: str
    arrival_time: str
    tags: tuple[str, ...]
    products: tuple[FlightProduct, ...]


class Train(msgspec.Struct, **_RECORD):
    train_id: str
    train_number: str
    departure_city: str
    arrival_city: str
    departure_station_location: Location
    arrival_station_location: Location
    departure_time: str
    arrival_time: str
    tags: tuple[str, ...]
    products: tuple[TrainProduct, ...]


# -- orders ----------------------------------------------------------------------------------
class Order(msgspec.Struct, **_RECORD):
    """Any order. `store_id` is the store, shop, hotel, attraction, flight or train id.

    `products` holds the task file's dicts for orders that came with the task, and typed
    products (or `CatalogueRef`s for in-store lines) for orders the tools created."""

    order_id: str
    order_type: OrderType
    user_id: str
    store_id: str
    note: str | None = ""
    location: Location | None = None
    dispatch_time: str | None = ""
    shipping_time: float | None = 0.0
    delivery_time: str | None = ""
    total_price: float = 0.0
    create_time: str = ""
    update_time: str = ""
    status: OrderStatus = "unpaid"
    products: tuple[Any, ...] = ()

