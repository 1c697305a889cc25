"""How a TRIP-Bench tool is declared once and used twice: its OpenAI function schema and the
checking of a call's arguments against it.

Arguments are coerced the way models send them: numbers and booleans may come as strings
("3", "4.5", "true"; the paper's own trajectories do this), a list may come as a
comma-separated string, `null` means "not given", and enum values match case-insensitively.
Anything else that does not fit is a `ToolError` with one of the categories of
`cache_store.types.ERROR_CATEGORIES` (plus `not_found` for unknown ids and names).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .periods import PERIODS, window

# JSON schema type of each parameter kind
_JSON_TYPE = {"string": "string", "date": "string", "period": "string", "number": "number",
              "integer": "integer", "boolean": "boolean", "array": "array"}
_TRUE, _FALSE = {"true", "1", "yes", "y"}, {"false", "0", "no", "n"}
_PERIOD = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*$")


class ToolError(Exception):
    """A call the tool cannot answer: the agent gets `{"error": message}`."""

    def __init__(self, category: str, message: str) -> None:
        super().__init__(message)
        self.category = category
        self.message = message


@dataclass(frozen=True)
class Param:
    name: str
    kind: str                      # string | date | period | number | integer | boolean | array
    description: str
    required: bool = False
    enum: tuple[str, ...] = ()     # strings (or array items) must be one of these
    minimum: float | None = None
    maximum: float | None = None
    default: Any = None


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    params: tuple[Param, ...]
    fn: Callable[..., dict[str, Any]]
    aliases: Mapping[str, str] = field(default_factory=dict)   # accepted other name -> param

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-calling schema."""
        props: dict[str, Any] = {}
        for p in self.params:
            prop: dict[str, Any] = {"type": _JSON_TYPE[p.kind], "description": p.description}
            if p.kind == "array":
                prop["items"] = {"type": "string"}
                if p.enum:
                    prop["items"]["enum"] = list(p.enum)
            elif p.enum:
                prop["enum"] = list(p.enum)
            if p.minimum is not None:
                prop["minimum"] = p.minimum
            if p.maximum is not None:
                prop["maximum"] = p.maximum
            if p.default is not None:
                prop["default"] = p.default
            props[p.name] = prop
        return {"type": "function", "function": {
            "name": self.name, "description": self.description,
            "parameters": {"type": "object", "properties": props,
                           "required": [p.name for p in self.params if p.required]}}}

    def bind(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Checked and coerced keyword arguments (defaults filled in), or ToolError."""
        known = {p.name: p for p in self.params}
        given: dict[str, Any] = {}
        for key, value in args.items():
            name = self.aliases.get(key, key)
            if name not in known:
                raise ToolError("unknown_parameter", f"{self.name} has no parameter {key!r}; "
                                f"its parameters are: {', '.join(known)}")
            if value is not None:
                given[name] = value
        out: dict[str, Any] = {}
        for p in self.params:
            if p.name not in given:
                if p.required:
                    raise ToolError("missing_required",
                                    f"{self.name}: missing required parameter {p.name!r}")
                out[p.name] = p.default
                continue
            out[p.name] = coerce(self.name, p, given[p.name])
        return out


def coerce(tool: str, p: Param, value: Any) -> Any:
    where = f"{tool}: parameter {p.name!r}"
    if p.kind == "array":
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ToolError("wrong_type", f"{where} must be a list of strings")
        return [_enum(where, p, v) for v in value] if p.enum else value
    if p.kind in ("number", "integer"):
        num = _number(where, p, value)
        if p.minimum is not None and num < p.minimum or \
                p.maximum is not None and num > p.maximum:
            raise ToolError("out_of_range", f"{where} must be between {p.minimum} and "
                            f"{p.maximum}, got {value!r}")
        return num
    if p.kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise ToolError("wrong_type", f"{where} must be true or false, got {value!r}")
    if not isinstance(value, str):
        raise ToolError("wrong_type", f"{where} must be a string, got {type(value).__name__}")
    if p.kind == "date":
        return parse_date(where, value)
    if p.kind == "period":
        return parse_period(where, value)
    return _enum(where, p, value) if p.enum else value.strip()


def _number(where: str, p: Param, value: Any) -> float | int:
    if isinstance(value, bool):
        raise ToolError("wrong_type", f"{where} must be a number, got a boolean")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ToolError("wrong_type", f"{where} must be a number, got {value!r}") from None
    if not isinstance(value, int | float) or math.isnan(value) or math.isinf(value):
        raise ToolError("wrong_type", f"{where} must be a number, got {type(value).__name__}")
    if p.kind == "integer":
        if float(value) != int(value):
            raise ToolError("wrong_type", f"{where} must be an integer, got {value!r}")
        return int(value)
    return float(value)


def _enum(where: str, p: Param, value: str) -> str:
    for option in p.enum:
        if option.lower() == value.strip().lower():
            return option
    raise ToolError("bad_enum", f"{where} must be one of {', '.join(p.enum)}; got {value!r}")


def parse_date(where: str, value: str) -> str:
    text = value.strip()
    try:
        if len(text) == 10:
            return dt.date.fromisoformat(text).isoformat()
    except ValueError:
        pass
    raise ToolError("out_of_range", f"{where} must be a date YYYY-MM-DD, got {value!r}")


def parse_period(where: str, value: str) -> tuple[str, str]:
    """"HH:MM-HH:MM" (inclusive; "24:00" may end it) or a named period of `periods.PERIODS`
    (the rubrics' table: "night" is 20:00-24:00 here too)."""
    named = window(value)
    if named:
        return named
    m = _PERIOD.match(value)
    if m:
        h1, m1, h2, m2 = (int(x) for x in m.groups())
        if h1 < 24 and m1 < 60 and m2 < 60 and (h2 < 24 or (h2, m2) == (24, 0)):
            lo, hi = f"{h1:02d}:{m1:02d}", f"{h2:02d}:{m2:02d}"
            if lo <= hi:
                return lo, hi
    names = ", ".join(k.replace("_", " ") for k in PERIODS)
    raise ToolError("out_of_range", f"{where} must be 'HH:MM-HH:MM' (start <= end) or one of "
                    f"{names}; got {value!r}")


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# -- parameters shared by several tools -------------------------------------------------------

def sort_params(keys: tuple[str, ...], default: str, what: str) -> tuple[Param, Param]:
    return (Param("sort_key", "string", f"Field to rank {what} by (default {default}).",
                  enum=keys, default=default),
            Param("sort_order", "string", "asc or desc (default: asc for price, distance and "
                  "time; desc for ratings and popularity).", enum=("asc", "desc")))


PAGE = (Param("page", "integer", "1-based page number.", minimum=1, maximum=10_000, default=1),
        Param("page_size", "integer", "Results per page (1-50).", minimum=1, maximum=50,
              default=10))
LOCATION = (
    Param("latitude", "number", "Reference latitude for distance (default: the city centre).",
          minimum=-90, maximum=90),
    Param("longitude", "number", "Reference longitude for distance (default: the city centre).",
          minimum=-180, maximum=180),
    Param("distance_threshold", "number", "Keep results within this many km of the reference "
          "point.", minimum=0, maximum=500),
)
