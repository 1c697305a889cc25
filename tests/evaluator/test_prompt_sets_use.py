"""Prompt sets: loading, and their use by the protocols, judges, simulator, CLI and a run
(the fake reference checkout: tests/evaluator/prompt_set_support.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cache_store.sandbox import Sandbox, SandboxSettings
from cache_store.simulator import build_messages
from evaluator.benchmarks.travelbench import prompting
from evaluator.benchmarks.travelbench.judges import (
    META_PROMPT_VERSION,
    RUBRIC_PROMPT_VERSION,
    build_meta_prompt,
    judge_rubric,
    meta_version,
    rubric_version,
)
from evaluator.cli import main
from evaluator.judges.settings import JudgeSettings
from evaluator.prompt_sets import (
    PromptSetError,
    modified_files,
)
from evaluator.protocols import ProtocolSettings
from evaluator.records import Judgement

from .judge_fakes import ScriptedClient, make_record
from .prompt_set_support import (
    COMMIT,
    load_prompt_set,
    make_task,
)

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
