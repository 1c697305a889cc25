"""agentsweep: perf layer."""
