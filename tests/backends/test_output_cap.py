"""The CPU engine started here caps every request's output server-wide (vLLM's
`max_new_tokens` generation config), because a request without `max_tokens` (VitaBench's
paper profile sends none, as its reference) would otherwise decode until the context is full,
longer than a request may take on a CPU; roles on it get a longer per-request timeout. A GPU
engine, an attached server and a user's own generation config are left alone."""

from __future__ import annotations

from types import SimpleNamespace

from backends.server import VLLMServer
from backends.server_launch import CPU_MAX_NEW_TOKENS, CPU_REQUEST_TIMEOUT_S, output_cap
from backends.types import Endpoint
from evaluator.run.resources import resolve_endpoint, slow_engine_timeout


def _server(device: str, *extra: str) -> VLLMServer:
    return VLLMServer("/models/m", device=device, port=8001, extra_args=extra)


def test_the_cpu_engine_caps_output_and_the_user_can_say_otherwise():
    cpu = _server("cpu")
    assert cpu.output_cap == CPU_MAX_NEW_TOKENS == 1024
    cmd = cpu.command()
    assert cmd[cmd.index("--override-generation-config") + 1] == '{"max_new_tokens": 1024}'
    assert _server("gpu").output_cap is None
    assert "--override-generation-config" not in _server("gpu").command()
    # the user's own generation config replaces ours (and says what the cap is)
    mine = _server("cpu", "--override-generation-config", '{"max_new_tokens": 4096}')
    assert mine.output_cap == 4096
    assert mine.command().count("--override-generation-config") == 1
    assert _server("cpu", "--generation-config=vllm").output_cap is None
    assert output_cap(["--override-generation-config={\"temperature\": 0.5}"]) is None
    assert output_cap(["--override-generation-config", "not json"]) is None


def test_roles_on_a_cpu_engine_started_here_get_the_long_timeout():
    cpu, gpu = _server("cpu"), _server("gpu")
    assert slow_engine_timeout(cpu) == CPU_REQUEST_TIMEOUT_S
    assert slow_engine_timeout(gpu) == 0.0 and slow_engine_timeout(None) == 0.0
    assert slow_engine_timeout(SimpleNamespace(attached=True, device="cpu")) == 0.0
    ep = resolve_endpoint(Endpoint(base_url="embedded"), "http://127.0.0.1:9/v1", "m",
                          slow_engine_timeout(cpu))
    assert ep.timeout_s == CPU_REQUEST_TIMEOUT_S and ep.base_url == "http://127.0.0.1:9/v1"
    # a longer timeout of the user's stays; a server given by URL is not touched
    assert resolve_endpoint(Endpoint(base_url="embedded", timeout_s=7200.0), "u", "m",
                            CPU_REQUEST_TIMEOUT_S).timeout_s == 7200.0
    other = Endpoint(base_url="http://10.0.0.1:8000/v1")
    assert resolve_endpoint(other, "u", "m", CPU_REQUEST_TIMEOUT_S) is other
