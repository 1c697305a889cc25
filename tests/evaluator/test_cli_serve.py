"""`agentsweep chat` against the stub server and `agentsweep serve` with a fake vLLM launcher.

serve runs in a subprocess (a small driver calls `serve(args, server_factory=...)` with a
VLLMServer whose launcher is the fake server script of tests/backends/test_server_process.py),
so that real signals can be sent to it and the fake's process tree checked afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

import pytest

from backends.process_tree import alive as _alive
from backends.server import VLLMServer
from evaluator.cli import build_parser, main
from evaluator.cli.chat import normalize_url
from evaluator.cli.serve import READY_PREFIX, serve, server_kwargs
from tests.backends.test_server_process import FAKE_SERVER, kill_leftovers, wait_gone

REPO = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


# -- chat ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def stub():
    from perf.stub_server import start_stub

    with start_stub("--mode", "text") as s:
        yield s


def test_chat_prints_answer_and_usage(stub, capsys) -> None:
    assert main(["chat", "--url", stub.url, "hello"]) == 0
    out, err = capsys.readouterr()
    assert out == "stub answer\n"
    assert "[stub-model] prompt 20 tokens (16 cached), completion 4" in err


def test_chat_json_has_content_usage_and_cached_tokens(stub, capsys) -> None:
    # a bare server root gets /v1 appended
    assert main(["chat", "--url", stub.root, "--json", "hello"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["content"] == "stub answer" and body["model"] == "stub-model"
    assert body["tool_calls"] == [] and body["finish_reason"] == "stop"
    assert body["usage"] == {"prompt_tokens": 20, "completion_tokens": 4,
                             "total_tokens": 24, "cached_tokens": 16}
    assert body["attempts"] == 1


def test_chat_prints_tool_calls(stub, capsys) -> None:
    assert main(["chat", "--url", stub.url, "--header", "X-Stub-Mode: tool", "hi"]) == 0
    out = capsys.readouterr().out
    assert out == '[tool call] lookup({"turn":0})\n'
    assert main(["chat", "--url", stub.url, "--header", "X-Stub-Mode: tool", "--json",
                 "hi"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["content"] is None
    assert body["tool_calls"][0]["function"] == {"name": "lookup", "arguments": '{"turn":0}'}


def test_chat_sends_system_message_sampling_and_stdin_text() -> None:
    from perf.stub_server import start_stub

    with start_stub("--mode", "text", "--record") as rec:
        done = subprocess.run(
            [sys.executable, "-m", "evaluator.cli", "chat", "--url", rec.url, "--model",
             "stub-model", "--system", "be brief", "--max-tokens", "7", "--temperature",
             "0.5", "--seed", "11", "--api-key", "k-123", "-"],
            input="from stdin", capture_output=True, text=True, cwd=REPO, env=_env(),
            timeout=60, check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == "stub answer\n"
        with urllib.request.urlopen(rec.root + "/stub/requests", timeout=60) as resp:
            recorded = json.loads(resp.read())
    (req,) = recorded
    body = json.loads(req["body"])
    assert body["model"] == "stub-model"
    assert body["messages"] == [{"role": "system", "content": "be brief"},
                                {"role": "user", "content": "from stdin"}]
    assert (body["max_tokens"], body["temperature"], body["seed"]) == (7, 0.5, 11)
    assert req["headers"]["Authorization"] == "Bearer k-123"


def _assert_one_line_error(err: str, *needles: str) -> None:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("agentsweep chat: ")
    for needle in needles:
        assert needle in lines[0]


def test_chat_http_error_is_one_line_exit_1(stub, capsys) -> None:
    assert main(["chat", "--url", stub.url, "--header", "X-Stub-Status: 400", "hi"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    _assert_one_line_error(err, "rejected", "HTTP 400", "injected status")


def test_chat_malformed_answer_is_exit_1(stub, capsys) -> None:
    assert main(["chat", "--url", stub.url, "--header", "X-Stub-Mode: malformed", "hi"]) == 1
    _assert_one_line_error(capsys.readouterr().err, "malformed response")


def test_chat_closed_port_exits_1_with_clear_message() -> None:
    from perf.stub_server import free_port

    url = f"http://127.0.0.1:{free_port()}/v1"
    done = subprocess.run(
        [sys.executable, "-m", "evaluator.cli", "chat", "--url", url, "--retries", "0", "hi"],
        capture_output=True, text=True, cwd=REPO, env=_env(), timeout=60, check=False,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    _assert_one_line_error(done.stderr, f"cannot get an answer from {url}", "Cannot connect")


@pytest.mark.parametrize("argv", [
    ["chat", "--url", "ftp://host/v1", "hi"],
    ["chat", "--url", "http://127.0.0.1:1/v1", "--header", "no-colon", "hi"],
    ["chat", "--url", "http://127.0.0.1:1/v1", "--max-tokens", "0", "hi"],
])
def test_chat_bad_arguments_exit_2(argv, capsys) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("agentsweep chat: ")


def test_normalize_url() -> None:
    assert normalize_url("http://h:8000") == "http://h:8000/v1"
    assert normalize_url("http://h:8000/v1/") == "http://h:8000/v1"
    assert normalize_url("https://gw.example/openai/v1") == "https://gw.example/openai/v1"
    with pytest.raises(ValueError, match="http"):
        normalize_url("localhost:8000")


@pytest.mark.integration
def test_chat_against_the_engine(engine, capsys) -> None:
    code = main(["chat", "--url", engine.base_url, "--temperature", "0", "--max-tokens", "24",
                 "Say hello"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.strip()
    assert f"[{engine.model}] prompt" in err


# -- serve --------------------------------------------------------------------------------------
def _serve_args(*extra: str):
    return build_parser().parse_args(["serve", *extra])


def test_server_kwargs_reach_command_and_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("backends.server_launch.allowed_cpus", lambda: list(range(8)))
    args = _serve_args("--model", "/models/m", "--served-model-name", "m", "--port", "0",
                       "--device", "cpu", "--cpu-kv-cache-gb", "2.5", "--max-model-len", "1024",
                       "--tool-call-parser", "none", "--log", str(tmp_path / "x.log"),
                       "--", "--max-num-seqs", "4")
    server = VLLMServer(**server_kwargs(args))
    cmd, env = server.command(), server.environment()
    assert server.port > 0 and server.log_path == tmp_path / "x.log"
    assert cmd[cmd.index("--model") + 1] == "/models/m"
    assert cmd[cmd.index("--served-model-name") + 1] == "m"
    assert cmd[cmd.index("--max-model-len") + 1] == "1024"
    assert "--enable-auto-tool-choice" not in cmd
    assert cmd[-2:] == ["--max-num-seqs", "4"]
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "3" and "--enforce-eager" not in cmd
    assert "--enforce-eager" in VLLMServer(**server_kwargs(_serve_args(
        "--model", "/m", "--device", "cpu", "--eager"))).command()
    gpu = VLLMServer(**server_kwargs(_serve_args("--model", "/m", "--device", "gpu",
                                                 "--gpus", "2,3", "--tensor-parallel-size",
                                                 "2", "--port", "9001")))
    assert gpu.environment()["CUDA_VISIBLE_DEVICES"] == "2,3"
    assert gpu.port == 9001 and "--tensor-parallel-size" in gpu.command()


def test_serve_on_two_cores_runs_eagerly_on_both_unless_told(monkeypatch) -> None:
    monkeypatch.setattr("backends.server_launch.allowed_cpus", lambda: [0, 1])

    def launched(*extra: str) -> tuple[list[str], dict[str, str]]:
        s = VLLMServer(**server_kwargs(_serve_args("--model", "/m", "--device", "cpu", *extra)))
        return s.command(), s.environment()

    cmd, env = launched()
    assert "--enforce-eager" in cmd and env["VLLM_CPU_OMP_THREADS_BIND"] == "0-1"
    cmd, env = launched("--no-eager", "--cpu-threads", "0")   # vLLM's own choices, asked for
    assert "--enforce-eager" not in cmd and "VLLM_CPU_OMP_THREADS_BIND" not in env
    cmd, env = launched("--cpu-threads", "1")
    assert "--enforce-eager" in cmd and env["VLLM_CPU_OMP_THREADS_BIND"] == "0"
    monkeypatch.setattr("backends.server_launch.allowed_cpus", lambda: list(range(4)))
    cmd, env = launched()                                      # a bigger CPU: vLLM's choices
    assert "--enforce-eager" not in cmd and "VLLM_CPU_OMP_THREADS_BIND" not in env


def test_serve_bad_port_exits_2(capsys) -> None:
    assert serve(_serve_args("--port", "70000")) == 2
    assert "--port" in capsys.readouterr().err


def _fake_factory(script: Path, mode: str):
    def factory(args):
        kw = server_kwargs(args)
        kw.update(model="/models/fake", launcher=[sys.executable, str(script), mode],
                  stop_grace_s=5)
        return VLLMServer(**kw)

    return factory


@pytest.fixture
def fake_files(tmp_path: Path):
    script = tmp_path / "fake_vllm.py"
    script.write_text(FAKE_SERVER)
    pids = tmp_path / "pids.json"
    yield script, pids, tmp_path / "serve.log"
    kill_leftovers(pids)


def _fake_argv(pids: Path, log: Path) -> list[str]:
    return ["--port", "0", "--device", "cpu", "--served-model-name", "fake-model",
            "--startup-timeout", "60", "--log", str(log), "--", "--pids", str(pids)]


def test_serve_startup_crash_reports_log_tail(fake_files, capsys) -> None:
    script, pids, log = fake_files
    code = serve(_serve_args(*_fake_argv(pids, log)), _fake_factory(script, "crash"))
    assert code == 1
    err = capsys.readouterr().err
    assert "did not start" in err and "exited with code 1" in err
    assert "fake engine core failed to allocate KV cache" in err


DRIVER = textwrap.dedent('''
    import sys
    sys.path.insert(0, {root!r})
    from tests.evaluator.test_cli_serve import _fake_factory, _serve_args
    from evaluator.cli.serve import serve
    from pathlib import Path
    args = _serve_args(*sys.argv[3:])
    sys.exit(serve(args, _fake_factory(Path(sys.argv[1]), sys.argv[2])))
''')


def _start_serve(tmp_path: Path, script: Path, pids: Path, log: Path):
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER.format(root=str(REPO)))
    proc = subprocess.Popen(
        [sys.executable, str(driver), str(script), "serve", *_fake_argv(pids, log)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=_env(),
        start_new_session=True,
    )
    assert proc.stdout is not None
    seen = []
    ready = ""
    for line in proc.stdout:  # the ready line, then the hint lines up to the Ctrl-C one
        seen.append(line)
        if line.startswith(READY_PREFIX):
            ready = line
        if ready and "Ctrl-C" in line:
            return proc, ready, "".join(seen)
    proc.wait(timeout=30)
    raise AssertionError(f"serve never got ready: {seen} {proc.stderr.read()}")  # type: ignore[union-attr]


def _check_ready(line: str, log: Path) -> str:
    url = line[len(READY_PREFIX):].split()[0]
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert "model fake-model" in line and str(log) in line
    with urllib.request.urlopen(url + "/models", timeout=60) as resp:
        assert json.loads(resp.read())["data"][0]["id"] == "fake-model"
    return url


@pytest.mark.parametrize(("sig", "expected"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)],
                         ids=["sigint", "sigterm"])
def test_serve_runs_until_signal_then_stops_the_tree(tmp_path, fake_files, sig, expected):
    script, pids_file, log = fake_files
    proc, line, out = _start_serve(tmp_path, script, pids_file, log)
    try:
        url = _check_ready(line, log)
        pids = json.loads(pids_file.read_text())
        assert all(_alive(p) for p in pids)
        os.kill(proc.pid, sig)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == expected, err
        assert f'agentsweep chat --url {url} "hello"' in out
        assert f"agentsweep run --engine-url {url}" in out
        assert "stopping the server" in err and "Traceback" not in err
        assert wait_gone(pids) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_reports_a_server_that_dies_while_serving(tmp_path, fake_files):
    script, pids_file, log = fake_files
    proc, line, _ = _start_serve(tmp_path, script, pids_file, log)
    try:
        _check_ready(line, log)
        leader, in_group, _escaped = json.loads(pids_file.read_text())
        os.kill(leader, signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 1
        assert f"exited with code {-signal.SIGKILL} while serving" in err
        assert "fake vllm starting" in err  # the log tail
        assert wait_gone([leader, in_group]) == []  # its group was reaped
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
