"""Tool schemas (OpenAI function format) and what arguments that violate them do.

The reference derives each schema from the Python signature and never validates arguments:
a missing or unexpected argument is Python's TypeError ("Error: ..." with the error flag), a
mistyped value fails, or not, where the tool uses it. `strict=True` rejects schema violations
up front instead.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from evaluator.benchmarks.vitabench.env import ALL_TOOLS, DOMAINS, VitaEnvironment, tool_schemas
from evaluator.benchmarks.vitabench.env.descriptions import DESCRIPTIONS

from .helpers import failed, make_env, ok, refused, run
from .ota_fixture import ota_environment

_JSON_TYPES = {"string", "number", "integer", "array", "object", "boolean"}


def test_every_tool_has_a_complete_schema() -> None:
    schemas = {s["function"]["name"]: s for s in tool_schemas(DOMAINS)}
    assert set(schemas) == set(ALL_TOOLS) == set(DESCRIPTIONS)
    for name, schema in schemas.items():
        assert schema["type"] == "function"
        fn = schema["function"]
        assert "\n\nPreconditions:\n    - " in fn["description"]
        assert "\nPostconditions:\n    - " in fn["description"]
        params = fn["parameters"]
        assert params["type"] == "object" and params["title"] == "parameters"
        spec = ALL_TOOLS[name]
        assert list(params["properties"]) == [p.name for p in spec.params]
        assert params.get("required", []) == [p.name for p in spec.params if p.required]
        for p in spec.params:
            prop = params["properties"][p.name]
            assert prop["type"] in _JSON_TYPES and prop["description"], (name, p.name)
            assert prop["title"] == p.name.replace("_", " ").title()
            if prop["type"] == "array":
                assert prop["items"]["type"] in _JSON_TYPES
            assert ("default" in prop) == (not p.required)


def test_schemas_are_valid_json_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for schema in tool_schemas(DOMAINS):
        jsonschema.Draft202012Validator.check_schema(schema["function"]["parameters"])


def test_signatures_match_the_reference() -> None:
    props = {s["function"]["name"]: s["function"]["parameters"] for s in tool_schemas(DOMAINS)}
    order = props["create_delivery_order"]
    assert order["required"] == ["user_id", "store_id", "product_ids", "product_cnts", "address",
                                 "dispatch_time"]
    assert order["properties"]["attributes"]["default"] is None
    assert list(order["properties"]["attributes"]) == ["default", "description", "title", "type",
                                                       "items"]
    assert order["properties"]["product_cnts"]["items"] == {"type": "integer"}
    assert props["search_delivery_orders"]["properties"]["status"]["default"] == "unpaid"
    assert props["search_train_order"]["properties"]["status"]["default"] == "paid"
    assert props["instore_modify_reservation"]["properties"]["customer_count"]["default"] == 0
    assert props["create_hotel_order"]["required"] == ["hotel_id", "room_id", "user_id"]
    assert props["get_user_all_orders"] == {"properties": {}, "title": "parameters",
                                            "type": "object"}


def test_description_overrides() -> None:
    env = make_env(ota_environment(), "ota",
                   overrides={"get_ota_hotel_info": {"description": "Hotel by id.",
                                                     "params": {"hotel_id": "The id."}}})
    fn = next(t["function"] for t in env.tools if t["function"]["name"] == "get_ota_hotel_info")
    assert fn["description"] == "Hotel by id."
    assert fn["parameters"]["properties"]["hotel_id"]["description"] == "The id."
    plain = make_env(ota_environment(), "ota")
    assert plain.tools[0]["function"]["description"] != "Hotel by id."


def test_binding_errors_read_like_python() -> None:
    env = make_env(ota_environment(), "ota")
    assert failed(run(env, "create_flight_order", flight_id="F1"), "missing_required") == (
        "Error: OTATools.create_flight_order() missing 4 required positional arguments: "
        "'seat_id', 'user_id', 'date', and 'quantity'")
    assert failed(run(env, "cancel_hotel_order"), "missing_required") == (
        "Error: OTATools.cancel_hotel_order() missing 2 required positional arguments: "
        "'order_id' and 'user_id'")
    assert failed(run(env, "weather", address="x", date_start="2025-01-01"),
                  "missing_required") == ("Error: ToolKitBase.weather() missing 1 required "
                                          "positional argument: 'date_end'")
    assert failed(run(env, "get_user_all_orders", verbose=True), "unknown_parameter") == (
        "Error: ToolKitBase.get_user_all_orders() got an unexpected keyword argument 'verbose'")
    assert failed(run(env, "book_a_spaceship"), "unknown_tool") == \
        "Error: Tool 'book_a_spaceship' not found."


def test_malformed_arguments() -> None:
    env = make_env(ota_environment(), "ota")
    assert env.execute("get_user_all_orders", "").content.startswith("Order(")
    assert failed(env.execute("get_ota_hotel_info", '{"hotel_id": '), "malformed_json")
    assert failed(env.execute("get_ota_hotel_info", '["H1"]'), "malformed_json")
    assert ok(env.execute("get_ota_hotel_info", {"hotel_id": "H1"})).startswith("Hotel Info")


def test_mistyped_values_behave_as_in_the_reference() -> None:
    env = make_env(ota_environment(), "ota")
    # used where a string also works: accepted
    assert ok(run(env, "hotel_search_recommand", city_name="Hangzhou", key_words="spa"))
    # checked by the tool: refused as an ordinary answer
    assert refused(run(env, "create_flight_order", flight_id="F1", seat_id="S1", user_id="U100",
                       date="2025-05-03", quantity=0)) == "Booking quantity must be greater than 0"
    # meets an operation it does not support: the error answer, categorised wrong_type
    assert failed(run(env, "create_flight_order", flight_id="F1", seat_id="S1", user_id="U100",
                      date="2025-05-03", quantity="2"), "wrong_type")
    # null where the signature allows None
    assert ok(run(env, "hotel_search_recommand", city_name="Hangzhou", key_words=None))


def test_strict_mode_rejects_schema_violations_before_running() -> None:
    env = make_env(ota_environment(), "ota", strict=True)
    res = run(env, "create_flight_order", flight_id="F1", seat_id="S1", user_id="U100",
              date="2025-05-03", quantity="2")
    assert failed(res, "wrong_type") == "Error: argument 'quantity' must be integer, got str"
    assert failed(run(env, "hotel_search_recommand", city_name="Hangzhou", key_words="spa"),
                  "wrong_type")
    assert failed(run(env, "get_ota_hotel_info", hotel_id=None), "wrong_type")
    assert ok(run(env, "hotel_search_recommand", city_name="Hangzhou", key_words=None))
    assert env.changes() == {}


def _value(schema: dict[str, Any], rng: random.Random, pool: list[Any]) -> Any:
    kind = schema["type"]
    if kind == "array":
        return [_value(schema["items"], rng, pool) for _ in range(rng.randint(0, 3))]
    if kind == "integer":
        return rng.choice([-1, 0, 1, 2, 7])
    if kind == "number":
        return rng.choice([0, 1.5, 116.4, 39.9, 1e6])
    return rng.choice(pool)


@pytest.mark.parametrize("seed", range(3))
def test_random_arguments_always_get_an_answer(seed: int) -> None:
    """Every tool, schema-valid and schema-violating arguments alike: an answer, never an
    exception out of the environment."""
    rng = random.Random(seed)
    raw = ota_environment()
    pool = ["", "U100", "H1", "R1", "F1", "S1", "TR1", "C1", "A1", "T1", "OF1", "2025-05-02",
            "2025-05-03 12:00:00", "Hangzhou", "paid", "x"]
    for _ in range(3):
        env = VitaEnvironment.from_environment(raw, DOMAINS)
        for schema in env.tools:
            fn = schema["function"]
            args = {k: _value(v, rng, pool) for k, v in fn["parameters"]["properties"].items()}
            if rng.random() < 0.3 and args:
                key = rng.choice(list(args))
                args[key] = rng.choice([None, 3, "7", [1], {"a": 1}, True])
            result = env.execute(fn["name"], json.dumps(args))
            assert isinstance(result.content, str)
            assert result.error == (result.category not in (None, "refused"))
