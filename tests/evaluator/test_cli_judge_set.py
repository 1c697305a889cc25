"""`agentsweep judge --set judge.KEY=VALUE` (kept for later commands, a deviation, refused
when it cannot apply) and the judge's context guard, end to end without a model
(tests/evaluator/judge_cli_support.py)."""

from __future__ import annotations

import json

import pytest

from tests.evaluator.judge_cli_support import (
    JUDGE_MODEL,
    copy_run,
    judge_cli,
)


def test_set_changes_judge_settings_for_later_commands_and_is_a_deviation(
        sample_run, judge, tmp_path, capsys):
    """`judge --set judge.KEY=VALUE`: used now, kept in judge_overrides.json for later judge
    and report commands (the manifest is left as it was), and listed as a deviation."""
    from evaluator.judges.overrides import OVERRIDES_FILE
    from evaluator.report.load import load_run

    run_dir = copy_run(sample_run, tmp_path / "run")
    manifest = (run_dir / "manifest.json").read_bytes()
    args = (str(run_dir), "--judge-url", judge.url, "--judge-model", JUDGE_MODEL)
    assert judge_cli(*args) == 0                     # the run's settings: JSON schema decoding
    assert all("response_format" in b for b in judge.requests)
    assert load_run(run_dir).info["deviations"] == "none"
    capsys.readouterr()

    assert judge_cli(*args, "--rerun", "--set", "judge.structured_output=false",
                     "--set", "judge.sampling.temperature=0.3") == 0
    err = capsys.readouterr().err
    assert "judge.structured_output=false" in err and "judge.sampling.temperature=0.3" in err
    asked, seen = judge.requests[8:], len(judge.requests)
    assert len(asked) >= 8                           # retries (at retry_temperature) may add
    assert all("response_format" not in b for b in asked)
    assert asked[0]["temperature"] == 0.3 and {b["temperature"] for b in asked} <= {0.3, 0.7}
    assert json.loads((run_dir / OVERRIDES_FILE).read_text()) == {
        "set": {"sampling.temperature": 0.3, "structured_output": False}}
    assert (run_dir / "manifest.json").read_bytes() == manifest

    # a later judge command applies them without being told; a new --set replaces one value
    assert judge_cli(*args, "--rerun", "--set", "judge.sampling.temperature=0.0") == 0
    asked = judge.requests[seen:]
    assert all("response_format" not in b for b in asked)
    assert asked[0]["temperature"] == 0.0 and {b["temperature"] for b in asked} <= {0.0, 0.7}
    info = load_run(run_dir).info
    assert info["deviations"] == ("judge.sampling.temperature=0.0 (agentsweep judge --set); "
                                  "judge.structured_output=false (agentsweep judge --set)")


@pytest.mark.parametrize(("item", "message"), [
    ("agent.sampling.temperature=0.5", "only judge settings (judge.*) can change after the run"),
    ("judge.structurd_output=true", "--set judge.structurd_output: unknown judge setting"),
    ("judge.concurrency=many", "judge setting override (concurrency)"),
    ("judge", "expected key.path=value"),
])
def test_set_rejects_what_it_cannot_apply_and_records_nothing(sample_run, tmp_path, capsys,
                                                              item, message):
    from evaluator.judges.overrides import OVERRIDES_FILE

    run_dir = copy_run(sample_run, tmp_path / "run")
    assert judge_cli(str(run_dir), "--judge-url", "http://127.0.0.1:9/v1", "--set", item) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (run_dir / OVERRIDES_FILE).exists()


def test_a_damaged_overrides_file_is_a_one_line_error(sample_run, tmp_path, capsys):
    from evaluator.judges.overrides import OVERRIDES_FILE

    run_dir = copy_run(sample_run, tmp_path / "run")
    (run_dir / OVERRIDES_FILE).write_text('{"set": ')
    assert judge_cli(str(run_dir), "--judge-url", "http://127.0.0.1:9/v1") == 2
    err = capsys.readouterr().err
    assert f"{OVERRIDES_FILE}:1: not valid JSON" in err and len(err.strip().splitlines()) == 1
    assert (run_dir / OVERRIDES_FILE).read_text() == '{"set": '


def test_a_resumed_run_judges_with_the_changed_settings(sample_run, tmp_path):
    """`run --resume ... --judge` uses what `judge --set` changed; its own --set wins."""
    from evaluator.judges.overrides import write_overrides
    from evaluator.run.sweep import RunRequest, _load

    run_dir = copy_run(sample_run, tmp_path / "run")
    assert _load(RunRequest(resume=str(run_dir)))[0].judge.structured_output is True
    write_overrides(run_dir, {"structured_output": False, "sampling.temperature": 0.3})
    config = _load(RunRequest(resume=str(run_dir)))[0]
    assert config.judge.structured_output is False and config.judge.sampling.temperature == 0.3
    mine = RunRequest(resume=str(run_dir),
                      overrides=[("judge.sampling.temperature", 0.5, "--set")])
    assert _load(mine)[0].judge.sampling.temperature == 0.5


def test_the_context_guard_is_recorded_per_judgement_and_counted_in_the_report(
        sample_run, judge, tmp_path, capsys):
    """A judge context smaller than the prompts: every model judgement says what the guard did
    (on the estimate: the stub judge server has no /tokenize), the report counts them."""
    from evaluator.judges.pool import read_judgements
    from evaluator.report.load import load_run

    run_dir = copy_run(sample_run, tmp_path / "run")
    assert "context guard" not in load_run(run_dir).info
    assert judge_cli(str(run_dir), "--judge-url", judge.url, "--judge-model", JUDGE_MODEL,
                     "--set", "judge.context_tokens=700",
                     "--set", "judge.sampling.max_tokens=200") == 0
    model = [j for j in read_judgements(run_dir) if j.judge_model == JUDGE_MODEL]
    assert model and all(j.reasoning["_context_guard"].startswith(
        "context guard: prompt ~") for j in model)
    assert "budget 500 (context_tokens 700 - max_tokens 200)" in model[0].reasoning[
        "_context_guard"]
    info = load_run(run_dir).info
    assert info["context guard"] == (f"{len(model)} of {len(model)} model judgements cut to fit "
                                     "the judge's context")
