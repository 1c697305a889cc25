"""An invented TravelBench checkout's code around its error texts: each tool's validators, its
dispatcher and tool simulator, in the reference's file layout and code shapes
(the messages an importer looks for: `{'error': ...}` dict values and returned strings, in
order), with invented wording. `FAKE_TEXTS` says which text each catalogue key must get."""

from __future__ import annotations

from evaluator.benchmarks.travelbench.prompt_import_data import _SCHEDULE

FAKE_TEXTS: dict[tuple[str, str], str] = {}
"""(tool, key) -> the catalogue template the importer must make of the invented text."""

_FIELD_NAMES = {"missing_list": "missing", "unknown_list": "unknown", "valid_list": "valid"}


def _message(tool: str, func: str, key: str, fields: dict[str, str], as_json: bool) -> str:
    """One message statement: the invented f-string, placed as the reference places it."""
    text = f"Fake {tool} {key}:" + "".join(f" {{{expr}}}" for expr in fields)
    if not key.startswith("unused"):  # a text the importer skips
        FAKE_TEXTS[(tool, key)] = f"Fake {tool} {key}:" + "".join(
            f" {{{name}}}" for name in fields.values())
    literal = 'f"' + text + '"'
    if func == "_resolve_region_to_adcode":
        return f'return "", {literal}'
    if func == "_validate_params" and tool != "web_search":
        return f"return {literal}"
    if as_json:
        return f"return json.dumps({{'error': {literal}}}, ensure_ascii=False)"
    return f"return {literal}"


def tool_file(tool: str) -> str:
    lines = ["import json", "", "", "def _resolve_region_to_adcode(region):",
             "    if not region:", '        return "", ""']
    funcs = _SCHEDULE[tool]
    for i, entry in enumerate(funcs.get("_resolve_region_to_adcode", [])):
        assert entry is not None
        lines += [f"    if region == {i}:", "        " + _message(tool, "_resolve_region_to_adcode",
                                                                 *entry)]
    lines += ['    return "1", ""', "", "", "class FakeTool:"]
    for func in ("_validate_params", "_validate_parameters"):
        lines += [f"    def {func}(self, args, time=None):"]
        for i, entry in enumerate(funcs.get(func, [])):
            if entry is None:
                entry = (f"unused{i}", {}, True)
            lines += [f"        if args == {i}:",
                      "            " + _message(tool, func, *entry)]
        if tool == "map_search_places" and func == "_validate_parameters":
            lines += ["        error = 'x'", "        if error:",
                      "            return json.dumps({'error': error}, ensure_ascii=False)"]
        lines += ['        return ""', ""]
    return "\n".join(lines) + "\n"


CORE = '''
import json


class FakeRegistry:
    def execute_tool(self, name, time, **kwargs):
        raise LookupError(f"Fake no such tool {name}")


class FakeTool:
    def _cached_execute(self, time, params):
        try:
            simulated_result = simulate()
            if simulated_result == "":
                simulated_result = "Fake nothing found."
        except Exception as e:
            return False, json.dumps({'error': f'Fake simulation broke {str(e)}'})
        return False, json.dumps({'error': 'Fake no cache, no simulator'})
'''

SIMULATOR = '''
class FakeSimulator:
    def simulate_tool_response(self, tool_name, params):
        try:
            return run()
        except Exception as e:
            return f"Fake simulator died for {tool_name}: {str(e)}"
'''


def files() -> dict[str, str]:
    """rel path -> text of the invented files (the agent loop's text is in test_prompt_sets's
    assistant.py)."""
    out = {f"travelbench/tools/{tool}.py": tool_file(tool) for tool in _SCHEDULE}
    out["travelbench/core/tools.py"] = CORE
    out["travelbench/simulators/tool_simulator.py"] = SIMULATOR
    return out
