"""The base task database: built once per task from its `environment`, then shared read-only.

`TaskDatabase.load(environment, domains)` keeps, per domain, the keys that domain's reference
builder keeps (delivery: `stores`; instore: `shops`, `books`, `reservations`; ota: `hotels`,
`attractions`, `flights`, `trains`; every domain: `time`, `user_id`, `weather`, `location`,
`user_historical_behaviors`, `orders`), coerces them into the typed records of `model`, and
precomputes two lookup tables the reference keeps as global registries:

- `products`: product id -> where the catalogue product is (`ProductRef`). The reference looks
  products up by id alone, across stores and shops, so an id listed twice resolves to the
  one registered last (domains in order, then stores/shops and their products in order);
  the order of first registration is the order searches rank from.
- `locations`: address -> (longitude, latitude) for every address the task database names
  (the `location` list, then order addresses, then store/shop/hotel/attraction/airport/
  station addresses, per domain in order). `address_to_longitude_latitude` and
  `create_delivery_order` geocode against it. Unlike the reference, whose registry is
  per thread and never cleared, it holds this task's addresses only.

Several domains ("delivery,instore,ota") give one database holding every domain's
collections, as the reference's merged database does (the shared fields are equal copies of
the same task dict there).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from ..names import DOMAINS, SUBSET_DOMAINS
from . import model as m

_COMMON = ("time", "user_id", "weather", "location", "user_historical_behaviors", "orders")
_OTA_TABLES = ("hotels", "attractions", "flights", "trains")


class TaskDataError(ValueError):
    """The task's environment does not fit the data model (the reference fails to build it)."""


class ProductRef(msgspec.Struct, frozen=True):
    """Where a catalogue product lives: `table[key].products[index]`; `kind` is the domain's
    product class (delivery, instore, hotel, attraction, flight, train)."""

    kind: str
    table: str
    key: str
    index: int


class TaskDatabase(msgspec.Struct, frozen=True, kw_only=True):
    """One task's database for one domain set. Never mutated: episodes overlay it."""

    domains: tuple[str, ...]
    time: str | None = None
    user_id: str | None = None
    weather: tuple[m.Weather, ...] | None = None
    location: tuple[m.Location, ...] | None = None
    user_historical_behaviors: dict[str, Any] | None = None
    orders: dict[str, m.Order] = msgspec.field(default_factory=dict)
    stores: dict[str, m.Store] | None = None
    shops: dict[str, m.Shop] | None = None
    books: dict[str, m.Book] | None = None
    reservations: dict[str, m.Reservation] | None = None
    hotels: dict[str, m.Hotel] | None = None
    attractions: dict[str, m.Attraction] | None = None
    flights: dict[str, m.Flight] | None = None
    trains: dict[str, m.Train] | None = None
    products: dict[str, ProductRef] = msgspec.field(default_factory=dict)
    locations: dict[str, tuple[float, float]] = msgspec.field(default_factory=dict)

    @classmethod
    def load(cls, environment: Mapping[str, Any], domains: str | Sequence[str]) -> TaskDatabase:
        return load_database(environment, domains)



def domains_for(subset: str) -> tuple[str, ...]:
    """The domain set of a task subset: a domain's own name, or all three for the
    cross-domain set (the reference's default "delivery,instore,ota"); a comma list as is."""
    if subset in SUBSET_DOMAINS:
        return SUBSET_DOMAINS[subset]
    return parse_domains(subset)


class DatabaseCache:
    """Task databases by (task id, domains), built on first use and then shared by every
    episode and trial of the task (they are never written)."""

    def __init__(self) -> None:
        self._dbs: dict[tuple[str, tuple[str, ...]], TaskDatabase] = {}

    def get(self, task_id: str, environment: Mapping[str, Any],
            domains: str | Sequence[str]) -> TaskDatabase:
        key = (task_id, parse_domains(domains))
        db = self._dbs.get(key)
        if db is None:
            db = self._dbs[key] = load_database(environment, key[1])
        return db

    def __len__(self) -> int:
        return len(self._dbs)


def parse_domains(domains: str | Sequence[str]) -> tuple[str, ...]:
    names = tuple(d.strip() for d in (domains.split(",") if isinstance(domains, str)
                                      else domains) if d.strip())
    aliases = {"in-store": "instore", "in-store consumption": "instore", "in_store": "instore"}
    names = tuple(aliases.get(n, n) for n in names)
    bad = [n for n in names if n not in DOMAINS]
    if not names or bad:
        raise ValueError(f"domains must be a non-empty subset of {DOMAINS}, got {domains!r}")
    return tuple(dict.fromkeys(names))


def _convert(value: Any, typ: Any, where: str) -> Any:
    try:
        return msgspec.convert(value, typ, strict=False)
    except msgspec.ValidationError as exc:
        raise TaskDataError(f"{where}: {exc}") from None


def _store_dict(raw: Any) -> Any:
    """A delivery store with each product's attribute list joined by ", "."""
    if not isinstance(raw, dict) or not isinstance(raw.get("products"), list):
        return raw
    products = []
    for p in raw["products"]:
        if isinstance(p, dict) and isinstance(p.get("attributes"), list):
            p = {**p, "attributes": ", ".join(map(_attr_str, p["attributes"]))}
        products.append(p)
    return {**raw, "products": products}


def _attr_str(item: Any) -> str:
    if not isinstance(item, str):
        raise TaskDataError(f"product attribute {item!r} is not a string")
    return item


def _order_dict(raw: Any) -> Any:
    """An order as the reference models it: hidden keys dropped from its untyped products,
    update_time defaulting to create_time."""
    if not isinstance(raw, dict):
        return raw
    out = dict(raw)
    if isinstance(out.get("products"), list):
        out["products"] = [
            {k: v for k, v in p.items() if k not in m.HIDDEN_KEYS} if isinstance(p, dict) else p
            for p in out["products"]
        ]
    if not out.get("update_time") and out.get("create_time"):
        out["update_time"] = out["create_time"]
    return out


def _table(raw: Any, typ: type, where: str, prep: Any = None) -> dict[str, Any]:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise TaskDataError(f"{where}: expected an object, got {type(raw).__name__}")
    return {str(k): _convert(prep(v) if prep else v, typ, f"{where}.{k}") for k, v in raw.items()}


def _locations_of(domain: str, db: dict[str, Any]) -> Iterable[m.Location]:
    yield from db["location"] or ()
    for order in db["orders"].values():
        if order.location is not None:
            yield order.location
    if domain == "delivery":
        yield from (s.location for s in db["stores"].values())
    elif domain == "instore":
        yield from (s.location for s in db["shops"].values())
    else:
        yield from (h.location for h in db["hotels"].values())
        yield from (a.location for a in db["attractions"].values())
        for f in db["flights"].values():
            yield from (f.departure_airport_location, f.arrival_airport_location)
        for t in db["trains"].values():
            yield from (t.departure_station_location, t.arrival_station_location)


def _products_of(domain: str, db: dict[str, Any]) -> Iterable[tuple[str, ProductRef]]:
    tables = {"delivery": (("stores", "delivery"),), "instore": (("shops", "instore"),),
              "ota": tuple((t, t[:-1]) for t in _OTA_TABLES)}[domain]
    for table, kind in tables:
        for key, rec in db[table].items():
            for i, p in enumerate(rec.products):
                yield p.product_id, ProductRef(kind, table, key, i)


def load_database(environment: Mapping[str, Any], domains: str | Sequence[str]) -> TaskDatabase:
    names = parse_domains(domains)
    env = dict(environment)
    common = {
        "time": _convert(env.get("time"), str | None, "time"),
        "user_id": _convert(env.get("user_id"), str | None, "user_id"),
        "weather": _convert(env.get("weather"), tuple[m.Weather, ...] | None, "weather"),
        "location": _convert(env.get("location"), tuple[m.Location, ...] | None, "location"),
        "user_historical_behaviors": _convert(env.get("user_historical_behaviors", {}),
                                              dict[str, Any] | None,
                                              "user_historical_behaviors"),
        "orders": _table(env.get("orders"), m.Order, "orders", _order_dict),
    }
    fields: dict[str, Any] = dict(common)
    if "delivery" in names:
        fields["stores"] = _table(env.get("stores"), m.Store, "stores", _store_dict)
    if "instore" in names:
        fields["shops"] = _table(env.get("shops"), m.Shop, "shops")
        fields["books"] = _table(env.get("books"), m.Book, "books")
        fields["reservations"] = _table(env.get("reservations"), m.Reservation, "reservations")
    if "ota" in names:
        fields["hotels"] = _table(env.get("hotels"), m.Hotel, "hotels")
        fields["attractions"] = _table(env.get("attractions"), m.Attraction, "attractions")
        fields["flights"] = _table(env.get("flights"), m.Flight, "flights")
        fields["trains"] = _table(env.get("trains"), m.Train, "trains")
    products: dict[str, ProductRef] = {}
    locations: dict[str, tuple[float, float]] = {}
    for domain in names:  # each domain registers its records in turn, as the reference does
        for loc in _locations_of(domain, fields):
            locations[loc.address] = (loc.longitude, loc.latitude)
        for pid, ref in _products_of(domain, fields):
            products[pid] = ref
    return TaskDatabase(domains=names, products=products, locations=locations, **fields)
