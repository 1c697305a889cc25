"""docs/gpu_cluster.md's config, as the page prints it, against the code: with the reference's
prompts imported it records no deviation from the `paper` profile, its k = 32 study records
`trials` alone, and without the import the prompts are a deviation. The run's data is the
shared TravelBench data; the page's store, paths and endpoints are kept (only checked by a
run, not by the config)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evaluator import benchmarks
from evaluator.config import load_config
from evaluator.prompt_sets import load_prompt_set
from evaluator.run.manifest import run_deviations

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data" / "travelbench"
PAGE = REPO / "docs" / "gpu_cluster.md"


def page_config() -> str:
    text = PAGE.read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```toml\n(.*?)```", text, re.DOTALL)
                 if b.startswith("# tb-paper.toml"))
    return block


@pytest.fixture
def walkthrough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if not (DATA / "single_turn.jsonl").exists():
        pytest.skip("the shared TravelBench data is not here")
    from evaluator.benchmarks.travelbench.prompt_import import import_reference
    from tests.evaluator.test_prompt_sets import make_checkout

    monkeypatch.setenv("AGENTSWEEP_HOME", str(tmp_path / "home"))
    import_reference(make_checkout(tmp_path / "TravelBench"))  # as `agentsweep prompts import`
    text = page_config()
    assert 'dataset = "/data/travelbench"' in text
    path = tmp_path / "tb-paper.toml"
    path.write_text(text.replace('"/data/travelbench"', f'"{DATA}"'), encoding="utf-8")
    return path


def deviations(path: Path, *overrides: tuple[str, object]) -> dict:
    config, _ = load_config(path, [(k, v, "test") for k, v in overrides])
    bench = benchmarks.get("travelbench")
    assert config.profile == "paper" and config.trials >= 3
    return run_deviations(config, bench, load_prompt_set(config.prompts, bench.prompts))


def test_the_pages_config_reproduces_the_paper(walkthrough: Path) -> None:
    assert deviations(walkthrough) == {}


def test_the_k32_study_deviates_in_trials_alone(walkthrough: Path) -> None:
    assert deviations(walkthrough, ("trials", 32)) == {"trials": {"profile": 3, "used": 32}}


def test_the_second_model_is_no_deviation_and_builtin_prompts_are(walkthrough: Path) -> None:
    assert deviations(walkthrough, ("agent.endpoint.base_url", "http://gpu-node-02:8000/v1"),
                      ("agent.endpoint.model", "Qwen/Qwen3-32B")) == {}
    assert set(deviations(walkthrough, ("prompts", "builtin"))) == {"prompts"}
    # a setting the page says to leave to the profile: a deviation when set
    assert set(deviations(walkthrough, ("agent.sampling.max_tokens", 4096))) == {
        "agent.sampling.max_tokens"}
