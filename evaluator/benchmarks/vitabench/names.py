"""VitaBench's names that registering the benchmark needs, in a module that imports nothing:
the domains, the task subsets and the domains each one merges, and how an episode ends
normally. The environment (env/) and the protocol use them; the registry imports no tool."""

from __future__ import annotations

DOMAINS = ("delivery", "instore", "ota")

SUBSET_DOMAINS = {"delivery": ("delivery",), "instore": ("instore",), "ota": ("ota",),
                  "cross_domain": DOMAINS, "cross-domain": DOMAINS, "cross": DOMAINS}
"""Each task subset (a data file's name) -> the domains its episodes merge."""

TERMINATIONS = ("agent_stop", "user_stop")
"""How an episode ends normally."""
