"""The 18 TRIP-Bench tools (paper appendix B.1) over a generated world, as pure functions.

    call(world, name, args, output="json") -> str     # the text the agent sees
    execute(world, name, args, output) -> ToolResult  # the same plus the error category
    tool_schemas() -> list[dict]                      # OpenAI function schemas, paper order

Each tool builds one JSON answer; `output` "json" sends it as it is, "text" as the paper's
lines (render.py; the paper profile's rendering). A call the tool cannot answer gets
`{"error": "..."}` (text: "Error: ...") with a category (`cache_store.types.ERROR_CATEGORIES`
or `not_found` for an unknown id or name). Searches answer `{"total", "page", "page_size",
"showing" | "message", "results": [...]}`; an empty search is not an error. Distances are
straight-line km (`world/geo.py`). The episode's sandbox (`environment.TripSandbox`) runs the
calls off the event loop.

Every parameter of the paper's B.1 is offered; added beyond it: `hotel_name`, `brand`
(hotels), `restaurant_name` (restaurants); `date_str` / `date` accepted for each other.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import tools_poi, tools_transport
from .render import render
from .search import city_named
from .toolspec import Param, ToolError, ToolSpec, dumps
from .world.db import World
from .world.geo import route_estimate


def get_route_estimate(world: World, **a: Any) -> dict[str, Any]:
    km, minutes = route_estimate(a["origin_lat"], a["origin_lng"], a["destination_lat"],
                                 a["destination_lng"])
    return {"distance_km": km, "estimated_travel_time_min": minutes,
            "summary": f"distance: {km:.2f} km, estimated travel time: {minutes} min"}


def get_city_center_coords(world: World, city_name: str) -> dict[str, Any]:
    try:
        city = city_named(world, city_name, "city_name")
    except ToolError:
        raise ToolError("not_found", "No city center coordinates found for the given city "
                        f"name: {city_name}.") from None
    return {"city": city["name"], "lon": city["lon"], "lat": city["lat"]}


def get_date_after(world: World, date_str: str, days: int) -> dict[str, Any]:
    date = dt.date.fromisoformat(date_str) + dt.timedelta(days=days)
    return {"date": date.isoformat(), "weekday": date.strftime("%A")}


_GENERAL = (
    ToolSpec("get_route_estimate", "Straight-line distance and estimated in-city travel time "
             "between two points.",
             (Param("origin_lat", "number", "Origin latitude.", required=True, minimum=-90,
                    maximum=90),
              Param("origin_lng", "number", "Origin longitude.", required=True, minimum=-180,
                    maximum=180),
              Param("destination_lat", "number", "Destination latitude.", required=True,
                    minimum=-90, maximum=90),
              Param("destination_lng", "number", "Destination longitude.", required=True,
                    minimum=-180, maximum=180)), get_route_estimate),
    ToolSpec("get_city_center_coords", "A city's centre coordinates.",
             (Param("city_name", "string", "City name.", required=True),),
             get_city_center_coords),
    ToolSpec("get_date_after", "The date that is `days` days after a YYYY-MM-DD date.",
             (Param("date_str", "date", "Start date YYYY-MM-DD.", required=True),
              Param("days", "integer", "Days to add (may be negative).", required=True,
                    minimum=-3660, maximum=3660)), get_date_after),
)

# the paper's order: attractions, hotels, flights, trains, restaurants, general
SPECS: dict[str, ToolSpec] = {s.name: s for s in (
    *tools_poi.SPECS[:6], *tools_transport.SPECS, *tools_poi.SPECS[6:], *_GENERAL)}
TOOL_NAMES = tuple(SPECS)


def tool_schemas() -> list[dict[str, Any]]:
    """Fresh copies of the OpenAI function schemas of the 18 tools."""
    return [spec.schema() for spec in SPECS.values()]


@dataclass(frozen=True)
class ToolResult:
    content: str
    category: str | None = None     # None = a normal answer

    @property
    def is_error(self) -> bool:
        return self.category is not None


OUTPUTS = ("json", "text")


def execute(world: World, name: str, args: Mapping[str, Any] | str | None,
            output: str = "json") -> ToolResult:
    """One call; `output` "json" (an object, `{"error": ...}` for an error) or "text" (the
    paper's lines, render.py; an error is its message)."""
    text = output == "text"

    def _error(category: str, message: str) -> ToolResult:
        return ToolResult(f"Error: {message}" if text else dumps({"error": message}), category)

    spec = SPECS.get(name)
    if spec is None:
        return _error("unknown_tool", f"unknown tool {name!r}; the tools are: "
                      f"{', '.join(TOOL_NAMES)}")
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as exc:
            return _error("malformed_json", f"the arguments are not valid JSON: {exc}")
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        return _error("malformed_json", "the arguments must be a JSON object, got "
                      f"{type(args).__name__}")
    try:
        answer = spec.fn(world, **spec.bind(args))
        return ToolResult(render(name, answer) if text else dumps(answer))
    except ToolError as exc:
        return _error(exc.category, exc.message)
    except Exception as exc:  # noqa: BLE001 - a bug or a broken file: an error, not a crash
        return _error("execution_error", f"{name} failed: {type(exc).__name__}: {exc}")


def call(world: World, name: str, args: Mapping[str, Any] | str | None,
         output: str = "json") -> str:
    """The text the agent sees for one call (JSON, or the paper's lines)."""
    return execute(world, name, args, output).content
