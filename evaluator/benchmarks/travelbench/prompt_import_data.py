"""The data roles of an imported TravelBench set: the judges' and the tool simulator's tool
lists, and the error texts of the reference's validators (`tool_errors.py`'s keys).

Everything is read from the checkout's syntax trees (never executed). Each error text is found
by where it is in the reference's code, not by its wording: the file, the function, and its
place among that function's message strings (the value of an `{'error': ...}` dict, or a
string it returns, alone or as the second item of a tuple), and the f-string's expressions must
be the ones listed here. A checkout whose code has moved on stops the import with one line
naming the file and function.
"""

from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path
from typing import Any

from evaluator.prompt_import import ImportFailed, one_function, parse_source

from .tool_errors import ALIASES, FIELDS, builtin, dump_catalogue

REPOSITORY = "small-xiangcheng/TravelBench"
_TOOLS = "travelbench/tools"

_LISTS = {"missing_list": "missing"}, {"unknown_list": "unknown", "valid_list": "valid"}
_DATE_RANGE = {"current_time.strftime('%Y-%m-%d')": "today",
               "max_allowed_date.strftime('%Y-%m-%d')": "last_day", "date": "date"}
_PRICES: list[tuple[str, dict[str, str]]] = [
    ("radius_out_of_range", {"radius": "radius"}),
    ("min_rating_out_of_range", {"min_rating": "min_rating"}),
    ("price_min_negative", {"price_min": "price_min"}),
    ("price_max_negative", {"price_max": "price_max"}),
    ("price_order", {"price_min": "price_min", "price_max": "price_max"}),
    ("limit_below_one", {"limit": "limit"}),
]
_DATES: list[tuple[str, dict[str, str]]] = [("date_format", {"date": "date"}),
                                            ("date_too_late", _DATE_RANGE),
                                            ("date_check_failed", {"str(e)": "error"})]

# tool -> function -> the function's message strings in order: (key, expression -> field,
# sent as {"error": text}); None skips a string this project does not use
Messages = list[tuple[str, dict[str, str], bool] | None]
_SCHEDULE: dict[str, dict[str, Messages]] = {
    "travel_search_flights": {
        "_validate_parameters": [("days_out_of_range", {"days": "days"}, True),
                                 ("endpoints_empty", {}, False),
                                 *[(k, f, True) for k, f in _DATES]]},
    "travel_search_trains": {
        "_resolve_region_to_adcode": [("region_empty", {}, False),
                                      ("region_unknown", {"region": "region"}, False),
                                      ("region_ambiguous", {"region": "region",
                                       "', '.join(candidates)": "candidates"}, False),
                                      ("region_failed", {"note": "note"}, False)],
        "_validate_parameters": [("days_out_of_range", {"days": "days"}, True),
                                 ("origin_unresolved", {"origin_error": "error"}, True),
                                 ("destination_unresolved", {"dest_error": "error"}, True),
                                 *[(k, f, True) for k, f in _DATES]]},
    "weather_current_conditions": {},
    "weather_forecast_days": {
        "_validate_parameters": [("days_out_of_range", {"days": "days"}, True),
                                 *[(k, f, True) for k, f in _DATES]]},
    "map_compute_routes": {
        "_validate_parameters": [("times_exclusive", {}, True),
                                 ("origin_format", {"origin": "origin"}, True),
                                 ("destination_format", {"destination": "destination"}, True),
                                 ("waypoint_format", {"i + 1": "n", "coord": "coord"}, True),
                                 ("mode_unsupported", {"mode": "mode"}, True)]},
    "map_search_places": {
        "_resolve_region_to_adcode": [("region_unknown", {"region": "region"}, False),
                                      ("region_ambiguous", {"region": "region",
                                       "', '.join(candidates)": "candidates"}, False),
                                      ("region_failed", {"note": "note"}, False)],
        "_validate_params": [None, None, ("price_category_required", {}, True),
                             ("price_sort_needs_category", {}, True)],
        "_validate_parameters": [*[(k, f, True) for k, f in _PRICES],
                                 ("center_format", {"center": "center"}, True)]},
    "map_search_along_route": {
        "_validate_parameters": [("limit_below_one", {"limit": "limit"}, True),
                                 ("origin_format", {"origin": "origin"}, True),
                                 ("destination_format", {"destination": "destination"}, True)]},
    "map_search_central_places": {
        "_validate_params": [None, None, ("price_category_required", {}, True)],
        "_validate_parameters": [*[(k, f, True) for k, f in _PRICES],
                                 ("origins_too_few", {}, True),
                                 ("origin_point_format", {"i + 1": "n", "coord_str": "coord"},
                                  True)]},
    "map_search_ranking_list": {
        "_validate_parameters": [("max_lists_out_of_range", {"max_lists": "max_lists"}, True),
                                 ("max_items_out_of_range", {"max_items": "max_items"}, True)]},
    "web_search": {
        "_validate_params": [("missing_parameters", {"', '.join(missing_params)": "missing"},
                              True),
                             ("unknown_parameters", {"', '.join(unknown_params)": "unknown",
                              "', '.join(sorted(valid_params))": "valid"}, True)],
        "_validate_parameters": [None]},  # unreachable: the arguments are always JSON there
}
for _tool, _funcs in _SCHEDULE.items():  # every other tool: required / unknown arguments
    if _tool != "web_search":
        head: Messages = [("missing_parameters", _LISTS[0], True),
                          ("unknown_parameters", _LISTS[1], True)]
        _funcs["_validate_params"] = head + list(_funcs.get("_validate_params", [])[2:])


def _messages(fn: ast.FunctionDef) -> list[ast.expr]:
    """The function's message strings, in source order."""
    out: list[ast.expr] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Dict):
            out += [v for k, v in zip(node.keys, node.values, strict=True)
                    if isinstance(k, ast.Constant) and k.value == "error" and _is_text(v)]
        elif isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if isinstance(value, ast.Tuple) and len(value.elts) == 2:
                value = value.elts[1]
            if _is_text(value) and not (isinstance(value, ast.Constant) and not value.value):
                out.append(value)
    return sorted(set(out), key=lambda n: (n.lineno, n.col_offset))


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant)
                                                and isinstance(node.value, str))


def _template(node: ast.expr, fields: dict[str, str], where: str) -> str:
    """The string as one of our templates (`{field}`); ImportFailed when its expressions are
    not `fields` or its literal text has a brace we could not tell from a field."""
    if isinstance(node, ast.Constant):
        parts: list[tuple[bool, str]] = [(False, node.value)]
    else:
        assert isinstance(node, ast.JoinedStr)
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append((False, str(value.value)))
                continue
            expr = ast.unparse(value.value) if isinstance(value, ast.FormattedValue) else "?"
            if (not isinstance(value, ast.FormattedValue) or value.conversion != -1
                    or value.format_spec is not None or expr not in fields):
                raise ImportFailed(f"{where}: {{{expr}}} is not one of the expected fields "
                                   f"({', '.join(fields) or 'none'})")
            parts.append((True, fields[expr]))
    used = {t for ph, t in parts if ph}
    if used != set(fields.values()):
        raise ImportFailed(f"{where}: expected the fields {', '.join(fields)}")
    if any("{" in t or "}" in t for ph, t in parts if not ph):
        raise ImportFailed(f"{where}: a literal brace, which an error text cannot hold")
    return "".join(f"{{{t}}}" if ph else t for ph, t in parts)


def _tool_messages(checkout: Path) -> dict[str, dict[str, tuple[str, bool]]]:
    """key -> tool -> (template, sent as JSON), from every tool's validators."""
    found: dict[str, dict[str, tuple[str, bool]]] = {}
    for tool, funcs in _SCHEDULE.items():
        rel = f"{_TOOLS}/{tool}.py"
        tree = parse_source(checkout, rel, REPOSITORY)
        for fname, schedule in funcs.items():
            where = f"{rel}: {fname}"
            nodes = _messages(one_function(tree, fname, rel))
            if len(nodes) != len(schedule):
                raise ImportFailed(f"{where}: expected {len(schedule)} error texts, found "
                                   f"{len(nodes)} (is the checkout at commit 445a29d?)")
            for i, (node, entry) in enumerate(zip(nodes, schedule, strict=True)):
                if entry is None:
                    continue
                key, fields, as_json = entry
                text = _template(node, fields, f"{where} (error text {i + 1})")
                found.setdefault(key, {})[tool] = (text, as_json)
    return found


def _core_texts(checkout: Path) -> dict[str, tuple[str, bool]]:
    """The texts of the reference's dispatcher, agent loop and simulator."""
    core = "travelbench/core/tools.py"
    tree = parse_source(checkout, core, REPOSITORY)
    cached = one_function(tree, "_cached_execute", core)
    nodes = _messages(cached)
    if len(nodes) != 2:
        raise ImportFailed(f"{core}: _cached_execute: expected 2 error texts, found "
                           f"{len(nodes)}")
    no_simulator = _template(nodes[1], {}, f"{core}: _cached_execute")
    empties = {n.value.value for n in ast.walk(cached) if isinstance(n, ast.Assign)
               and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
               and any(isinstance(t, ast.Name) and t.id in ("simulated_result", "result")
                       for t in n.targets)}
    if len(empties) != 1:
        raise ImportFailed(f"{core}: _cached_execute: expected one empty-result text, found "
                           f"{len(empties)}")
    dispatch = one_function(tree, "execute_tool", core)
    owner = [c.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
             and dispatch in c.body]
    raised = [n.exc.args[0] for n in ast.walk(dispatch) if isinstance(n, ast.Raise)
              and isinstance(n.exc, ast.Call) and n.exc.args and _is_text(n.exc.args[0])]
    if len(owner) != 1 or len(raised) != 1:
        raise ImportFailed(f"{core}: execute_tool: not the method of one class raising one "
                           "text for an unknown tool")
    not_found = _template(raised[0], {"name": "name"}, f"{core}: execute_tool")

    agent = "travelbench/agents/assistant.py"
    loop = one_function(parse_source(checkout, agent, REPOSITORY), "_handle_tool_calls", agent)
    wrappers = [k.value for k in ast.walk(loop) if isinstance(k, ast.keyword)
                and k.arg == "content" and isinstance(k.value, ast.JoinedStr)]
    if len(wrappers) != 1:
        raise ImportFailed(f"{agent}: _handle_tool_calls: expected one f-string content=, "
                           f"found {len(wrappers)}")
    wrap = _template(wrappers[0], {"str(e)": "error"}, f"{agent}: _handle_tool_calls")

    sim = "travelbench/simulators/tool_simulator.py"
    simulate = one_function(parse_source(checkout, sim, REPOSITORY), "simulate_tool_response",
                         sim)
    failed = _messages(simulate)
    if len(failed) != 1:
        raise ImportFailed(f"{sim}: simulate_tool_response: expected one error text, found "
                           f"{len(failed)}")
    sim_failed = _template(failed[0], {"tool_name": "name", "str(e)": "error"},
                           f"{sim}: simulate_tool_response")
    # Python's own words for a keyword that collides with the dispatcher's parameters
    reserved = f"{owner[0]}.execute_tool() got multiple values for argument '{{key}}'"
    return {
        "execution_error": (wrap, False),
        "unknown_tool": (wrap.replace("{error}", not_found), False),
        "reserved_argument": (wrap.replace("{error}", reserved), False),
        "no_simulator": (no_simulator, True),
        "simulation_failed": (sim_failed, False),
        "empty_result": (empties.pop(), False),
    }


def error_catalogue(checkout: Path) -> str:
    """The `tool_errors` role of an imported set: the reference's texts, per key the wording
    most tools use and, per tool, any other; the keys the reference has no text for
    (strict validation, this project's sandbox checks) keep the built-in texts."""
    entries: dict[str, tuple[str, bool]] = {}
    places_wrap = _places_region_wrap(checkout)
    per_key = _tool_messages(checkout)
    for key, by_tool in per_key.items():
        counts = Counter(by_tool.values())
        common = max(counts, key=lambda e: counts[e])  # the first of the most frequent
        entries[key] = common
        for tool, entry in by_tool.items():
            if entry != common:
                entries[f"{tool}:{key}"] = entry
    entries["region_unresolved"] = places_wrap
    entries.update(_core_texts(checkout))
    entries.update({alias: entries[key] for alias, key in ALIASES.items()})
    own = builtin().entries
    for key in FIELDS:
        if key not in entries:
            entries[key] = own[key]
    return dump_catalogue(entries)


def _places_region_wrap(checkout: Path) -> tuple[str, bool]:
    """map_search_places sends a region failure as {"error": <the resolver's text>}."""
    rel = f"{_TOOLS}/map_search_places.py"
    fn = one_function(parse_source(checkout, rel, REPOSITORY), "_validate_parameters", rel)
    wraps = [v for n in ast.walk(fn) if isinstance(n, ast.Dict)
             for k, v in zip(n.keys, n.values, strict=True)
             if isinstance(k, ast.Constant) and k.value == "error" and isinstance(v, ast.Name)
             and v.id == "error"]
    if len(wraps) != 1:
        raise ImportFailed(f"{rel}: _validate_parameters: expected one {{'error': error}}")
    return "{error}", True


def tool_list(checkout: Path, rel: str) -> str:
    """The `TOOLS_SCHEMAS` constant of `rel` (a Python literal) as JSON text."""
    tree = parse_source(checkout, rel, REPOSITORY)
    nodes = [n.value for n in tree.body if isinstance(n, ast.Assign)
             and any(isinstance(t, ast.Name) and t.id == "TOOLS_SCHEMAS" for t in n.targets)]
    if len(nodes) != 1:
        raise ImportFailed(f"{rel}: expected one constant TOOLS_SCHEMAS, found {len(nodes)}")
    try:
        value: Any = ast.literal_eval(nodes[0])
    except ValueError:
        raise ImportFailed(f"{rel}: TOOLS_SCHEMAS is not a literal") from None
    if not isinstance(value, list):
        raise ImportFailed(f"{rel}: TOOLS_SCHEMAS is not a list")
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def data_files(checkout: Path) -> tuple[dict[str, str], dict[str, str]]:
    """file name -> text (`$` written `$$`, as every role is a `$` template), and its origin."""
    files = {
        "judge_tools.txt": tool_list(checkout, "travelbench/evaluation/prompt.py"),
        "tool_simulator_tools.txt": tool_list(checkout, "travelbench/simulators/prompt.py"),
        "tool_errors.txt": error_catalogue(checkout),
    }
    origin = {
        "judge_tools.txt": f"{REPOSITORY}:travelbench/evaluation/prompt.py:TOOLS_SCHEMAS",
        "tool_simulator_tools.txt":
            f"{REPOSITORY}:travelbench/simulators/prompt.py:TOOLS_SCHEMAS",
        "tool_errors.txt": f"{REPOSITORY}:travelbench/tools/*.py validators, "
                           "core/tools.py, agents/assistant.py, simulators/tool_simulator.py",
    }
    return {k: v.replace("$", "$$") for k, v in files.items()}, origin
