"""`api_key_env`: an endpoint's key read from the environment, never written to the run
directory; a missing variable is a one-line error naming the file, line and field."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from pathlib import Path

import msgspec
import pytest

from backends.types import Endpoint, MissingApiKey, api_key_of
from evaluator.config import ConfigError, load_config, unset_api_key
from evaluator.run.resources import replica_specs
from tests.benchmarks.oracle_http import run_cli

FAKE = "tests.evaluator.run_fakes:one_call_episode"
VAR = "AGENTSWEEP_TEST_KEY_VAR"
SECRET = "sk-test-7f3a91c2e5"


def test_the_key_is_read_from_the_variable_when_asked(monkeypatch):
    ep = Endpoint(base_url="http://127.0.0.1:1/v1", api_key_env=VAR)
    monkeypatch.delenv(VAR, raising=False)
    with pytest.raises(MissingApiKey, match=VAR):
        api_key_of(ep)
    monkeypatch.setenv(VAR, "")
    with pytest.raises(MissingApiKey, match=VAR):  # empty is unset: no "Bearer " header
        api_key_of(ep)
    monkeypatch.setenv(VAR, SECRET)
    assert api_key_of(ep) == SECRET
    assert api_key_of(Endpoint(api_key="literal")) == "literal"
    assert api_key_of(Endpoint()) is None
    with pytest.raises(ValueError, match="not both"):
        Endpoint(api_key="a", api_key_env=VAR)


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "run.toml"
    p.write_text(text)
    return p


def test_load_config_names_file_line_and_field_of_an_unset_variable(tmp_path, monkeypatch):
    monkeypatch.delenv(VAR, raising=False)
    cfg = _write(tmp_path, f'trials = 1\n\n[judge]\n[[judge.endpoints]]\nbase_url = '
                           f'"http://127.0.0.1:9/v1"\napi_key_env = "{VAR}"\n')
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    msg = str(err.value)
    assert msg.startswith(f"{cfg}:") and "judge.endpoints" in msg and VAR in msg, msg
    assert "\n" not in msg
    monkeypatch.setenv(VAR, SECRET)
    config, _ = load_config(cfg)
    assert config.judge.endpoints[0].api_key_env == VAR
    assert unset_api_key(config) is None


@pytest.mark.parametrize("table, needle", [
    (f'[agent.endpoint]\napi_key_env = "1{VAR}"\n', "api_key_env"),
    (f'[agent.endpoint]\napi_key = "x"\napi_key_env = "{VAR}"\n', "not both"),
])
def test_a_bad_name_or_both_keys_are_refused_at_their_line(tmp_path, monkeypatch, table, needle):
    monkeypatch.setenv(VAR, SECRET)
    cfg = _write(tmp_path, table)
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert str(err.value).startswith(f"{cfg}:") and needle in str(err.value)


def test_an_unset_variable_given_by_flag_names_the_flag(monkeypatch):
    monkeypatch.delenv(VAR, raising=False)
    with pytest.raises(ConfigError, match=f"--set agent.endpoint.api_key_env.*{VAR}"):
        load_config(None, [("agent.endpoint.api_key_env", VAR,
                            "--set agent.endpoint.api_key_env")])


def test_a_replica_table_with_its_own_key_drops_the_roles_other_kind_of_key():
    role = Endpoint(base_url="http://127.0.0.1:1/v1", api_key="role-literal")
    table = msgspec.convert({"base_url": "http://127.0.0.1:2/v1", "api_key_env": VAR},
                            Endpoint)
    spec, plain_url = replica_specs(role, [table, "http://127.0.0.1:3/v1"])
    assert (spec.endpoint.api_key, spec.endpoint.api_key_env) == (None, VAR)
    assert plain_url.endpoint.api_key == "role-literal"  # a URL keeps the role's fields


# ------------------------------------------------------------------ through `agentsweep run`


@pytest.fixture(scope="module")
def stub():
    from perf.stub_server import start_stub

    with start_stub("--mode", "text", "--record") as s:
        yield s


def _run(args: list[str], home: Path, key: str | None = None) -> subprocess.CompletedProcess[str]:
    """`agentsweep ARGS` with the key variable set to `key` (None: unset)."""
    return run_cli(*args, home=home / "home", env={VAR: key})


def _recorded(stub) -> list[dict]:
    with urllib.request.urlopen(stub.root + "/stub/requests", timeout=60) as resp:
        return json.loads(resp.read())


def _files_text(run_dir: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(run_dir.rglob("*"))
                     if p.is_file())


def test_a_run_sends_the_key_and_records_only_the_variables_name(stub, tmp_path):
    base = ["run", "--engine-url", stub.url, "--out", str(tmp_path), "--limit", "1",
            "--progress", "off", "--set", f"protocol.entry={FAKE}"]
    keyed = ["--set", f"agent.endpoint.api_key_env={VAR}"]
    r = _run([*base, "--name", "k", *keyed], tmp_path, SECRET)
    assert r.returncode == 0, r.stderr
    auth = {q["headers"].get("Authorization") for q in _recorded(stub) if '"messages"' in q["body"]}
    assert auth == {f"Bearer {SECRET}"}, auth
    run_dir = tmp_path / "k"
    text = _files_text(run_dir)
    assert SECRET not in text and VAR in text
    assert "api_key" not in r.stderr  # no note: nothing secret was written

    # a resume without the variable stops before anything runs, naming it
    again = _run(["run", "--resume", str(run_dir), "--progress", "off"], tmp_path)
    assert again.returncode == 2, again.stderr
    assert VAR in again.stderr and "Traceback" not in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1

    # a literal key works as before and is said to be recorded
    lit = _run([*base, "--name", "lit", "--set", "agent.endpoint.api_key=literal-123"], tmp_path)
    assert lit.returncode == 0, lit.stderr
    assert "note: agent.endpoint.api_key will be written into the run directory" in lit.stderr


def test_judge_names_the_unset_variable_of_its_endpoint(stub, tmp_path):
    r = _run(["run", "--engine-url", stub.url, "--out", str(tmp_path), "--name", "j",
              "--limit", "1", "--progress", "off", "--set", f"protocol.entry={FAKE}"], tmp_path)
    assert r.returncode == 0, r.stderr
    judged = _run(["judge", str(tmp_path / "j"), "--set",
                   f'judge.endpoints=[{{base_url="{stub.url}", api_key_env="{VAR}"}}]'], tmp_path)
    assert judged.returncode == 2, judged.stderr
    assert VAR in judged.stderr and "judge.endpoints[0].api_key_env" in judged.stderr
    assert "Traceback" not in judged.stderr


def test_chat_reads_the_key_from_the_named_variable(stub, tmp_path):
    ok = _run(["chat", "--url", stub.url, "--api-key-env", VAR, "hi"], tmp_path, SECRET)
    assert ok.returncode == 0, ok.stderr
    assert _recorded(stub)[-1]["headers"]["Authorization"] == f"Bearer {SECRET}"
    for args, needle in (([VAR], f"the environment variable {VAR} is not set"),
                         (["1bad"], "must name an environment variable")):
        bad = _run(["chat", "--url", stub.url, "--api-key-env", *args, "hi"], tmp_path)
        assert bad.returncode == 2 and needle in bad.stderr, bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1
    both = _run(["chat", "--url", stub.url, "--api-key", "k", "--api-key-env", VAR, "hi"],
                tmp_path, SECRET)
    assert both.returncode == 2 and "not allowed with" in both.stderr
