"""Toybench's protocol: the agent answers one question, calling the calculator as it likes.

A protocol is a pure episode function: it builds the conversation, lets the generic agent loop
(`evaluator.protocols.Episode`) run the model and the tools, and returns the EpisodeRecord.
"""

from __future__ import annotations

from pathlib import Path

from evaluator.protocols import Episode, EpisodeContext, EpisodeEnded
from evaluator.records import EpisodeRecord

from .data import ToyTask

PROMPTS = Path(__file__).with_name("prompts")
PROMPT_VERSION = "toybench-agent-v1"
SYSTEM = (PROMPTS / "agent.txt").read_text(encoding="utf-8")


async def run_qa(ctx: EpisodeContext) -> EpisodeRecord:
    task = ctx.task.payload_as(ToyTask)
    options = ctx.settings.options  # ToyOptions (the run's [options] table)
    system = f"{SYSTEM}\n{options.hint}" if options is not None and options.hint else SYSTEM
    episode = Episode(ctx, system, task.question, step_limit_text="I ran out of steps.",
                      extra={"prompt_version": PROMPT_VERSION})
    try:
        await episode.agent_turn(ctx.settings.max_steps)
    except EpisodeEnded as end:
        return episode.finish(end.termination, end.detail)
    return episode.finish("max_steps" if episode.step_limited else "answer")
