"""`agentsweep judge RUN_DIR` end to end, without a model.

A run directory is produced by `agentsweep run` against `perf.stub_server` (or written by hand
when a test needs tool calls or a particular judge config); the judge is a small aiohttp
server in a thread that answers /v1/chat/completions with canned rubric / meta JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Self

import msgspec
import pytest
from aiohttp import web

from evaluator.cli import main
from evaluator.judges.pool import read_judgements
from evaluator.judges.settings import JudgeSettings
from evaluator.records import Judgement
from evaluator.run.results import EPISODES_FILE, iter_records
from evaluator.scoring import score_run
from perf.stub_server import free_port
from tests.evaluator.judge_fakes import make_record

REPO = Path(__file__).resolve().parents[2]
FAKE = "tests.evaluator.run_fakes:one_call_episode"
JUDGE_MODEL = "judge-m"
# Good, Fair, Excellent, Poor -> 4, 3, 5, 2
RUBRIC = {
    "reasoning_planning": {"reasoning": "plans well", "rating": "Good"},
    "summarization_extraction": {"reasoning": "ok", "rating": "Fair"},
    "presentation": {"reasoning": "clear", "rating": "Excellent"},
    "user_interaction": {"reasoning": "asks too much", "rating": "Poor"},
}
META = {"reasoning": "the evaluation is mostly fair", "rating": "Good"}  # s = 4
SINGLE = (4 + 3 + 5 - 3) / 3 / 4   # (mean - 1) / 4 = 0.75
MULTI = (4 + 3 + 5 + 2 - 4) / 4 / 4  # 0.625


def canned(body: dict[str, Any]) -> str:
    """Valid judge JSON for the request: the meta answer or the rubric answer."""
    fmt = body.get("response_format") or {}
    name = fmt.get("json_schema", {}).get("name", "")
    prompt = body["messages"][-1]["content"]
    if name == "travel_meta" or (not name and "meta" in prompt.lower()):
        return json.dumps(META)
    return json.dumps(RUBRIC)


class JudgeStub:
    """An OpenAI-compatible judge in a background thread; `answer(body)` gives the content."""

    def __init__(self, answer: Callable[[dict[str, Any]], str] = canned) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        content = self.answer(body)
        return web.json_response({
            "id": "j", "object": "chat.completion", "created": 0, "model": JUDGE_MODEL,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        })

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": JUDGE_MODEL,
                                                              "object": "model"}]})

    async def _start(self) -> str:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return f"http://127.0.0.1:{port}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        self.url = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(30)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()


@pytest.fixture
def judge() -> Iterator[JudgeStub]:
    with JudgeStub() as j:
        yield j


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run directory: `agentsweep run` of 2 sample tasks per subset on the stub."""
    from perf.stub_server import start_stub

    out = tmp_path_factory.mktemp("runs")
    env = dict(os.environ, FAKE_EPISODE_SLEEP="0")
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    with start_stub("--mode", "text") as stub:
        r = subprocess.run(
            [sys.executable, "-m", "evaluator.cli", "run", "--engine-url", stub.url,
             "--out", str(out), "--name", "s", "--limit", "2", "--trials", "1",
             "--progress", "off", "--set", f"protocol.entry={FAKE}"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert r.returncode == 0, r.stderr
    return out / "s"


def copy_run(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for name in ("manifest.json", "config.toml", EPISODES_FILE):
        (dst / name).write_bytes((src / name).read_bytes())
    return dst


def judge_cli(*args: str) -> int:
    return main(["judge", *args])


def by_kind(judgements: list[Judgement]) -> dict[str, list[Judgement]]:
    out: dict[str, list[Judgement]] = {}
    for j in judgements:
        out.setdefault(j.kind, []).append(j)
    return out


def test_judge_scores_resumes_and_reruns(sample_run, judge, tmp_path, capsys):
    run_dir = copy_run(sample_run, tmp_path / "run")
    records = list(iter_records(run_dir))
    assert sorted(r.subset for r in records) == ["multi_turn"] * 2 + ["single_turn"] * 2 + [
        "unsolvable"] * 2

    assert judge_cli(str(run_dir), "--judge-url", judge.url, "--judge-model", JUDGE_MODEL) == 0
    out = capsys.readouterr().out
    assert "judged 10 (0 judge errors), 0 already judged" in out
    assert "still owed (counted from run's files): none" in out
    js = read_judgements(run_dir)
    kinds = by_kind(js)
    assert {k: len(v) for k, v in kinds.items()} == {"travel_rubric": 4, "meta": 4,
                                                      "unsolvable": 2}
    assert len(judge.requests) == 8  # the unsolvable rule needs no model
    assert {b["model"] for b in judge.requests} == {JUDGE_MODEL}
    for j in kinds["travel_rubric"]:
        expected = SINGLE if j.unit.task.split("/")[1] == "single_turn" else MULTI
        assert j.judge_model == JUDGE_MODEL and j.error is None
        assert j.score == pytest.approx(expected)
        assert set(j.scores.values()) <= {2.0, 3.0, 4.0, 5.0}
    assert all(j.score == pytest.approx(0.8) for j in kinds["meta"])
    assert all(j.score == 0.0 and j.judge_model == "rule" for j in kinds["unsolvable"])
    # the final instance score: normalised rubric x meta s/5 (no tool calls: no penalty)
    settings = JudgeSettings(model=JUDGE_MODEL)
    scores = {s.unit.key: s for s in score_run(run_dir, settings)}
    assert len(scores) == 6
    for s in scores.values():
        want = {"single_turn": SINGLE * 0.8, "multi_turn": MULTI * 0.8, "unsolvable": 0.0}
        assert s.score == pytest.approx(want[s.subset]), s.unit.key
    assert "single_turn   60.00" in out and "multi_turn    50.00" in out

    # a second judge run finds everything judged: nothing asked, nothing appended
    before = (run_dir / "judgements.jsonl").read_bytes()
    assert judge_cli(str(run_dir), "--judge-url", judge.url, "--judge-model", JUDGE_MODEL) == 0
    assert "judged 0 (0 judge errors), 10 already judged" in capsys.readouterr().out
    assert (run_dir / "judgements.jsonl").read_bytes() == before
    assert len(judge.requests) == 8

    # --rerun judges everything again and appends
    assert judge_cli(str(run_dir), "--judge-url", judge.url, "--judge-model", JUDGE_MODEL,
                     "--rerun") == 0
    assert "judged 10 (0 judge errors)" in capsys.readouterr().out
    assert len(read_judgements(run_dir)) == 20
    assert len(judge.requests) == 16
    assert {s.unit.key: s.score for s in score_run(run_dir, settings)} == {
        k: s.score for k, s in scores.items()}

    # another judge model is another key: judged afresh; --no-meta skips the audit
    assert judge_cli(str(run_dir), "--judge-url", judge.url, "--judge-model", "other",
                     "--no-meta", "--concurrency", "1") == 0
    assert "judged 4 (0 judge errors), 2 already judged" in capsys.readouterr().out
    new = read_judgements(run_dir)[20:]
    assert {(j.kind, j.judge_model) for j in new} == {("travel_rubric", "other")}


def _hand_run(run_dir: Path, judge_toml: str, records: list[Any]) -> Path:
    run_dir.mkdir()
    (run_dir / "config.toml").write_text('[data]\ndataset = "sample"\n\n[judge]\n' + judge_toml)
    (run_dir / EPISODES_FILE).write_bytes(b"".join(msgspec.json.encode(r) + b"\n"
                                                   for r in records))
    return run_dir


def test_tool_penalty_and_config_endpoints(judge, tmp_path, capsys):
    """Endpoints from the run's config.toml (no manifest); 1 of 4 tool calls failed."""
    run_dir = _hand_run(
        tmp_path / "h",
        f'model = "{JUDGE_MODEL}"\nendpoints = [{{ base_url = "{judge.url}" }}]\n',
        [make_record("single_turn", "a", calls=4, errors=1), make_record("multi_turn", "b")])
    assert judge_cli(str(run_dir)) == 0
    capsys.readouterr()
    scores = {s.task_id: s.score for s in score_run(run_dir, JudgeSettings(model=JUDGE_MODEL))}
    assert scores["a"] == pytest.approx(SINGLE * 0.8 * 0.75)
    assert scores["b"] == pytest.approx(MULTI * 0.8)


def test_unparseable_answer_is_retried_then_recorded_as_judge_error(tmp_path, capsys):
    with JudgeStub(lambda body: "I think it is fine, no JSON here.") as bad:
        run_dir = _hand_run(tmp_path / "u", f'model = "{JUDGE_MODEL}"\nmax_attempts = 3\n'
                            f'endpoints = [{{ base_url = "{bad.url}" }}]\n',
                            [make_record("single_turn", "a")])
        assert judge_cli(str(run_dir)) == 0
        out = capsys.readouterr().out
        assert len(bad.requests) == 3
        temps = [b.get("temperature") for b in bad.requests]
        assert temps[0] == 0.0 and temps[1:] == [0.7, 0.7]  # retries leave temperature 0
    assert "judged 1 (1 judge errors)" in out
    [j] = read_judgements(run_dir)
    assert j.kind == "travel_rubric" and j.score is None and j.attempts == 3
    assert "unparseable" in (j.error or "") and "no JSON here" in j.raw
    [s] = score_run(run_dir, JudgeSettings(model=JUDGE_MODEL))
    assert s.score is None and s.judge_error and s.judge_error.startswith("rubric:")
    # a judge error is a verdict: not asked again unless --rerun
    with JudgeStub() as good:
        assert judge_cli(str(run_dir), "--judge-url", good.url, "--judge-model",
                         JUDGE_MODEL) == 0
        assert good.requests == []
        assert judge_cli(str(run_dir), "--judge-url", good.url, "--judge-model",
                         JUDGE_MODEL, "--retry-errors") == 0
        assert len(good.requests) == 2  # rubric + meta
        [s] = score_run(run_dir, JudgeSettings(model=JUDGE_MODEL))
        assert s.score == pytest.approx(SINGLE * 0.8) and s.judge_error is None
        # the error is settled now: --retry-errors has nothing left, --rerun judges again
        assert judge_cli(str(run_dir), "--judge-url", good.url, "--judge-model",
                         JUDGE_MODEL, "--retry-errors") == 0
        assert len(good.requests) == 2
        assert judge_cli(str(run_dir), "--judge-url", good.url, "--judge-model",
                         JUDGE_MODEL, "--rerun") == 0
        assert len(good.requests) == 4
    capsys.readouterr()
    [s] = score_run(run_dir, JudgeSettings(model=JUDGE_MODEL))
    assert s.score == pytest.approx(SINGLE * 0.8)


@pytest.mark.parametrize("model", [JUDGE_MODEL, ""])
def test_dead_judge_endpoint_is_an_infrastructure_failure(model, tmp_path, capsys):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    run_dir = _hand_run(
        tmp_path / "d",
        f'model = "{model}"\ninfra_attempts = 1\n'
        f'endpoints = [{{ base_url = "{dead}", max_retries = 0, timeout_s = 5.0 }}]\n',
        [make_record("single_turn", "a"), make_record("unsolvable", "u")])
    code = judge_cli(str(run_dir))
    out, err = capsys.readouterr()
    assert code == 1
    assert dead in out + err
    assert not any(j.kind != "unsolvable" for j in read_judgements(run_dir))
    assert all(j.error is None for j in read_judgements(run_dir))
    if model:  # the rule judge needs no endpoint; the rubric unit is left for a later run
        assert "1 left after infrastructure errors" in out
        # what is owed is counted from the files: the rubric judgement and its meta-judge
        # (the meta-judge counts once the rubric is judged: 1 of 1 episode now)
        assert "still owed (counted from d's files): 1 judgements of 1 episodes" in out


def test_dead_engine_url_is_an_infrastructure_failure(tmp_path, capsys):
    run_dir = _hand_run(tmp_path / "e", "", [make_record("single_turn", "a")])
    cfg = run_dir / "config.toml"
    dead = f"http://127.0.0.1:{free_port()}/v1"
    cfg.write_text(f'[engine]\nurl = "{dead}"\n\n' + cfg.read_text())
    assert judge_cli(str(run_dir)) == 1
    err = capsys.readouterr().err
    assert "cannot attach" in err and "Traceback" not in err
    assert not (run_dir / "judgements.jsonl").exists() or read_judgements(run_dir) == []


def test_missing_or_invalid_run_dir(tmp_path, capsys):
    assert judge_cli(str(tmp_path / "nope")) == 2
    assert "no episodes.jsonl" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / EPISODES_FILE).write_text('{"not": "a record"}\n{}\n')
    assert judge_cli(str(bad), "--judge-url", "http://127.0.0.1:1/v1", "--judge-model", "m") == 2
    assert "episodes.jsonl:1" in capsys.readouterr().err
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / EPISODES_FILE).write_text("")
    (cfg / "config.toml").write_text("[judge]\nconcurency = 3\n")
    assert judge_cli(str(cfg)) == 2
    assert "judge.concurency" in capsys.readouterr().err
    (cfg / "config.toml").write_text("[judge]\nconcurrency = 3\n")
    assert judge_cli(str(cfg), "--concurrency", "0") == 2
    assert "judge.concurrency must be >= 1" in capsys.readouterr().err


def test_sigterm_exits_130_with_a_hint_and_keeps_what_was_judged(sample_run, tmp_path):
    from perf.stub_server import start_stub

    run_dir = copy_run(sample_run, tmp_path / "t")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    judgements = run_dir / "judgements.jsonl"
    with start_stub("--mode", "schema", "--sleep", "0.3") as slow:
        proc = subprocess.Popen(
            [sys.executable, "-m", "evaluator.cli", "judge", str(run_dir), "--judge-url",
             slow.url, "--concurrency", "1"], cwd=REPO, env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            for _ in range(6000):  # bounded wait for the first judgement (at most ~60 s)
                if judgements.exists() and judgements.read_bytes().count(b"\n") >= 1:
                    break
                assert proc.poll() is None, proc.communicate()
                threading.Event().wait(0.01)
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, err
    assert out == ""  # no summary of a partial judging
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert "stopped by SIGTERM" in lines[0] and f"agentsweep judge {run_dir}`" in lines[0]
    first = read_judgements(run_dir)
    assert 1 <= len(first) < 10 and judgements.read_bytes().endswith(b"\n")
    assert f"{len(first)} judgements saved" in lines[0]
    with start_stub("--mode", "schema") as fast:
        r = subprocess.run([sys.executable, "-m", "evaluator.cli", "judge", str(run_dir),
                            "--judge-url", fast.url], cwd=REPO, env=env, text=True,
                           capture_output=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert f"judged {10 - len(first)} (0 judge errors), {len(first)} already judged" in r.stdout
    keys = [(j.trajectory_hash, j.kind) for j in read_judgements(run_dir)]
    assert len(keys) == 10 and len(set(keys)) == 10


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
