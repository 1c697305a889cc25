"""`agentsweep prompts import --bench grouptravelbench`: a prompt set from a checkout of the
reference. The checkout here is fake: invented texts in the reference's file layout and code
shapes (module constants, f-strings and strings assigned, added, passed or returned inside its
functions); then the set drives the chat and the judges, and a paper run with it is honest."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from evaluator.benchmarks.grouptravelbench.judge_inputs import transcript
from evaluator.benchmarks.grouptravelbench.prompt_import import import_reference
from evaluator.benchmarks.grouptravelbench.prompting import PROMPT_ROLES, Texts
from evaluator.benchmarks.grouptravelbench.protocol import run_group_chat
from evaluator.cli import main
from evaluator.prompt_import import ImportFailed
from evaluator.prompt_sets import load_prompt_set, prompt_deviation
from evaluator.protocols.base import EpisodeContext, ProtocolSettings
from evaluator.records import UnitId

from .conftest import PLAN, FakeSandbox
from .scripted import Scripted, task

FAKE = {
    "group_travelbench/agents/multi_prompt.py": '''
MULTI_USER_AGENT_SYSTEM_PROMPT = """Fake planner for {user_list_description}.
Ask {query}; ctx {context} at {time}.{preference_table_block}Plans look like {{"days": []}}; $5.
"""
MULTI_USER_AGENT_PREFERENCE_SUMMARY_PROMPT = """Fake table please: {{"User1": {{}}}}"""
MULTI_USER_AGENT_CONVERGENCE_PROMPT = """Fake summary turn."""
MULTI_USER_AGENT_FORCE_FINISH_INSTRUCTION = ("\\n\\nFake stop " "calling tools.")
MULTI_USER_AGENT_FINAL_PLAN_PROMPT = """Fake final plan now."""
''',
    "group_travelbench/agents/group_agent.py": '''
class FakeAgent:
    def _build_system_prompt(self):
        preference_table_block = ("\\nFake table:\\n" f"{self.preference_table}\\n")
        return preference_table_block

    def generate_response(self, conversation_history, is_being_mentioned=False, extra=None):
        system_content = self._build_system_prompt()
        if is_being_mentioned:
            system_content += ("\\n\\nFake: you were " "mentioned.")
        if extra:
            system_content += f"\\n\\n{extra}"
        result_content = json.dumps({"error": f"Fake bad args: {display_raw}"})
        trace = {"error": tool_message.error}

    def generate_preference_summary(self, conversation_history, history_override=None):
        user_content = (f"[fake chat]\\n{shared_context_str}\\n[fake end]\\n\\n"
                        f"{MULTI_USER_AGENT_PREFERENCE_SUMMARY_PROMPT}")

    def generate_final_plan(self, conversation_history):
        history = list(conversation_history) + [{
            "type": "message", "role": "user",
            "content": f"[fake directive] {MULTI_USER_AGENT_FINAL_PLAN_PROMPT}"}]
''',
    "group_travelbench/utils/multi_util.py": '''
def _ensure_alternation(messages):
    result.append(UserMessage(content="(fake start)"))
    result.append(UserMessage(content="(fake gap)"))
''',
    "group_travelbench/simulators/multi_prompt.py": '''
MULTI_USER_USER_SYSTEM_PROMPT = """Fake {user_name} of {user_list_description}: {query} on
{time}, wishes {user_preference}; attitude: {compromise_block}"""
''',
    "group_travelbench/simulators/multi_user_simulator.py": '''
class FakeUser:
    def _build_system_prompt(self):
        if self.compromisable:
            compromise_block = ("fake yes " "block")
        else:
            compromise_block = "fake no block"

    def generate_response(self, conversation_history, is_being_mentioned=False):
        system_content = self.system_prompt
        if is_being_mentioned:
            system_content += "\\n\\nFake: answer now."
''',
    "group_travelbench/evaluation/llm_judge_prompt.py": '''
SYSTEM_PROMPT = """Fake judge system."""
MULTI_AGENT_JUDGE_PROMPT = """Fake judge: {QUERY} | {CONTEXT} | {USER_NAMES} |
{EFFECTIVE_PREFERENCES} | {CONVERSATION_HISTORY}"""
META_JUDGE_SYSTEM_PROMPT = """Fake meta system."""
META_JUDGE_PROMPT = """Fake meta: {CONVERSATION_HISTORY} {EVALUATION_SCORES}
{EVALUATION_REASONING} {QUERY}"""
''',
    "group_travelbench/evaluation/llm_judge.py": '''
def format_conversation_for_judge(conversation_history):
    lines.append(f"[Agent]: {content}")
    lines.append("[Agent]: (fake tools)")
    lines.append(f"[{role}]: {content}")
    lines.append(f"  [fake call] {tool_name}")
    lines.append(f"  fake args: {arguments}")
    result = msg.get("result", "")
    result = result[:2000] + "\\n  ... (fake cut)"
    lines.append(f"  [fake error] {tool_name}: {result}")
    lines.append(f"  [fake result] {tool_name}:")
    lines.append(f"  {result}")


class FakeJudge:
    def evaluate_single(self, result, index):
        formatted_preferences = json.dumps(x) if original_preferences else "(fake none)"

    def _meta_judge(self, scores, parsed_result):
        reasoning = dim_result.get("reasoning", "fake no reasoning")
        rating = dim_result.get("rating", "fake no rating")
        reasoning_lines.append(f"### {dim}")
        reasoning_lines.append(f"**fake rating**: {rating}")
        reasoning_lines.append(f"**fake why**: {reasoning}")
''',
    "group_travelbench/simulators/tool_prompt.py": '''
TOOL_SIMULATION_SYSTEM_PROMPT = """Fake simulate {tool_name}: {tool_description} {tool_parameters}
"""
EXAMPLES_SECTION_TEMPLATE = """{num_examples} fake examples:"""
SINGLE_EXAMPLE_TEMPLATE = """#{index} in={params} out={result}"""
NO_EXAMPLES_TEMPLATE = """No examples for {tool_name}."""
TOOL_SIMULATION_USER_PROMPT = """Call {tool_name} with {params_json}"""
''',
}


def make_checkout(root: Path) -> Path:
    for rel, text in FAKE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AGENTSWEEP_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def imported(tmp_path, home):
    import_reference(make_checkout(tmp_path / "ref"), name="gtb")
    return load_prompt_set("gtb", PROMPT_ROLES)


def test_import_writes_every_role_mapped_and_a_manifest(imported):
    t = imported.texts
    assert set(t) == set(PROMPT_ROLES.roles)
    assert t["agent_system"].startswith("Fake planner for ${users}.\nAsk ${query}; ctx ${context}")
    assert '{"days": []}; $$5.' in t["agent_system"]       # formatted: single braces, $$
    assert t["agent_table_ask"] == 'Fake table please: {{"User1": {{}}}}'  # sent unformatted
    assert t["agent_table_block"] == "\nFake table:\n${table}\n"
    assert t["agent_mentioned"] == "\n\nFake: you were mentioned."
    assert t["agent_table_request"] == "[fake chat]\n${chat}\n[fake end]\n\n${ask}"
    assert t["agent_final_directive"] == "[fake directive] ${ask}"
    assert t["agent_bad_arguments"] == "Fake bad args: ${raw}"
    assert (t["chat_opening"], t["chat_gap"]) == ("(fake start)", "(fake gap)")
    assert (t["user_compromise_yes"], t["user_compromise_no"]) == ("fake yes block",
                                                                   "fake no block")
    assert t["user_mentioned"] == "\n\nFake: answer now."
    assert t["judge_tool_error"] == "  [fake error] ${name}: ${result}"
    assert t["judge_result_cut"] == "\n  ... (fake cut)"
    assert t["judge_no_preferences"] == "(fake none)"
    assert (t["meta_no_reasoning"], t["meta_no_rating"]) == ("fake no reasoning",
                                                             "fake no rating")
    assert t["meta_reasoning"] == "**fake why**: ${reasoning}"
    manifest = imported.manifest
    assert manifest["benchmark"] == "grouptravelbench"
    assert manifest["files"]["chat_gap.txt"]["from"].endswith(
        "group_travelbench/utils/multi_util.py:_ensure_alternation.content.1")
    assert prompt_deviation(imported, "grouptravelbench") is None


def test_the_imported_set_drives_the_chat_and_the_judges(imported):
    texts = Texts.of(imported)
    assert not texts.builtin
    agent = Scripted("agent", ["@User1 ok?", json.dumps(PLAN, ensure_ascii=False)],
                     ask=texts.text("agent_table_ask"))
    user = Scripted("user", ["好", "[pass]", "[pass]"])
    ctx = EpisodeContext(unit=UnitId("r", "k", 0, 1), task=task(), agent=agent, user=user,
                         sandbox=FakeSandbox(), settings=ProtocolSettings(prompts=imported))
    record = asyncio.run(run_group_chat(ctx))
    assert record.termination == "plan_generated"
    first = agent.requests[0]
    assert first[0].content.startswith("Fake planner for - User1\n- User2.\nAsk 西安两日游")
    assert "\nFake table:\n{}\n" in first[0].content
    assert first[0].content.endswith("\n\nFake summary turn.")
    assert user.requests[0][0].content.startswith("Fake User1 of - User1\n- User2: 西安两日游")
    assert user.requests[0][0].content.endswith("fake yes block\n\nFake: answer now.")
    assert user.requests[0][1].content == "(fake start)"
    assert record.extra["prompt_version"] == f"grouptravelbench-v5+{imported.label}"
    lines = transcript([{"type": "tool_call", "name": "x", "arguments": "{}"}], texts)
    assert lines == "  [fake call] x\n  fake args: {}\n"


def test_import_errors_name_what_is_missing(tmp_path, home):
    ref = make_checkout(tmp_path / "ref")
    path = ref / "group_travelbench/utils/multi_util.py"
    path.write_text('def _ensure_alternation(m):\n    r.append(UserMessage(content="x"))\n')
    with pytest.raises(ImportFailed, match=r"keyword _ensure_alternation.content.1: expected at "
                                           r"least 2 matching strings, found 1"):
        import_reference(ref, name="broken")
    path.write_text(FAKE["group_travelbench/utils/multi_util.py"])
    (ref / "group_travelbench/evaluation/llm_judge.py").unlink()
    with pytest.raises(ImportFailed, match="llm_judge.py: not found"):
        import_reference(ref, name="broken")
    assert not (home / "prompts" / "broken").exists()


def test_cli_imports_lists_and_shows(tmp_path, home, capsys):
    ref = make_checkout(tmp_path / "ref")
    assert main(["prompts", "import", "--bench", "grouptravelbench", "--from", str(ref),
                 "--name", "gtb-cli"]) == 0
    capsys.readouterr()
    assert main(["prompts", "show", "gtb-cli", "--role", "chat_gap"]) == 0
    assert capsys.readouterr().out == "(fake gap)"
    assert main(["prompts", "list"]) == 0
    assert "gtb-cli" in capsys.readouterr().out
