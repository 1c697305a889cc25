"""Cache-key normalisation, byte-for-byte compatible with the TravelBench reference.

Reference behaviour (notes §1): the arguments are dumped with sorted keys, non-ASCII kept and
the default separators (`params`); then `{"params": params, "time": time}` is dumped with sorted
keys (the intermediate key); the cache manager parses that and dumps the sorted `[key, value]`
pairs compactly. The result for the common case is therefore

    [["params",<params as a JSON string>],["time",<time as a JSON string>]]

which is what `normalize_call` builds directly (no second parse). `normalize_stored_key` is the
reference's second step applied to an arbitrary key string (used on import and for checking).
Python's stdlib `json` is used on purpose: its float/int/NaN rendering is what the reference
wrote into the released keys (orjson differs on big ints, NaN and some float forms).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring  # the C implementation when available
from typing import Any

_PARAMS_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
_encode_params = _PARAMS_ENCODER.encode
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_INTERMEDIATE = json.JSONEncoder(sort_keys=True, ensure_ascii=False)


def params_json(arguments: dict[str, Any]) -> str:
    """The reference's `params` string: sorted keys, non-ASCII kept, `", "`/`": "` separators."""
    return _encode_params(arguments)


def normalize_call(arguments: dict[str, Any], task_time: str) -> str:
    """The normalised cache key of one call (what the released `_cache.json` files are keyed by)."""
    return (
        '[["params",' + encode_basestring(_encode_params(arguments))
        + '],["time",' + encode_basestring(task_time) + "]]"
    )


def intermediate_key(arguments: dict[str, Any], task_time: str) -> str:
    """The reference's intermediate key (what `<tool>_missed.json` records as `params`)."""
    return _INTERMEDIATE.encode({"params": _encode_params(arguments), "time": task_time})


def normalize_stored_key(key: str) -> str:
    """The reference cache manager's normalisation of a key string.

    A key that parses as a JSON object becomes its sorted `[key, value]` pairs, dumped compactly;
    anything else (already-normalised list keys, unparsable text) is returned unchanged.
    """
    try:
        parsed = json.loads(key)
    except (ValueError, RecursionError):
        return key
    if not isinstance(parsed, dict):
        return key
    return _COMPACT.encode(sorted(parsed.items()))


def params_from_key(key: str) -> str:
    """The params element of a normalised key (the time is dropped); the key itself if absent."""
    try:
        parsed = json.loads(key)
    except (ValueError, RecursionError):
        return key
    if isinstance(parsed, list):
        for pair in parsed:
            if isinstance(pair, list) and len(pair) == 2 and pair[0] == "params":
                return pair[1] if isinstance(pair[1], str) else json.dumps(pair[1])
    elif isinstance(parsed, dict) and isinstance(parsed.get("params"), str):
        return parsed["params"]
    return key


def embedding_text(params: str) -> str:
    """The reference's embedding text: `key: value` pairs joined by " | ", values as Python str().

    `params` is a params JSON string; if it is not a JSON object it is embedded as is.
    """
    try:
        parsed = json.loads(params)
    except (ValueError, RecursionError):
        return params
    if not isinstance(parsed, dict):
        return params
    return " | ".join(f"{k}: {v}" for k, v in parsed.items())


def key_bytes(key: str) -> bytes:
    """UTF-8 bytes of a key; lone surrogates (legal in JSON escapes) pass through."""
    return key.encode("utf-8", "surrogatepass")
