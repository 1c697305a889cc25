"""Key normalisation must equal the reference's three-step procedure byte for byte."""

from __future__ import annotations

import json

import pytest

from cache_store.keys import (
    embedding_text,
    intermediate_key,
    normalize_call,
    normalize_stored_key,
    params_from_key,
)


def reference_key(args: dict, time: str) -> str:
    """The reference, step by step (notes §1)."""
    params = json.dumps(args, sort_keys=True, ensure_ascii=False)
    inter = json.dumps({"params": params, "time": time}, sort_keys=True, ensure_ascii=False)
    parsed = json.loads(inter)
    return json.dumps(sorted(parsed.items()), separators=(",", ":"), ensure_ascii=False)


TRICKY = [
    {"origin": "北京市", "destination": "上海市", "date": "2025-10-24"},
    {"z": 1, "a": 2, "m": {"y": [3, 2, 1], "b": {"d": None, "c": True}}},
    {"days": 5}, {"days": 5.0}, {"days": "5"}, {"x": 1e16}, {"x": -0.0}, {"x": 10**30},
    {"x": 1.5e-7}, {"q": "emoji 😀 \u00e9 \u200b tab\t nl\n quote\" backslash\\"},
    {"q": "\ud800 lone surrogate"}, {"é": 1, "e": 2, "E": 3, "中": 4},
    {"modes": ["walking", "driving"]}, {"empty": {}, "list": []},
]


@pytest.mark.parametrize("args", TRICKY)
def test_normalize_matches_reference(args: dict) -> None:
    for time in ("2025-10-24 10:00", "时间 \"q\""):
        assert normalize_call(args, time) == reference_key(args, time)
        assert normalize_stored_key(intermediate_key(args, time)) == reference_key(args, time)


def test_key_order_irrelevant_list_order_relevant() -> None:
    t = "2025-10-24 10:00"
    assert normalize_call({"a": 1, "b": 2}, t) == normalize_call({"b": 2, "a": 1}, t)
    assert normalize_call({"m": ["a", "b"]}, t) != normalize_call({"m": ["b", "a"]}, t)
    assert normalize_call({"d": 5}, t) != normalize_call({"d": 5.0}, t)


def test_parsed_from_model_text_matches() -> None:
    raw = '{"destination":"上海市", "origin": "\\u5317\\u4eac\\u5e02", "days": 3.0}'
    args = json.loads(raw)
    assert normalize_call(args, "t") == reference_key(args, "t")
    assert "北京市" in normalize_call(args, "t")


def test_stored_key_forms() -> None:
    key = normalize_call({"location": "上海"}, "t")
    assert normalize_stored_key(key) == key
    assert normalize_stored_key("not json") == "not json"
    assert params_from_key(key) == '{"location": "上海"}'
    assert embedding_text('{"a": ["x", "y"], "b": true}') == "a: ['x', 'y'] | b: True"
