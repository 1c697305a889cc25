"""Config value bounds: each bad value is one line naming the file, line and field (or the
flag), and `agentsweep run` exits 2 on it without starting anything."""

from __future__ import annotations

import pytest

from evaluator.cli import main
from evaluator.config import ConfigError, load_config

# (TOML text, the field named, what the message says)
BAD = [
    ("[agent.endpoint]\ntimeout_s = 0\n", "agent.endpoint.timeout_s", "> 0"),
    ("[judge]\nconcurrency = 2\n[user.endpoint]\ntimeout_s = -5.0\n",
     "user.endpoint.timeout_s", "> 0"),
    ("[agent.endpoint]\nmax_retries = -1\n", "agent.endpoint.max_retries", ">= 0"),
    ("[agent.sampling]\ntop_p = 0.0\n", "agent.sampling.top_p", "> 0"),
    ("[agent.sampling]\ntop_p = 1.01\n", "agent.sampling.top_p", "<= 1"),
    ("[judge.sampling]\ntop_p = 0.0\n", "judge.sampling.top_p", "> 0"),
    ("[agent.sampling]\nn = 0\n", "agent.sampling.n", ">= 1"),
    ("[user.sampling]\nmax_tokens = 0\n", "user.sampling.max_tokens", ">= 1"),
    ("[agent.sampling]\ntemperature = -0.1\n", "agent.sampling.temperature", ">= 0"),
    ("[agent.sampling]\ntemperature = nan\n", "agent.sampling.temperature", ">= 0"),
    ("[judge]\nsuccess_threshold = 1.5\n", "judge.success_threshold", "[0, 1]"),
    ("[judge]\nsuccess_threshold = nan\n", "judge.success_threshold", "[0, 1]"),
    ("trials = 100001\n", "trials", "<= 100,000 (every (task, trial) unit is planned"),
    ("trials = 0\n", "trials", ">= 1"),
    ("shutdown_grace_s = nan\n", "shutdown_grace_s", ">= 0"),
    ("[engine]\ncpu_kv_cache_gb = nan\n", "engine.cpu_kv_cache_gb", "> 0"),
    ("[judge]\nretry_temperature = inf\n", "judge.retry_temperature", "finite number"),
    ("[admission]\nwaiting_per_running = inf\n", "admission.waiting_per_running", "finite"),
    ("[retry]\nbackoff_s = -1.0\n", "retry.backoff_s", ">= 0"),
    ("[sandbox]\nsimulator_max_tokens = 0\n", "sandbox.simulator_max_tokens", ">= 1"),
    ("[engine]\nmax_model_len = 0\n", "engine.max_model_len", ">= 1"),
    ("[engine]\ncpu_threads = -1\n", "engine.cpu_threads", "0 (vLLM's binding) or more"),
    ('name = "../elsewhere"\n', "name", "no path separators"),
    ('name = "a/b"\n', "name", "no path separators"),
    ('name = "a\\u0000b"\n', "name", "no path separators"),
    ('name = ".hidden"\n', "name", "starting with a letter or digit"),
    (f'name = "{"x" * 201}"\n', "name", "1-200"),
]


@pytest.mark.parametrize(("text", "field", "says"), BAD)
def test_each_bound_names_file_line_and_field(tmp_path, text, field, says):
    path = tmp_path / "run.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    msg = str(info.value)
    line = next(n for n, x in enumerate(text.splitlines(), 1)
                if x.split("=")[0].strip() == field.rsplit(".", 1)[-1])
    assert f"{path}:{line}:" in msg and f"`{field}`" in msg and says in msg, msg
    assert "\n" not in msg


@pytest.mark.parametrize(("text", "field", "says"), BAD)
def test_each_bound_names_the_flag(text, field, says):
    value = text.splitlines()[-1].split("=", 1)[1].strip()
    import tomllib

    parsed = tomllib.loads(f"v = {value}")["v"]
    with pytest.raises(ConfigError) as info:
        load_config(overrides=[(field, parsed, f"--set {field}")])
    msg = str(info.value)
    assert msg.startswith(f"--set {field} ({field}): ") and says in msg, msg


def test_engine_cpu_threads_is_not_for_replicas(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text("[engine]\nreplicas = 2\ncpu_threads = 1\n")
    with pytest.raises(ConfigError, match="cpu_threads.*not with replicas"):
        load_config(path)
    config, _ = load_config(text="[engine]\ncpu_threads = 2\neager = true\n")
    assert config.engine.cpu_threads == 2 and config.engine.eager is True
    config, _ = load_config(text="[engine]\nreplicas = 2\n")   # "auto" is for replicas too
    assert config.engine.cpu_threads == config.engine.eager == "auto"


@pytest.mark.parametrize("line", ['eager = "yes"', 'cpu_threads = "all"', "cpu_threads = true"])
def test_engine_auto_or_a_value(tmp_path, line):
    path = tmp_path / "run.toml"
    path.write_text(f"[engine]\n{line}\n")
    with pytest.raises(ConfigError, match=r"run\.toml:2.*engine\.(eager|cpu_threads)"):
        load_config(path)


def test_values_inside_the_bounds_are_accepted():
    config, _ = load_config(text='name = "tb-qwen3_8b.v2"\ntrials = 100000\n'
                                 "[agent.sampling]\ntop_p = 1.0\nn = 1\nmax_tokens = 1\n"
                                 "temperature = 0.0\n[judge]\nsuccess_threshold = 0.0\n"
                                 "[agent.endpoint]\ntimeout_s = 0.001\nmax_retries = 0\n")
    assert config.trials == 100000 and config.agent.sampling.top_p == 1.0
    assert config.name == "tb-qwen3_8b.v2" and config.agent.endpoint.max_retries == 0


@pytest.mark.parametrize(("args", "says"), [
    (["--trials", "1000000"], "--trials (trials): trials must be <= 100,000"),
    (["--name", "../x"], "--name (name): name must be"),
    (["--set", "agent.sampling.top_p=nan"], "--set agent.sampling.top_p"),
])
def test_run_exits_2_with_one_line_naming_the_flag(tmp_path, capsys, args, says):
    assert main(["run", "--out", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert list(tmp_path.iterdir()) == []  # nothing was started or written
