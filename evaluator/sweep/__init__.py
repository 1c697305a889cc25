"""Sweeps: a grid of models x benchmarks run as one run directory per cell (docs/cluster.md)."""
