"""Prompt sets: importing from a reference checkout (a fake one: tests/evaluator/
prompt_set_support.py) and what an import refuses."""

from __future__ import annotations

import json

import pytest

from cache_store.simulator import parse_prompt
from evaluator.benchmarks.travelbench.prompt_import import import_reference
from evaluator.cli import main
from evaluator.prompt_import import ImportFailed
from evaluator.prompt_sets import (
    MANIFEST,
    file_sha256,
)

from .prompt_set_support import (
    COMMIT,
    FAKE,
    ROLES,
    load_prompt_set,
    make_checkout,
)


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
