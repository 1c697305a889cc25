"""TRIP-Bench task synthesis (paper 3.2, B.3): itinerary meta-information, user constraints
drawn from the evaluation's rubric table (G(e) ranges and feasible ids), modification chains,
difficulty tiers and the hard sets LIT/FIT/AIS/PMR, and the per-task dialogue graph.

    generate_taskset(out_dir, seed=0, size="small", tasks=None) -> (tasks.jsonl, world.sqlite)
"""

from .generate import GENERATOR, VERSION, generate_taskset, iter_tasks, write_tasks

__all__ = ["GENERATOR", "VERSION", "generate_taskset", "iter_tasks", "write_tasks"]
