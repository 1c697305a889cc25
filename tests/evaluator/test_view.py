"""`agentsweep view`: the index, the list queries, the JSON endpoints, the export, the report's
links and the progress line off a TTY, on run directories generated from record structs."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import msgspec
import pytest
from aiohttp.test_utils import TestClient, TestServer

from backends.types import ChatMessage, FunctionCall, ToolCall, Usage
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord, Judgement, ToolCallRecord, UnitId
from evaluator.run import progress
from evaluator.run.results import FailureRecord
from evaluator.view.export import export_static
from evaluator.view.query import RunView
from evaluator.view.server import STATIC_FILES, Viewer, make_app, open_runs, static_text
from tests.evaluator.report_fixtures import EVIL, write_run_dir

ENC = msgspec.json.Encoder()


def episode(task: str, trial: int, *, answer: str = "done", errors: int = 0, calls: int = 2,
            termination: str = "answer", run: str = "r") -> EpisodeRecord:
    bench, subset, task_id = task.split("/")
    unit = UnitId(run=run, task=task, trial=trial, seed=trial)
    msgs = [ChatMessage(role="system", content="be helpful"),
            ChatMessage(role="user", content=f"Trip to Lisbon? {EVIL}")]
    records = []
    for i in range(calls):
        msgs.append(ChatMessage(role="assistant", tool_calls=[ToolCall(
            id=f"c{i}", function=FunctionCall(name="weather", arguments='{"city": "Lisbon"}'))]))
        msgs.append(ChatMessage(role="tool", tool_call_id=f"c{i}", content="sunny"))
        records.append(ToolCallRecord(call_id=f"c{i}", name="weather", valid=True,
                                      arguments='{"city": "Lisbon"}', content="sunny",
                                      source="error" if i < errors else "hit"))
    msgs.append(ChatMessage(role="assistant", content=answer))
    return EpisodeRecord(unit=unit, benchmark=bench, subset=subset, task_id=task_id,
                         messages=msgs, tool_calls=records, termination=termination,
                         final_answer=answer, finished_at=1000.0 + trial,
                         usage={"agent": Usage(prompt_tokens=100, completion_tokens=10,
                                               cached_tokens=50)},
                         timings={"total": 2.5}, infra_retries=trial % 2)


def judgement(rec: EpisodeRecord, kind: str, score: float | None, *, at: float,
              scores: dict[str, float] | None = None, error: str | None = None) -> Judgement:
    return Judgement(unit=rec.unit, trajectory_hash=trajectory_hash(rec), judge_model="j",
                     prompt_version="v", kind=kind, score=score, scores=scores or {},
                     reasoning={k: f"because {EVIL}" for k in scores or {}}, error=error,
                     created_at=at)


def lines(items: list[msgspec.Struct]) -> bytes:
    return b"".join(ENC.encode(x) + b"\n" for x in items)


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """6 tasks x 2 trials of travelbench single_turn/multi_turn, judged, one re-run unit, one
    unit that only failed, a torn last line."""
    d = tmp_path / "run"
    d.mkdir()
    (d / "manifest.json").write_text(json.dumps({"run": "r", "n_tasks": 7, "trials": 2}))
    (d / "config.toml").write_text("[judge]\nsuccess_threshold = 0.5\n")
    eps, js = [], []
    for t in range(6):
        subset = "single_turn" if t % 2 == 0 else "multi_turn"
        for trial in range(2):
            rec = episode(f"travelbench/{subset}/t{t}", trial, answer=f"answer {t}.{trial}",
                          errors=1 if t == 1 else 0)
            eps.append(rec)
            if t < 5 and not (t == 4 and trial == 1):
                rating = 1.0 + t
                js.append(judgement(rec, "travel_rubric", (rating - 1) / 4, at=t,
                                    scores={"presentation": rating}))
    eps[0] = episode("travelbench/single_turn/t0", 0, answer="same")
    eps[1] = episode("travelbench/single_turn/t0", 1, answer="same")  # same trajectory
    js[0] = judgement(eps[0], "travel_rubric", 1.0, at=0, scores={"presentation": 5.0})
    js[1] = judgement(eps[0], "meta", 0.6, at=0.5, scores={"meta": 3.0})
    t3 = next(r for r in eps if r.unit.key == "travelbench/multi_turn/t3#0")
    js.append(judgement(t3, "travel_rubric", None, at=9, error=f"unparseable {EVIL}"))
    eps.append(episode("travelbench/multi_turn/t5", 1, answer="rerun wins"))
    fail = FailureRecord(unit=UnitId(run="r", task="travelbench/single_turn/t6", trial=0,
                                     seed=0), kind="infrastructure", error="503", attempts=4)
    (d / "episodes.jsonl").write_bytes(lines(eps) + b'{"unit": {"ru')
    (d / "judgements.jsonl").write_bytes(lines(js))
    (d / "failures.jsonl").write_bytes(lines([fail]))
    return d


def keys(view: RunView, **kw) -> list[str]:
    return [view.unit_key(int(i)) for i in view.query(**kw)]


def test_rows_scores_and_verdicts(run: Path) -> None:
    view = open_runs([run])[0]  # threshold 0.5 from config.toml, 7 x 2 units from the manifest
    rows = {r["key"]: r for r in view.rows(view.query())}
    assert len(rows) == 13  # 12 units + the failed one; the re-run counted once
    assert rows["travelbench/multi_turn/t5#1"]["verdict"] == "-"
    assert rows["travelbench/single_turn/t6#0"]["termination"] == "unfinished: infrastructure"
    assert rows["travelbench/single_turn/t6#0"]["failed"]
    # rubric 1.0 x meta 3/5: both trials share the trajectory and so the judgement
    for trial in (0, 1):
        r = rows[f"travelbench/single_turn/t0#{trial}"]
        assert r["score"] == pytest.approx(0.6) and r["verdict"] == "pass"
        assert r["judgements"] == 2
    # rubric 0.25 x (1 - 1 error / 2 calls)
    assert rows["travelbench/multi_turn/t1#0"]["score"] == pytest.approx(0.125)
    assert rows["travelbench/multi_turn/t1#0"]["verdict"] == "fail"
    assert rows["travelbench/multi_turn/t3#0"]["verdict"] == "judge error"  # latest wins
    assert rows["travelbench/single_turn/t4#1"]["verdict"] == "-"
    assert view.index.bad == 0 and view.progress()["done"] == 12
    assert view.progress()["line"].startswith("12/14 episodes")


def test_filters_sort_and_search(run: Path) -> None:
    view = RunView("r", run, "r", threshold=0.5)
    assert len(keys(view, filters={"subset": "multi"})) == 6
    assert len(keys(view, filters={"subset": "=single_turn", "trial": "1"})) == 3
    assert len(keys(view, filters={"subset": "!multi"})) == 7
    assert keys(view, filters={"score": ">=0.75"}) == ["travelbench/multi_turn/t3#1",
                                                       "travelbench/single_turn/t4#0"]
    assert len(keys(view, filters={"score": "none"})) == 5
    assert len(keys(view, filters={"verdict": "judge"})) == 1
    failed = keys(view, failed=True)
    assert "travelbench/single_turn/t6#0" in failed and "travelbench/single_turn/t0#0" not in failed
    scores = [view.row(int(i))["score"] for i in view.query(sort="score", desc=True)]
    numbers = [s for s in scores if s is not None]
    assert numbers == sorted(numbers, reverse=True) and scores[-1] is None
    tasks = [view.row(int(i))["task"] for i in view.query(sort="task")]
    assert tasks == sorted(tasks)
    assert keys(view, q="RERUN WINS") == ["travelbench/multi_turn/t5#1"]
    assert keys(view, q="answer 2.1") == ["travelbench/single_turn/t2#1"]
    assert len(keys(view, q="<script>alert(1)")) == 12
    assert len(keys(view, q='"city": "Lisbon"')) == 12  # JSON-escaped in the file
    assert keys(view, q="nowhere to be found") == []


def test_index_is_kept_next_to_the_run_and_follows_appends(run: Path) -> None:
    view = RunView("r", run, "r")
    assert (run / ".view" / "index.npz").exists() and not view.index.loaded_from_disk
    again = RunView("r", run, "r")
    assert again.index.loaded_from_disk and again.rows(again.query()) == view.rows(view.query())
    # the torn line completes, one more episode arrives: indexed incrementally
    path = run / "episodes.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[:data.rfind(b"\n") + 1]
                     + lines([episode("travelbench/single_turn/t8", 0, answer="late")]))
    again.refresh(force=True)
    assert again.index.rebuilds == 0 and "travelbench/single_turn/t8#0" in keys(again)
    assert keys(again, q="late") == ["travelbench/single_turn/t8#0"]
    # a replaced file (different head) is indexed again from scratch
    path.write_bytes(lines([episode("travelbench/single_turn/t9", 0)]) + b"not json\n")
    again.refresh(force=True)
    assert again.index.rebuilds == 1 and again.index.bad == 1
    assert [k for k in keys(again) if "t6" not in k] == ["travelbench/single_turn/t9#0"]


def test_read_only_run_dir_keeps_index_in_memory(run: Path) -> None:
    (run / ".view").write_text("not a directory")
    view = RunView("r", run, "r")
    assert view.index.persist_error and len(keys(view)) == 13


def two_runs(run: Path, tmp_path: Path) -> TestClient:
    other = write_run_dir(tmp_path / "other", "other", 3, 2, evil=True)
    return TestClient(TestServer(make_app(Viewer(open_runs([run, other])))))


async def get(client: TestClient, path: str, status: int = 200, **params: str):
    resp = await client.get(path, params=params)
    assert resp.status == status, await resp.text()
    assert "default-src 'none'" in resp.headers["Content-Security-Policy"]
    return await resp.json() if status == 200 else await resp.text()


async def test_endpoints_list_filter_page(run: Path, tmp_path: Path) -> None:
    async with two_runs(run, tmp_path) as client:
        await _list_filter_page(client)


async def _list_filter_page(client: TestClient) -> None:
    runs = await get(client, "/api/runs")
    assert [r["label"] for r in runs] == ["run", "other"]
    assert runs[0]["progress"]["total"] == 14 and runs[0]["rows"] == 13
    page = await get(client, "/api/list", run="run", per="5", page="2")
    assert page["total"] == 13 and page["pages"] == 3 and len(page["rows"]) == 3
    assert [r["#"] for r in page["rows"]] == [11, 12, 13]
    desc = await get(client, "/api/list", run="run", sort="tokens", desc="1", per="1")
    assert desc["rows"][0]["tokens"] == 110
    filt = await get(client, "/api/list", run="run", failed="1", **{"f.subset": "single"})
    assert [r["key"] for r in filt["rows"]] == ["travelbench/single_turn/t6#0"]
    found = await get(client, "/api/list", run="run", q="rerun wins")
    assert [r["key"] for r in found["rows"]] == ["travelbench/multi_turn/t5#1"]
    await get(client, "/api/list", 400, run="run", **{"f.score": ">>1"})
    await get(client, "/api/list", 400, run="run", sort="nope")
    await get(client, "/api/list", 404, run="missing")
    other = await get(client, "/api/list", run="other")
    assert other["total"] == 6 and any(EVIL in r["task"] for r in other["rows"])


async def test_endpoints_episode_and_diff(run: Path, tmp_path: Path) -> None:
    async with two_runs(run, tmp_path) as client:
        await _episode_and_diff(client)


async def _episode_and_diff(client: TestClient) -> None:
    doc = await get(client, "/api/episode", run="run", key="travelbench/single_turn/t0#1")
    assert doc["record"]["final_answer"] == "same" and doc["row"]["verdict"] == "pass"
    assert {j["kind"] for j in doc["judgements"]} == {"travel_rubric", "meta"}
    assert [t["trial"] for t in doc["trials"]] == [0, 1] and doc["other_runs"] == []
    assert [m["role"] for m in doc["record"]["messages"]][:3] == ["system", "user", "assistant"]
    gone = await get(client, "/api/episode", run="run", key="travelbench/single_turn/t6#0")
    assert gone["record"] is None and gone["failures"][0]["error"] == "503"
    await get(client, "/api/episode", 404, run="run", key="travelbench/nope/x#0")
    diff = await get(client, "/api/diff", a_run="run", a_key="travelbench/single_turn/t2#0",
                     b_run="run", b_key="travelbench/single_turn/t2#1")
    assert diff["a"]["record"]["final_answer"] == "answer 2.0"
    assert diff["b"]["record"]["final_answer"] == "answer 2.1"
    await get(client, "/api/diff", 400, a_run="run")


async def test_page_static_and_host_guard(run: Path) -> None:
    app = make_app(Viewer(open_runs([run])), allowed_hosts={"127.0.0.1:1"})
    async with TestClient(TestServer(app)) as c:
        assert (await c.get("/api/runs")).status == 403
        ok = await c.get("/api/runs", headers={"Host": "127.0.0.1:1"})
        assert ok.status == 200
    async with TestClient(TestServer(make_app(Viewer(open_runs([run]))))) as c:
        for path in ("/", "/app.js", "/runs/run/view/index.html", "/runs/run/view/episode.js"):
            resp = await c.get(path)
            assert resp.status == 200 and "script-src 'self'" in resp.headers[
                "Content-Security-Policy"]
        assert (await c.get("/secret.txt")).status == 404
        assert (await c.get("/runs/run/report.html")).status == 404
        (run / "report.html").write_text("<p>report</p>")
        assert "report" in await (await c.get("/runs/run/report.html")).text()


def test_page_loads_nothing_from_elsewhere_and_never_parses_html() -> None:
    for name in STATIC_FILES:
        text = static_text(name)
        assert "http://" not in text and "https://" not in text and "//cdn" not in text
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text
        assert "eval(" not in text and "document.write" not in text


def test_export_is_self_contained(run: Path, tmp_path: Path) -> None:
    viewer = Viewer(open_runs([run, write_run_dir(tmp_path / "o", "o", 2, 1, evil=True)]))
    index = export_static(viewer, tmp_path / "share")
    share = index.parent
    assert {p.name for p in share.iterdir()} >= {*STATIC_FILES, "data"}
    runs = (share / "data" / "runs.js").read_text()
    assert runs.startswith("window.AGENTSWEEP_STATIC=") and str(run) not in runs
    doc = json.loads(runs[len("window.AGENTSWEEP_STATIC="):-2])
    assert len(doc["rows"]["run"]) == 13 and doc["columns"][-1] == "chunk"
    chunk = (share / "data" / "0" / "0.js").read_text()
    assert chunk.startswith("AGENTSWEEP_CHUNK(0,0,") and "rerun wins" in chunk
    assert '<script src="data/runs.js"></script>' in index.read_text()
    assert EVIL not in index.read_text()


def test_report_rows_link_into_the_viewer(tmp_path: Path) -> None:
    from evaluator.report import build_report, load_run

    d = write_run_dir(tmp_path / "a", "a", 4, 2)
    page = build_report([load_run(d, use_scoring=False)], n_boot=10, backend="numpy").html()
    assert 'href="view/index.html#/list?run=a"' in page
    assert "view/index.html#/list?run=a&amp;f.subset=%3Dsingle_turn" in page
    assert "view/index.html#/ep?run=a&amp;key=travelbench%2F" in page  # a judge-error unit


def test_cli_registers_view() -> None:
    from evaluator.cli import build_parser

    args = build_parser().parse_args(["view", "runs/x", "--host", "0.0.0.0"])
    assert args.command == "view" and args.host == "0.0.0.0" and args.port == 0


async def test_auto_progress_off_a_tty_prints_plain_lines(monkeypatch) -> None:
    monkeypatch.setattr(progress, "AUTO_PLAIN_EVERY_S", 0.05)
    counters = progress.Counters()
    counters.units_total = 3
    for mode, expect in (("auto", True), ("off", False)):
        out = io.StringIO()
        task = asyncio.create_task(progress.progress_task(counters, mode, out, interval_s=0.01))
        await asyncio.sleep(0.3)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        text = out.getvalue()
        assert ("0/3 episodes" in text) == expect and "\r" not in text
        if expect:
            assert 2 <= text.count("\n") <= 7  # one line per 0.05 s, not per tick
