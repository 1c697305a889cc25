"""Role clients: a ChatClient + a model + sampling + admission + the episode's session header.

`EpisodeTicket` is the per-episode state the roles share (admission class and order, queue
time). `ModelRole` implements `evaluator.protocols.base.RoleClient` for one role of one episode;
`AdmittedChat` gives the tool simulator (which calls `.chat(...)` itself) the same admission.
Both are light objects with `__slots__`: thousands exist at once.

With the run's response journal (evaluator/run/journal.py) every answer is journaled as it
arrives, and a resumed unit's requests that match its journal are answered from it: no
admission, no request, no usage counted again (the record's usage still sums them).
`ModelRole` finds the episode's journal on its ticket, the tool simulator's shared
`AdmittedChat(journal=True)` in `journal.CURRENT` (set around the protocol); judges never
journal.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec

from backends.client import ChatClient
from backends.types import ChatMessage, ChatResponse, SamplingParams
from evaluator.run.admission import CONTINUING, NEW, AdmissionController
from evaluator.run.journal import CURRENT, UnitJournal, request_hash
from evaluator.run.progress import Counters
from evaluator.run.telemetry import RoleStats


class EpisodeTicket:
    """Shared by the roles of one episode: first call or continuing, age, queue time."""

    __slots__ = ("calls", "journal", "order", "queue_s", "role_queue_s", "session_id")

    def __init__(self, order: int, session_id: str) -> None:
        self.order = order  # lower = admitted earlier (older episode)
        self.journal: UnitJournal | None = None  # this attempt's response journal, if any
        self.calls = 0
        self.queue_s = 0.0
        self.role_queue_s: dict[str, float] | None = None  # the same split by role
        self.session_id = session_id

    def waited(self, role: str, seconds: float) -> None:
        self.queue_s += seconds
        waits = self.role_queue_s
        if waits is None:
            waits = self.role_queue_s = {}
        waits[role] = waits.get(role, 0.0) + seconds


class RoleEndpoint:
    """What the roles of one kind share across episodes (one per role per run)."""

    __slots__ = ("admission", "client", "counters", "model", "role", "routed", "sampling",
                 "seeds", "send_priority", "stats")

    def __init__(
        self,
        role: str,
        client: ChatClient | Any,
        model: str,
        sampling: SamplingParams,
        admission: AdmissionController,
        counters: Counters,
        send_priority: bool = False,
        routed: bool = False,
        seeds: bool = True,
    ) -> None:
        self.role = role
        self.seeds = seeds  # per-unit sampling seeds are sent (see RoleInfo.seeds)
        self.routed = routed  # client is a backends.router.Router
        self.client = client
        self.model = model
        self.sampling = sampling
        self.admission = admission
        self.send_priority = send_priority
        self.counters = counters
        self.stats = RoleStats()  # this role's calls and tokens (telemetry.Sampler reads it)

    def for_episode(self, ticket: EpisodeTicket, seed: int | None = None) -> ModelRole:
        sampling = self.sampling
        if (seed is not None and self.seeds and sampling.seed is None
                and (sampling.temperature or 0.0) > 0.0):
            sampling = msgspec.structs.replace(sampling, seed=seed)
        return ModelRole(self, ticket, sampling)


class ModelRole:
    """`RoleClient` of one role in one episode."""

    __slots__ = ("_ep", "_sampling", "_ticket", "model", "role")

    def __init__(self, ep: RoleEndpoint, ticket: EpisodeTicket, sampling: SamplingParams) -> None:
        self._ep = ep
        self._ticket = ticket
        self._sampling = sampling
        self.role = ep.role
        self.model = ep.model

    async def complete(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ChatResponse:
        ep = self._ep
        ticket = self._ticket
        journal = ticket.journal
        if journal is not None:
            request = request_hash(self.role, ep.model, messages, tools=tools,
                                   tool_choice=tool_choice, response_format=response_format,
                                   sampling=self._sampling)
            replayed = journal.replay(self.role, request)
            if replayed is not None:
                ticket.calls += 1
                ep.counters.replayed_calls += 1
                return replayed
        klass = CONTINUING if ticket.calls else NEW
        ticket.calls += 1
        admission = ep.admission
        t0 = time.perf_counter()
        await admission.acquire(klass, ticket.order)
        ticket.waited(self.role, time.perf_counter() - t0)
        counters = ep.counters
        counters.calls_in_flight += 1
        stats = ep.stats
        stats.in_flight += 1
        extra: dict[str, Any] = {}
        if ep.routed:
            extra = {"new_episode": klass == NEW, "order": ticket.order}
        t1 = time.perf_counter()
        try:
            response = await ep.client.chat(
                messages,
                **extra,
                model=ep.model,
                tools=tools,
                tool_choice=tool_choice,
                response_format=response_format,
                sampling=self._sampling,
                priority=klass if ep.send_priority else None,
                session_id=ticket.session_id,
            )
        finally:
            counters.calls_in_flight -= 1
            stats.in_flight -= 1
            admission.release()
        seconds = time.perf_counter() - t1
        if ep.routed:  # the router's admission wait and failovers: time outside the answer
            ticket.waited(self.role, max(0.0, seconds - response.latency_s))
        if journal is not None:
            journal.record(self.role, request, response)
        counters.add_usage(response.usage)
        stats.answered(response.usage, seconds, ticket.order, messages)
        return response


class AdmittedChat:
    """A ChatClient look-alike (`.chat`) whose calls go through admission (tool simulator)."""

    __slots__ = ("_ep", "_journal", "_klass", "_order")

    def __init__(self, ep: RoleEndpoint, *, klass: int = CONTINUING, order: int = 0,
                 journal: bool = False) -> None:
        self._ep = ep
        self._klass = klass
        self._order = order
        self._journal = journal  # journal the calls of the episode running (journal.CURRENT)

    async def count_tokens(self, messages: list[ChatMessage], **kwargs: Any) -> Any:
        """The endpoint's count of the prompt tokens of `messages` (`ChatClient.count_tokens`),
        None when its client cannot count. Neither admitted nor journaled: nothing is
        generated, and the judges' context guard asks it before each call."""
        counter = getattr(self._ep.client, "count_tokens", None)
        if counter is None:
            return None
        if kwargs.get("model") is None:
            kwargs["model"] = self._ep.model
        return await counter(messages, **kwargs)

    async def chat(self, messages: list[ChatMessage], **kwargs: Any) -> ChatResponse:
        ep = self._ep
        kwargs.setdefault("model", ep.model)
        journal = CURRENT.get() if self._journal else None
        if journal is not None:
            request = request_hash(ep.role, kwargs["model"], messages, tools=kwargs.get("tools"),
                                   tool_choice=kwargs.get("tool_choice"),
                                   response_format=kwargs.get("response_format"),
                                   sampling=kwargs.get("sampling"))
            replayed = journal.replay(ep.role, request)
            if replayed is not None:
                ep.counters.replayed_calls += 1
                return replayed
        if ep.routed:  # the router's own admission: same class and age as here
            kwargs.setdefault("new_episode", self._klass == NEW)
            kwargs.setdefault("order", self._order)
        await ep.admission.acquire(self._klass, self._order)
        ep.counters.calls_in_flight += 1
        stats = ep.stats
        stats.in_flight += 1
        t0 = time.perf_counter()
        try:
            response = await ep.client.chat(messages, **kwargs)
        finally:
            ep.counters.calls_in_flight -= 1
            stats.in_flight -= 1
            ep.admission.release()
        if journal is not None:
            journal.record(ep.role, request, response)
        ep.counters.add_usage(response.usage)
        stats.answered(response.usage, time.perf_counter() - t0, None, messages)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ep.client, name)
