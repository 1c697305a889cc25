"""VitaBench's episode protocol: the reference orchestrator's dialogue as a pure episode
function over the generic agent loop (`evaluator/protocols/loop.py`).

The agent opens with a fixed greeting, which the user simulator sees and the agent's own
context does not (as in the reference). Then the user simulator and the agent alternate: a
user message, then agent replies, each with tool calls run by the episode's environment (in
order, one tool message per call), until a reply without tool calls goes to the user
(dialogue.py).

Steps are counted as the reference counts them: one per user message, per agent message and
per batch of tool results (the greeting is not one); at `settings.max_steps` steps (the paper
profile: 300) the episode ends "max_steps", which scores 0. `###STOP###` in an agent reply
ends it ("agent_stop"; tool calls of that reply do not run), a stop marker in a user reply
ends it ("user_stop"). The database records the episode created or changed are kept in
`extra["db_changes"]`.

Trial reruns (`options.trial_failures = "rerun"`): when something happens that the reference
cannot go on from (dialogue.TrialFailed), the trial is played again from the start on a fresh
copy of the task's database, up to `options.trial_reruns` more times; `extra["trial_attempt"]`
says which attempt the record is and `extra["failed_attempts"]` what ended the others (their
token usage is added to the record's). When every attempt fails the record ends with the last
failure as its termination and `extra["dropped"]`: it is neither judged nor scored, as the
reference drops the trial. A trial rerun because of its judgement starts at the attempt after
its last record's (`VitaEnvironment.attempts_before`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec

from evaluator.protocols.base import EpisodeContext
from evaluator.protocols.loop import Episode, EpisodeEnded
from evaluator.records import EpisodeRecord

from .dialogue import StepLimit, Steps, TrialFailed, dialogue, new_episode
from .env import VitaEnvironment
from .options import options_of


async def run_episode(ctx: EpisodeContext) -> EpisodeRecord:
    """One VitaBench trial: the dialogue, played again after a failure as the options say
    (module doc)."""
    if ctx.user is None:
        raise ValueError(f"task {ctx.task.key}: the vitabench protocol needs a user-simulator "
                         "RoleClient (EpisodeContext.user is None)")
    opts = options_of(ctx.settings.options)
    sandbox = ctx.sandbox
    first = 1
    if isinstance(sandbox, VitaEnvironment):
        first += sandbox.attempts_before(ctx.unit.key)
    last = max(first, 1 + opts.reruns)
    failures: list[dict[str, Any]] = []
    spent: list[Episode] = []
    attempt = first
    while True:
        actx = ctx if attempt == first else dataclasses.replace(ctx, sandbox=_fresh(sandbox))
        episode, steps = new_episode(actx)
        try:
            termination, detail = await _play(episode, steps)
        except TrialFailed as failed:
            failures.append({"attempt": attempt, "reason": failed.reason,
                             "detail": failed.detail, "steps": steps.n})
            spent.append(episode)
            if attempt >= last:
                return _finish(episode, steps, spent[:-1], failures[:-1], attempt,
                               failed.reason, failed.detail, dropped=True)
            attempt += 1
            continue
        return _finish(episode, steps, spent, failures, attempt, termination, detail)


async def _play(episode: Episode, steps: Steps) -> tuple[str, str]:
    try:
        return await dialogue(episode, steps), ""
    except StepLimit:
        return "max_steps", ""
    except EpisodeEnded as end:
        return end.termination, end.detail


def _fresh(sandbox: Any) -> Any:
    return sandbox.fresh() if isinstance(sandbox, VitaEnvironment) else sandbox


def _finish(episode: Episode, steps: Steps, spent: list[Episode],
            failures: list[dict[str, Any]], attempt: int, termination: str, detail: str = "",
            dropped: bool = False) -> EpisodeRecord:
    episode.extra["steps"] = steps.n
    episode.extra["trial_attempt"] = attempt
    if failures:
        episode.extra["failed_attempts"] = failures
    if dropped:
        episode.extra["dropped"] = True
    for other in spent:  # what the failed attempts cost
        for role, usage in other.usage.items():
            episode.usage.setdefault(role, type(usage)()).add(usage)
        for role, seconds in other.timings.items():
            episode.timings[role] = episode.timings.get(role, 0.0) + seconds
    sandbox = episode.ctx.sandbox
    if isinstance(sandbox, VitaEnvironment):
        episode.extra["db_changes"] = _builtins(sandbox.changes())
    return episode.finish(termination, detail)


def _builtins(value: Any) -> Any:
    return msgspec.to_builtins(value, str_keys=True)
