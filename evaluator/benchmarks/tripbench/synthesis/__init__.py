"""TRIP-Bench task synthesis (paper 3.2, B.3): itinerary meta-information, user constraints
drawn from the evaluation's rubric table (G(e) ranges and feasible ids), modification chains,
difficulty tiers and the hard sets LIT/FIT/AIS/PMR, and the per-task dialogue graph.

    generate_taskset(out_dir, seed=0, size="small", tasks=None) -> (tasks.jsonl, world.sqlite)
"""

from typing import Any

__all__ = ["GENERATOR", "VERSION", "generate_taskset", "iter_tasks", "write_tasks"]


def __getattr__(name: str) -> Any:
    """The generator's names, imported on first use: scoring reads `synthesis.meta` alone, and a
    run should not pay for the whole generator at start-up."""
    if name in __all__:
        from . import generate

        return getattr(generate, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
