"""Process-management fault tests of VLLMServer against a fake server script (no vLLM).

The fake takes the real vLLM argv (it parses --port and --served-model-name) after a mode word:
crash (log lines, exit 1), hang (never listens), enginedead (logs an engine-core failure, then
hangs), compile (uses 2 s of CPU, then serves), serve
(answers /health and /v1/models and forks a child in its group plus one that escapes into its
own session), stubborn (also ignores SIGTERM).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from backends.errors import ServerStartError
from backends.process_tree import alive as _alive
from backends.server import VLLMServer

FAKE_SERVER = textwrap.dedent('''
    import argparse, json, os, signal, subprocess, sys, time
    from http.server import BaseHTTPRequestHandler, HTTPServer

    mode = sys.argv[1]
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int)
    p.add_argument("--served-model-name")
    p.add_argument("--pids")
    args, _ = p.parse_known_args(sys.argv[2:])
    print("INFO fake vllm starting", flush=True)
    if mode == "crash":
        print("INFO loading weights", flush=True)
        print("RuntimeError: fake engine core failed to allocate KV cache", flush=True)
        sys.exit(1)
    if mode == "hang":
        while True:
            time.sleep(1)
    if mode == "enginedead":  # vLLM's engine core died; the API server lives on
        print("ERROR [core.py:1512] EngineCore encountered a fatal error.", flush=True)
        while True:
            time.sleep(1)
    if mode == "compile":  # busy for 2 s of CPU before it listens
        t = time.process_time()
        while time.process_time() - t < 2.0:
            pass
    sleeper = [sys.executable, "-c", "import time\\nwhile True: time.sleep(1)"]
    child = subprocess.Popen(sleeper)
    escaped = subprocess.Popen(sleeper, start_new_session=True)
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(args.pids, "w") as fh:
        json.dump([os.getpid(), child.pid, escaped.pid], fh)

    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/health":
                body = b""
            elif self.path == "/v1/models":
                body = json.dumps({"object": "list", "data": [
                    {"id": args.served_model_name, "object": "model"}]}).encode()
            else:
                self.send_response(404); self.end_headers(); return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    HTTPServer(("127.0.0.1", args.port), H).serve_forever()
''')


def kill_leftovers(pids_file: Path) -> None:
    """Test hygiene: if an assertion failed, do not leave fake processes behind."""
    import json

    if pids_file.exists() and pids_file.read_text():
        for pid in json.loads(pids_file.read_text()):
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def fake(tmp_path: Path):
    script = tmp_path / "fake_vllm.py"
    script.write_text(FAKE_SERVER)
    yield_made: list[VLLMServer] = []

    def make(mode: str, **kwargs) -> VLLMServer:
        kwargs.setdefault("startup_timeout_s", 60)
        server = VLLMServer(
            "/models/fake", served_model_name="fake-model", device="cpu",
            launcher=[sys.executable, str(script), mode],
            extra_args=["--pids", str(tmp_path / "pids.json")],
            log_path=tmp_path / f"{mode}.log", **kwargs,
        )
        yield_made.append(server)
        return server

    yield make
    for server in yield_made:
        server.stop()
    kill_leftovers(tmp_path / "pids.json")


def read_pids(server: VLLMServer) -> list[int]:
    import json

    path = Path(server.command()[-1])
    for _ in range(200):
        if path.exists() and path.read_text():
            return json.loads(path.read_text())
        time.sleep(0.05)
    raise AssertionError("fake server never wrote its pids")


def wait_gone(pids: list[int], timeout_s: float = 30) -> list[int]:
    deadline = time.monotonic() + timeout_s
    alive = pids
    while time.monotonic() < deadline:
        alive = [p for p in pids if _alive(p)]
        if not alive:
            return []
        time.sleep(0.05)
    return alive


def test_crash_during_startup_reports_log_tail(fake) -> None:
    server = fake("crash")
    with pytest.raises(ServerStartError) as info:
        server.start()
    err = info.value
    assert "exited with code 1" in str(err)
    assert "fake engine core failed to allocate KV cache" in err.log_tail
    assert "fake engine core failed" in str(err) and str(server.log_path) in str(err)
    assert server.pid is None


def test_startup_timeout_kills_and_reports(fake) -> None:
    server = fake("hang", startup_timeout_s=1.5, stop_grace_s=5)
    with pytest.raises(ServerStartError, match="not ready after 1.5s") as info:
        server.start()
    assert "fake vllm starting" in info.value.log_tail
    assert server.pid is None and server.returncode() is None


def test_stop_kills_whole_tree(fake) -> None:
    server = fake("serve")
    with server:
        pids = read_pids(server)
        assert server.pid == pids[0]
        assert all(_alive(p) for p in pids)
        assert server.returncode() is None
        # the log names the full command and the device (the threads: an environment
        # variable, not in the command), for people reading it later
        head = server.log_path.read_text().splitlines()
        assert "--served-model-name fake-model" in head[0]
        assert head[1] == "agentsweep: device cpu (kv cache 4 GiB, threads auto)"
    assert wait_gone(pids) == []
    assert server.pid is None
    assert server.stop() is None  # idempotent


def test_stubborn_server_is_sigkilled(fake) -> None:
    server = fake("stubborn", stop_grace_s=0.5)
    server.start()
    pids = read_pids(server)
    server.stop()
    assert wait_gone(pids) == []


async def test_astart_and_attach(fake) -> None:
    server = fake("serve")
    async with server:
        pids = read_pids(server)
        other = VLLMServer.attach(server.root_url)
        assert other.model == "fake-model" and other.base_url == server.base_url
        assert other.pid is None
        other.stop()  # attached: must not touch the real process
        assert _alive(pids[0])
        with pytest.raises(ServerStartError, match="does not serve"):
            VLLMServer.attach(server.base_url, model="other")
    assert wait_gone(pids) == []


DRIVER = textwrap.dedent('''
    import json, signal, sys, time
    # A host whose parent ignored SIGINT (a background job of a script) inherits SIG_IGN;
    # this host wants Ctrl-C semantics, as an interactive program has.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # Likewise a test runner started with nohup leaves SIGHUP ignored; a host on a terminal
    # has it at its default (hang-up ends it), which is the case tested here.
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    sys.path.insert(0, {root!r})
    from backends.server import VLLMServer
    s = VLLMServer("/models/fake", served_model_name="fake-model", device="cpu",
                   launcher=[sys.executable, {script!r}, "serve"],
                   extra_args=["--pids", {pids!r}], log_path={log!r}, stop_grace_s=5)
    s.start()
    print("ready", flush=True)
    if sys.argv[1] == "exit":
        sys.exit(0)   # no stop(): atexit must clean up
    time.sleep(600)
''')


def _start_host(tmp_path: Path, template: str, how: str) -> tuple[subprocess.Popen, Path]:
    """A host process (from `template`) that starts the fake server; its stdout says ready."""
    script = tmp_path / "fake_vllm.py"
    script.write_text(FAKE_SERVER)
    pids_file = tmp_path / "pids.json"
    driver = tmp_path / "driver.py"
    root = str(Path(__file__).resolve().parents[2])
    driver.write_text(template.format(root=root, script=str(script), pids=str(pids_file),
                                      log=str(tmp_path / "d.log")))
    proc = subprocess.Popen([sys.executable, str(driver), how], stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    return proc, pids_file


@pytest.mark.parametrize(("how", "sig"), [
    ("exit", None), ("wait", signal.SIGTERM), ("wait", signal.SIGINT), ("wait", signal.SIGHUP),
], ids=["atexit", "sigterm", "sigint", "sighup"])
def test_host_exit_or_signal_leaves_no_orphans(tmp_path, how, sig) -> None:
    proc, pids_file = _start_host(tmp_path, DRIVER, how)
    try:
        assert proc.stdout.readline().strip() == "ready"
        import json

        pids = json.loads(pids_file.read_text())
        if sig is not None:
            os.kill(proc.pid, sig)
        proc.wait(timeout=60)
        assert wait_gone(pids) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_leftovers(pids_file)


ABRUPT_DRIVER = textwrap.dedent('''
    import os, signal, sys, threading, time
    sys.path.insert(0, {root!r})
    from backends.server import VLLMServer
    how = sys.argv[1]
    if how == "own-handler":  # as a Ray worker does: its handler exits without cleanup
        signal.signal(signal.SIGTERM, lambda *a: os._exit(1))
    s = VLLMServer("/models/fake", served_model_name="fake-model", device="cpu",
                   launcher=[sys.executable, {script!r}, "serve"],
                   extra_args=["--pids", {pids!r}], log_path={log!r}, stop_grace_s=5)
    if how == "thread-sigkill":  # off the main thread there is no PDEATHSIG
        t = threading.Thread(target=s.start)
        t.start()
        t.join()
    else:
        s.start()
    print("ready", flush=True)
    time.sleep(600)
''')


@pytest.mark.parametrize(("how", "sig"), [
    ("sigkill", signal.SIGKILL), ("thread-sigkill", signal.SIGKILL),
    ("own-handler", signal.SIGTERM),
])
def test_host_killed_without_cleanup_leaves_no_orphans(tmp_path, how, sig) -> None:
    """No atexit, no signal hook of ours runs: the reaper still ends the server's group (the
    fake's session-escaping child is outside any group we own, so it is not asserted)."""
    proc, pids_file = _start_host(tmp_path, ABRUPT_DRIVER, how)
    try:
        assert proc.stdout.readline().strip() == "ready"
        import json

        server, child, _escaped = json.loads(pids_file.read_text())
        os.kill(proc.pid, sig)
        proc.wait(timeout=60)
        assert wait_gone([server, child]) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_leftovers(pids_file)


def test_reaper_release_leaves_group_alone(tmp_path) -> None:
    from backends.process_tree import start_reaper

    group = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                             start_new_session=True)
    try:
        reaper = start_reaper(group.pid, grace_s=1)
        assert reaper is not None and reaper.proc.poll() is None
        reaper.release()
        reaper.release()  # idempotent
        assert reaper.proc.poll() is not None
        time.sleep(0.3)
        assert group.poll() is None  # released: the group is the owner's to stop
        # and a live reaper whose owner closes the pipe does end the group
        reaper = start_reaper(group.pid, grace_s=1)
        assert reaper is not None
        os.close(reaper._fd)
        reaper._fd = -1
        assert group.wait(timeout=30) == -signal.SIGTERM
        assert reaper.proc.wait(timeout=30) == 0
    finally:
        if group.poll() is None:
            group.kill()


def test_a_start_still_working_at_its_timeout_is_waited_for(fake, monkeypatch) -> None:
    """A slow machine compiling is not a hung start: past startup_timeout_s the start waits
    on while the server's processes use CPU (the 'compile' fake burns 2 s of it first). The
    cap on that wait is raised so that a loaded CI machine, where those 2 s of CPU take many
    seconds of wall time, still shows the rule rather than the cap."""
    from backends import server_wait

    monkeypatch.setattr(server_wait, "STARTUP_WAIT_FACTOR", 40.0)
    server = fake("compile", startup_timeout_s=1.5)
    server.start()
    assert server.startup_extensions >= 1 and server._probe()
    server.stop()


def test_an_engine_that_died_under_a_live_api_server_fails_the_start(fake) -> None:
    """vLLM can leave its API server running after the engine core failed (seen with a broken
    compile-cache file): the start fails on the log line, not after its whole timeout."""
    server = fake("enginedead", startup_timeout_s=120, stop_grace_s=5)
    t0 = time.monotonic()
    with pytest.raises(ServerStartError, match="failed during startup") as info:
        server.start()
    assert time.monotonic() - t0 < 60
    assert "EngineCore encountered a fatal error" in info.value.log_tail
    assert server.pid is None
