"""Checks of a role's `replicas` and `routing` table (`evaluator/config_sections.py`,
`[judge]`): replica URLs and headers, the router's settings and their numeric bounds."""

from __future__ import annotations

import re
from typing import Any

import msgspec

from evaluator.config_check import check_headers, url_problem

__all__ = ["ROUTING_BOUNDS", "check_replicas"]


def check_replicas(replicas: list[Any], routing: dict[str, Any]) -> None:
    """A role's `replicas` (URLs or endpoint tables) and `routing` (RouterSettings) table."""
    for i, r in enumerate(replicas):
        url = r if isinstance(r, str) else r.base_url
        problem = url_problem(url, embedded=False)
        if problem:
            raise ValueError(f"replicas[{i}]: base_url {problem}")
        if not isinstance(r, str):
            check_headers(f"replicas[{i}].extra_headers", r.extra_headers)
    if routing:
        from backends.router_replica import RouterSettings

        try:
            s = msgspec.convert(routing, RouterSettings)
        except msgspec.ValidationError as exc:  # name the routing key, not the outer path
            text = str(exc)
            inner = re.search(r" - at `\$\.?([^`]*)`$", text)
            if inner:
                text = f"routing.{inner.group(1)}: {text[:inner.start()]}".replace(": : ", ": ")
                raise ValueError(text) from None
            raise ValueError(f"routing: {text}") from None
        if s.policy not in ("sticky_least_loaded", "round_robin", "hash"):
            raise ValueError("routing.policy: one of sticky_least_loaded, round_robin, hash;"
                             f" got {s.policy!r}")
        for name, (low, open_low, high, open_high) in ROUTING_BOUNDS.items():
            node: Any = s
            for part in name.split("."):
                node = getattr(node, part)
            if node is None:
                continue
            if (node < low or (open_low and node == low) or
                    (high is not None and (node > high or (open_high and node == high)))):
                span = (f"{'(' if open_low else '['}{low:g}, "
                        f"{'inf)' if high is None else f'{high:g}' + (')' if open_high else ']')}")
                raise ValueError(f"routing.{name}: must be in {span}, got {node}")
        a = s.admission
        if not 1 <= a.min_cap <= a.initial_cap <= a.max_cap:
            raise ValueError("routing.admission: need 1 <= min_cap <= initial_cap <= max_cap")


# (low, low excluded, high or None, high excluded) of the numeric router settings: intervals
# and sizes that are divided by or slept on must be > 0, factors that shrink must be in (0, 1)
_POS, _NONNEG, _ONE, _FRACTION, _SHRINK = (0.0, True, None, False), (0.0, False, None, False), \
    (1, False, None, False), (0.0, True, 1.0, False), (0.0, True, 1.0, True)
ROUTING_BOUNDS: dict[str, tuple[float, bool, float | None, bool]] = {
    "abs_threshold": _NONNEG, "rel_threshold": _NONNEG, "continuing_slack": _NONNEG,
    "tokens_per_unit": _POS, "session_idle_s": _POS, "chars_per_token": _POS,
    "poll_interval_s": _POS,
    "admission.kv_tokens": _ONE, "admission.tokens_per_episode": _ONE, "admission.kappa": _POS,
    "admission.increase": _ONE, "admission.kv_high": _FRACTION,
    "admission.preemption_backoff": _SHRINK, "admission.latency_tolerance": _POS,
    "admission.latency_decrease": _SHRINK, "admission.overload_decrease": _SHRINK,
    "admission.overload_cooldown_s": _NONNEG,
    "health.probe_interval_s": _POS, "health.probe_timeout_s": _POS,
    "health.probe_failures": _ONE, "health.rejoin_probes": _ONE, "health.error_threshold": _ONE,
    "health.replica_retries": _NONNEG, "health.replica_backoff_s": _NONNEG,
    "health.max_failovers": _NONNEG, "health.all_down_wait_s": _NONNEG,
    "health.restart_after_s": _NONNEG, "health.restart_backoff_s": _NONNEG,
    "health.restart_backoff_cap_s": _NONNEG,
}
