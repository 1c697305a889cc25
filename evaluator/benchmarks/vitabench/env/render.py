"""Text forms of records, as the reference's tools print them (the agent reads these).

The reference prints Python reprs of its models; the formats are reproduced field for field,
quirks included: the short order form and a few others end in ", " without a closing
parenthesis, the booking and reservation forms lack a space after their first comma, and OTA
records print their locations in pydantic's default form (`address='…' longitude=… …`) where
delivery and in-store records use `<address> longitude:…,latitude:…`. Lists print as Python
lists; the untyped products of task-file orders print as Python dicts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import model as m

ResolveLine = Callable[[m.CatalogueRef], m.ShopProduct]


def _tags(tags: tuple[str, ...]) -> str:
    return repr(list(tags))


def location_repr(loc: m.Location) -> str:
    return f"{loc.address} longitude:{loc.longitude},latitude:{loc.latitude}"


def location_plain(loc: m.Location) -> str:
    return f"address={loc.address!r} longitude={loc.longitude!r} latitude={loc.latitude!r}"


def weather_repr(w: m.Weather) -> str:
    low, high = w.temperature
    return (f"city: {w.city}, weather: {w.category}, datetime: {w.datetime}, "
            f"temperature: {low}~{high}, humidity: {w.humidity}")


# -- delivery --------------------------------------------------------------------------------
def store_product_repr(p: m.StoreProduct) -> str:
    return (f"StoreProduct(store_name={p.store_name}, store_id={p.store_id}, "
            f"product_name={p.name}, product_id={p.product_id}, attributes={p.attributes}, "
            f"quantity={p.quantity}, price={p.price}, tags={_tags(p.tags)})")


def store_head(s: m.Store) -> str:
    return (f"Store(name={s.name}, store_id={s.store_id}, score={s.score}, "
            f"location={location_repr(s.location)}, tags={_tags(s.tags)})")


def store_full(s: m.Store) -> str:
    products = "\n".join(store_product_repr(p) for p in s.products)
    return f"{store_head(s)}, products={products}"


# -- in-store --------------------------------------------------------------------------------
def shop_product_repr(p: m.ShopProduct) -> str:
    return (f"ShopProduct(shop_id={p.shop_id}, product_id={p.product_id}, name={p.name}, "
            f"price={p.price}, quantity={p.quantity}, tags={_tags(p.tags)})")


def shop_head(s: m.Shop) -> str:
    return (f"Shop(shop_name={s.shop_name}, shop_id={s.shop_id}, score={s.score}, "
            f"location={location_repr(s.location)}, tags={_tags(s.tags)}, "
            f"enable_book={s.enable_book}, book_price={s.book_price}, "
            f"enable_reservation={s.enable_reservation})")


def book_repr(b: m.Book) -> str:
    return (f"BookInfo(book_id={b.book_id},shop_id={b.shop_id}, book_time={b.book_time}, "
            f"customer_id={b.customer_id}, customer_count={b.customer_count}, "
            f"book_price={b.book_price}, status={b.status}")


def reservation_repr(r: m.Reservation) -> str:
    return (f"ReservationInfo(reservation_id={r.reservation_id},shop_id={r.shop_id}, "
            f"reservation_time={r.reservation_time}, customer_id={r.customer_id}, "
            f"customer_count={r.customer_count}, status={r.status}")


# -- OTA -------------------------------------------------------------------------------------
def _ota_product(label: str, kind_field: str, id_label: str, p: Any) -> str:
    return (f"{label}({kind_field}={getattr(p, kind_field)}, date={p.date}, price={p.price}, "
            f"quantity={p.quantity}, {id_label}={p.product_id})")


def ota_product_repr(p: Any) -> str:
    if isinstance(p, m.HotelProduct):
        return _ota_product("HotelProduct", "room_type", "room_id", p)
    if isinstance(p, m.AttractionProduct):
        return _ota_product("AttractionProduct", "ticket_type", "attraction_id", p)
    if isinstance(p, m.FlightProduct):
        return _ota_product("FlightProduct", "seat_type", "seat_id", p)
    return _ota_product("TrainProduct", "seat_type", "seat_id", p)


def _products_block(products: tuple[Any, ...]) -> str:
    return "\n".join(ota_product_repr(p) for p in products)


def hotel_head(h: m.Hotel) -> str:
    return (f"Hotel(hotel_id={h.hotel_id}, hotel_name={h.hotel_name}, score={h.score}, "
            f"star_rating={h.star_rating}, location={location_plain(h.location)}, "
            f"tags={_tags(h.tags)})")


def hotel_full(h: m.Hotel) -> str:
    return f"{hotel_head(h)[:-1]}, products={_products_block(h.products)})"


def attraction_head(a: m.Attraction) -> str:
    return (f"Attraction(attraction_id={a.attraction_id}, attraction_name={a.attraction_name}, "
            f"location={location_plain(a.location)}, description={a.description}, "
            f"score={a.score}, opening_hours={a.opening_hours}, ")


def attraction_full(a: m.Attraction) -> str:
    return (f"{attraction_head(a)}ticket_price={a.ticket_price}, "
            f"products={_products_block(a.products)})")


def _journey_fields(rec: Any, dep_field: str, arr_field: str) -> str:
    return (f"departure_city={rec.departure_city}, arrival_city={rec.arrival_city}, "
            f"{dep_field}={location_plain(getattr(rec, dep_field))}, "
            f"{arr_field}={location_plain(getattr(rec, arr_field))}, "
            f"departure_time={rec.departure_time}, arrival_time={rec.arrival_time}, "
            f"tags={_tags(rec.tags)}")


def flight_head(f: m.Flight) -> str:
    body = _journey_fields(f, "departure_airport_location", "arrival_airport_location")
    return f"Flight(flight_id={f.flight_id}, flight_number={f.flight_number}, {body})"


def train_head(t: m.Train) -> str:
    body = _journey_fields(t, "departure_station_location", "arrival_station_location")
    return f"Train(train_id={t.train_id}, train_number={t.train_number}, {body})"


def flight_full(f: m.Flight) -> str:
    return f"{flight_head(f)[:-1]}, products={_products_block(f.products)})"


def train_full(t: m.Train) -> str:
    return f"{train_head(t)[:-1]}, products={_products_block(t.products)})"


# -- orders ----------------------------------------------------------------------------------
_ID_LABEL = {"delivery": "store_id", "instore": "shop_id", "hotel": "hotel_id",
             "attraction": "attraction_id", "flight": "flight_id", "train": "train_id"}


def product_item_repr(item: Any, resolve: ResolveLine) -> str:
    if isinstance(item, m.CatalogueRef):
        return shop_product_repr(resolve(item))
    if isinstance(item, m.StoreProduct):
        return store_product_repr(item)
    if isinstance(item, m.ShopProduct):
        return shop_product_repr(item)
    if isinstance(item, m.HotelProduct | m.AttractionProduct | m.FlightProduct
                  | m.TrainProduct):
        return ota_product_repr(item)
    return repr(item)


def products_repr(products: tuple[Any, ...], resolve: ResolveLine) -> str:
    return "[" + ", ".join(product_item_repr(p, resolve) for p in products) + "]"


def order_short(o: m.Order) -> str:
    return (f"Order(order_id:{o.order_id}, order_type:{o.order_type}, user_id:{o.user_id}, "
            f"{_ID_LABEL[o.order_type]}:{o.store_id}, total_price:{o.total_price}, "
            f"create_time:{o.create_time}, update_time:{o.update_time}, status:{o.status}, ")


def order_full(o: m.Order, resolve: ResolveLine) -> str:
    head = (f"Order(order_id:{o.order_id}, order_type:{o.order_type}, user_id:{o.user_id}, "
            f"{_ID_LABEL[o.order_type]}:{o.store_id}, ")
    if o.order_type == "delivery":
        head += (f"dispatch_time:{o.dispatch_time}, shipping_time:{o.shipping_time}, "
                 f"delivery_time:{o.delivery_time}, ")
    head += (f"total_price:{o.total_price}, create_time:{o.create_time}, "
             f"update_time:{o.update_time}, ")
    if o.order_type == "delivery":
        head += f"note:{o.note}, "
    return f"{head}status:{o.status}, products:{products_repr(o.products, resolve)})"
