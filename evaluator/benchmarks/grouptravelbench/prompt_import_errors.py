"""The error texts of an imported GroupTravelBench set (`tool_errors.txt`): the reference's,
read from its tool modules' validators, its tool registry, agent loop and tool simulator.

Nothing is executed (`ast`). Each text is found by its place in the reference's code, not by
its wording: the file, the function, and its place among that function's `{"error": ...}`
values in source order (`SCHEDULE`); each f-string expression must be one `FIELD_OF` knows.
A validator's text for one argument becomes `<tool>:<argument>:<key>`, a text of the tool's
generic schema checks `<tool>:<key>` (`tool_errors.py`); keys the reference never reaches
(unparseable or non-object arguments, which its agent answers itself; live tools; a check
that raised) keep the built-in texts. A checkout whose code has moved on stops the import with
one line naming the file and function.

Two sandbox texts are composed as the reference composes them at run time: an unknown tool is
the agent loop's `Error executing tool: {exc}` around the registry's `ToolNotFoundError`
message, and an argument named like a parameter of the registry's `execute_tool` (`self`,
`name`) is the same prefix around the `TypeError` Python (3.10+) raises for it,
`<Class>.execute_tool() got multiple values for argument '<name>'`.
"""

from __future__ import annotations

import ast
from pathlib import Path

from evaluator.prompt_import import ImportFailed, one_function, parse_source

from .tool_errors import builtin, dump_catalogue

REPOSITORY = "small-xiangcheng/GroupTravelbench"
_T = "group_travelbench/tools"

_VALUE_EXPRS = ("city", "location", "origin", "destination", "date_str", "time_str", "days",
                "route_range", "route_index", "poi_limit", "page_size", "page", "radius_km",
                "params_dict['mode']", "params_dict['sort_by']", "params_dict['city']",
                "params_dict['price_min']", "params_dict['price_max']", "args['sort_by']",
                "args['train_type_filter']")
FIELD_OF: dict[str, str] = {
    "param_name": "key", "required_param": "key",
    "list(schema_properties.keys())": "accepted_repr", "valid_list": "accepted_quoted",
    "unknown_list": "unknown_quoted", "missing_list": "missing_quoted",
    "valid_types": "expected_repr", "expected_type": "expected",
    "type(param_value).__name__": "got", "valid_modes": "allowed_repr",
    "valid_sort_values": "allowed_repr", "valid_filter_values": "allowed_repr",
    "lon": "lon", "lat": "lat", "str(e)": "error", "tool_name": "name", "name": "name",
    **{e: "value" for e in _VALUE_EXPRS},
}
"""A reference f-string expression -> the catalogue field it is (`tool_errors.py`)."""

# one text: (catalogue keys it is the text of, the argument it concerns or "" for the tool's
# generic checks); None skips a text agentsweep never sends (a check the reference cannot
# reach: its arguments are always `json.dumps` of a dict)
Entry = tuple[tuple[str, ...], str] | None


def _k(*keys: str, arg: str = "") -> Entry:
    return keys, arg


_PARSE: list[Entry] = [None, None]
_ANY = [*_PARSE, _k("unknown_parameter"), _k("missing_required"), _k("null_not_allowed"),
        _k("wrong_type_any"), _k("wrong_type")]
_PLAIN = [*_PARSE, _k("unknown_parameter"), _k("missing_required"), _k("wrong_type")]
_COORD = [_k("coordinate_format"), _k("coordinate_numbers"), _k("longitude_range"),
          _k("latitude_range")]
_CLOCK = [_k("time_format"), _k("time_hour"), _k("time_minute"), None]
_RANGE = ("range_low", "range_high")
_ENDPOINTS = [_k("empty", arg="origin"), _k("empty", arg="destination")]
_CITIES = [_k("empty", arg="origin"), _k("city_unknown", arg="origin"),
           _k("empty", arg="destination"), _k("city_unknown", arg="destination"),
           _k("date_format", arg="date"), _k("date_invalid", arg="date"), _k("time_window")]

SCHEDULE: dict[str, dict[str, list[Entry]]] = {
    "maps_geo": {"_validate_parameters": [*_ANY, _k("empty", arg="address")]},
    "maps_weather": {"_validate_parameters": [
        *_PLAIN, _k("empty", arg="location"), _k("city_unknown", arg="location"),
        _k("date_format", arg="date"), _k("date_invalid", arg="date"),
        _k("range_low", arg="days"), _k("range_high", arg="days")]},
    "travel_search_flights": {
        "_validate_parameters": [*_ANY, *_CITIES, _k("choice", arg="sort_by")],
        "_validate_time_format": _CLOCK},
    "travel_search_trains": {
        "_validate_parameters": [*_ANY, *_CITIES, _k("choice", arg="sort_by"),
                                 _k("choice", arg="train_type_filter")],
        "_validate_time_format": _CLOCK},
    "web_search": {"_validate_parameters": [*_PLAIN, _k("empty", arg="query")]},
    "search_poi": {
        "_validate_parameters": [
            *_ANY, _k("empty", arg="keywords"), _k("empty", arg="city"),
            _k("city_unknown", arg="city"), _k("choice", arg="sort_by"),
            _k(*_RANGE, arg="page_size"), _k("minimum", arg="page"),
            _k("above", arg="radius_km"), _k("minimum", arg="price_min"),
            _k("minimum", arg="price_max"), _k("price_order"), _k("empty", arg="location")],
        "_validate_location_coordinate": _COORD},
    "get_poi_detail": {"_validate_parameters": [*_PLAIN, _k("empty", arg="id")]},
    "plan_route": {
        "_validate_parameters": [*_ANY, *_ENDPOINTS, _k("choice", arg="mode"),
                                 _k("date_format", arg="date"), _k("date_invalid", arg="date"),
                                 _k("city_unknown", arg="city"), _k("transit_city")],
        "_validate_coordinate": _COORD, "_validate_time_format": _CLOCK},
    "compare_routes": {
        "_validate_parameters": [*_ANY, *_ENDPOINTS, _k("city_unknown", arg="city")],
        "_validate_coordinate": _COORD},
    "search_along_route": {
        "_validate_parameters": [*_ANY, *_ENDPOINTS, _k("empty", arg="keywords"),
                                 _k("choice", arg="mode"), _k(*_RANGE, arg="route_range"),
                                 _k("minimum", arg="route_index"),
                                 _k(*_RANGE, arg="poi_limit"), _k("city_unknown", arg="city")],
        "_validate_coordinate": _COORD},
}
"""tool module -> validator function -> its `{"error": ...}` texts in source order."""


def _template(node: ast.AST, where: str) -> str:
    """A string constant or f-string as a catalogue template (`{field}` for each expression,
    a literal brace doubled never occurs in the reference's texts)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if not isinstance(node, ast.JoinedStr):
        raise ImportFailed(f"{where}: expected a string, found {ast.unparse(node)[:60]}")
    out = []
    for part in node.values:
        if isinstance(part, ast.Constant):
            out.append(str(part.value))
            continue
        assert isinstance(part, ast.FormattedValue)
        expr = ast.unparse(part.value)
        if part.conversion != -1 or part.format_spec is not None or expr not in FIELD_OF:
            raise ImportFailed(f"{where}: unknown expression {{{expr}}} (the reference's code "
                               "has moved on from the one this importer reads)")
        out.append("{" + FIELD_OF[expr] + "}")
    return "".join(out)


def _error_values(fn: ast.FunctionDef) -> list[ast.AST]:
    """The values of the function's `{"error": ...}` dicts, in source order."""
    values = [v for n in ast.walk(fn) if isinstance(n, ast.Dict)
              for k, v in zip(n.keys, n.values, strict=True)
              if isinstance(k, ast.Constant) and k.value == "error"]
    return sorted(values, key=lambda v: (v.lineno, v.col_offset))


def _validators(checkout: Path) -> dict[str, tuple[str, bool]]:
    entries: dict[str, tuple[str, bool]] = {}
    for tool, functions in SCHEDULE.items():
        rel = f"{_T}/{tool}.py"
        tree = parse_source(checkout, rel, REPOSITORY)
        for fname, schedule in functions.items():
            values = _error_values(one_function(tree, fname, rel))
            where = f"{rel}: {fname}"
            if len(values) != len(schedule):
                raise ImportFailed(f"{where}: expected {len(schedule)} error texts, found "
                                   f"{len(values)} (the reference's code has moved on)")
            for value, entry in zip(values, schedule, strict=True):
                if entry is None:
                    continue
                keys, arg = entry
                text = _template(value, where)
                for key in keys:
                    entries[f"{tool}:{arg}:{key}" if arg else f"{tool}:{key}"] = (text, True)
    return entries


def _only(nodes: list[ast.AST], where: str, what: str) -> ast.AST:
    if len(nodes) != 1:
        raise ImportFailed(f"{where}: expected one {what}, found {len(nodes)}")
    return nodes[0]


def _sandbox(checkout: Path) -> dict[str, tuple[str, bool]]:
    """The texts of the reference's registry, agent loop and simulator (module doc)."""
    core, agent = "group_travelbench/core/tools.py", "group_travelbench/agents/group_agent.py"
    sim = "group_travelbench/simulators/tool_simulator.py"
    core_tree = parse_source(checkout, core, REPOSITORY)
    cached = one_function(core_tree, "_cached_execute", core)
    where = f"{core}: _cached_execute"
    empty = _only([n.value for n in ast.walk(cached) if isinstance(n, ast.Assign)
                   and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                   and any(isinstance(t, ast.Name) and t.id == "simulated_result"
                           for t in n.targets)], where, "text for an empty answer")
    plain = [v for v in _error_values(cached) if isinstance(v, ast.Constant)]
    no_sim = _only(plain, where, "constant error text (no simulator)")
    execute = one_function(core_tree, "execute_tool", core)
    where = f"{core}: execute_tool"
    missing = _only([n.exc.args[0] for n in ast.walk(execute) if isinstance(n, ast.Raise)
                     and isinstance(n.exc, ast.Call) and len(n.exc.args) == 1], where,
                    "raise with a message")
    owner = _only([c.name for c in ast.walk(core_tree) if isinstance(c, ast.ClassDef)
                   and execute in c.body], where, "class defining it")
    where = f"{agent}: generate_response"
    wrapper = _only([n for n in ast.walk(one_function(parse_source(checkout, agent, REPOSITORY),
                                                      "generate_response", agent))
                     if isinstance(n, ast.JoinedStr) and len(n.values) == 2
                     and isinstance(n.values[1], ast.FormattedValue)
                     and ast.unparse(n.values[1].value) == "str(exc)"], where,
                    "f-string ending in {str(exc)}")
    head = wrapper.values[0]
    if not (isinstance(head, ast.Constant) and isinstance(head.value, str)):
        raise ImportFailed(f"{where}: the tool-error prefix is not a plain string")
    prefix = head.value
    where = f"{sim}: simulate_tool_response"
    failed = _only([n.value for n in ast.walk(one_function(parse_source(checkout, sim, REPOSITORY),
                                                           "simulate_tool_response", sim))
                    if isinstance(n, ast.Return) and isinstance(n.value, ast.JoinedStr)],
                   where, "f-string returned")
    reserved = f"{owner}.execute_tool() got multiple values for argument '{{key}}'"
    return {
        "empty_result": (_template(empty, f"{core}: _cached_execute"), False),
        "no_simulator": (_template(no_sim, f"{core}: _cached_execute"), True),
        "unknown_tool": (prefix + _template(missing, f"{core}: execute_tool"), False),
        "reserved_argument": (prefix + reserved, False),
        "simulation_failed": (_template(failed, where), False),
    }


def error_catalogue(checkout: Path) -> str:
    """The catalogue's JSON text: the built-in texts, replaced and refined by the reference's."""
    entries = dict(builtin().entries)
    entries.update(_sandbox(checkout))
    entries.update(_validators(checkout))
    return dump_catalogue(entries)
