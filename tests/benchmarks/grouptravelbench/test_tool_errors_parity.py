"""Optional parity tests (skipped unless GROUPTRAVELBENCH_REFERENCE names a checkout): with a
set imported from the checkout and `rendering = "reference"`, what the agent reads for every
call `test_tools.py` tries equals what the reference's own validators return, the sandbox's
texts equal the reference's registry and agent loop, and the agent is offered the reference's
registry. The reference's tools are loaded from the checkout (never part of this repository)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.benchmarks.grouptravelbench.prompt_import import import_reference
from evaluator.benchmarks.grouptravelbench.prompting import PROMPT_ROLES, tool_list
from evaluator.benchmarks.grouptravelbench.tool_errors import of_prompts
from evaluator.benchmarks.grouptravelbench.validation import validate
from evaluator.benchmarks.travelbench.adcode import load_regions
from evaluator.prompt_sets import load_prompt_set, prompt_deviation

from .reference import checkout, reference_tools
from .test_tools import REJECTED, SCHEMAS, VALID, _case

PREFIX_ERRORS = [  # the generic schema checks, on every tool
    (name, change) for name in VALID for change in (
        {"nonexistent": 1}, {"a_unknown": 1, "z_unknown": 2},
        {next(iter(SCHEMAS[name]["required"])): None},
        {k: 12345 for k in list(SCHEMAS[name]["properties"])[:1]},
        {k: ["x"] for k in SCHEMAS[name]["properties"]})
] + [(name, {"__drop_required__": True}) for name in VALID]


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    ref = checkout()
    out = tmp_path_factory.mktemp("sets") / "gtb-ref"
    import_reference(ref, out=out, name="gtb-ref")
    return load_prompt_set(out, PROMPT_ROLES)


def _calls() -> list[tuple[str, dict]]:
    calls = [(name, dict(VALID[name])) for name in VALID]
    calls += [(name, _case(name, change)) for name, change, _ in REJECTED]
    for name, change in PREFIX_ERRORS:
        if "__drop_required__" in change:
            args = dict(VALID[name])
            for key in SCHEMAS[name].get("required") or []:
                args.pop(key, None)
            calls.append((name, args))
        else:
            calls.append((name, {**VALID[name], **change}))
    return calls


def test_every_refusal_reads_as_the_references(imported):
    catalogue = of_prompts(imported)
    regions = load_regions(checkout() / "group_travelbench" / "tools" / "adcode.txt")
    compared = refused = 0
    with reference_tools() as core:
        registry = core.sandbox_tool_registry
        for name, args in _calls():
            theirs = registry.get_tool(name)._validate_parameters(
                json.dumps(args, sort_keys=True, ensure_ascii=False))
            ours = validate(name, args, SCHEMAS[name], "", regions, texts=catalogue,
                            reference=True)
            assert (ours[1] if ours else "") == theirs, (name, args)
            compared += 1
            refused += ours is not None
    assert compared > 150 and refused > 130


def test_the_sandbox_texts_and_tool_list_are_the_references(imported):
    catalogue = of_prompts(imported)
    assert prompt_deviation(imported, "grouptravelbench") is None
    texts = catalogue.sandbox_texts()
    with reference_tools() as core:
        registry = core.sandbox_tool_registry
        offered = [t.to_openai_format() for t in registry.get_tools()]
        for args in ({"name": "x"}, {"self": 1}):
            with pytest.raises(TypeError) as raised:
                registry.execute_tool("web_search", **args)
            key = next(iter(args))
            # the agent loop's wrapping of an exception (agents/group_agent.py)
            theirs = f"Error executing tool: {raised.value}"
            ours = validate("web_search", {**args, "query": "q"}, SCHEMAS["web_search"],
                            texts=catalogue, reference=True)
            assert ours is not None and ours[1] == theirs, key
        with pytest.raises(core.ToolNotFoundError) as missing:
            registry.execute_tool("no_such_tool")
    assert texts.text("unknown_tool", name="no_such_tool") == (
        f"Error executing tool: {missing.value}")
    assert "unknown_tool" in texts.bare and "simulation_failed" in texts.bare
    assert tool_list(imported, "agent_tools") == offered


def test_reference_texts_need_the_reference_rendering_only_for_collisions(imported):
    """Which calls are refused does not depend on `reference`; only the dispatcher's
    collisions (`name`, `self`) are refused with it alone."""
    catalogue = of_prompts(imported)
    regions = load_regions(Path(checkout()) / "group_travelbench" / "tools" / "adcode.txt")
    for name, args in _calls():
        plain = validate(name, args, SCHEMAS[name], "", regions, texts=catalogue)
        ref = validate(name, args, SCHEMAS[name], "", regions, texts=catalogue, reference=True)
        assert (plain is None) == (ref is None), (name, args)


def test_the_simulator_prompt_is_the_references(imported):
    """Under the reference rendering the simulator is shown the set's `TOOLS_SCHEMAS` as Python
    renders a dict, in the set's templates: the reference's `_build_simulation_prompt`."""
    from types import SimpleNamespace

    from cache_store.simulator import build_messages

    shown = {t["function"]["name"]: t["function"]
             for t in tool_list(imported, "tool_simulator_tools") or []}
    examples = [('{"city": "西安市", "keywords": "酒店"}', '{"pois": []}'),
                ('{"query": "{braces}"}', "result with {braces}")]
    with reference_tools():
        import importlib

        sim = importlib.import_module("group_travelbench.simulators.tool_simulator")
        for name, args in [(n, VALID[n]) for n in VALID]:
            for ex in (examples, []):
                schema = sim.LLMToolSimulator._get_tool_schema(None, name)
                theirs = sim.LLMToolSimulator._build_simulation_prompt(
                    SimpleNamespace(max_examples=8), name, schema,
                    json.loads(json.dumps(args, sort_keys=True)), ex)
                ours = build_messages(shown[name], args, ex, "v1", imported.simulator_sections,
                                      parameters="python")
                assert [m.content for m in ours] == [m.content for m in theirs], name
