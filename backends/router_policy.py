"""Where a request goes: the pure, synchronous placement policy of `backends.router.Router`.

`PlacementPolicy` keeps, per replica, the outstanding work routed to it (requests sent or
queued and their estimated prompt tokens) and the sessions pinned to it that are active, and
answers `place(session, tokens, new_episode)` with a replica index. No I/O, no event loop: the
router calls it around every request, tests drive it directly.

Policies:
  sticky_least_loaded (default)  a session's first request goes to the least-loaded healthy
      replica and the session is pinned there; later requests (all turns of the episode, all
      trials of the task, since trials share the session id) follow the pin while the pinned
      replica is within the imbalance bound, and spill to the least-loaded replica (re-pinning
      the session) beyond it. The bound is crossed only when BOTH
          load(pinned) - load(min) > abs_threshold  and  load(pinned) > rel_threshold * load(min)
      hold (SGLang's cache-aware router uses the same double test). Requests that continue an
      episode get `continuing_slack` times looser thresholds, so under uneven load new episodes
      move first and running ones only when the imbalance is large.
  round_robin   every request to the next healthy replica (no affinity; the baseline).
  hash          a session always to replica hash(session) mod N (next healthy one if that is
      down), whatever the load: the "fixed hash of the id" scheme, for measurements.

load(r) = (active_sessions(r) + queued_tokens(r) / tokens_per_unit) / weight(r). A session is
active on r from its first request until it has had no request in flight for `session_idle_s`.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence

import msgspec

POLICIES = ("sticky_least_loaded", "round_robin", "hash")


class PolicyStats(msgspec.Struct):
    placements: int = 0
    new_sessions: int = 0  # first request of a session seen: placed on the least-loaded replica
    sticky: int = 0  # followed the session's pin
    spills: int = 0  # pin over the imbalance bound: moved to the least-loaded replica
    repins: int = 0  # pin unhealthy or excluded (failover): moved
    unpinned: int = 0  # requests without a session id


class _Session:
    __slots__ = ("active", "in_flight", "last", "replica")

    def __init__(self, replica: int, now: float) -> None:
        self.replica = replica
        self.in_flight = 0
        self.last = now
        self.active = False


def stable_hash(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big")


class PlacementPolicy:
    """Placement over `n` replicas. Not thread-safe; one event loop calls it."""

    def __init__(
        self,
        n: int,
        policy: str = "sticky_least_loaded",
        *,
        abs_threshold: float = 4.0,
        rel_threshold: float = 1.5,
        continuing_slack: float = 2.0,
        tokens_per_unit: float = 4096.0,
        session_idle_s: float = 60.0,
        weights: Sequence[float] | None = None,
        max_sessions: int = 200_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if n < 1:
            raise ValueError("need at least one replica")
        if policy not in POLICIES:
            raise ValueError(f"unknown placement policy {policy!r}; one of {POLICIES}")
        if weights is not None and (len(weights) != n or min(weights) <= 0):
            raise ValueError("weights: one positive number per replica")
        self.n = n
        self.policy = policy
        self.abs_threshold = abs_threshold
        self.rel_threshold = rel_threshold
        self.continuing_slack = continuing_slack
        self.tokens_per_unit = float(tokens_per_unit)
        self.session_idle_s = session_idle_s
        self.weights = [float(w) for w in weights] if weights is not None else [1.0] * n
        self.max_sessions = max_sessions
        self.clock = clock
        self.healthy = [True] * n
        self.requests = [0] * n  # outstanding (queued or sent) requests
        self.tokens = [0] * n  # their estimated prompt tokens
        self.active = [0] * n  # active sessions pinned here
        self.stats = PolicyStats()
        self._sessions: OrderedDict[str, _Session] = OrderedDict()  # pins, least recent first
        self._active: OrderedDict[str, None] = OrderedDict()  # active sessions, by activity
        self._rr = 0

    # -- load --------------------------------------------------------------------------------
    def load(self, r: int) -> float:
        return (self.active[r] + self.tokens[r] / self.tokens_per_unit) / self.weights[r]

    def least_loaded(self, exclude: Collection[int] = ()) -> int | None:
        """The healthy replica with the least load (ties: fewest requests, then rotating)."""
        best, best_key = None, None
        start = self._rr
        for k in range(self.n):
            r = (start + k) % self.n
            if not self.healthy[r] or r in exclude:
                continue
            key = (self.load(r), self.requests[r])
            if best_key is None or key < best_key:
                best, best_key = r, key
        if best is not None:
            self._rr = (best + 1) % self.n
        return best

    def imbalanced(self, r: int, target: int, slack: float = 1.0) -> bool:
        """Is replica r over the bound relative to `target` (absolute AND relative test)?"""
        lr, lt = self.load(r), self.load(target)
        return lr - lt > self.abs_threshold * slack and lr > self.rel_threshold * slack * lt

    def set_healthy(self, r: int, healthy: bool) -> None:
        self.healthy[r] = healthy

    def pinned(self, session: str) -> int | None:
        s = self._sessions.get(session)
        return None if s is None else s.replica

    # -- placement ---------------------------------------------------------------------------
    def place(
        self,
        session: str | None,
        tokens: int = 0,
        *,
        new_episode: bool = True,
        exclude: Collection[int] = (),
    ) -> int | None:
        """Pick a replica and count the request as outstanding there (call `finished` after).
        None when no healthy replica outside `exclude` exists."""
        now = self.clock()
        self._expire(now)
        r = self._choose(session, new_episode, exclude)
        if r is None:
            return None
        self.stats.placements += 1
        self.requests[r] += 1
        self.tokens[r] += tokens
        s = self._sessions.get(session) if session is not None else None
        if s is not None:  # (round_robin keeps no sessions)
            s.in_flight += 1
            s.last = now
            if not s.active:
                s.active = True
                self.active[r] += 1
            self._sessions.move_to_end(session)
            self._active[session] = None  # type: ignore[index]
            self._active.move_to_end(session)  # type: ignore[arg-type]
        return r

    def finished(self, r: int, session: str | None, tokens: int = 0) -> None:
        """The request placed on `r` is done (answered, failed or moved elsewhere)."""
        self.requests[r] -= 1
        self.tokens[r] -= tokens
        if session is not None:
            s = self._sessions.get(session)
            if s is not None:
                s.in_flight -= 1
                s.last = self.clock()
                if s.active:
                    self._active.move_to_end(session)

    def end_session(self, session: str) -> None:
        """The episode ended: the session stops counting as active (its pin stays)."""
        s = self._sessions.get(session)
        if s is not None and s.active and s.in_flight <= 0:
            self._deactivate(session, s)

    def _choose(self, session: str | None, new_episode: bool, exclude: Collection[int]) -> int | None:
        policy = self.policy
        if policy == "round_robin":
            return self._round_robin(exclude)
        if session is None:
            self.stats.unpinned += 1
            return self.least_loaded(exclude) if policy != "hash" else self._round_robin(exclude)
        s = self._sessions.get(session)
        if policy == "hash":
            r = self._hashed(session, exclude)
            if r is not None:
                self._pin(session, s, r)
            return r
        if s is None:
            r = self.least_loaded(exclude)
            if r is not None:
                self.stats.new_sessions += 1
                self._pin(session, None, r)
            return r
        pinned = s.replica
        if not self.healthy[pinned] or pinned in exclude:
            r = self.least_loaded(exclude)
            if r is not None:
                self.stats.repins += 1
                self._pin(session, s, r)
            return r
        best = self.least_loaded(exclude)
        slack = 1.0 if new_episode else self.continuing_slack
        if best is not None and best != pinned and self.imbalanced(pinned, best, slack):
            self.stats.spills += 1
            self._pin(session, s, best)
            return best
        self.stats.sticky += 1
        return pinned

    def _pin(self, session: str, s: _Session | None, r: int) -> None:
        if s is None:
            self._sessions[session] = _Session(r, self.clock())
            if len(self._sessions) > self.max_sessions:
                self._drop_oldest()
            return
        if s.replica != r and s.active:
            self.active[s.replica] -= 1
            self.active[r] += 1
        s.replica = r

    def _round_robin(self, exclude: Collection[int]) -> int | None:
        for _ in range(self.n):
            r = self._rr
            self._rr = (r + 1) % self.n
            if self.healthy[r] and r not in exclude:
                return r
        return None

    def _hashed(self, session: str, exclude: Collection[int]) -> int | None:
        h = stable_hash(session) % self.n
        for k in range(self.n):
            r = (h + k) % self.n
            if self.healthy[r] and r not in exclude:
                return r
        return None

    def _expire(self, now: float) -> None:
        """Sessions idle (nothing in flight) for session_idle_s stop counting as active."""
        horizon = now - self.session_idle_s
        active = self._active
        while active:
            key = next(iter(active))
            s = self._sessions.get(key)
            if s is None or not s.active:
                del active[key]
                continue
            if s.last > horizon:
                break
            if s.in_flight > 0:
                s.last = now  # still working: look again one idle period later
                active.move_to_end(key)
                continue
            self._deactivate(key, s)

    def _deactivate(self, key: str, s: _Session) -> None:
        s.active = False
        self.active[s.replica] -= 1
        self._active.pop(key, None)

    def _drop_oldest(self) -> None:
        for key, s in self._sessions.items():
            if s.in_flight <= 0:  # never forget a session with requests out
                if s.active:
                    self._deactivate(key, s)
                del self._sessions[key]
                return
