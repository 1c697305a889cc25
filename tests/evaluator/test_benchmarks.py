"""The benchmark registry and what the generic layers may know of benchmarks: registration
(built-in list, entry points, plugins), the interface's checks, and old config keys a
benchmark still accepts (TOML, --set, run directories)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator import benchmarks
from evaluator.benchmarks.base import Benchmark, BenchmarkError
from evaluator.config import ConfigError, convert_config, load_config, plain

REPO = Path(__file__).resolve().parents[2]
GENERIC = ("evaluator", "cache_store", "backends", "kernels")
BENCHMARK_WORDS = re.compile(r"travelbench|single_turn|multi_turn|unsolvable|vitabench|grouptravel")


def test_generic_layers_name_no_benchmark():
    """Only evaluator/benchmarks/ (one package per benchmark, and the registry's import list)
    may name a benchmark or its subsets (case-sensitive; "TravelBench" in prose is fine)."""
    offenders = []
    for top in GENERIC:
        for path in sorted((REPO / top).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel.startswith("evaluator/benchmarks/"):
                continue
            if BENCHMARK_WORDS.search(path.read_text(encoding="utf-8")):
                offenders.append(rel)
    assert offenders == []


def test_the_builtin_benchmarks_are_registered():
    assert {"travelbench", "vitabench"} <= set(benchmarks.names())
    tb = benchmarks.get("travelbench")
    assert tb.subsets == ("single_turn", "multi_turn", "unsolvable")
    assert set(tb.judges) == {"travel_rubric", "meta", "unsolvable"}
    assert tb.judges["meta"].audits == "travel_rubric" and tb.judges["unsolvable"].rule
    with pytest.raises(BenchmarkError, match="no benchmark 'nope' is registered"):
        benchmarks.get("nope")
    with pytest.raises(BenchmarkError, match="already registered"):
        benchmarks.register(Benchmark(name="travelbench", title="x", data=tb.data,
                                      protocols={}))


def test_a_benchmark_checks_its_own_parts():
    tb = benchmarks.get("travelbench")
    with pytest.raises(ValueError, match="data format"):
        Benchmark(name="other", title="x", data=tb.data, protocols={})
    with pytest.raises(ValueError, match="audits unknown kind"):
        Benchmark(name="travelbench", title="x", data=tb.data, protocols={},
                  judges={"meta": tb.judges["meta"]})
    with pytest.raises(BenchmarkError, match="no episode protocol for subset 'x'"):
        tb.protocol("x")


def test_a_plugin_is_found_through_its_entry_point(tmp_path):
    """An installed distribution's `agentsweep.benchmarks` entry point registers its benchmark."""
    dist = tmp_path / "toy_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[agentsweep.benchmarks]\ntoy = tests.toybench\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(REPO)]))
    env.pop(benchmarks.PLUGINS_ENV, None)
    out = subprocess.run(
        [sys.executable, "-c", "from evaluator import benchmarks; print(benchmarks.names())"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=True)
    assert "'toybench'" in out.stdout


def test_a_missing_plugin_is_a_config_error():
    with pytest.raises(ConfigError, match="plugins: .*'no_such_module' cannot be imported"):
        load_config(None, [("plugins", ["no_such_module"], "--plugin")])


# ------------------------------------------------------------------ old config keys


def test_old_keys_are_accepted_in_toml_and_set():
    text = ('[protocol]\nunsolvable_tags = ["[X]"]\nstop_at_unsolvable_tag = true\n'
            '[judge]\nunsolvable_tags = ["[Y]"]\n')
    config, _ = load_config(None, text=text)
    assert config.protocol.abstain_tags == ["[X]"] and config.protocol.stop_at_abstain_tag
    assert config.judge.abstain_tags == ["[Y]"]
    config, _ = load_config(None, [("judge.unsolvable_tags", ["[Z]"], "--set")])
    assert config.judge.abstain_tags == ["[Z]"]
    assert "unsolvable_tags" not in plain(config)["judge"]  # recorded under the new name


def test_old_and_new_key_together_is_an_error():
    with pytest.raises(ConfigError, match="both `judge.unsolvable_tags`"):
        load_config(None, text='[judge]\nunsolvable_tags = ["a"]\nabstain_tags = ["b"]\n')


def test_a_resolved_config_with_old_keys_converts():
    resolved = plain(load_config(None)[0])
    resolved["judge"]["unsolvable_tags"] = resolved["judge"].pop("abstain_tags")
    resolved["protocol"]["unsolvable_tags"] = ["[Old]"]
    del resolved["protocol"]["abstain_tags"]
    del resolved["plugins"]  # written before plugins existed
    config = convert_config(resolved)
    assert config.protocol.abstain_tags == ["[Old]"]
