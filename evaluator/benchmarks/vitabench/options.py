"""VitaBench's own settings, the run config's `[options]` table.

The defaults are the project's behaviour (what a run without a profile does, and what old run
directories were made with); the `paper` profile (settings.py) sets every one to what the
reference code does (meituan-longcat/vitabench 96f3b85), so a paper run that changes one lists
it as a deviation. docs/vitabench.md, "Reference mode", explains each.
"""

from __future__ import annotations

from typing import Literal

import msgspec


class VitaOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """VitaBench's options.

    rendering: how every value put into a prompt and every message a model receives is
        formatted. "reference": as the reference builds them (the persona as the Python repr
        of the profile, model text passed on unstripped, tool-call arguments re-serialised,
        tool messages named, the judge's system + user messages with `[i] role: text` window
        lines and the reference's rubric-state JSON); with an imported prompt set every
        message list is then byte-identical to the reference's. "project": the project's
        layout (persona as a list, stripped text, the judge's one cache-friendly message).
    agent_user_id: the agent's system prompt ends with the task's user id (the reference's
        agent must ask for it or look it up).
    agent_weekday: the agent's time carries its weekday ("2025-06-21 11:20:00 Saturday"), as
        the reference appends it.
    user_stop_marker: the user simulator's prompt tells it to end the conversation with
        `###STOP###` (the reference's names no marker, so its dialogues end by the agent's stop
        or the step limit).
    user_change_keeps_met: the judge is told that a deliberate change of need by the user
        (cancelling an order it asked for) does not overturn a met rubric (the reference's
        rule); otherwise the assistant undoing a result makes the rubric unmet. Only the
        built-in judge prompts carry this rule as a placeholder.
    judge_reader: how a judge window's answer is read. "reference": as the reference reads it
        (its JSON repair, then only list items with a known `rubric_idx` update a rubric, an
        empty answer keeps the states, anything else is a failed trial; one call per window).
        "tolerant": the project's parser (fenced or wrapped JSON, items matched by position,
        up to `judge.max_attempts` calls per window, a failed window keeps the states).
        "reference" needs `rendering = "reference"`.
    trial_failures: what a failure the reference cannot go on from does (a request rejected
        for the context length, tool-call arguments that are not a JSON object, an empty user
        reply, a rejected request, a judge answer the reference reader cannot use). "rerun":
        the reference's: the whole trial (dialogue and judging) is played again, up to
        `trial_reruns` more times, then dropped from the results (no score). "keep": the
        episode ends with its termination and is judged as it stands; a judge failure is a
        judge error.
    trial_reruns: reruns of a failed trial under `trial_failures = "rerun"` (the reference: 3,
        so 4 attempts in all).
    empty_agent_attempts: an agent reply with neither text nor tool calls is asked again until
        this many attempts, then the episode ends `invalid_agent_message` and scores 0
        without judging (the reference: 3). 0 = it is kept as an empty reply (under the
        project rendering the agent loop's rule, `protocol.retry_empty_replies`, applies).
    limit_on_last_step: a stop on the very step that reaches `protocol.max_steps` ends the
        episode `max_steps` (scored 0), as the reference checks the limit after each step.
    """

    rendering: Literal["project", "reference"] = "project"
    agent_user_id: bool = True
    agent_weekday: bool = False
    user_stop_marker: bool = True
    user_change_keeps_met: bool = False
    judge_reader: Literal["tolerant", "reference"] = "tolerant"
    trial_failures: Literal["keep", "rerun"] = "keep"
    trial_reruns: int = 3
    empty_agent_attempts: int = 0
    limit_on_last_step: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.trial_reruns <= 100:
            raise ValueError(f"trial_reruns must be in 0..100, got {self.trial_reruns}")
        if not 0 <= self.empty_agent_attempts <= 100:
            raise ValueError(
                f"empty_agent_attempts must be in 0..100, got {self.empty_agent_attempts}")
        if self.judge_reader == "reference" and self.rendering != "reference":
            raise ValueError("judge_reader = 'reference' needs rendering = 'reference' (the "
                             "project's judge prompt asks for another answer format)")

    @property
    def reference(self) -> bool:
        return self.rendering == "reference"

    @property
    def reruns(self) -> int:
        """Reruns a failed trial gets (0 when failures are kept)."""
        return self.trial_reruns if self.trial_failures == "rerun" else 0


REFERENCE = VitaOptions(rendering="reference", agent_user_id=False, agent_weekday=True,
                        user_stop_marker=False, user_change_keeps_met=True,
                        judge_reader="reference", trial_failures="rerun", trial_reruns=3,
                        empty_agent_attempts=3, limit_on_last_step=True)
"""What the reference code does; the paper profile's `options`."""


def options_of(value: object) -> VitaOptions:
    """The run's options (None, e.g. a context built without them: the defaults)."""
    return value if isinstance(value, VitaOptions) else VitaOptions()
