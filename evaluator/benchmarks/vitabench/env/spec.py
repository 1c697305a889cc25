"""Tool specifications: name, domain, kind, parameters, wording, and the function behind it.

The parameter lists (names, JSON types, defaults, which may be null) are the reference's
Python signatures, so the schemas the agent sees have the reference's shape: an object with
`properties` (each with a `title` made from its name, a `type`, `items` for arrays and a
`default` when optional), `required`, `title: "parameters"`. The descriptions are this
project's own wording of what each tool does and needs (`descriptions.py`); pass
`overrides` to `tool_schemas` to show other text.

Order: a single domain lists its own tools, then the general ones; several domains list the
general tools first, then each domain's in the order given (the reference's merge).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import tools_delivery as td
from . import tools_general as tg
from . import tools_instore as ti
from . import tools_ota as to
from . import tools_ota_changes as tc
from .descriptions import DESCRIPTIONS

REQUIRED = object()

# JSON types by short name
JSON_TYPES = {"str": {"type": "string"}, "num": {"type": "number"}, "int": {"type": "integer"},
          "list[str]": {"type": "array", "items": {"type": "string"}},
          "list[int]": {"type": "array", "items": {"type": "integer"}}}


@dataclass(frozen=True)
class Param:
    name: str
    type: str                  # a key of JSON_TYPES
    default: Any = REQUIRED
    nullable: bool = False     # Optional[...] in the reference's signature

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class ToolSpec:
    name: str
    domain: str                # general | delivery | instore | ota
    kind: str                  # generic | read | write (the reference's tool types)
    params: tuple[Param, ...]
    fn: Callable[..., Any]


def _p(name: str, typ: str = "str", default: Any = REQUIRED, nullable: bool = False) -> Param:
    return Param(name, typ, default, nullable)


def _t(name: str, domain: str, kind: str, fn: Callable[..., Any], *params: Param) -> ToolSpec:
    return ToolSpec(name, domain, kind, tuple(params), fn)


_ORDER = _p("order_id")
_USER = _p("user_id")

GENERAL = (
    _t("longitude_latitude_to_distance", "general", "generic", tg.longitude_latitude_to_distance,
       _p("longitude1", "num"), _p("latitude1", "num"), _p("longitude2", "num"),
       _p("latitude2", "num")),
    _t("weather", "general", "generic", tg.weather, _p("address"), _p("date_start"),
       _p("date_end")),
    _t("address_to_longitude_latitude", "general", "generic", tg.address_to_longitude_latitude,
       _p("address")),
    _t("get_date_holiday_info", "general", "generic", tg.get_date_holiday_info, _p("date")),
    _t("get_holiday_date", "general", "generic", tg.get_holiday_date, _p("year"),
       _p("holiday_name")),
    _t("get_user_historical_behaviors", "general", "read", tg.get_user_historical_behaviors),
    _t("get_user_all_orders", "general", "read", tg.get_user_all_orders),
    _t("get_nearby", "general", "read", tg.get_nearby, _p("longitude", "num"),
       _p("latitude", "num"), _p("range", "num")),
)

DELIVERY = (
    _t("delivery_distance_to_time", "delivery", "generic", td.delivery_distance_to_time,
       _p("distance", "num")),
    _t("get_delivery_store_info", "delivery", "read", td.get_delivery_store_info,
       _p("store_id")),
    _t("get_delivery_product_info", "delivery", "read", td.get_delivery_product_info,
       _p("product_id")),
    _t("delivery_store_search_recommand", "delivery", "read", td.delivery_store_search_recommand,
       _p("keywords", "list[str]")),
    _t("delivery_product_search_recommand", "delivery", "read",
       td.delivery_product_search_recommand, _p("keywords", "list[str]")),
    _t("create_delivery_order", "delivery", "write", td.create_delivery_order, _USER,
       _p("store_id"), _p("product_ids", "list[str]"), _p("product_cnts", "list[int]"),
       _p("address"), _p("dispatch_time"), _p("attributes", "list[str]", None, True),
       _p("note", "str", "", True)),
    _t("pay_delivery_order", "delivery", "write", td.pay_delivery_order, _ORDER),
    _t("get_delivery_order_status", "delivery", "read", td.get_delivery_order_status, _ORDER),
    _t("cancel_delivery_order", "delivery", "write", td.cancel_delivery_order, _ORDER),
    _t("modify_delivery_order", "delivery", "write", td.modify_delivery_order, _ORDER,
       _p("note")),
    _t("search_delivery_orders", "delivery", "read", td.search_delivery_orders, _USER,
       _p("status", "str", "unpaid", True)),
    _t("get_delivery_order_detail", "delivery", "read", td.get_delivery_order_detail, _ORDER),
)

_SHOP, _TIME = _p("shop_id"), _p("time")
INSTORE = (
    _t("instore_shop_search_recommend", "instore", "read", ti.instore_shop_search_recommend,
       _p("keywords", "list[str]")),
    _t("instore_product_search_recommend", "instore", "read",
       ti.instore_product_search_recommend, _p("keywords", "list[str]")),
    _t("create_instore_product_order", "instore", "write", ti.create_instore_product_order,
       _USER, _SHOP, _p("product_id"), _p("quantity", "int", 1)),
    _t("pay_instore_order", "instore", "write", ti.pay_instore_order, _ORDER),
    _t("instore_cancel_order", "instore", "write", ti.instore_cancel_order, _ORDER),
    _t("instore_book", "instore", "write", ti.instore_book, _USER, _SHOP, _TIME,
       _p("customer_count", "int", 1)),
    _t("pay_instore_book", "instore", "write", ti.pay_instore_book, _p("book_id")),
    _t("instore_cancel_book", "instore", "write", ti.instore_cancel_book, _p("book_id")),
    _t("instore_reservation", "instore", "write", ti.instore_reservation, _USER, _SHOP, _TIME,
       _p("customer_count", "int", 1)),
    _t("instore_modify_reservation", "instore", "write", ti.instore_modify_reservation,
       _p("reservation_id"), _TIME, _p("customer_count", "int", 0)),
    _t("instore_cancel_reservation", "instore", "write", ti.instore_cancel_reservation,
       _p("reservation_id")),
    _t("get_instore_orders", "instore", "read", ti.get_instore_orders, _USER),
    _t("get_instore_reservations", "instore", "read", ti.get_instore_reservations, _USER),
    _t("get_instore_books", "instore", "read", ti.get_instore_books, _USER),
    _t("search_instore_book", "instore", "read", ti.search_instore_book, _USER,
       _p("book_id", "str", None, True)),
    _t("search_instore_reservation", "instore", "read", ti.search_instore_reservation, _USER,
       _p("reservation_id", "str", None, True)),
)


def _ota_family() -> tuple[ToolSpec, ...]:
    date, qty = _p("date"), _p("quantity", "int")
    opt_date, opt_status = _p("date", "str", None, True), _p("status", "str", "paid", True)
    specs = [
        _t("get_ota_hotel_info", "ota", "read", to.get_ota_hotel_info, _p("hotel_id")),
        _t("get_ota_attraction_info", "ota", "read", to.get_ota_attraction_info,
           _p("attraction_id")),
        _t("get_ota_flight_info", "ota", "read", to.get_ota_flight_info, _p("flight_id")),
        _t("get_ota_train_info", "ota", "read", to.get_ota_train_info, _p("train_id")),
        _t("hotel_search_recommand", "ota", "read", to.hotel_search_recommand,
           _p("city_name"), _p("key_words", "list[str]", None, True)),
        _t("attractions_search_recommend", "ota", "read", to.attractions_search_recommend,
           _p("city_name"), _p("key_words", "list[str]")),
        _t("flight_search_recommend", "ota", "read", to.flight_search_recommend,
           _p("departure"), _p("destination")),
        _t("train_ticket_search", "ota", "read", to.train_ticket_search, _p("departure"),
           _p("destination"), date),
        _t("create_hotel_order", "ota", "write", to.create_hotel_order, _p("hotel_id"),
           _p("room_id"), _USER),
        _t("create_attraction_order", "ota", "write", to.create_attraction_order,
           _p("attraction_id"), _p("ticket_id"), _USER, date, qty),
        _t("create_flight_order", "ota", "write", to.create_flight_order, _p("flight_id"),
           _p("seat_id"), _USER, date, qty),
        _t("create_train_order", "ota", "write", to.create_train_order, _p("train_id"),
           _p("seat_id"), _USER, date, qty),
    ]
    kinds = ("hotel", "attraction", "flight", "train")
    specs += [_t(f"pay_{k}_order", "ota", "write", getattr(to, f"pay_{k}_order"), _ORDER)
              for k in kinds]
    specs += [_t(f"search_{k}_order", "ota", "read", getattr(to, f"search_{k}_order"), _USER,
                 opt_date, opt_status) for k in kinds]
    specs += [_t(f"get_{k}_order_detail", "ota", "read", getattr(to, f"get_{k}_order_detail"),
                 _ORDER) for k in kinds]
    specs += [_t(f"modify_{k}_order", "ota", "write", getattr(tc, f"modify_{k}_order"), _ORDER,
                 _USER, _p("new_date")) for k in ("train", "flight")]
    specs += [_t(f"cancel_{k}_order", "ota", "write", getattr(tc, f"cancel_{k}_order"), _ORDER,
                 _USER) for k in kinds]
    return tuple(specs)


OTA = _ota_family()
BY_DOMAIN: dict[str, tuple[ToolSpec, ...]] = {"delivery": DELIVERY, "instore": INSTORE,
                                               "ota": OTA}
ALL_TOOLS: dict[str, ToolSpec] = {s.name: s for s in (*GENERAL, *DELIVERY, *INSTORE, *OTA)}


def tools_for(domains: Sequence[str]) -> list[ToolSpec]:
    """The tools of a domain set, in the order the agent sees them (first name wins)."""
    if len(domains) == 1:
        ordered = [*BY_DOMAIN[domains[0]], *GENERAL]
    else:
        ordered = [*GENERAL, *(s for d in domains for s in BY_DOMAIN[d])]
    first: dict[str, ToolSpec] = {}
    for spec in ordered:
        first.setdefault(spec.name, spec)
    return list(first.values())


def _title(name: str) -> str:
    return " ".join(part.capitalize() for part in name.split("_"))


def _property(p: Param, text: str | None) -> dict[str, Any]:
    typ = JSON_TYPES[p.type]
    prop: dict[str, Any] = {}
    if not p.required:
        prop["default"] = p.default
    if text:
        prop["description"] = text
    prop["title"] = _title(p.name)
    if p.nullable:  # the reference's schema cleaner puts type (and items) last
        prop["type"] = typ["type"]
        if "items" in typ:
            prop["items"] = typ["items"]
        return prop
    return dict(sorted({**prop, **typ}.items()))


def description_of(spec: ToolSpec, wording: Mapping[str, Any]) -> str:
    return (f"{wording['summary']}\n\nPreconditions:\n    - {wording['pre']}\n"
            f"Postconditions:\n    - {wording['post']}")


def tool_schema(spec: ToolSpec, overrides: Mapping[str, Mapping[str, Any]] | None = None
                ) -> dict[str, Any]:
    """One tool in OpenAI function format. `overrides[name]` may replace `description`
    (the whole text) and any `params[<name>]` description."""
    own = DESCRIPTIONS[spec.name]
    over = (overrides or {}).get(spec.name, {})
    texts = {**own.get("params", {}), **over.get("params", {})}
    params: dict[str, Any] = {"properties": {p.name: _property(p, texts.get(p.name))
                                             for p in spec.params}}
    required = [p.name for p in spec.params if p.required]
    if required:
        params["required"] = required
    params.update({"title": "parameters", "type": "object"})
    return {"type": "function",
            "function": {"name": spec.name,
                         "description": over.get("description") or description_of(spec, own),
                         "parameters": params}}


def tool_schemas(domains: Sequence[str],
                 overrides: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict]:
    return [tool_schema(s, overrides) for s in tools_for(domains)]
