"""Judge configuration: the `[judge]` table of the run config, validated by msgspec.

Every field is documented and defaulted; `agentsweep judge` flags override a few of them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from backends.types import Endpoint, SamplingParams

DEFAULT_ABSTAIN_TAGS = ("[Unsolvable]", "[Unsolved]")
RUBRIC_SETS = ("", "state", "overall", "union")
"""Values of `judge.rubric_set` ("" = the benchmark's default list, `Task.rubrics`)."""


class JudgeSettings(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=True):
    """How trajectories are judged and scored.

    endpoints: where the judge model is served. One or more OpenAI-compatible endpoints; the
        pool spreads requests over them round-robin; `agentsweep run --judge` and `agentsweep
        judge` give it one router over them instead (see `routing`). The default is the
        embedded engine.
    model: the judge model name recorded in every Judgement key. Empty means: the model of the
        first endpoint, or, when that is empty too, the first model the server lists.
    sampling: judge sampling; temperature 0 (deterministic judging) unless overridden.
    concurrency: judge requests in flight at once (pool workers).
    max_attempts: attempts per judge call when the output cannot be parsed or the server
        rejects the request (4xx, malformed body); after that a judge error is recorded.
    retry_temperature: temperature of attempt `retry_temperature_from` and later (a
        temperature-0 judge would repeat the same unparseable output); earlier attempts use
        `sampling`.
    retry_temperature_from: the first attempt (1-based) sampled at `retry_temperature`. 2 = every
        retry; the TravelBench reference uses 8 with 10 attempts (attempts 8 to 10 at 0.7). A
        value above `max_attempts` keeps every attempt at `sampling`'s temperature.
    meta_retry_temperature: the TravelBench meta-judge's retry temperature; None = the same
        as `retry_temperature`. The reference retries its meta-judge at the judge's own
        temperature (set 0.0 for that).
    infra_attempts: attempts per judge call on infrastructure errors (connection lost, 5xx,
        timeout). When exhausted nothing is recorded, so a later `agentsweep judge` retries.
    structured_output: send a JSON-schema `response_format` (guided decoding). The tolerant
        parser is used either way.
    meta_judge: run the TravelBench meta-judge audit after the rubric judge (calibration
        factor s/5).
    success_threshold: a unit with a graded score (TravelBench single/multi-turn) counts as a
        success (for pass@k) when its final instance score is >= this; 0/1 scores are
        successes already.
    abstain_tags: the refusal tags a rule check accepts in the first assistant response
        (case-sensitive; TravelBench's abstention subset; its old name is accepted, see
        docs/config.md).
    window_turns: sliding-window evaluator: turns (messages) per window (`w`).
    window_overlap: sliding-window evaluator: turns shared by adjacent windows (`delta`).
    rubric_set: sliding-window evaluator: which of a task's rubric lists to judge, for data
        that carries several (VitaBench's files: "state", "overall", "union"); "" = the
        benchmark's default (docs/judges.md, sliding-window evaluator).
    window_final_state: sliding-window evaluator: show the judge, under its Environment, the
        final state the benchmark supplies (VitaBench: the database records the episode
        created or changed). Off by default, as in the reference (its judge always sees an
        empty database); on, it is part of the prompt version ("+state").
    rerun: judge again even when a judgement with the same key already exists.
    retry_errors: judge again the keys whose recorded judgement is a judge error (an
        unparseable answer after `max_attempts`); successful judgements are kept.
    max_transcript_chars: each message is cut to this many characters in judge prompts.
        0 = no cut (the default, as in the reference, which shows the judge everything).
    context_tokens: the judge's context window in tokens, for the context guard of the
        TravelBench and GroupTravelBench judges: when a prompt's tokens plus
        `sampling.max_tokens` (which must be smaller) would exceed it, the longest tool outputs
        (GroupTravelBench: the longest chat texts) are shortened until it fits, and the
        judgement records it (see docs/judges.md). 0 = no guard.
    routing: with several `endpoints`, judge calls are spread over them by a router
        (docs/routing.md); its settings (`policy`, `admission`, `health`).
        Judge endpoints on the managed replicas share the roles' router.
    """

    endpoints: list[Endpoint] = msgspec.field(default_factory=lambda: [Endpoint()])
    model: str = ""
    sampling: SamplingParams = msgspec.field(
        default_factory=lambda: SamplingParams(temperature=0.0, max_tokens=2048)
    )
    concurrency: int = 8
    max_attempts: int = 3
    retry_temperature: float = 0.7
    retry_temperature_from: int = 2
    meta_retry_temperature: float | None = None
    infra_attempts: int = 3
    structured_output: bool = True
    meta_judge: bool = True
    success_threshold: float = 0.75
    abstain_tags: list[str] = msgspec.field(default_factory=lambda: list(DEFAULT_ABSTAIN_TAGS))
    window_turns: int = 10
    window_overlap: int = 2
    window_final_state: bool = False
    rubric_set: str = ""
    rerun: bool = False
    retry_errors: bool = False
    max_transcript_chars: int = 0
    context_tokens: int = 0
    routing: dict[str, Any] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.endpoints:
            raise ValueError("judge.endpoints: at least one endpoint is required")
        if self.routing:
            from evaluator.config_routing import check_replicas

            check_replicas([], self.routing)
        if self.concurrency < 1:
            raise ValueError(f"judge.concurrency must be >= 1, got {self.concurrency}")
        if self.max_attempts < 1:
            raise ValueError(f"judge.max_attempts must be >= 1, got {self.max_attempts}")
        if self.retry_temperature_from < 1:
            raise ValueError(
                f"judge.retry_temperature_from must be >= 1, got {self.retry_temperature_from}"
            )
        if self.max_transcript_chars < 0 or self.context_tokens < 0:
            raise ValueError("judge.max_transcript_chars and judge.context_tokens must be >= 0")
        answer = self.sampling.max_tokens or 0
        if self.context_tokens and self.context_tokens <= answer < 2**63:  # (larger: the
            # config's 64-bit check names it)
            raise ValueError(
                f"judge.sampling.max_tokens ({answer}) must be below judge.context_tokens "
                f"({self.context_tokens}): the context guard keeps max_tokens free for the answer")
        if self.infra_attempts < 1:
            raise ValueError(f"judge.infra_attempts must be >= 1, got {self.infra_attempts}")
        if self.window_turns < 1:
            raise ValueError(f"judge.window_turns must be >= 1, got {self.window_turns}")
        if not 0 <= self.window_overlap < self.window_turns:
            raise ValueError(
                "judge.window_overlap must be >= 0 and < window_turns, got "
                f"{self.window_overlap} (window_turns={self.window_turns})"
            )
        if self.rubric_set not in RUBRIC_SETS:
            raise ValueError(f"judge.rubric_set must be one of {', '.join(map(repr, RUBRIC_SETS))}"
                             f", got {self.rubric_set!r}")
        if not 0.0 <= self.success_threshold <= 1.0:
            raise ValueError(
                f"judge.success_threshold must be in [0, 1], got {self.success_threshold}"
            )
        from evaluator.config_check import check_base_url, check_headers, check_tags

        check_tags("judge.abstain_tags", self.abstain_tags)
        for i, ep in enumerate(self.endpoints):
            check_base_url(f"judge.endpoints[{i}]: base_url", ep.base_url)
            check_headers(f"judge.endpoints[{i}]: extra_headers", ep.extra_headers)
        if not self.retry_temperature >= 0:
            raise ValueError(f"judge.retry_temperature must be >= 0, got {self.retry_temperature}")
        if self.meta_retry_temperature is not None and not self.meta_retry_temperature >= 0:
            raise ValueError("judge.meta_retry_temperature must be >= 0, got "
                             f"{self.meta_retry_temperature}")

    @property
    def judge_model(self) -> str:
        """The configured judge model name ("" = resolve from the server)."""
        return self.model or self.endpoints[0].model
