"""Settings profiles: `paper` for real data, `smoke` for the sample, user values win and are
recorded as deviations; runs written before profiles resume with their old (smoke) defaults."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.config import ConfigError, load_config, plain, profile_deviations
from evaluator.profiles import deviations, layer, leaves, profile_values

REPO = Path(__file__).resolve().parents[2]
FAKE = "tests.evaluator.run_fakes:one_call_episode"


def _load(*overrides: tuple[str, object], text: str | None = None):
    config, _ = load_config(None, [(k, v, f"--set {k}") for k, v in overrides], text=text)
    return config


def test_auto_is_smoke_for_the_sample_and_paper_for_real_data():
    sample = _load()
    assert sample.profile == "smoke"
    assert (sample.trials, sample.protocol.max_steps, sample.protocol.max_turns) == (1, 6, 4)
    assert sample.agent.sampling.max_tokens == 160
    real = _load(("data.dataset", "travelbench"))
    assert real.profile == "paper"
    # the reference's settings (../shared/notes/travelbench_protocol.md, issue 9 item 2)
    assert real.trials == 3
    assert (real.protocol.max_steps, real.protocol.max_turns) == (20, 10)
    assert (real.agent.sampling.temperature, real.agent.sampling.max_tokens) == (0.7, 8192)
    # the user simulator at 0: the reference's run script (scripts/infer.sh) and the paper
    assert (real.user.sampling.temperature, real.user.sampling.max_tokens) == (0.0, 8192)
    assert real.options == {"rendering": "reference", "judge_answers": "reference",
                            "judge_layout": "reference"}   # the judges' tools where it has them
    assert real.judge.sampling.max_tokens == 16384 and real.judge.sampling.top_p == 0.95
    assert real.judge.max_attempts == 10
    assert real.judge.max_transcript_chars == 0
    assert real.sandbox.simulator_max_tokens == 8192
    assert real.sandbox.validation == "reference"
    assert list(real.protocol.abstain_tags) == ["[Unsolved]"]
    assert profile_deviations(real) == {}


def test_explicit_profile_and_user_values_win_and_are_recorded():
    config = _load(("profile", "paper"), ("agent.sampling.temperature", 0.0),
                   ("protocol.max_steps", 7))
    assert config.profile == "paper"
    assert config.agent.sampling.temperature == 0.0
    assert config.agent.sampling.max_tokens == 8192  # the rest of the table stays the profile's
    assert profile_deviations(config) == {
        "agent.sampling.temperature": {"profile": 0.7, "used": 0.0},
        "protocol.max_steps": {"profile": 20, "used": 7},
    }


def test_a_value_equal_to_the_profile_is_no_deviation():
    config = _load(("data.dataset", "travelbench"), ("trials", 3))
    assert profile_deviations(config) == {}


def test_toml_tables_layer_over_the_profile():
    config = _load(text='profile = "paper"\n[agent.endpoint]\nbase_url = "http://127.0.0.1:9/v1"\n')
    assert config.agent.endpoint.base_url == "http://127.0.0.1:9/v1"
    assert config.agent.sampling.temperature == 0.7


def test_unknown_profile_is_a_one_line_error_naming_the_field():
    with pytest.raises(ConfigError) as err:
        _load(("profile", "fast"))
    msg = str(err.value)
    assert "profile" in msg and "fast" in msg and "\n" not in msg


def test_every_profile_field_exists_in_the_config():
    known = set(leaves(plain(load_config(None)[0])))
    for name in ("paper", "smoke"):
        missing = set(leaves(profile_values(name))) - known
        assert not missing, f"profile {name} names fields the config lacks: {sorted(missing)}"


def test_layer_and_deviations_helpers():
    base = {"a": {"b": 1, "c": 2}, "d": 3}
    top = {"a": {"b": 5}}
    assert layer(base, top) == {"a": {"b": 5, "c": 2}, "d": 3}
    assert base == {"a": {"b": 1, "c": 2}, "d": 3}  # inputs untouched
    assert deviations(base, layer(base, top)) == {"a.b": {"profile": 1, "used": 5}}


@pytest.fixture(scope="module")
def stub():
    from perf.stub_server import start_stub

    with start_stub("--mode", "text") as s:
        yield s


def _env() -> dict[str, str]:
    env = dict(os.environ, FAKE_EPISODE_SLEEP="0")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evaluator.cli", "run", *args], cwd=REPO,
                          env=_env(), capture_output=True, text=True, timeout=120, check=False)


def test_manifest_and_report_name_the_profile_and_its_deviations(stub, tmp_path):
    done = _run("--engine-url", stub.url, "--out", str(tmp_path), "--name", "p",
                "--set", f"protocol.entry={FAKE}", "--set", "protocol.max_steps=3",
                "--progress", "off")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "p" / "manifest.json").read_text())
    assert manifest["profile"] == "smoke"
    assert manifest["deviations"] == {"protocol.max_steps": {"profile": 6, "used": 3}}
    assert manifest["resolved_config"]["profile"] == "smoke"
    from evaluator.report.load import load_run

    run = load_run(tmp_path / "p", use_scoring=False)
    info = run.info
    assert info["profile"] == "smoke"
    assert "protocol.max_steps=3 (smoke: 6)" in info["deviations"]
    from evaluator.report.render_text import render_terminal
    from evaluator.report.summary import summarize_run

    text = render_terminal([summarize_run(run, n_boot=10)])
    line = next(x for x in text.splitlines() if x.startswith("p: "))
    assert "profile smoke" in line and "protocol.max_steps=3" in line and "prompts builtin" in line


SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.mark.skipif(not (SHARED_DATA / "travelbench").is_dir(),
                    reason="../shared/data/travelbench (real TravelBench tasks) is not beside the repo")
def test_a_run_written_before_profiles_resumes_with_its_old_defaults(stub, tmp_path):
    # A real-data run of the old code had trials = 1 (today's smoke value); on resume, the
    # paper profile (trials = 3) must not be applied to it, or it would grow new units.
    done = _run("--engine-url", stub.url, "--out", str(tmp_path), "--name", "old",
                "--set", f"protocol.entry={FAKE}", "--data", "travelbench", "--data-dir",
                str(SHARED_DATA), "--limit", "1", "--profile", "smoke", "--progress", "off")
    assert done.returncode == 0, done.stderr
    run_dir = tmp_path / "old"
    n_before = len((run_dir / "episodes.jsonl").read_text().splitlines())
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    for key in ("profile", "deviations", "prompt_set", "sandbox"):
        manifest.pop(key, None)
    manifest["resolved_config"].pop("profile", None)
    manifest["overrides"] = [o for o in manifest["overrides"] if o[0] != "profile"]
    path.write_text(json.dumps(manifest))
    again = _run("--resume", str(run_dir), "--progress", "off")
    assert again.returncode == 0, again.stderr
    assert len((run_dir / "episodes.jsonl").read_text().splitlines()) == n_before


def test_the_paper_profiles_output_caps_are_the_references(tmp_path):
    # VitaBench's reference sends no max_tokens for any role: unset, the server's limit
    vita = _load(("data.benchmark", "vitabench"), ("data.dataset", str(tmp_path)))
    assert vita.profile == "paper"
    assert vita.agent.sampling.max_tokens is None and vita.user.sampling.max_tokens is None
    assert vita.judge.sampling.max_tokens is None and vita.judge.structured_output is False
    assert profile_deviations(vita) == {}
    # GroupTravelBench's run script gives the agent 12,288 tokens, the users 16,384 and the
    # tool simulator 8,192
    gtb = _load(("data.benchmark", "grouptravelbench"), ("data.dataset", str(tmp_path)))
    assert gtb.agent.sampling.max_tokens == 12288 and gtb.user.sampling.max_tokens == 16384
    assert gtb.sandbox.simulator_max_tokens == 8192
    assert gtb.judge.sampling.max_tokens == 32768
    assert gtb.judge.context_tokens == 0 and profile_deviations(gtb) == {}
    guarded = _load(("data.benchmark", "grouptravelbench"), ("data.dataset", str(tmp_path)),
                    ("judge.context_tokens", 8192), ("judge.sampling.max_tokens", 1024))
    assert profile_deviations(guarded) == {  # the judge's context guard is a deviation
        "judge.context_tokens": {"profile": 0, "used": 8192},
        "judge.sampling.max_tokens": {"profile": 32768, "used": 1024}}
    # TRIP-Bench's paper states none ("default settings"): unset, as VitaBench's
    trip = _load(("data.benchmark", "tripbench"), ("data.dataset", str(tmp_path)))
    assert trip.profile == "paper" and trip.agent.sampling.temperature == 0.7
    assert trip.agent.sampling.max_tokens is None and trip.user.sampling.max_tokens is None
    # a user's cap is a recorded deviation
    capped = _load(("data.benchmark", "vitabench"), ("data.dataset", str(tmp_path)),
                   ("agent.sampling.max_tokens", 160))
    assert profile_deviations(capped) == {
        "agent.sampling.max_tokens": {"profile": None, "used": 160}}
