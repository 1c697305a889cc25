"""VitaBench's settings profile: `paper`, from the reference's run settings
(meituan-longcat/vitabench 96f3b85, `src/vita/config.py`, `models.yaml`, `run.py`; see
`../shared/notes/vitabench_reference.md`): 300 steps per episode, every role at temperature 0,
the sliding-window judge over 10 messages with 2 shared, 4 trials per task (the paper's
Pass^k / Avg@k with n = k = 4), and no output cap for any role: the reference's request
carries no `max_tokens` (only the chat payload and its models.yaml entry), so here it is
left unset (None) and the server's own limit applies (vLLM: what the context leaves). Without
this the run's generic defaults (agent 160, user 96, judge 320 tokens, sized for sampling on
a CPU engine) would cut the agent's replies and the judge's window verdicts short. The
judge decodes freely, as the reference's does, not with guided JSON.

The judge scores the rubric list the reference code builds (`judge.rubric_set = "union"`:
state then overall rubrics, exact-string de-duplicated), and every `[options]` value is the
reference's (`options.REFERENCE`: the reference rendering, its judge reading, trial reruns and
termination rules; docs/vitabench.md, "Reference mode")."""

from __future__ import annotations

from typing import Any

from evaluator.config import plain

from .options import REFERENCE

PAPER: dict[str, Any] = {
    "trials": 4,
    "protocol": {"max_steps": 300},
    "agent": {"sampling": {"temperature": 0.0, "max_tokens": None}},
    "user": {"sampling": {"temperature": 0.0, "max_tokens": None}},
    "judge": {
        "sampling": {"temperature": 0.0, "max_tokens": None},
        "structured_output": False,
        "window_turns": 10,
        "window_overlap": 2,
        "rubric_set": "union",
    },
    "options": plain(REFERENCE),
}

PROFILES = {"paper": PAPER}
