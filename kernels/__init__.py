"""agentsweep: kernels layer."""
