"""The fake reference checkout the prompt-set tests import from (invented texts in the
reference's file layout and Python constant shapes: str.format constants, an f-string in a
method, a keyword string), with the fixtures `home` (a fresh $AGENTSWEEP_HOME) and `imported`
(the fake set, imported and loaded)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_data.types import Task
from evaluator.benchmarks.travelbench.data import TravelBenchTask
from evaluator.benchmarks.travelbench.prompt_import import import_reference
from evaluator.benchmarks.travelbench.prompting import PROMPT_ROLES
from evaluator.prompt_sets import load_prompt_set as load_set

COMMIT = "0123456789abcdef0123456789abcdef01234567"
ROLES = PROMPT_ROLES.roles


def load_prompt_set(spec="builtin"):
    """A TravelBench prompt set."""
    return load_set(spec, PROMPT_ROLES)

FAKE = {
    "travelbench/agents/prompt.py": '''
MULTI_TURN_PROMPT = """
Fake multi-turn helper. Now: {time}. Where: {context}. Fees of $5 {{not a field}}.
"""

SINGLE_TURN_PROMPT = """
Fake single-turn helper at {time} near {context}.
"""

UNSOLVED_PROMPT = """
Fake refusing helper {time} / {context}: reply [Unsolved] if stuck; only [Unsolved].
"""
''',
    "travelbench/agents/assistant.py": '''
class FakeAssistant:
    def generate_response(self, message):
        try:
            for _ in range(3):
                pass
            return Message(content="Fake apology: out of steps.")
        except Exception as e:
            return Message(content=f"Fake error {e}")

    def _handle_tool_calls(self, message, state):
        try:
            result = run()
        except Exception as e:
            result = ToolMessage(content=f"Fake failure {str(e)}", error=True)
        return result
''',
    "travelbench/simulators/user_simulator.py": '''
class FakeUser:
    def _build_system_prompt(self) -> str:
        prompt = f"""Fake user.
        Time {self.time}, place {self.context}.
        Profile: {self.user_profile}
        Write [Finish Conversation] at the end.
        Intent: {self.decomposed_query}
        """
        return prompt
''',
    "travelbench/evaluation/prompt.py": '''
SYSTEM_PROMPT = """Fake judge system {not a field}."""

PROMPT_SINGLE_TURN_REASONING = """Fake rubric 1: {CONTEXT_INFO} | {QUESTION_CONTENT} |
{INTENDED_TOOL} | {CONVERSATION_HISTORY} <presentation><rating>..</rating></presentation>
"""

PROMPT_MULTI_TURN_REASONING = """Fake rubric 2: {CONTEXT_INFO} {CONVERSATION_HISTORY}
"""

META_JUDGE_SYSTEM_PROMPT = """Fake meta system."""

META_JUDGE_PROMPT = """Fake meta: {CONVERSATION_HISTORY}
scores: {EVALUATION_SCORES}
why: {EVALUATION_REASONING} (context {CONTEXT_INFO})
"""

TOOLS_SCHEMAS = []
''',
    "travelbench/simulators/prompt.py": '''
"""Fake simulator prompts."""
TOOL_SIMULATION_SYSTEM_PROMPT = """Fake simulate {tool_name}: {tool_description} {tool_parameters}
"""
EXAMPLES_SECTION_TEMPLATE = """
{num_examples} fake examples:
"""
SINGLE_EXAMPLE_TEMPLATE = """
#{index} in={params} out={result}
"""
NO_EXAMPLES_TEMPLATE = """
No examples for {tool_name}.
"""
TOOL_SIMULATION_USER_PROMPT = """Call {tool_name} with {params_json}"""
TOOLS_SCHEMAS = []
''',
}


def make_checkout(root: Path, packed: bool = False) -> Path:
    from .fake_travelbench_ref import files

    for rel, text in {**FAKE, **files()}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git = root / ".git"
    git.mkdir()
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    if packed:
        (git / "packed-refs").write_text(f"# pack-refs\n{COMMIT} refs/heads/main\n")
    else:
        (git / "refs" / "heads").mkdir(parents=True)
        (git / "refs" / "heads" / "main").write_text(COMMIT + "\n")
    return root


@pytest.fixture(name="home")
def home_fixture(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AGENTSWEEP_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture(name="imported")
def imported_fixture(tmp_path, home):
    import_reference(make_checkout(tmp_path / "ref"), name="fake")
    return load_prompt_set("fake")


def make_task(subset: str = "single_turn") -> Task:
    travel = TravelBenchTask(trace_id="7", time="2025-10-24 10:00", query="Weather?",
                             context="In Beijing", intent="Know the weather",
                             user_profile="Walks a lot.")
    return Task(benchmark="travelbench", subset=subset, task_id="7", payload=travel)


# ------------------------------------------------------------------ import
