"""Per-episode copy-on-write view of a shared `TaskDatabase`.

Every keyed collection is a `Table`: reads fall through to the base mapping, writes go to the
episode's own overlay. Records are frozen Structs, so a change is always a new record put
into the overlay (`msgspec.structs.replace`); the base database and every other episode keep
theirs. Iteration follows Python dict semantics, as the reference's dicts do: a replaced key
keeps its place, a new key comes last.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

import msgspec

from . import model as m
from .database import ProductRef, TaskDatabase

V = TypeVar("V")
_TABLES = ("stores", "shops", "books", "reservations", "hotels", "attractions", "flights",
           "trains")
_VIEWS = frozenset(("orders", "products", "locations", *_TABLES))
# prefixes of new ids (reference: the prefix + 10 hex digits of a hash), per record kind
_ID_PREFIX = {"delivery": "OT", "hotel": "OO", "attraction": "OO", "flight": "OO",
              "train": "OO", "instore": "OI", "instore_book": "OI", "instore_reservation": "OI"}


class Table(Generic[V]):
    """A mapping view: base (shared, never written) + overlay (this episode's writes). The
    overlay is one dict made on the first write, so a table an episode only reads costs one
    small object; its keys the base lacks are the new keys, in the order first written."""

    __slots__ = ("_base", "_over")

    def __init__(self, base: Mapping[str, V]) -> None:
        self._base = base
        self._over: dict[str, V] | None = None

    def __contains__(self, key: object) -> bool:
        return (self._over is not None and key in self._over) or key in self._base

    def __getitem__(self, key: str) -> V:
        over = self._over
        if over is not None and key in over:
            return over[key]
        return self._base[key]

    def get(self, key: str, default: Any = None) -> Any:
        over = self._over
        if over is not None and key in over:
            return over[key]
        return self._base.get(key, default)

    def __setitem__(self, key: str, value: V) -> None:
        if self._over is None:
            self._over = {}
        self._over[key] = value  # a rewritten key keeps its place, as in a dict

    def _new_keys(self) -> Iterator[str]:
        if self._over:
            base = self._base
            yield from (k for k in self._over if k not in base)

    def __len__(self) -> int:
        return len(self._base) + sum(1 for _ in self._new_keys())

    def keys(self) -> Iterator[str]:
        yield from self._base
        yield from self._new_keys()

    __iter__ = keys

    def values(self) -> Iterator[V]:
        return (self[k] for k in self.keys())

    def items(self) -> Iterator[tuple[str, V]]:
        return ((k, self[k]) for k in self.keys())

    def changed(self) -> dict[str, V]:
        """The overlay: records this episode wrote (replaced or new), in table order."""
        over = self._over
        if not over:
            return {}
        return {k: over[k] for k in self.keys() if k in over}


class EpisodeState:
    """What one episode sees and changes. `base` is shared and never written. Each table's
    view (`orders`, `stores`, ..., `products`, `locations`) is made when the episode first
    touches it (None for a table the domain set lacks)."""

    __slots__ = ("_id_seed", "_ids_issued", "base", "orders", "products", "locations",
                 *_TABLES)

    orders: Table[m.Order]
    stores: Table[m.Store] | None
    shops: Table[m.Shop] | None
    books: Table[m.Book] | None
    reservations: Table[m.Reservation] | None
    hotels: Table[m.Hotel] | None
    attractions: Table[m.Attraction] | None
    flights: Table[m.Flight] | None
    trains: Table[m.Train] | None
    # product id -> catalogue position, or the product a delivery order re-registered
    products: Table[ProductRef | m.StoreProduct]
    locations: Table[tuple[float, float]]

    def __init__(self, base: TaskDatabase, *, id_seed: str = "") -> None:
        self.base = base
        self._id_seed = id_seed
        self._ids_issued = 0

    def __getattr__(self, name: str) -> Any:
        """The first touch of a table: its view over the base (slots not yet set land here)."""
        if name in _VIEWS:
            table = getattr(self.base, name)
            view = Table(table) if table is not None else None
            setattr(self, name, view)
            return view
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # -- time and ids ------------------------------------------------------------------------
    def now(self) -> str:
        """The task's fixed time (the reference falls back to the wall clock without one)."""
        if self.base.time:
            return self.base.time
        return _dt.datetime.now().strftime("%Y-%m-%d %H:%M:%S")

    def new_id(self, scenario: str, *parts: str) -> str:
        """A fresh record id: the reference's prefix + 10 hex digits, here a hash of the
        scenario, its parts and a per-episode counter (so the same calls give the same ids)."""
        prefix = _ID_PREFIX[scenario]
        taken = (self.orders, self.books, self.reservations)
        while True:
            self._ids_issued += 1
            text = f"{self._id_seed}#{scenario}#{'|'.join(parts)}#{self._ids_issued}"
            new = prefix + hashlib.sha256(text.encode()).hexdigest()[:10]
            if not any(t is not None and new in t for t in taken):
                return new

    # -- catalogue ---------------------------------------------------------------------------
    def table(self, name: str) -> Table[Any]:
        table = getattr(self, name, None)
        if table is None:
            raise AttributeError(f"this environment has no {name}")
        return table

    def product(self, product_id: str) -> tuple[str, Any]:
        """(kind, product) the registry holds for an id; KeyError if none."""
        entry = self.products[product_id]
        if isinstance(entry, ProductRef):
            return entry.kind, self.table(entry.table)[entry.key].products[entry.index]
        return "delivery", entry

    def set_catalogue_product(self, ref: ProductRef, product: Any) -> None:
        table = self.table(ref.table)
        rec = table[ref.key]
        items = list(rec.products)
        items[ref.index] = product
        table[ref.key] = msgspec.structs.replace(rec, products=tuple(items))

    def resolve_line(self, line: m.CatalogueRef) -> m.ShopProduct:
        return self.table("shops")[line.shop_key].products[line.index]

    # -- final state -------------------------------------------------------------------------
    def _record(self, rec: Any) -> Any:
        if isinstance(rec, m.Order) and any(isinstance(p, m.CatalogueRef) for p in rec.products):
            rec = msgspec.structs.replace(rec, products=tuple(
                self.resolve_line(p) if isinstance(p, m.CatalogueRef) else p
                for p in rec.products))
        return msgspec.to_builtins(rec)

    def dump(self) -> dict[str, Any]:
        """The whole database as this episode leaves it (JSON-able; in-store order lines
        resolved to the catalogue product they show)."""
        base = self.base
        out: dict[str, Any] = {
            "time": base.time, "user_id": base.user_id,
            "weather": msgspec.to_builtins(base.weather),
            "location": msgspec.to_builtins(base.location),
            "user_historical_behaviors": base.user_historical_behaviors,
            "orders": {k: self._record(v) for k, v in self.orders.items()},
        }
        for name in _TABLES:
            table = getattr(self, name)
            if table is not None:
                out[name] = {k: self._record(v) for k, v in table.items()}
        return out

    def changes(self) -> dict[str, dict[str, Any]]:
        """Only what this episode wrote: table -> {key: record}, tables without writes left
        out. Catalogue tables appear when stock or an ordered quantity changed."""
        out: dict[str, dict[str, Any]] = {}
        for name in ("orders", *_TABLES):
            table = getattr(self, name)
            if table is not None and (written := table.changed()):
                out[name] = {k: self._record(v) for k, v in written.items()}
        return out
