"""agentsweep: bench_data layer."""
