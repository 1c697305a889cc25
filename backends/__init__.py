"""agentsweep: backends layer."""
