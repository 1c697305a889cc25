"""TravelBench's reference mode without the reference: every rule of `options.rendering =
"reference"` and `options.judge_answers = "reference"` pinned on invented prompts and
trajectories, the expected values written out by hand from the reference's rules (read in its
code, docs/prompts.md and docs/judges.md list them): what the agent, the user simulator, the
tool simulator and both judges receive, how answers are read and what that does to a score.
The same behaviour checked against the reference's own code: test_reference_parity.py.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from backends.types import ChatMessage
from bench_data.types import Task
from cache_store.sandbox import Sandbox, SandboxSettings
from cache_store.types import SandboxStyle
from evaluator.benchmarks.base import EnvironmentRequest
from evaluator.benchmarks.travelbench import BENCHMARK, judge_render
from evaluator.benchmarks.travelbench.data import TravelBenchTask
from evaluator.benchmarks.travelbench.environment import style, texts, validator
from evaluator.benchmarks.travelbench.judges import (
    build_meta_prompt,
    build_rubric_prompt,
    meta_version,
    rubric_version,
)
from evaluator.benchmarks.travelbench.options import TravelBenchOptions
from evaluator.benchmarks.travelbench.prompt_import import import_reference
from evaluator.benchmarks.travelbench.reference_episode import resent_arguments
from evaluator.benchmarks.travelbench.tool_errors import builtin
from evaluator.judges.settings import JudgeSettings
from evaluator.prompt_sets import load_prompt_set
from evaluator.protocols import EpisodeContext, ProtocolSettings
from evaluator.records import EpisodeRecord, Judgement, ToolCallRecord, UnitId
from tests.benchmarks.travelbench.reference_harness import ScriptedChat, ScriptedRole, Turn
from tests.evaluator.fake_travelbench_ref import FAKE_TEXTS
from tests.evaluator.test_prompt_sets import make_checkout

REF = TravelBenchOptions(rendering="reference", judge_answers="reference")
FINISH = "[Finish Conversation]"
SCHEMA = [{"type": "function", "function": {
    "name": "web_search", "description": "搜索",
    "parameters": {"type": "object", "required": ["query"],
                   "properties": {"query": {"type": "string"}}}}}]


@pytest.fixture
def fake_set(tmp_path: Path) -> Any:
    out, _ = import_reference(make_checkout(tmp_path / "ref"), tmp_path / "set", name="fake")
    return load_prompt_set(out, BENCHMARK.prompts)


def task(subset: str = "single_turn", context: str = "  near 北京站\n", **kw: Any) -> Task:
    payload = TravelBenchTask(trace_id="7", time="2025-10-24 10:00", query="查一下天气",
                              context=context, **kw)
    return Task(benchmark="travelbench", subset=subset, task_id="7", payload=payload)


def sandbox(tmp: Path, prompts: Any, options: dict[str, str], answer: str = "晴") -> Sandbox:
    s = SandboxSettings(miss_log=str(tmp / "m.jsonl"), simulated_store=str(tmp / "sim"))
    req = EnvironmentRequest(config=SimpleNamespace(sandbox=s, options=options), run_dir=tmp,
                             prompts=prompts, taskset=SimpleNamespace(
                                 tool_schemas=SCHEMA, files=[], builtin=False))
    check, info = validator(req)
    return Sandbox(s, tool_schemas=SCHEMA, store=None, simulator_client=ScriptedChat(
        lambda m: answer), simulator_model="m", validator=check, validator_info=info,
        texts=texts(req), prompts=prompts, style=style(req))


def run(subset: str, t: Task, prompts: Any, tmp: Path, agent: list[Any], user: list[str],
        options: Any = REF) -> tuple[EpisodeRecord, ScriptedRole, ScriptedRole]:
    a, u = ScriptedRole("agent", agent), ScriptedRole("user", user)
    opts = {"rendering": options.rendering, "judge_answers": options.judge_answers}
    ctx = EpisodeContext(unit=UnitId(run="r", task=t.key, trial=0, seed=1), task=t, agent=a,
                         user=u if subset == "multi_turn" else None,
                         sandbox=sandbox(tmp, prompts, opts),
                         settings=ProtocolSettings(max_steps=20, max_turns=10,
                                                   finish_marker=FINISH,
                                                   abstain_tags=("[Unsolved]",),
                                                   prompts=prompts, options=options))
    return asyncio.run(BENCHMARK.protocol(subset)(ctx)), a, u


# ------------------------------------------------------------------ the agent's requests

def test_agent_requests_take_the_references_shape(fake_set, tmp_path):
    """The fake set's single-turn prompt is "\\nFake single-turn helper at {time} near
    {context}.\\n": kept with both newlines, the context as it is (spaces and newline
    included). Then the reference's message shapes."""
    record, agent, _ = run("single_turn", task(), fake_set, tmp_path, [
        Turn(None, [("a", "web_search", '{"query":"北京 天气","n":1}'),
                    ("b", "web_search", "{}"), ("c", "web_search", '{"query": "x"')]),
        Turn("  好的。 ")], [])
    first, second = (json.loads(r) for r in agent.requests)
    assert first == [
        {"role": "system", "content": "\nFake single-turn helper at 2025-10-24 10:00 near "
                                      "  near 北京站\n.\n"},
        {"role": "user", "content": "查一下天气"}]
    missing = "Fake web_search missing_parameters: query"
    assert [list(m) for m in second[2:]] == [["role", "tool_calls"]] + [
        ["role", "tool_call_id", "name", "content"]] * 3
    assert second[2]["tool_calls"] == [
        # json.dumps of the parsed arguments: ASCII escapes, ", " and ": "
        {"id": "a", "type": "function", "function": {
            "name": "web_search", "arguments": '{"query": "\\u5317\\u4eac \\u5929\\u6c14", '
                                              '"n": 1}'}},
        {"id": "b", "type": "function", "function": {"name": "web_search", "arguments": "{}"}},
        {"id": "c", "type": "function", "function": {
            "name": "web_search", "arguments": '{"raw_arguments": "{\\"query\\": \\"x\\""}'}}]
    # a: an unknown argument (n); b: nothing given; c: validated as {"raw_arguments": text},
    # which lacks the required query (checked before unknown arguments)
    unknown = "Fake web_search unknown_parameters: n query"
    assert [m["content"] for m in second[3:]] == [
        json.dumps({"error": unknown}, ensure_ascii=False),
        json.dumps({"error": missing}, ensure_ascii=False),
        json.dumps({"error": missing}, ensure_ascii=False)]
    assert [m["name"] for m in second[3:]] == ["web_search"] * 3
    # the record keeps the model's own arguments and what each call was
    assert [c.arguments for c in record.tool_calls] == [
        '{"query":"北京 天气","n":1}', "{}", '{"query": "x"']
    assert [c.error_category for c in record.tool_calls] == [
        "unknown_parameter", "missing_required", "malformed_json"]
    assert record.final_answer == "好的。"


def test_empty_replies_carry_no_content(fake_set, tmp_path):
    record, agent, _ = run("single_turn", task(), fake_set, tmp_path, [
        Turn("", [("a", "web_search", '{"query": "x"}')]), Turn("   ")], [])
    assert json.loads(agent.requests[1])[2] == {
        "role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {
            "name": "web_search", "arguments": '{"query": "x"}'}}]}
    assert record.messages[-1].content is None and record.final_answer == ""


def test_an_empty_simulated_answer_is_the_sets_empty_result_text(fake_set, tmp_path):
    s = sandbox(tmp_path, fake_set, {"rendering": "reference"}, answer="  ")
    out = asyncio.run(s.call("web_search", '{"query": "x"}', task_time="2025-10-24 10:00"))
    assert out.content == "Fake nothing found."  # bare, as the reference sends it
    unknown = asyncio.run(s.call("no_such_tool", "{}", task_time="2025-10-24 10:00"))
    assert unknown.content == "Fake failure Fake no such tool no_such_tool"


def test_project_rendering_is_unchanged(fake_set, tmp_path):
    """options.rendering = "project": stripped prompt, stripped context, raw arguments, no
    tool names, malformed JSON refused as such."""
    _record, agent, _ = run("single_turn", task(), fake_set, tmp_path, [
        Turn(None, [("a", "web_search", '{"query": "x"')]), Turn("ok")], [],
        options=TravelBenchOptions())
    second = json.loads(agent.requests[1])
    assert second[0]["content"] == "\nFake single-turn helper at 2025-10-24 10:00 near near " \
                                   "北京站."
    assert second[2]["tool_calls"] == [{"id": "a", "function": {
        "name": "web_search", "arguments": '{"query": "x"'}}]
    assert "name" not in second[3] and second[3]["content"].startswith('{"error": "参数不是合法')


def test_user_simulator_gets_the_tasks_fields_as_they_are(fake_set, tmp_path):
    """The fake user prompt places time, context, profile and intent; an empty intent stays
    empty and a missing profile is ""; an empty reply of the simulator goes back without
    content."""
    t = task("multi_turn", context="", user_profile=None, intent="")
    _, _, user = run("multi_turn", t, fake_set, tmp_path,
                     [Turn("您从哪里出发？"), Turn("好的")], ["", FINISH])
    first, second = (json.loads(r) for r in user.requests)
    assert first[0]["content"] == ("Fake user.\n        Time 2025-10-24 10:00, place .\n"
                                   "        Profile: \n        Write [Finish Conversation] at "
                                   "the end.\n        Intent: \n        ")
    assert first[1:] == [{"role": "assistant", "content": "查一下天气"},
                         {"role": "user", "content": "您从哪里出发？"}]
    assert second[3:] == [{"role": "assistant"}, {"role": "user", "content": "好的"}]


def test_resent_arguments_follow_pythons_json_dumps():
    assert resent_arguments('{"b":1.0,"a":[true,null],"c":"é"}') == \
        '{"b": 1.0, "a": [true, null], "c": "\\u00e9"}'
    assert resent_arguments("") == '{"raw_arguments": ""}'
    assert resent_arguments("NaN") == "NaN"


# ------------------------------------------------------------------ the judges' inputs

def record_with_tools() -> EpisodeRecord:
    from backends.types import FunctionCall, ToolCall

    return EpisodeRecord(
        unit=UnitId(run="r", task="travelbench/single_turn/7", trial=0, seed=1),
        benchmark="travelbench", subset="single_turn", task_id="7",
        messages=[ChatMessage(role="system", content="s"),
                  ChatMessage(role="user", content="查一下天气"),
                  ChatMessage(role="assistant", content="先查。", tool_calls=[
                      ToolCall(id="a", function=FunctionCall(
                          name="web_search", arguments='{"query": "\\u5929\\u6c14"}'))]),
                  ChatMessage(role="tool", content="晴", tool_call_id="a"),
                  ChatMessage(role="assistant", content="明天晴。")],
        tool_calls=[ToolCallRecord(call_id="a", name="web_search", arguments='{"query":"天气"}',
                                   valid=True, source="simulated", content="晴")])


def test_judge_conversation_and_tools_in_the_references_layout():
    rec = record_with_tools()
    assert judge_render.conversation(rec.messages, judge_render.tool_names(rec)) == (
        'user: 查一下天气\nassistant tool_calls: web_search ({\n  "query": "天气"\n})\n'
        "assistant: 先查。\ntool_response: web_search 晴\nassistant: 明天晴。")
    assert judge_render.tools_json(SCHEMA).startswith('[\n  {\n    "type": "function",')
    assert judge_render.tools_python(SCHEMA).startswith("[{'type': 'function', 'function': "
                                                        "{'name': 'web_search', 'description': "
                                                        "'搜索'")


def test_judge_prompts_under_the_reference_rendering(fake_set):
    """The fake rubric is "Fake rubric 1: {CONTEXT_INFO} | {QUESTION_CONTENT} |\\n
    {INTENDED_TOOL} | {CONVERSATION_HISTORY} ..."; its judge_tools is the reference's list
    (the fake's: [])."""
    rec, t, js = record_with_tools(), task(context=""), JudgeSettings()
    prompt = build_rubric_prompt(rec, t, js, SCHEMA, fake_set, REF)
    assert prompt.startswith("Fake rubric 1:  | 查一下天气 |\n[] | user: 查一下天气\n")
    rubric = Judgement(unit=rec.unit, trajectory_hash="h", judge_model="m", prompt_version="v",
                       kind="travel_rubric", score=0.5, scores={
                           "reasoning_planning": 4.0, "presentation": 2.0},
                       raw="<response><reasoning_planning><reasoning> 好 </reasoning><rating>"
                           "较好</rating></reasoning_planning><summarization_extraction>"
                           "<rating>**一般**</rating></summarization_extraction><presentation>"
                           "<reasoning>差</reasoning><rating>较差</rating></presentation>"
                           "</response>")
    meta = build_meta_prompt(rec, t, rubric, js, SCHEMA, fake_set, REF)
    assert ("scores: - reasoning_planning: 4\n- summarization_extraction: None\n"
            "- presentation: 2\n- average: 3.0\n") in meta
    assert ("why: ### reasoning_planning\n**Rating**: 较好\n**Reasoning**:  好 \n\n"
            "### summarization_extraction\n**Rating**: **一般**\n**Reasoning**: \n\n"
            "### presentation\n**Rating**: 较差\n**Reasoning**: 差\n (context )") in meta


def test_built_in_judge_prompts_ask_for_what_the_run_reads():
    rec, js = record_with_tools(), JudgeSettings()
    tolerant = build_rubric_prompt(rec, task(), js, SCHEMA)
    assert tolerant.endswith('Each "rating" must be exactly one of: "Very Poor", "Poor", "Fair",'
                             ' "Good", "Excellent".\n')
    ref = build_rubric_prompt(rec, task(), js, SCHEMA, None, REF)
    assert "<response>\n<reasoning_planning>\n<reasoning>" in ref
    assert "极差 (Very Poor), 较差 (Poor), 一般 (Fair), 较好 (Good), 优秀 (Excellent)" in ref
    assert "user: 查一下天气" in ref and "--- turn" not in ref


# ------------------------------------------------------------------ versions, texts, styles

def test_the_options_are_part_of_the_judgements_keys(fake_set):
    assert rubric_version() == "travel-rubric-v2"
    assert rubric_version(None, REF) == "travel-rubric-v2+ref-render+ref-answers"
    assert meta_version(fake_set, TravelBenchOptions(judge_answers="reference")) == \
        f"travel-meta-v1+ref-answers+{fake_set.label}"
    spec = BENCHMARK.judges["travel_rubric"]
    assert spec.key_version(JudgeSettings(), None, REF) == rubric_version(None, REF)
    prefix = TravelBenchOptions(judge_layout="prefix")   # the built-in prompts' tool list first
    assert rubric_version(None, prefix) == "travel-rubric-v2+prefix"
    assert meta_version(None, prefix) == "travel-meta-v1+prefix"
    assert meta_version(fake_set, prefix) == f"travel-meta-v1+{fake_set.label}"  # its own order


def test_built_in_place_name_errors_name_a_standard_name():
    """An unresolvable place name: this project's words, with the reference's hint (use a
    standard administrative name such as 北京市), for trains and places alike."""
    from evaluator.benchmarks.travelbench.adcode import RegionTable
    from evaluator.benchmarks.travelbench.validation import validate

    regions = RegionTable([("北京市", "110000"), ("朝阳区", "110105"), ("上海市", "310000")])
    params = {"required": ["origin", "destination", "date"], "properties": {
        k: {} for k in ("origin", "destination", "date", "days")}}
    bad = validate("travel_search_trains", {"origin": "火星市", "destination": "上海市",
                                            "date": "2025-10-25"}, params, "2025-10-24 10:00",
                   regions=regions)
    assert bad == ("out_of_range", json.dumps({"error": (
        "参数 origin: 无法识别的行政区名称 '火星市'; 请使用标准的行政区划名称, 例如 北京市 或 "
        "北京市朝阳区")}, ensure_ascii=False))
    places = {"required": ["query"], "properties": {k: {} for k in ("query", "region")}}
    bad = validate("map_search_places", {"query": "x", "region": "火星"}, places,
                   "2025-10-24 10:00", regions=regions)
    assert bad is not None and "北京市" in bad[1] and "'火星'" in bad[1]


def test_imported_error_texts_are_the_checkouts(fake_set):
    from evaluator.benchmarks.travelbench.tool_errors import of_prompts

    cat = of_prompts(fake_set)
    for (tool, key), want in FAKE_TEXTS.items():
        assert cat.template(tool, key)[0] == want, (tool, key)
    assert cat.template("x", "execution_error") == ("Fake failure {error}", False)
    assert cat.template("x", "no_simulator") == ("Fake no cache, no simulator", True)
    assert cat.template("x", "simulation_failed") == (
        "Fake simulator died for {name}: {error}", False)
    assert cat.entries["malformed_json"] == builtin().entries["malformed_json"]


def test_simulator_prompt_renders_the_schema_as_python():
    from cache_store.simulator import build_messages, parse_prompt

    sections = parse_prompt("=== system ===\nP={tool_parameters} {tool_description}{examples}\n"
                            "=== examples_header ===\n[{num_examples}]\n=== example ===\n"
                            "{index}:{params}>{result}\n=== no_examples ===\nnone\n"
                            "=== user ===\n{params_json}\n=== example_separator ===\n", "t")
    fn = {"name": "t", "description": "d", "parameters": {"b": 1, "a": ["x"]}}
    system, user = build_messages(fn, {"z": 1, "a": "{result}"}, [("{result}", "r")], "v",
                                  sections, parameters="python")
    assert system.content == "P={'b': 1, 'a': ['x']} d[1]1:{result}>r"
    assert user.content == '{\n  "a": "{result}",\n  "z": 1\n}'


def test_sandbox_style_follows_the_rendering(fake_set, tmp_path):
    req = EnvironmentRequest(config=SimpleNamespace(sandbox=SandboxSettings(), options={}),
                             run_dir=tmp_path, prompts=fake_set,
                             taskset=SimpleNamespace(tool_schemas=SCHEMA, files=[],
                                                     builtin=False))
    assert style(req) == SandboxStyle()
    req.config.options = {"rendering": "reference", "judge_answers": "tolerant"}
    assert style(req) == SandboxStyle(raw_arguments=True, parameters="python",
                                      simulator_tools=())


def test_simulated_answers_of_the_two_styles_never_share_an_address(fake_set, tmp_path):
    """The reference's style changes the simulator's prompt: its answers get their own content
    address (the simulator prompt version carries the style)."""
    project = sandbox(tmp_path / "p", fake_set, {})
    reference = sandbox(tmp_path / "r", fake_set, {"rendering": "reference"})
    assert reference.sim_version == project.sim_version + "+py-schema+tools-" + \
        reference.sim_version.rsplit("+tools-", 1)[1]
