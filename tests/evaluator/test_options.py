"""A benchmark's own settings (`[options]`) and the honest labels of a run's profile.

Options are checked against the run's benchmark's options type (errors name the file, line and
field), completed with its defaults, layered under its profile, listed as deviations when they
differ from it, and handed to the benchmark's protocols, judges and scoring (end to end with
the toy benchmark of docs/adding_a_benchmark.md, on the stub server). Under `paper`, a run of a
benchmark whose reference prompts can be imported says so when its prompts are not that
import (docs/prompts.md).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator import benchmarks
from evaluator.config import ConfigError, config_doc, load_config, profile_deviations
from evaluator.profiles import describe_deviations, settings_summary
from evaluator.prompt_sets import NOT_REFERENCE_NOTE, load_prompt_set, prompt_deviation
from evaluator.run.manifest import run_deviations

REPO = Path(__file__).resolve().parents[2]
TOY_DATA = REPO / "tests" / "toybench" / "data"


@pytest.fixture(scope="module")
def toy():
    return benchmarks.load_plugins(["tests.toybench"])[0]


def _toy(*overrides, text: str = ""):
    base = [("data.dataset", str(TOY_DATA)), ("plugins", ["tests.toybench"], "--plugin")]
    items = [(o[0], o[1], o[2] if len(o) > 2 else f"--set {o[0]}") for o in (*base, *overrides)]
    return load_config(None, items, text=text)[0]


def test_options_are_completed_with_defaults_and_layered_under_the_profile(toy):
    config = _toy()
    assert config.profile == "paper"
    # every option recorded (the manifest's resolved config), the profile's value under it
    assert config.options == {"hint": "", "final_only": True, "grader_weight": 0.0}
    assert profile_deviations(config) == {}
    smoke = _toy(("profile", "smoke"))
    assert smoke.options == {"hint": "", "final_only": False, "grader_weight": 0.0}


def test_a_changed_option_is_a_deviation(toy):
    config = _toy(("options.final_only", False), ("options.hint", "Be brief."))
    assert profile_deviations(config) == {"options.final_only": {"profile": True,
                                                                  "used": False}}
    assert config.options["hint"] == "Be brief."  # no profile value: not a deviation


@pytest.mark.parametrize(("text", "where", "what"), [
    ("[options]\nfinal_onyl = true\n", "<defaults>:2: field `options.final_onyl`",
     ("unknown key `options.final_onyl` (known options of Toybench: final_only, "
     "grader_weight, hint)")),
    ('[options]\nhint = "x"\ngrader_weight = "high"\n', ("<defaults>:3: field "
     "`options.grader_weight`"), "Expected `float`, got `str`"),
    ("[options]\ngrader_weight = 2.0\n", "<defaults>:2: field `options.grader_weight`",
     "grader_weight must be in [0, 1], got 2.0"),
])
def test_bad_options_are_one_line_errors_naming_line_and_field(toy, text, where, what):
    with pytest.raises(ConfigError) as err:
        _toy(text=text)
    msg = str(err.value)
    assert where in msg and what in msg and "\n" not in msg


def test_an_option_from_the_command_line_names_the_flag(toy):
    with pytest.raises(ConfigError, match=r"^--set options.grader_weight \(options"):
        _toy(("options.grader_weight", "x"))


def test_a_benchmark_without_options_refuses_them(toy, monkeypatch):
    # every shipped benchmark takes options: a copy of the toy one without them stands in
    bare = dataclasses.replace(toy, options=None)
    monkeypatch.setitem(benchmarks._REGISTRY, toy.name, bare)
    with pytest.raises(ConfigError, match=f"field `options.x`: {bare.title} takes no options"):
        _toy(text="[options]\nx = 1\n")


def test_travelbench_options_are_checked_and_layered():
    config = load_config(None, [("data.dataset", "travelbench", "--data")])[0]
    assert config.options == {"rendering": "reference", "judge_answers": "reference",
                              "judge_layout": "reference"}
    smoke = load_config(None, [("data.dataset", "travelbench", "--data"),
                               ("profile", "smoke", "--profile")])[0]
    assert smoke.options == {"rendering": "project", "judge_answers": "tolerant",
                             "judge_layout": "prefix"}
    sample = load_config(None)[0]   # the built-in sample: smoke, the judges' tool list first
    assert sample.options["judge_layout"] == "prefix"
    changed = load_config(None, [("data.dataset", "travelbench", "--data"),
                                 ("options.judge_answers", "tolerant", "--set")])[0]
    assert profile_deviations(changed) == {
        "options.judge_answers": {"profile": "reference", "used": "tolerant"}}
    with pytest.raises(ConfigError, match="options.rendering"):
        load_config(None, [("data.dataset", "travelbench", "--data")],
                    text='[options]\nrendering = "verbatim"\n')


def test_config_reference_documents_each_benchmarks_options(toy):
    doc = config_doc()
    assert "## `[options]`" in doc and "### Toybench (`toybench`)" in doc
    assert "| `options.final_only` | `false` | `true` |" in doc
    assert "grader_weight: the unit score is" in doc


# ------------------------------------------------------------------ honest prompt labels


def test_builtin_prompts_under_paper_are_a_deviation(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTSWEEP_HOME", str(tmp_path))
    bench = benchmarks.get("travelbench")
    config = load_config(None, [("data.dataset", "travelbench", "--data")])[0]
    devs = run_deviations(config, bench, load_prompt_set("builtin", bench.prompts))
    assert devs == {"prompts": {"profile": "the reference's, imported (agentsweep prompts "
                                           "import)",
                                "used": "builtin", "note": NOT_REFERENCE_NOTE}}
    line = settings_summary("paper", devs)
    assert line == ("profile paper; deviations: prompts=builtin (paper: the reference's, "
                    "imported (agentsweep prompts import)): not the reference's prompts; "
                    "scores are not comparable with the paper")
    # the smoke profile makes no claim to be the reference's: no prompt deviation
    smoke = load_config(None, [("data.dataset", "travelbench", "--data"),
                               ("profile", "smoke", "--profile")])[0]
    assert "prompts" not in run_deviations(smoke, bench, None)


def test_an_unedited_import_is_the_reference_and_an_edited_one_is_not(tmp_path, monkeypatch):
    from evaluator.benchmarks.travelbench.prompt_import import import_reference
    from tests.evaluator.test_prompt_sets import make_checkout

    monkeypatch.setenv("AGENTSWEEP_HOME", str(tmp_path / "home"))
    bench = benchmarks.get("travelbench")
    out, _ = import_reference(make_checkout(tmp_path / "ref"), name="ref")
    ps = load_prompt_set("ref", bench.prompts)
    assert prompt_deviation(ps, "travelbench") is None
    config = load_config(None, [("data.dataset", "travelbench", "--data"),
                                ("prompts", "ref", "--set prompts")])[0]
    assert run_deviations(config, bench, ps) == {}
    assert settings_summary("paper", {}) == "profile paper; deviations: none"
    assert prompt_deviation(ps, "vitabench")["used"] == f"{ps.label} (imported for travelbench)"
    meta = out / "judge_meta.txt"
    meta.write_text(meta.read_text(encoding="utf-8") + "Be strict.\n", encoding="utf-8")
    edited = prompt_deviation(load_prompt_set("ref", bench.prompts), "travelbench")
    assert edited is not None and "edited since the import: judge_meta.txt" in edited["used"]
    (out / "manifest.json").unlink()  # a hand-made set directory
    hand = prompt_deviation(load_prompt_set(out, bench.prompts), "travelbench")
    assert hand is not None and "not written by `agentsweep prompts import`" in hand["used"]


def test_deviation_lines_keep_json_for_values_and_add_notes():
    assert describe_deviations("paper", {
        "judge.max_attempts": {"profile": 10, "used": 3},
        "prompts": {"profile": "x", "used": "builtin", "note": "n"}}) == [
        "judge.max_attempts=3 (paper: 10)", "prompts=builtin (paper: x): n"]


# ------------------------------------------------------------------ end to end


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, AGENTSWEEP_HOME=str(home))
    env.pop("AGENTSWEEP_PLUGINS", None)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "evaluator.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def test_options_reach_protocol_judges_scoring_manifest_and_report(tmp_path):
    """`--set options.*` on the toy benchmark: the protocol puts the hint in the system prompt,
    the rule check reads any number (final_only off), scoring mixes in the grader, and the
    manifest, the run's summary and the report list the changed profile value."""
    from perf.stub_server import start_stub

    agent = {"X-Stub-Replies": "5 or 42 or 6, the answer."}  # every expected number, not last
    headers = "{ " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}" for k, v in agent.items()) + " }"
    with start_stub("--mode", "text") as stub, start_stub("--mode", "schema") as judge:
        r = _cli("run", "--plugin", "tests.toybench", "--data", str(TOY_DATA), "--engine-url",
                 stub.url, "--out", str(tmp_path), "--name", "opt", "--judge", "--progress",
                 "off", "--set", f"agent.endpoint.extra_headers={headers}",
                 "--set", "options.hint=Count twice.", "--set", "options.final_only=false",
                 "--set", "options.grader_weight=0.5",
                 "--set", f'judge.endpoints=[{{ base_url = "{judge.url}" }}]', home=tmp_path)
        assert r.returncode == 0, r.stderr
    run_dir = tmp_path / "opt"
    assert ("profile paper; deviations: options.final_only=false (paper: true)"
            in r.stdout)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["resolved_config"]["options"] == {"hint": "Count twice.",
                                                      "final_only": False,
                                                      "grader_weight": 0.5}
    assert manifest["deviations"] == {"options.final_only": {"profile": True, "used": False}}
    records = [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines()]
    system = records[0]["messages"][0]["content"]
    assert system.endswith("\nCount twice.")
    judgements = [json.loads(x) for x in (run_dir / "judgements.jsonl").read_text().splitlines()]
    exact = [j for j in judgements if j["kind"] == "toy_exact"]
    # trials with the same trajectory share a judgement; each task's is 1 (any number counts)
    assert {j["unit"]["task"] for j in exact} == {f"toybench/arith/a{i}" for i in (1, 2, 3)}
    assert all(j["score"] == 1.0 for j in exact)
    graded = [j for j in judgements if j["kind"] == "toy_grade"]
    r = _cli("report", str(run_dir), "--bootstrap", "20", home=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "options.final_only=false (paper: true)" in r.stdout
    section = json.loads((run_dir / "report.json").read_text())["runs"][0]["benchmarks"][
        "toybench"]
    want = sum(0.5 + 0.5 * j["score"] for j in graded) / len(graded)
    assert section["accuracy"] == pytest.approx(want)


def test_owed_judgements_are_keyed_with_the_options(toy, tmp_path):
    """A judge whose version names the options (`JudgeSpec.options_version`): a judgement made
    under the run's options is not owed again, one made under others is (the resume backfill
    and the summary's owed count use the pool's keys)."""
    import dataclasses
    import time

    from evaluator.benchmarks.base import BenchmarkOptions
    from evaluator.judges.owed import missing
    from evaluator.judges.settings import JudgeSettings
    from evaluator.judges.transcript import trajectory_hash
    from evaluator.records import EpisodeRecord, Judgement, UnitId
    from tests.toybench.judges import EXACT, JUDGES

    spec = dataclasses.replace(JUDGES[EXACT], options_version=lambda s, p, o: (
        "toy-exact-v1" + ("+final" if o.final_only else "")))
    bench = dataclasses.replace(toy, judges={EXACT: spec})
    benchmarks.register(bench, replace=True)
    try:
        rec = EpisodeRecord(unit=UnitId(run="r", task="toybench/arith/a1", trial=0, seed=1),
                            benchmark="toybench", subset="arith", task_id="a1", messages=[],
                            termination="answer", final_answer="5")
        settings = JudgeSettings()
        made = Judgement(unit=rec.unit, trajectory_hash=trajectory_hash(rec), judge_model="rule",
                         prompt_version="toy-exact-v1+final", kind=EXACT, score=1.0,
                         created_at=time.time())
        have = {(made.trajectory_hash, "rule", made.prompt_version, EXACT): made}
        paper = BenchmarkOptions({"final_only": True})
        other = BenchmarkOptions({"final_only": False})
        kinds = lambda r, t, s: [EXACT]
        benchmarks.register(dataclasses.replace(bench, judge_kinds=kinds), replace=True)
        assert missing(rec, None, settings, "m", None, have, paper) == []
        assert missing(rec, None, settings, "m", None, have, other) == [
            (made.trajectory_hash, "rule", "toy-exact-v1", EXACT)]
    finally:
        benchmarks.register(toy, replace=True)
