"""Prompt sets: import from a reference checkout, loading, and their use by the protocols,
judges and simulator.

The "reference checkout" here is fake: invented texts in the reference's file layout and
Python constant shapes (str.format constants, an f-string in a method, a keyword string).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bench_data.types import Task
from cache_store.sandbox import Sandbox, SandboxSettings
from cache_store.simulator import build_messages, parse_prompt
from evaluator.benchmarks.travelbench import prompting
from evaluator.benchmarks.travelbench.data import TravelBenchTask
from evaluator.benchmarks.travelbench.judges import (
    META_PROMPT_VERSION,
    RUBRIC_PROMPT_VERSION,
    build_meta_prompt,
    judge_rubric,
    meta_version,
    rubric_version,
)
from evaluator.benchmarks.travelbench.prompt_import import import_reference
from evaluator.benchmarks.travelbench.prompting import PROMPT_ROLES
from evaluator.cli import main
from evaluator.judges.settings import JudgeSettings
from evaluator.prompt_import import ImportFailed
from evaluator.prompt_sets import (
    MANIFEST,
    PromptSetError,
    file_sha256,
    modified_files,
)
from evaluator.prompt_sets import load_prompt_set as load_set
from evaluator.protocols import ProtocolSettings
from evaluator.records import Judgement

from .judge_fakes import ScriptedClient, make_record

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


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("AGENTSWEEP_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def imported(tmp_path, home):
    import_reference(make_checkout(tmp_path / "ref"), name="fake")
    return load_prompt_set("fake")


def make_task(subset: str = "single_turn") -> Task:
    travel = TravelBenchTask(trace_id="7", time="2025-10-24 10:00", query="Weather?",
                             context="In Beijing", intent="Know the weather",
                             user_profile="Walks a lot.")
    return Task(benchmark="travelbench", subset=subset, task_id="7", payload=travel)


# ------------------------------------------------------------------ import


def test_import_writes_every_role_and_a_manifest(tmp_path, home):
    out, manifest = import_reference(make_checkout(tmp_path / "ref"), name="fake")
    assert out == home / "prompts" / "fake"
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{r}.txt" for r in ROLES]
                                                           + [MANIFEST])
    on_disk = json.loads((out / MANIFEST).read_text())
    assert on_disk == manifest
    assert manifest["source"]["commit"] == COMMIT
    assert manifest["source"]["path"] == str((tmp_path / "ref").resolve())
    for fname, info in manifest["files"].items():
        assert info["sha256"] == file_sha256(out / fname)
    assert manifest["files"]["judge_dimensions.txt"]["from"].startswith("agentsweep builtin")
    assert manifest["placeholders"]["judge_meta"]["EVALUATION_SCORES"] == "ratings"
    assert manifest["digest"] == load_prompt_set(out).digest
    assert not list(out.parent.glob(".*"))  # no temporary directory left


def test_import_maps_placeholders_and_escapes(imported):
    t = imported.texts
    assert t["agent_single_turn"] == "\nFake single-turn helper at ${time} near ${context}.\n"
    assert "Fees of $$5 {not a field}." in t["agent_multi_turn"]  # `$` escaped, `{{` undone
    assert t["agent_unsolvable"].count("${tag}") == 2 and "[Unsolved]" not in t[
        "agent_unsolvable"]
    assert "Write ${finish_marker} at the end." in t["user_simulator"]
    assert "Intent: ${intent}\n        " in t["user_simulator"]  # f-string indentation kept
    assert t["agent_step_limit"] == "Fake apology: out of steps."
    assert t["judge_system"] == "Fake judge system {not a field}."  # a plain string: as is
    assert "${context} | ${query} |\n${tools} | ${conversation}" in t["judge_rubric_single_turn"]
    sections = parse_prompt(t["tool_simulator"], "x")
    assert sections["system"] == ("Fake simulate {tool_name}: {tool_description} "
                                  "{tool_parameters}\n{examples}")
    assert sections["example"] == "\n#{index} in={params} out={result}\n"
    assert sections["example_separator"] == ""


def test_git_commit_from_packed_refs(tmp_path, home):
    _, manifest = import_reference(make_checkout(tmp_path / "ref", packed=True), name="p")
    assert manifest["source"]["commit"] == COMMIT


def test_import_never_overwrites_without_force(tmp_path, home, imported):
    ref = tmp_path / "ref"
    with pytest.raises(ImportFailed, match="exists: pass --force"):
        import_reference(ref, name="fake")
    (ref / "travelbench/agents/assistant.py").write_text(
        FAKE["travelbench/agents/assistant.py"].replace("Fake apology", "Other apology"))
    out, _ = import_reference(ref, name="fake", force=True)
    assert load_prompt_set(out).texts["agent_step_limit"].startswith("Other apology")
    assert load_prompt_set(out).digest != imported.digest
    assert sorted(p.name for p in out.parent.iterdir()) == ["fake"]


@pytest.mark.parametrize("rel, old, new, message", [
    ("travelbench/agents/prompt.py", "SINGLE_TURN_PROMPT =", "OTHER =",
     "travelbench/agents/prompt.py: no constant SINGLE_TURN_PROMPT"),
    ("travelbench/evaluation/prompt.py", "{QUESTION_CONTENT}", "{QUESTION}",
     "field {QUESTION} has no agentsweep placeholder"),
    ("travelbench/simulators/user_simulator.py", "[Finish Conversation]", "[Done]",
     "does not contain '[Finish Conversation]'"),
    ("travelbench/simulators/user_simulator.py", "{self.time}", "{self.clock}",
     "{self.clock} has no agentsweep placeholder"),
    ("travelbench/agents/assistant.py", 'Message(content="Fake apology: out of steps.")',
     "None", "keyword generate_response.content: expected one string, found 0"),
])
def test_import_errors_name_what_is_missing(tmp_path, home, capsys, rel, old, new, message):
    ref = make_checkout(tmp_path / "ref")
    path = ref / rel
    path.write_text(path.read_text().replace(old, new))
    assert main(["prompts", "import", "--from", str(ref)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (home / "prompts" / "travelbench").exists()


def test_import_of_a_directory_without_the_files(tmp_path, home, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["prompts", "import", "--from", str(tmp_path / "empty")]) == 2
    # no benchmark's reference layout there: with several importers, --bench is needed
    assert "--bench" in capsys.readouterr().err
    assert main(["prompts", "import", "--bench", "travelbench", "--from",
                 str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert "agents/prompt.py: not found" in err and "small-xiangcheng/TravelBench" in err


def test_import_refuses_a_set_without_a_required_placeholder(tmp_path, home):
    ref = make_checkout(tmp_path / "ref")
    path = ref / "travelbench/evaluation/prompt.py"
    path.write_text(path.read_text().replace("Fake meta: {CONVERSATION_HISTORY}", "Fake meta"))
    with pytest.raises(ImportFailed, match=r"judge_meta.txt: placeholders .* required "
                                           r"\['conversation', 'ratings'\]"):
        import_reference(ref, name="fake")
    assert not (home / "prompts").exists() or not list((home / "prompts").iterdir())


# ------------------------------------------------------------------ loading


def test_builtin_set_keeps_every_version():
    ps = load_prompt_set("builtin")
    assert ps.builtin and ps.version("v") == "v"
    assert rubric_version(ps) == rubric_version(None) == RUBRIC_PROMPT_VERSION
    assert meta_version(ps) == META_PROMPT_VERSION
    s = ProtocolSettings(prompts=ps)
    assert prompting.prompt_version(s) == prompting.prompt_version(ProtocolSettings())
    assert prompting.prompt_digest(s) == prompting.PROMPT_DIGEST
    assert ps.simulator_version("v1") == "v1"
    assert ps.digest == load_prompt_set().digest


def test_sets_resolve_by_name_or_path(imported, home):
    assert load_prompt_set(str(home / "prompts" / "fake")).digest == imported.digest
    with pytest.raises(PromptSetError, match="prompt set 'nope' not found"):
        load_prompt_set("nope")


def test_loader_checks_placeholders_and_notices_edits(imported):
    path = imported.path / "judge_meta.txt"
    path.write_text(path.read_text() + "$bogus")
    with pytest.raises(PromptSetError, match="judge_meta.txt: placeholders"):
        load_prompt_set(imported.path)
    path.write_text(path.read_text().replace("$bogus", "$$bogus"))
    edited = load_prompt_set(imported.path)
    assert edited.digest != imported.digest and modified_files(edited) == ["judge_meta.txt"]
    (imported.path / "agent_situation.txt").unlink()
    with pytest.raises(PromptSetError, match="agent_situation.txt cannot be read"):
        load_prompt_set(imported.path)


# ------------------------------------------------------------------ use


def test_protocols_use_the_set(imported):
    s = ProtocolSettings(prompts=imported, abstain_tags=("[Unsolved]",),
                         finish_marker="[Finish Conversation]")
    task = make_task()
    assert prompting.agent_system_prompt("single_turn", task, s) == (
        "\nFake single-turn helper at 2025-10-24 10:00 near In Beijing.")
    assert "reply [Unsolved] if stuck; only [Unsolved]." in prompting.agent_system_prompt(
        "unsolvable", task, s)
    user = prompting.user_system_prompt(task, s)
    assert "Write [Finish Conversation] at the end." in user and "Intent: Know the weather" in user
    assert prompting.step_limit_reply(s) == "Fake apology: out of steps."
    assert prompting.prompt_version(s) == (f"{prompting.PROJECT_PROMPT_VERSION}+reference+"
                                           f"{imported.label}")
    assert prompting.prompt_digest(s) != prompting.PROMPT_DIGEST
    assert prompting.step_limit_reply() != "Fake apology: out of steps."  # built-in untouched


def test_judges_use_the_set(imported):
    record = make_record("multi_turn")
    client = ScriptedClient(lambda prompt, i: json.dumps(
        {"reasoning_planning": {"reasoning": "ok", "rating": "Good"}}))
    settings = JudgeSettings(structured_output=False)
    j = asyncio.run(judge_rubric(record, make_task("multi_turn"), client, "m", settings,
                                 prompts=imported))
    assert j.prompt_version == f"{RUBRIC_PROMPT_VERSION}+fake@{imported.digest}"
    assert client.calls[0]["prompt"].startswith("Fake rubric 2: In Beijing ")
    rubric = Judgement(unit=record.unit, trajectory_hash="h", judge_model="m",
                       prompt_version="v", kind="travel_rubric", score=0.5,
                       scores={"presentation": 4.0}, reasoning={"presentation": "fine"})
    meta = build_meta_prompt(record, make_task("multi_turn"), rubric, settings, None, imported)
    assert meta.startswith("Fake meta: ") and "why: - presentation: fine" in meta


def test_judge_sends_the_sets_system_prompt(imported):
    seen = []

    class Client(ScriptedClient):
        async def chat(self, messages, **kw):
            seen.append([m.role for m in messages])
            return await super().chat(messages, **kw)

    client = Client(lambda prompt, i: json.dumps(
        {"presentation": {"reasoning": "ok", "rating": "Good"}}))
    settings = JudgeSettings(structured_output=False)
    asyncio.run(judge_rubric(make_record("single_turn"), None, client, "m", settings,
                             prompts=imported))
    asyncio.run(judge_rubric(make_record("single_turn"), None, client, "m", settings))
    assert seen == [["system", "user"], ["user"]]


def test_simulator_uses_the_set(imported, tmp_path):
    schema = {"name": "t", "description": "d", "parameters": {}}
    system, user = build_messages(schema, {"a": 1}, [("p1", "r1"), ("p2", "r2")], "v1",
                                  imported.simulator_sections)
    assert system.content == ("Fake simulate t: d {}\n\n2 fake examples:\n"
                              "\n#1 in=p1 out=r1\n\n#2 in=p2 out=r2\n")
    assert user.content == 'Call t with {\n  "a": 1\n}'
    none, _ = build_messages(schema, {}, [], "v1", imported.simulator_sections)
    assert none.content.endswith("{}\n\nNo examples for t.\n")
    here = SandboxSettings(miss_log=str(tmp_path / "m.jsonl"),  # nothing in the cwd
                           simulated_store=str(tmp_path / "sim"))
    sb = Sandbox(here, tool_schemas=[], store=None, simulator_client=None,
                 simulator_model="m", prompts=imported)
    assert sb.sim_version == f"fake@{file_digest(imported.texts['tool_simulator'])}"
    builtin = Sandbox(here, tool_schemas=[], store=None, simulator_client=None,
                      simulator_model="m", prompts=load_prompt_set())
    assert builtin.sim_version == "v1"


def file_digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:12]


# ------------------------------------------------------------------ cli


def test_cli_list_and_show(imported, capsys):
    assert main(["prompts", "list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("builtin ") and f"fake                 {imported.digest}" in out
    assert COMMIT[:12] in out
    assert main(["prompts", "show", "fake"]) == 0
    out = capsys.readouterr().out
    assert f"+fake@{imported.digest}" in out and "judge_meta " in out
    assert "$conversation $ratings" in out
    assert main(["prompts", "show", "fake", "--role", "agent_step_limit"]) == 0
    assert capsys.readouterr().out == "Fake apology: out of steps."
    assert main(["prompts", "show", "missing"]) == 2


def test_a_run_with_an_imported_set_records_it(imported, home, tmp_path):
    """`prompts = <set>` reaches the run: the manifest names the set and its digest, and every
    record's prompt version carries it."""
    import json
    import os
    import subprocess
    import sys

    from perf.stub_server import start_stub

    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, AGENTSWEEP_HOME=str(home))
    env["PYTHONPATH"] = str(repo) + os.pathsep + env.get("PYTHONPATH", "")
    with start_stub("--mode", "text") as stub:
        done = subprocess.run(
            [sys.executable, "-m", "evaluator.cli", "run", "--engine-url", stub.url, "--out",
             str(tmp_path / "runs"), "--name", "ps", "--subset", "single_turn", "--limit", "1",
             "--set", f"prompts={imported.path}", "--set", "protocol.layout=reference",
             "--progress", "off"],
            cwd=repo, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    run_dir = tmp_path / "runs" / "ps"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["prompt_set"]["digest"] == imported.digest
    records = [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]
    assert records and all(imported.label in r["extra"]["prompt_version"] for r in records)


def test_tool_list_roles_are_checked_with_the_file_named():
    from evaluator.prompt_sets import check_tool_list

    untyped = '[{"function": {"name": "a"}}]'
    check_tool_list(untyped, "t.txt")            # TravelBench's lists need no "type"
    check_tool_list("  \n", "t.txt", typed=True)  # an unused role
    for text, typed, what in ((untyped, True, "expected a JSON array of tools"),
                              ("[1", False, "not JSON"),
                              ('[{"function": {}}]', False, "expected a JSON array of tools")):
        with pytest.raises(PromptSetError, match=f"^t.txt: {what}"):
            check_tool_list(text, "t.txt", typed=typed)
