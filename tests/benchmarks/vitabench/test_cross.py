"""Cross-domain environments: tool sets and databases merged as the reference merges them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from evaluator.benchmarks.vitabench.env import (
    ALL_TOOLS,
    DOMAINS,
    TaskDatabase,
    domains_for,
    parse_domains,
    tools_for,
)

from .helpers import failed, first_id, load_tasks, make_env, ok, refused, run
from .ota_fixture import USER, ota_environment


def _merged() -> dict[str, Any]:
    """An in-store task's database with a delivery task's stores and the OTA fixture added
    (no cross-domain task file is available)."""
    delivery = next(t["environment"] for t in load_tasks("delivery")
                    if all(k == s["store_id"] for k, s in t["environment"]["stores"].items()))
    env = copy.deepcopy(next(t["environment"] for t in load_tasks("instore")
                             if all(k == s["shop_id"]
                                    for k, s in t["environment"]["shops"].items())))
    delivery = copy.deepcopy(delivery)
    ota = ota_environment()
    env["stores"] = delivery["stores"]
    env["orders"] = {**delivery["orders"], **env["orders"], **ota["orders"]}
    env["location"] = [*(env.get("location") or []), *delivery["location"]]
    for key in ("hotels", "attractions", "flights", "trains"):
        env[key] = ota[key]
    env["user_id"] = USER
    for order in env["orders"].values():
        order["user_id"] = USER
    return env


def test_tool_order_and_counts() -> None:
    names = [s.name for s in tools_for(DOMAINS)]
    general = [s.name for s in tools_for(("delivery",)) if s.domain == "general"]
    assert len(names) == len(set(names)) == 66 == len(ALL_TOOLS)
    assert names[:8] == general  # general tools first, then each domain in order
    kinds = [s.domain for s in tools_for(DOMAINS)]
    assert kinds == sorted(kinds, key=["general", "delivery", "instore", "ota"].index)
    order = [s.domain for s in tools_for(("ota", "delivery"))]
    assert order.index("ota") < order.index("delivery")
    single = [s.domain for s in tools_for(("instore",))]
    assert single[-8:] == ["general"] * 8 and len(single) == 24
    counts = {d: [s.kind for s in tools_for((d,))] for d in DOMAINS}
    counts["cross"] = [s.kind for s in tools_for(DOMAINS)]
    # the paper's Table 2: general / read / write tools per domain
    want = {"delivery": (6, 10, 4), "instore": (5, 10, 9), "ota": (5, 19, 14),
            "cross": (6, 33, 27)}
    for d, (g, r, w) in want.items():
        assert (counts[d].count("generic"), counts[d].count("read"),
                counts[d].count("write")) == (g, r, w), d


def test_domain_names() -> None:
    assert domains_for("cross_domain") == DOMAINS
    assert domains_for("instore") == ("instore",)
    assert parse_domains("delivery, in-store") == ("delivery", "instore")
    with pytest.raises(ValueError):
        parse_domains("flights")


def test_merged_database_serves_every_domain() -> None:
    raw = _merged()
    env = make_env(raw, "delivery,instore,ota")
    assert env.domains == DOMAINS and len(env.tools) == 66 and env.tools() is env.tools
    store_key, store = next(iter(raw["stores"].items()))
    shop_key, shop = next(iter(raw["shops"].items()))
    here = store["location"]
    nearby = ok(run(env, "get_nearby", longitude=here["longitude"], latitude=here["latitude"],
                    range=3e7))
    for label in ("Store(", "Shop(", "Hotel(", "Attraction(", "Flight(", "Train("):
        assert label in nearby
    delivery = first_id(ok(run(env, "create_delivery_order", user_id=USER, store_id=store_key,
                               product_ids=[store["products"][0]["product_id"]],
                               product_cnts=[1], address=raw["location"][-1]["address"],
                               dispatch_time=raw["time"])))
    instore = first_id(ok(run(env, "create_instore_product_order", user_id=USER,
                              shop_id=shop_key, product_id=shop["products"][0]["product_id"])))
    hotel = first_id(ok(run(env, "create_hotel_order", hotel_id="H1", room_id="R1",
                            user_id=USER)))
    everything = ok(run(env, "get_user_all_orders"))
    for oid in (delivery, instore, hotel):
        assert oid in everything
    # one orders table: each domain's tools see (and type-check) the others' orders
    assert failed(run(env, "pay_delivery_order", order_id=instore)) == \
        f"Error: Order {instore} is not a delivery order"
    assert failed(run(env, "pay_instore_order", order_id=delivery)) == \
        f"Error: Order {delivery} is not an instore order"
    assert ok(run(env, "pay_hotel_order", order_id=delivery)) == "Payment successful"
    assert refused(run(env, "pay_delivery_order", order_id=delivery)) == \
        "Order is not in `unpaid` status."
    final = env.database()
    assert {"stores", "shops", "books", "reservations", "hotels", "trains"} <= set(final)


def test_product_ids_are_one_registry_across_domains() -> None:
    """An id listed by a store and a shop resolves to the one registered last (domain order),
    so the other domain's lookup fails as it does in the reference."""
    raw = _merged()
    store = next(iter(raw["stores"].values()))
    shop_key, shop = next(iter(raw["shops"].items()))
    shared = store["products"][0]["product_id"]
    shop = {**shop, "products": [{**shop["products"][0], "product_id": shared}]}
    raw["shops"] = {**raw["shops"], shop_key: shop}
    env = make_env(raw, "delivery,instore")
    assert failed(run(env, "get_delivery_product_info", product_id=shared)) == \
        f"Error: {shared} is not a delivery product"
    env = make_env(raw, "instore,delivery")
    assert ok(run(env, "get_delivery_product_info", product_id=shared))
    assert ok(run(make_env(raw, "delivery"), "get_delivery_product_info", product_id=shared))


def test_single_domain_keeps_only_its_collections() -> None:
    raw = _merged()
    base = TaskDatabase.load(raw, "delivery")
    assert base.shops is None and base.hotels is None and base.stores
    env = make_env(raw, "delivery")
    assert "Shop(" not in run(env, "get_nearby", longitude=0, latitude=0, range=3e7).content
    assert failed(run(env, "create_hotel_order", hotel_id="H1", room_id="R1", user_id=USER),
                  "unknown_tool") == "Error: Tool 'create_hotel_order' not found."
