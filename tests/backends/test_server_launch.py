"""Unit tests of the pure launch pieces: command line, environment, device choice."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from backends import server_launch
from backends.server import VLLMServer
from backends.server_launch import (
    CPU_REQUEST_TIMEOUT_S,
    VLLM_MODULE,
    build_command,
    build_env,
    cpu_bind_list,
    free_port,
    resolve_device,
    small_cpu_choices,
)


def flag_value(cmd: list[str], flag: str) -> str:
    assert flag in cmd, f"{flag} missing from {cmd}"
    return cmd[cmd.index(flag) + 1]


def test_command_defaults_enable_prefix_cache_and_tools(monkeypatch) -> None:
    monkeypatch.setattr(server_launch, "cpu_flags", lambda: frozenset({"avx2", "avx512_bf16"}))
    cmd = build_command("/m/smol", port=8123, served_model_name="smol",
                        chat_template=Path("/t/tool.jinja"))
    assert cmd[:3] == [sys.executable, "-m", VLLM_MODULE]
    assert flag_value(cmd, "--model") == "/m/smol"
    assert flag_value(cmd, "--port") == "8123"
    assert flag_value(cmd, "--host") == "127.0.0.1"
    assert flag_value(cmd, "--served-model-name") == "smol"
    assert flag_value(cmd, "--tool-call-parser") == "hermes"
    assert flag_value(cmd, "--chat-template") == "/t/tool.jinja"
    assert flag_value(cmd, "--max-model-len") == "8192"
    for flag in ("--enable-prefix-caching", "--enable-prompt-tokens-details",
                 "--enable-auto-tool-choice", "--disable-uvicorn-access-log"):
        assert flag in cmd
    assert "--tensor-parallel-size" not in cmd and "--dtype" not in cmd


def test_a_cpu_without_native_bfloat16_runs_the_model_in_float32(tmp_path, monkeypatch) -> None:
    """On an AVX2-only x86 CPU torch multiplies bfloat16 matrices with a scalar fallback (one
    model step of the bundled model took minutes): the CPU engine gets `--dtype float32`,
    unless the caller chose a dtype. A CPU with AVX512-BF16 or AMX, or one not known (not
    x86, no /proc/cpuinfo), keeps the model's own dtype; a GPU engine is never changed."""
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 fma\n\nprocessor\t: 1\n")
    avx2 = server_launch.cpu_flags(str(info))
    assert avx2 == frozenset({"fpu", "sse2", "avx2", "fma"})
    assert server_launch.cpu_flags(str(tmp_path / "none")) is None
    assert server_launch.cpu_dtype(avx2) == "float32"
    assert server_launch.cpu_dtype(avx2 | {"avx512_bf16"}) == "auto"
    assert server_launch.cpu_dtype(avx2 | {"amx_bf16"}) == "auto"
    assert server_launch.cpu_dtype(frozenset({"fp", "asimd", "bf16"})) == "auto"   # ARM
    assert server_launch.cpu_dtype(None) == "auto"

    monkeypatch.setattr(server_launch, "cpu_flags", lambda: avx2)
    assert flag_value(build_command("m", port=1), "--dtype") == "float32"
    assert flag_value(build_command("m", port=1, dtype="bfloat16"), "--dtype") == "bfloat16"
    chosen = build_command("m", port=1, extra_args=["--dtype=half"])
    assert "--dtype" not in chosen and chosen[-1] == "--dtype=half"
    assert "--dtype" not in build_command("m", port=1, device="gpu")
    monkeypatch.setattr(server_launch, "cpu_flags", lambda: avx2 | {"avx512_bf16"})
    assert "--dtype" not in build_command("m", port=1)


def test_command_options_and_extra_args_last() -> None:
    cmd = build_command("m", port=1, device="gpu", tensor_parallel_size=4, dtype="bfloat16",
                        tool_call_parser=None, gpu_memory_utilization=0.85, access_log=True,
                        max_model_len=None, extra_args=["--max-num-seqs", "512"],
                        launcher=["fake", "launcher"])
    assert cmd[:2] == ["fake", "launcher"]
    assert flag_value(cmd, "--tensor-parallel-size") == "4"
    assert flag_value(cmd, "--dtype") == "bfloat16"
    assert flag_value(cmd, "--gpu-memory-utilization") == "0.85"
    assert "--enable-auto-tool-choice" not in cmd and "--tool-call-parser" not in cmd
    assert "--disable-uvicorn-access-log" not in cmd and "--max-model-len" not in cmd
    assert cmd[-2:] == ["--max-num-seqs", "512"]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"port": 0}, "port"),
    ({"port": 70000}, "port"),
    ({"port": 80, "tensor_parallel_size": 0}, "tensor_parallel_size"),
    ({"port": 80, "tensor_parallel_size": 2, "device": "cpu"}, "gpu"),
])
def test_command_rejects_bad_values(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        build_command("m", **kwargs)


def test_cpu_env_knobs() -> None:
    env = build_env("cpu", base_env={"PATH": "/bin"}, cpu_kv_cache_gb=2.5, cpu_threads=2,
                    allowed_cpus=[0, 1, 2, 3], preload_iomp=False)
    assert env["PATH"] == "/bin"
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "3"  # vLLM parses whole GiB; round up
    assert env["VLLM_CPU_OMP_THREADS_BIND"] == "0-1"
    assert env["OMP_NUM_THREADS"] == "2"
    assert env["HF_HUB_OFFLINE"] == "1"
    assert "CUDA_VISIBLE_DEVICES" not in env and "LD_PRELOAD" not in env
    # a model step may take minutes on a busy CPU: vLLM's own 300 s limit would end the engine
    assert env["VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS"] == str(int(CPU_REQUEST_TIMEOUT_S))
    assert "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS" not in build_env("gpu", base_env={})
    # vllm-cpu 0.32 cannot load the AOT artifact it saves: the graph cache is used instead
    assert env["VLLM_USE_AOT_COMPILE"] == "0"
    assert "VLLM_USE_AOT_COMPILE" not in build_env("gpu", base_env={})


def test_cpu_env_default_threads_left_to_vllm() -> None:
    env = build_env("cpu", base_env={}, preload_iomp=False)
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "4"
    assert "VLLM_CPU_OMP_THREADS_BIND" not in env and "OMP_NUM_THREADS" not in env


def test_iomp_preload_keeps_existing_preload(tmp_path, monkeypatch) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libiomp5.so").write_bytes(b"")
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    env = build_env("cpu", base_env={"LD_PRELOAD": "/x/libtcmalloc.so"})
    assert env["LD_PRELOAD"] == f"{tmp_path}/lib/libiomp5.so:/x/libtcmalloc.so"
    env = build_env("cpu", base_env={"LD_PRELOAD": "/x/libgomp.so"})  # never mix runtimes
    assert env["LD_PRELOAD"] == "/x/libgomp.so"


def test_gpu_env() -> None:
    env = build_env("gpu", base_env={"VLLM_CPU_KVCACHE_SPACE": "9"}, gpus="2,3")
    assert env["CUDA_VISIBLE_DEVICES"] == "2,3"
    assert env["VLLM_CPU_KVCACHE_SPACE"] == "9"  # untouched: CPU knobs only on CPU
    assert "CUDA_VISIBLE_DEVICES" not in build_env("gpu", base_env={})


def test_bad_cpu_knobs() -> None:
    with pytest.raises(ValueError, match="cpu_kv_cache_gb"):
        build_env("cpu", base_env={}, cpu_kv_cache_gb=0)
    with pytest.raises(ValueError, match="only 2 CPUs"):
        cpu_bind_list(3, [0, 1])
    with pytest.raises(ValueError, match=">= 1"):
        cpu_bind_list(0, [0, 1])
    assert cpu_bind_list(3, [4, 0, 2, 6]) == "0,2,4"


def test_resolve_device() -> None:
    assert resolve_device("auto", gpu_probe=lambda: True) == "gpu"
    assert resolve_device("auto", gpu_probe=lambda: False) == "cpu"
    assert resolve_device("cpu", gpu_probe=lambda: True) == "cpu"
    assert resolve_device("gpu", gpu_probe=lambda: False) == "gpu"
    with pytest.raises(ValueError, match="device must be one of"):
        resolve_device("tpu")


def test_server_builds_from_arguments(tmp_path) -> None:
    s = VLLMServer("/models/x", served_model_name="x", port=9001, device="cpu",
                   cpu_kv_cache_gb=1, extra_args=["--seed", "1"], log_path=tmp_path / "l.log")
    assert s.base_url == "http://127.0.0.1:9001/v1" and s.root_url == "http://127.0.0.1:9001"
    assert s.model == "x" and s.pid is None and s.returncode() is None
    assert s.endpoint().base_url == s.base_url and s.endpoint().model == "x"
    assert flag_value(s.command(), "--port") == "9001"
    assert s.environment()["VLLM_CPU_KVCACHE_SPACE"] == "1"
    assert s.command()[-2:] == ["--seed", "1"]
    assert s.stop() is None  # never started: nothing to do


def test_free_port_is_bindable() -> None:
    import socket

    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_attach_unreachable_is_a_clear_error() -> None:
    from backends.errors import ServerStartError

    with pytest.raises(ServerStartError, match="cannot attach"):
        VLLMServer.attach(f"http://127.0.0.1:{free_port()}/v1", timeout_s=2)
    with pytest.raises(ValueError, match="http"):
        VLLMServer.attach("ftp://x")


def test_a_server_binds_its_threads_to_the_cpus_it_is_given() -> None:
    from backends.server import VLLMServer

    server = VLLMServer("/models/m", device="cpu", cpu_threads=1, cpu_ids=[1], port=8123)
    assert server.environment()["VLLM_CPU_OMP_THREADS_BIND"] == "1"   # a replica's own core
    two = VLLMServer("/models/m", device="cpu", cpu_threads=2, cpu_ids=[4, 6], port=8124)
    assert two.environment()["VLLM_CPU_OMP_THREADS_BIND"] == "4,6"


def test_compile_caches_live_under_the_agentsweep_cache(tmp_path, monkeypatch) -> None:
    """vLLM's compiled graphs and the inductor/Triton artifacts they refer to are kept
    together under the cache directory (a later start loads them); a user's own setting
    wins."""
    from backends.server import VLLMServer

    monkeypatch.setenv("AGENTSWEEP_HOME", str(tmp_path))
    monkeypatch.delenv("VLLM_CACHE_ROOT", raising=False)
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    env = VLLMServer("/models/m", device="cpu", port=8125).environment()
    assert env["VLLM_CACHE_ROOT"] == str(tmp_path / "vllm")
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "torchinductor")
    assert env["TRITON_CACHE_DIR"] == str(tmp_path / "triton")
    monkeypatch.setenv("VLLM_CACHE_ROOT", "/elsewhere")
    own = VLLMServer("/models/m", device="gpu", port=8126, cache_dir=tmp_path / "c")
    env = own.environment()
    assert env["VLLM_CACHE_ROOT"] == "/elsewhere"
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "c" / "torchinductor")


def test_eager_and_cpu_threads_from_the_engine_config() -> None:
    from backends.server import VLLMServer

    assert "--enforce-eager" in build_command("m", port=80, eager=True)
    assert build_command("m", port=80, eager=True, extra_args=["--enforce-eager"]).count(
        "--enforce-eager") == 1
    assert "--enforce-eager" not in build_command("m", port=80)
    s = VLLMServer("/models/m", device="cpu", cpu_threads=2, eager=True, port=8127)
    assert "--enforce-eager" in s.command()
    assert s.environment()["OMP_NUM_THREADS"] == "2"


def test_an_interrupted_compile_does_not_break_the_next_start(tmp_path) -> None:
    """A start killed while compiling leaves an empty .so in the inductor cache; the next start
    removes it (and only such files) before vLLM would fail to load it."""
    from backends.server_launch import repair_compile_cache

    cache = tmp_path / "torchinductor" / "dz"
    cache.mkdir(parents=True)
    (cache / "broken.main.so").write_bytes(b"")
    (cache / "good.main.so").write_bytes(b"\x7fELF...")
    (cache / "empty.cpp").write_text("")
    removed = repair_compile_cache({"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "torchinductor")})
    assert removed == [cache / "broken.main.so"]
    assert sorted(p.name for p in cache.iterdir()) == ["empty.cpp", "good.main.so"]
    assert repair_compile_cache({}) == [] and repair_compile_cache(
        {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "none")}) == []


@pytest.mark.parametrize(("device", "cores", "eager", "threads", "expected"), [
    ("cpu", 2, None, None, (True, 2)),      # a small CPU: eager, every core
    ("cpu", 1, None, None, (True, 1)),
    ("cpu", 3, None, None, (False, None)),  # bigger: vLLM's choices (compiled, its binding)
    ("gpu", 2, None, None, (False, None)),
    ("cpu", 2, False, None, (False, 2)),    # what the user chose stays
    ("cpu", 2, None, 0, (True, None)),      # 0 = vLLM's binding
    ("cpu", 16, True, 3, (True, 3)),
    ("gpu", 1, None, 4, (False, 4)),
])
def test_small_cpu_choices(device, cores, eager, threads, expected) -> None:
    assert small_cpu_choices(device, cores, eager, threads) == expected
