"""VitaBench's settings profile: `paper`, from the reference's run settings
(meituan-longcat/vitabench 96f3b85, `src/vita/config.py`, `models.yaml`; see
`../shared/notes/vitabench_reference.md`): 300 steps per episode, every role at temperature 0,
the sliding-window judge over 10 messages with 2 shared, 4 trials per task (the paper's
Pass^k / Avg@k with n = k = 4)."""

from __future__ import annotations

from typing import Any

PAPER: dict[str, Any] = {
    "trials": 4,
    "protocol": {"max_steps": 300},
    "agent": {"sampling": {"temperature": 0.0}},
    "user": {"sampling": {"temperature": 0.0}},
    "judge": {
        "sampling": {"temperature": 0.0},
        "window_turns": 10,
        "window_overlap": 2,
    },
}

PROFILES = {"paper": PAPER}
