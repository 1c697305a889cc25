"""agentsweep: evaluator layer."""
