"""agentsweep: cache_store layer."""
