"""Config validation: defaults, errors naming file/line/field, CLI overrides, docs."""

from __future__ import annotations

import pytest

from evaluator.config import (
    ConfigError,
    RunConfig,
    config_doc,
    load_config,
    locate_line,
    parse_override,
)


def test_empty_config_runs_sample_on_embedded_engine():
    config, text = load_config(text="")
    assert text == ""
    assert config.data.dataset == "sample"
    assert config.agent.endpoint.base_url == "embedded"
    assert config.agent.sampling.max_tokens and config.agent.sampling.max_tokens <= 512
    assert config.judge.sampling.max_tokens and config.judge.sampling.max_tokens <= 1024


def test_file_config_is_read(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text('trials = 3\n[data]\nsubsets = ["single_turn"]\nlimit = 2\n'
                    '[agent.endpoint]\nbase_url = "http://h:1/v1"\n')
    config, _ = load_config(path)
    assert config.trials == 3
    assert config.data.subsets == ["single_turn"] and config.data.limit == 2
    assert config.agent.endpoint.base_url == "http://h:1/v1"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('seed = 1\ntrials = "two"\n', ["run.toml:2", "`trials`", "Expected `int`"]),
        ("[data]\n# c\nlimt = 3\n", ["run.toml:3", "data.limt", "unknown key"]),
        ("[agent.sampling]\ntemperature = 0.5\nbogus = 1\n",
         ["run.toml:3", "agent.sampling.bogus"]),
        ("[user]\nendpoint = { base_url = 3 }\n", ["run.toml:2", "user.endpoint.base_url"]),
        ("[data]\nlimit = -1\n", ["run.toml:2", "data.limit", ">= 0"]),
        ("[judge]\nconcurrency = 0\n", ["run.toml:2", "judge.concurrency"]),
        ("trials = \n", ["run.toml", "invalid TOML", "line 1"]),
    ],
)
def test_errors_name_file_line_and_field(tmp_path, text, expected):
    path = tmp_path / "run.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    for part in expected:
        assert part in str(info.value)


def test_override_errors_name_the_flag():
    with pytest.raises(ConfigError, match=r"--limit \(data.limit\).*Expected `int`"):
        load_config(overrides=[("data.limit", "many", "--limit")])
    with pytest.raises(ConfigError, match="--set agent.x.*unknown key `agent.x`"):
        load_config(overrides=[("agent.x", 1, "--set agent.x")])


def test_overrides_apply_over_the_file(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text("concurrency = 4\n[agent.sampling]\nmax_tokens = 10\n")
    key, value = parse_override("agent.sampling.max_tokens=64")
    config, _ = load_config(path, [(key, value, "--set"), ("concurrency", 9, "--concurrency")])
    assert config.agent.sampling.max_tokens == 64
    assert config.concurrency == 9
    assert parse_override("data.dataset=travelbench") == ("data.dataset", "travelbench")
    assert parse_override("data.subsets=['a','b']") == ("data.subsets", ["a", "b"])
    with pytest.raises(ConfigError):
        parse_override("novalue")


def test_locate_line_handles_tables_and_dotted_keys():
    text = "a = 1\n[agent]\nendpoint.model = 'x'\n[agent.sampling]\nmax_tokens = 3\n"
    assert locate_line(text, "a") == 1
    assert locate_line(text, "agent.endpoint.model") == 3
    assert locate_line(text, "agent.sampling.max_tokens") == 5
    assert locate_line(text, "nothing.here") == 0


def test_doc_lists_every_table_and_field():
    doc = config_doc()
    for table in ("data", "engine", "agent", "user", "tool_simulator", "judge", "protocol",
                  "sandbox", "admission", "retry"):
        assert f"## `[{table}]`" in doc
    for field in RunConfig.__struct_fields__:
        assert f"`{field}" in doc
    assert "`agent.sampling.max_tokens`" in doc


def test_partial_role_tables_keep_role_sampling_defaults():
    cfg, _ = load_config(text='[agent.endpoint]\nbase_url = "http://gpu:8000/v1"\n'
                              "[judge.sampling]\ntemperature = 0.5\n",
                         overrides=[("user.sampling.temperature", 0.7, "--set")])
    assert cfg.agent.endpoint.base_url == "http://gpu:8000/v1"
    assert cfg.agent.sampling.max_tokens == RunConfig().agent.sampling.max_tokens == 160
    assert cfg.user.sampling.temperature == 0.7
    assert cfg.user.sampling.max_tokens == RunConfig().user.sampling.max_tokens
    assert cfg.judge.sampling.temperature == 0.5
    assert cfg.judge.sampling.max_tokens == RunConfig().judge.sampling.max_tokens
    cfg, _ = load_config(text="[agent.sampling]\nmax_tokens = 32\n")
    assert cfg.agent.sampling.max_tokens == 32 and cfg.agent.sampling.temperature == 0.0


def test_tool_simulator_sampling_is_rejected_with_its_line(tmp_path):
    path = tmp_path / "run.toml"
    path.write_text('trials = 1\n[tool_simulator.sampling]\ntemperature = 0.7\n')
    with pytest.raises(ConfigError, match=r"run\.toml:2.*tool_simulator\.sampling.*temperature 0"):
        load_config(path)


def test_engine_device_names_match_the_server():
    from backends.server_launch import DEVICE_CHOICES

    for device in DEVICE_CHOICES:
        cfg, _ = load_config(text=f'[engine]\ndevice = "{device}"\n')
        assert cfg.engine.device == device
    with pytest.raises(ConfigError, match="device"):
        load_config(text='[engine]\ndevice = "tpu"\n')
