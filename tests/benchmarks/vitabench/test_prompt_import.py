"""`agentsweep prompts import` for VitaBench on an invented checkout of the reference's layout
(YAML prompt files with `chinese`/`english` block scalars, the judge's per-window f-string,
the tool-description tables): placeholders mapped, block scalars read as YAML reads them,
tool descriptions composed as the reference's schemas show them, errors naming the file, and
nothing written when the import fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.benchmarks.vitabench.env.spec import ALL_TOOLS
from evaluator.benchmarks.vitabench.prompt_import import (
    ImportFailed,
    import_reference,
    recognises,
    schema_texts,
    yaml_block,
)
from evaluator.benchmarks.vitabench.prompting import ROLES, tool_descriptions
from evaluator.cli import main
from evaluator.prompt_sets import load_prompt_set

COMMIT = "c0ffee" * 6 + "beef"


def _yaml(name: str, english: str) -> str:
    body = "\n".join(("  " + line) if line else "" for line in english.split("\n"))
    return f"name: {name}\nchinese: |-\n  中文 {{x}}\n\nenglish: |-\n{body}\n"


def _tools(names: list[str]) -> str:
    table = {}
    for name in names:
        spec = ALL_TOOLS[name]
        table[name] = {"description": f"Fake {name}", "preconditions": "pre $5",
                       "postconditions": "post", "returns": "ret", "tool_type": "READ",
                       "args": {p.name: f"arg {p.name}" for p in spec.params}}
    return f"X = 1\nTOOL_DESCRIPTIONS_ZH = {{}}\nTOOL_DESCRIPTIONS_EN = {table!r}\n"


def make_checkout(root: Path) -> Path:
    prompts = root / "src/vita/prompts"
    prompts.mkdir(parents=True)
    (prompts / "agent_system_prompt.yaml").write_text(
        _yaml("agent", "# Fake agent\n- time: {time}\n\n  indented line\ncosts $3, {{braces}}"))
    (prompts / "user_system_prompt.yaml").write_text(
        _yaml("user", "Fake user <persona>{persona}</persona>\n{instructions}"))
    (prompts / "sliding_window_eval_template.yaml").write_text(_yaml(
        "judge", "Fake judge {env_info}\n{user_instruction}\n{window_idx} of {total_windows}"
        "\n```json\n[{{\"rubric_idx\": 1}}]\n```"))
    ev = root / "src/vita/evaluator"
    ev.mkdir(parents=True)
    (ev / "evaluator_traj.py").write_text(
        "class T:\n    def _evaluate_window(self, window_content, current_rubrics_str):\n"
        '        user_prompt = f"""\nFAKE\n{window_content}\n--\n{current_rubrics_str}\n"""\n'
        "        return user_prompt\n")
    general = [n for n, s in ALL_TOOLS.items() if s.domain == "general"]
    env = root / "src/vita/environment"
    env.mkdir(parents=True)
    (env / "toolkit_schema.py").write_text(
        _tools(general).replace("TOOL_DESCRIPTIONS_", "TOOLKIT_TOOL_DESCRIPTIONS_"))
    for domain in ("delivery", "instore", "ota"):
        d = root / f"src/vita/domains/{domain}"
        d.mkdir(parents=True)
        (d / "tools_schema.py").write_text(
            _tools([n for n, s in ALL_TOOLS.items() if s.domain == domain]))
    git = root / ".git"
    git.mkdir()
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs/heads").mkdir(parents=True)
    (git / "refs/heads/main").write_text(COMMIT + "\n")
    return root


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENTSWEEP_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_import_maps_placeholders(tmp_path: Path, home: Path) -> None:
    out, manifest = import_reference(make_checkout(tmp_path / "ref"), name="fake")
    ps = load_prompt_set(out, ROLES)
    t = ps.texts
    assert t["agent_system"] == ("# Fake agent\n- time: ${time}\n\n  indented line\n"
                                 "costs $$3, {braces}")
    assert t["user_system"] == "Fake user <persona>${persona}</persona>\n${instructions}"
    assert t["judge_window_system"].startswith(
        "Fake judge ${environment}\n${instructions}\n${window_index} of ${window_count}\n")
    assert '[{"rubric_idx": 1}]' in t["judge_window_system"]
    assert t["judge_window_user"] == "\nFAKE\n${window}\n--\n${status}\n"
    assert t["judge_window"] == load_prompt_set("builtin", ROLES).texts["judge_window"]
    assert manifest["benchmark"] == "vitabench" and manifest["source"]["commit"] == COMMIT
    assert manifest["files"]["judge_window.txt"]["from"].startswith("agentsweep builtin")
    rendered = ps.templates["agent_system"].substitute(time="T")
    assert rendered == "# Fake agent\n- time: T\n\n  indented line\ncosts $3, {braces}"


def test_tool_descriptions_follow_the_reference_docstring_layout(tmp_path: Path,
                                                                home: Path) -> None:
    out, _ = import_reference(make_checkout(tmp_path / "ref"), name="fake")
    over = tool_descriptions(load_prompt_set(out, ROLES))
    assert over is not None and set(over) == set(ALL_TOOLS)
    orders = over["create_delivery_order"]
    assert orders["description"] == ("Fake create_delivery_order\n\nPreconditions:\n"
                                     "    - pre $5\nPostconditions:\n    - post")
    assert orders["params"]["note"] == "arg note"
    # a tool without arguments: its empty Args section is not read as one (docstring_parser)
    assert over["get_user_all_orders"]["description"].endswith(
        "Postconditions:\n    - post\n\nArgs:\n\nReturns:\n    ret")


def test_schema_texts_rules() -> None:
    entry = {"description": "Short", "preconditions": "p", "postconditions": "q",
             "args": {"a": "A: with a colon", "other": "not a parameter"}, "returns": "r"}
    description, args = schema_texts(entry)
    assert description == "Short\n\nPreconditions:\n    - p\nPostconditions:\n    - q"
    assert args == {"a": "A: with a colon", "other": "not a parameter"}
    two_lines = dict(entry, description="Line one\nline two")
    assert schema_texts(two_lines)[0] == ("Line one\n\nline two\nPreconditions:\n    - p\n"
                                          "Postconditions:\n    - q")


def test_a_parameter_the_reference_does_not_describe_gets_no_text(tmp_path: Path,
                                                                 home: Path) -> None:
    ref = make_checkout(tmp_path / "ref")
    path = ref / "src/vita/domains/delivery/tools_schema.py"
    path.write_text(path.read_text().replace("'note': 'arg note'", "'memo': 'arg note'"))
    out, _ = import_reference(ref, name="fake")
    over = tool_descriptions(load_prompt_set(out, ROLES))
    assert over is not None and over["create_delivery_order"]["params"]["note"] is None
    from evaluator.benchmarks.vitabench.env import VitaEnvironment

    from .ota_fixture import ota_environment

    env = VitaEnvironment.from_environment(ota_environment(), "delivery", overrides=over)
    schema = next(t for t in env.tools if t["function"]["name"] == "create_delivery_order")
    assert "description" not in schema["function"]["parameters"]["properties"]["note"]
    assert schema["function"]["description"].startswith("Fake create_delivery_order")


@pytest.mark.parametrize("text", [
    "a: 1\nenglish: |-\n  one\n\n  two\n   three\n \n  \nnext: x\n",
    "english: |\n    deep\n      deeper\n\n",
    "english: |+\n  kept\n\n\nz: 1\n",
    "english: |-\n\n  after a blank\n",
])
def test_yaml_blocks_read_as_yaml_reads_them(tmp_path: Path, text: str) -> None:
    yaml = pytest.importorskip("yaml")
    path = tmp_path / "p.yaml"
    path.write_text(text)
    assert yaml_block(path, "english")[0] == yaml.safe_load(text)["english"]


def test_yaml_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("name: x\nenglish: plain text\n")
    with pytest.raises(ImportFailed, match=r"p.yaml:2: `english:` is not a `\|` block"):
        yaml_block(path, "english")
    with pytest.raises(ImportFailed, match="no top-level `chinese:`"):
        yaml_block(path, "chinese")


@pytest.mark.parametrize("rel, old, new, message", [
    ("src/vita/prompts/user_system_prompt.yaml", "{instructions}", "{task}",
     "field {task} has no agentsweep placeholder"),
    ("src/vita/evaluator/evaluator_traj.py", "{current_rubrics_str}", "{states}",
     "{states} has no agentsweep placeholder"),
    ("src/vita/domains/ota/tools_schema.py", "TOOL_DESCRIPTIONS_EN", "OTHER",
     "tools_schema.py: no constant TOOL_DESCRIPTIONS_EN"),
    ("src/vita/prompts/agent_system_prompt.yaml", "english: |-", "english: >-",
     "agent_system_prompt.yaml:5: `english:` is not a `|` block scalar"),
])
def test_import_errors_name_what_is_wrong(tmp_path: Path, home: Path, capsys, rel: str,
                                          old: str, new: str, message: str) -> None:
    ref = make_checkout(tmp_path / "ref")
    path = ref / rel
    path.write_text(path.read_text().replace(old, new))
    assert main(["prompts", "import", "--bench", "vitabench", "--from", str(ref)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not (home / "prompts" / "vitabench").exists()


def test_import_without_bench_recognises_the_checkout(tmp_path: Path, home: Path,
                                                      capsys) -> None:
    ref = make_checkout(tmp_path / "ref")
    assert recognises(ref) and not recognises(tmp_path)
    assert main(["prompts", "import", "--from", str(ref)]) == 0
    assert "imported prompt set vitabench@" in capsys.readouterr().out
    manifest = json.loads((home / "prompts/vitabench/manifest.json").read_text())
    assert manifest["benchmark"] == "vitabench"
    with pytest.raises(ImportFailed, match="exists: pass --force"):
        import_reference(ref)


def test_honest_labels_of_a_paper_run(tmp_path: Path, home: Path) -> None:
    """Under `paper`: the built-in prompts are the `prompts` deviation, an unedited import is
    none, an option changed is one; the run's summary line says so."""
    from evaluator import benchmarks
    from evaluator.config import load_config
    from evaluator.profiles import settings_summary
    from evaluator.run.manifest import run_deviations

    bench = benchmarks.get("vitabench")
    config = load_config(None, [("data.dataset", "vitabench", "--data")])[0]
    assert config.options["rendering"] == "reference" and config.judge.rubric_set == "union"
    devs = run_deviations(config, bench, load_prompt_set("builtin", ROLES))
    assert list(devs) == ["prompts"] and devs["prompts"]["used"] == "builtin"
    out, _ = import_reference(make_checkout(tmp_path / "ref"), name="vita")
    assert run_deviations(config, bench, load_prompt_set(out, ROLES)) == {}
    assert settings_summary("paper", {}) == "profile paper; deviations: none"
    changed = load_config(None, [("data.dataset", "vitabench", "--data"),
                                 ("options.judge_reader", "tolerant", "--set")])[0]
    devs = run_deviations(changed, bench, load_prompt_set(out, ROLES))
    assert list(devs) == ["options.judge_reader"]


def test_a_paper_run_with_the_import_lists_no_deviation(tmp_path: Path, home: Path) -> None:
    """End to end against the stub: `prompts import`, then a paper run with the set and no
    other change says `deviations: none`; with the built-in prompts it names them."""
    import os
    import subprocess
    import sys

    from perf.stub_server import start_stub

    from .helpers import VITA_DATA

    if not (VITA_DATA / "delivery" / "tasks_en.json").is_file():
        pytest.skip(f"VitaBench data not present at {VITA_DATA}")
    repo = Path(__file__).resolve().parents[3]
    assert main(["prompts", "import", "--from", str(make_checkout(tmp_path / "ref"))]) == 0
    environ = dict(os.environ, AGENTSWEEP_HOME=str(home))
    environ["PYTHONPATH"] = str(repo) + os.pathsep + environ.get("PYTHONPATH", "")
    headers = '{ "X-Stub-Mode" = "text", "X-Stub-Replies" = "Done. ###STOP###" }'
    lines = {}
    with start_stub("--mode", "text") as stub:
        for prompts in ("vitabench", "builtin"):
            cmd = [sys.executable, "-m", "evaluator.cli", "run", "--data", "vitabench",
                   "--data-dir", str(VITA_DATA.parent), "--subset", "delivery", "--limit", "1",
                   "--engine-url", stub.url, "--out", str(tmp_path / "runs"), "--name",
                   prompts, "--progress", "off", "--set", f"prompts={prompts}",
                   "--set", f"agent.endpoint.extra_headers={headers}"]
            r = subprocess.run(cmd, cwd=repo, env=environ, capture_output=True, text=True,
                               timeout=300, check=False)
            assert r.returncode == 0, r.stderr
            lines[prompts] = next(x.strip() for x in r.stdout.splitlines()
                                  if "profile paper" in x)
    assert lines["vitabench"] == "profile paper; deviations: none"
    assert lines["builtin"].startswith("profile paper; deviations: prompts=builtin (paper: "
                                       "the reference's, imported")
