"""`agentsweep view` in a real headless Chromium, driven over the DevTools protocol.

The run directory is written by a real `agentsweep run --judge` against the stub server (tool
mode: one tool call, then an answer; the stub judge fails to rate, the unsolvable rule rates),
over a copy of the built-in sample whose requests carry markup that would act if it were ever
parsed as HTML. The test opens the viewer, clicks into that episode and checks what is shown,
follows the trial navigation and the side-by-side view, watches the list update while lines
are appended, opens the static export from disk, and keeps screenshots in build/test-artifacts.
Every request the page makes must go to the viewer itself.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import msgspec
import pytest

from evaluator.judges.transcript import trajectory_hash
from evaluator.records import Judgement
from evaluator.report import build_report, load_run, write_report
from evaluator.run.results import iter_records

pytestmark = pytest.mark.browser
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("AGENTSWEEP_TEST_ARTIFACTS", REPO / "build" / "test-artifacts"))
PWN = ("<img src=x onerror=\"document.body.dataset.pwned='img'\">"
       "<script>document.body.dataset.pwned='script'</script>"
       "<img src=\"http://example.invalid/beacon.png\">")


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless Chromium not installed (apt-get install -y chromium)")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _spawn_chromium(profile: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--no-first-run", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", "--remote-debugging-port=0",
         "--window-size=1280,1400", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Browser:
    """Just enough of the Chrome DevTools protocol: evaluate, click, screenshot, requests."""

    def __init__(self, proc: subprocess.Popen[bytes], ws: aiohttp.ClientWebSocketResponse,
                 session: aiohttp.ClientSession) -> None:
        self.proc, self.ws, self.session = proc, ws, session
        self.n = 0
        self.requests: list[str] = []
        self.exceptions: list[str] = []

    @classmethod
    async def launch(cls, profile: Path) -> Browser:
        proc = _spawn_chromium(profile)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError("chromium did not start its DevTools endpoint")
            await asyncio.sleep(0.05)
        port = port_file.read_text().split()[0]
        session = aiohttp.ClientSession()
        async with session.get(f"http://127.0.0.1:{port}/json/list") as r:
            page = next(t for t in await r.json() if t["type"] == "page")
        ws = await session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        b = cls(proc, ws, session)
        for domain in ("Page", "Runtime", "Network"):
            await b.send(f"{domain}.enable")
        return b

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        self.n += 1
        await self.ws.send_json({"id": self.n, "method": method, "params": params})
        while True:
            msg = json.loads((await self.ws.receive(timeout=30)).data)
            if msg.get("method") == "Network.requestWillBeSent":
                self.requests.append(msg["params"]["request"]["url"])
            elif msg.get("method") == "Runtime.exceptionThrown":
                self.exceptions.append(json.dumps(msg["params"]["exceptionDetails"])[:500])
            if msg.get("id") == self.n:
                assert "error" not in msg, msg
                return msg["result"]

    async def eval(self, expr: str) -> Any:
        res = await self.send("Runtime.evaluate", expression=expr, returnByValue=True,
                              awaitPromise=True)
        assert "exceptionDetails" not in res, res["exceptionDetails"]
        return res["result"].get("value")

    async def wait(self, expr: str, timeout: float = 15.0) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            res = await self.send("Runtime.evaluate", expression=expr, returnByValue=True)
            if "exceptionDetails" not in res and res["result"].get("value"):  # not mid-navigation
                return res["result"]["value"]
            await asyncio.sleep(0.05)
        raise AssertionError(f"timed out waiting for {expr}; body: "
                             f"{await self.eval('document.body.innerText.slice(0, 2000)')}")

    async def goto(self, url: str, view: str) -> None:
        """Navigate; wait for the viewer's `view` (or, with "", for the page to load). The
        marker is cleared first: a navigation that only changes the hash keeps the page, whose
        old view would otherwise satisfy the wait before the new one is drawn."""
        await self.eval("document.body && (document.body.dataset.view = 'navigating')")
        await self.send("Page.navigate", url=url)
        if view:
            await self.wait(f"document.body && document.body.dataset.view === {json.dumps(view)}")
        else:
            await self.wait(f"location.href === {json.dumps(url)} && "
                            "document.readyState === 'complete'")

    async def click(self, selector: str, view: str) -> None:
        """A real mouse click in the middle of the element, then wait for the next view."""
        sel = json.dumps(selector)
        box = await self.wait(f"(() => {{ const e = document.querySelector({sel}); if (!e) return null;"
                              f" e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();"
                              f" return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
        await self.eval("document.body.dataset.view = 'clicked'")
        for kind in ("mousePressed", "mouseReleased"):
            await self.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1],
                            button="left", clickCount=1)
        await self.wait(f"document.body && document.body.dataset.view === {json.dumps(view)}")

    async def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = await self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        path = ARTIFACTS / name
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    async def close(self) -> None:
        await self.ws.close()
        await self.session.close()
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory written by `agentsweep run --judge` over hostile sample data."""
    from perf.stub_server import start_stub

    root = tmp_path_factory.mktemp("viewrun")
    data = root / "data"
    shutil.copytree(REPO / "bench_data" / "samples" / "travel_sample", data)
    # given by path, the copy is read as real TravelBench data: it needs its place-name table
    shutil.copy(REPO / "evaluator" / "benchmarks" / "travelbench" / "sample_adcode.txt",
                data / "adcode.txt")
    for name in ("single_turn.jsonl", "multi_turn.jsonl"):
        path = data / name
        lines = []
        for line in path.read_text().splitlines():
            task = json.loads(line)
            task["query"] = f"{task['query']} {PWN}"
            lines.append(json.dumps(task, ensure_ascii=False))
        path.write_text("\n".join(lines) + "\n")
    with start_stub("--mode", "tool") as stub:
        done = subprocess.run(
            [sys.executable, "-m", "evaluator.cli", "run", "--engine-url", stub.url, "--data",
             str(data), "--subset", "single_turn,multi_turn", "--limit", "2", "--trials", "2",
             "--out", str(root), "--name", "hostile", "--judge", "--progress", "off"],
            cwd=REPO, env=_env(), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    run = root / "hostile"
    # a judge that did rate: ratings and a rationale carrying markup too
    record = next(r for r in iter_records(run) if r.unit.key == "travelbench/single_turn/st-001#0")
    verdict = Judgement(unit=record.unit, trajectory_hash=trajectory_hash(record),
                        judge_model="judge-model",
                        prompt_version="v2", kind="travel_rubric", score=0.8,
                        scores={"helpfulness": 4.0, "accuracy": 5.0},
                        reasoning={"helpfulness": f"clear plan {PWN}", "accuracy": "all sourced"},
                        created_at=time.time() + 5)
    with (run / "judgements.jsonl").open("ab") as fh:
        fh.write(msgspec.json.encode(verdict) + b"\n")
    return run


def _start_viewer(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "evaluator.cli", "view", *args], cwd=REPO,
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if "http://" not in line:
        proc.kill()
        raise AssertionError(f"no URL from agentsweep view: {line!r} {proc.communicate()}")
    return proc, line.split()[2]


def _export(run_dir: Path, out: Path) -> Path:
    done = subprocess.run([sys.executable, "-m", "evaluator.cli", "view", "--export", str(out),
                           str(run_dir)], cwd=REPO, env=_env(), capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return out


NOT_PWNED = "!document.body.dataset.pwned && !document.body.dataset.errors"


async def test_viewer_in_chromium(run_dir: Path, tmp_path: Path) -> None:
    report = build_report([load_run(run_dir, use_scoring=False)], n_boot=10, backend="numpy")
    write_report(report, run_dir)
    proc, url = _start_viewer(str(run_dir))
    browser = await Browser.launch(tmp_path / "profile")
    try:
        await browser.goto(url, "list")
        assert await browser.eval("document.querySelectorAll('table.list tbody tr').length") == 8
        header = await browser.eval("document.getElementById('progress').innerText")
        assert "8/8 episodes" in header and "tool cache hits" in header
        # a finished run: its duration and averages, infrastructure apart from verdicts
        assert "ep/min" in header and "0.0 ep/s" not in header and "errors" not in header
        assert "infra failures 0" in header and "not passed 8 (" in header
        # the score summary of the listed units: per subset and over all
        summary = await browser.eval(
            "[...document.querySelectorAll('table.summary-table tr')].map(r => "
            "[...r.children].map(c => c.innerText))")
        assert summary[0][:4] == ["subset", "units", "running", "scored"]
        assert [r[0] for r in summary[1:]] == ["travelbench/multi_turn",
                                               "travelbench/single_turn", "all"]
        assert summary[-1][1] == "8" and summary[-1][6] == "8"  # 8 units, 8 not passed
        print("screenshot:", await browser.screenshot("viewer-list.png"))

        # into the hostile episode with a real click
        await browser.click('tr[data-key="travelbench/single_turn/st-001#0"] a.ep', "episode")
        shown = await browser.eval("document.getElementById('main').innerText")
        assert "user (task)" in shown and PWN in shown          # markup shown as text
        assert await browser.eval("document.querySelector('details.sys').open") is False
        call = await browser.eval("document.querySelector('.call').innerText")
        assert "lookup" in call and '"turn": 0' in call  # the stub's call, pretty-printed
        # marked: source error, invalid arguments, the error category (unknown tool)
        assert await browser.eval("document.querySelectorAll('.call .badge').length") >= 3
        assert await browser.eval("document.querySelector('.call .b-error') !== null")
        judges = await browser.eval(
            "[...document.querySelectorAll('.judgement')].map(e => e.innerText).join('\\n')")
        assert "helpfulness" in judges and f"clear plan {PWN}" in judges
        assert "judge error" in judges                         # the stub judge's failure
        # how the score comes about: the rating 0.8, no audit, its one tool call an error
        assert await browser.eval("document.getElementById('score-formula').innerText") == (
            "0.800 (travel_rubric) × 1.000 (audit) × 0.000 (tool errors) = 0.000")
        assert "pass when score ≥ 0.75" in await browser.eval(
            "document.querySelector('.score-detail').innerText")
        assert await browser.eval("document.querySelector('.judgement.used').innerText"
                                  ".includes('judge-model')")
        # the timeline: each model call, and the tool call after the agent call that made it
        timeline = await browser.eval("[...document.querySelectorAll('table.timeline tr')]"
                                      ".map(r => r.className + ' ' + r.cells[0].innerText)")
        assert timeline[:3] == ["t-agent agent call", "t-tool tool lookup", "t-agent agent call"]
        assert await browser.eval("[...document.querySelectorAll('.tl-bar')].every("
                                  "b => b.getBoundingClientRect().width >= 1)")
        assert await browser.eval(NOT_PWNED)
        print("screenshot:", await browser.screenshot("viewer-episode.png"))

        await browser.click("#next-trial", "episode")
        assert "#1" in await browser.eval("document.querySelector('.summary').innerText")
        await browser.click("a.cmp", "diff")
        assert await browser.eval("document.querySelectorAll('.cols .side').length") == 2
        # two trials of one task at temperature 0 on the stub: nothing differs
        assert await browser.eval("document.getElementById('diff-note').innerText") == (
            "the two conversations are identical")
        # two tasks side by side: the differing messages and figures are marked
        await browser.goto(url + "#/diff?a_run=hostile&a_key=travelbench%2Fsingle_turn%2F"
                           "st-001%230&b_run=hostile&b_key=travelbench%2Fmulti_turn%2F"
                           "mt-001%230", "diff")
        assert "conversations differ from message" in await browser.eval(
            "document.getElementById('diff-note').innerText")
        assert await browser.eval("document.querySelectorAll('.cols .differs').length") >= 2
        assert await browser.eval("[...document.querySelectorAll('table.compare tr.differs')]"
                                  ".map(r => r.cells[0].innerText).includes('messages')")
        await browser.screenshot("viewer-diff.png")

        # the run's report, served by the viewer: its rows link back into the list
        await browser.goto(url + "runs/hostile/report.html", "")
        await browser.click('a[title="open in agentsweep view"][href*="f.subset"]', "list")
        assert "/runs/hostile/view/index.html#/list?" in await browser.eval("location.href")
        assert await browser.eval("document.querySelectorAll('table.list tbody tr').length") == 4
        await browser.screenshot("viewer-list.png")

        # live: lines appended to episodes.jsonl appear without a reload
        await browser.goto(url + "#/list?f.task=st-001", "list")
        assert await browser.eval("document.querySelectorAll('table.list tbody tr').length") == 2
        first = next(line for line in (run_dir / "episodes.jsonl").read_bytes().splitlines()
                     if b'"task":"travelbench/single_turn/st-001","trial":0' in line)
        extra = first.replace(b'"trial":0', b'"trial":7')
        with (run_dir / "episodes.jsonl").open("ab") as fh:
            fh.write(extra + b"\n")
        await browser.wait("document.querySelectorAll('table.list tbody tr').length === 3", 10)
        assert "9/8 episodes" in await browser.eval("document.getElementById('progress').innerText")
        # a unit with responses in the journal and no record yet is listed too
        unit = "travelbench/single_turn/st-001#5"
        entry = {"u": unit, "i": 0, "r": "agent", "h": "x", "resp": {
            "id": "r", "model": "m", "choices": [{"index": 0, "message": {
                "role": "assistant", "content": f"thinking {PWN}"}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 3}}}
        (run_dir / "journal.jsonl").write_text(json.dumps(entry) + "\n")
        await browser.wait("document.querySelectorAll('table.list tbody tr').length === 4", 10)
        # the run has all its units (9 of 8): not live, so the unit is shown interrupted
        assert await browser.eval(f"document.querySelector('tr[data-key=\"{unit}\"] "
                                  ".termination').innerText") == "interrupted"
        await browser.click(f'tr[data-key="{unit}"] a.ep', "episode")
        assert f"thinking {PWN}" in await browser.eval("document.getElementById('main').innerText")
        (run_dir / "journal.jsonl").unlink()
        assert await browser.eval(NOT_PWNED)
        assert not browser.exceptions, browser.exceptions
        assert all(u.startswith(url) for u in browser.requests), browser.requests
        async with aiohttp.ClientSession() as s, s.get(  # another Host (DNS rebinding)
                url + "api/runs", headers={"Host": "evil.example"}) as r:
            assert r.status == 403
    finally:
        await browser.close()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "viewer stopped" in err


async def test_static_export_from_disk(run_dir: Path, tmp_path: Path) -> None:
    out = _export(run_dir, tmp_path / "export")
    browser = await Browser.launch(tmp_path / "profile")
    try:
        page = (out / "index.html").as_uri()
        await browser.goto(page, "list")
        assert await browser.eval("document.querySelectorAll('table.list tbody tr').length") >= 8
        # the score summary, computed in the page from the exported rows
        total = await browser.eval("document.getElementById('count').innerText.split(' ')[0]")
        assert await browser.eval("[...document.querySelectorAll('table.summary-table tr')]"
                                  ".pop().cells[1].innerText") == total
        await browser.click('tr[data-key="travelbench/single_turn/st-001#0"] a.ep', "episode")
        assert PWN in await browser.eval("document.getElementById('main').innerText")
        await browser.goto(page + "#/list?q=west%20lake&failed=1", "list")
        assert await browser.eval(NOT_PWNED)
        assert not browser.exceptions, browser.exceptions
        assert all(u.startswith("file://") for u in browser.requests), browser.requests
    finally:
        await browser.close()
