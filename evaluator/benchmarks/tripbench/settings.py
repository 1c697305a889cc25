"""TRIP-Bench's settings profiles.

`paper`: the seed's section 5.1 and figure 1: up to 15 user turns, up to 50 agent calls (tool
rounds) per user turn, the agent at temperature 0.7 (the paper's value for models without a
default), the user simulator at temperature 0.7 (DeepSeek-V3.2 in the paper; the model is the
run's choice). The paper states no output limit ("default settings"), so no role's
`max_tokens` is set (None: the server's own limit; the embedded CPU engine caps replies at
1,024 tokens, docs/serve.md). Before, the run's CPU-sampling defaults (agent 160, user 96
tokens) applied and cut a plan or a tool call short. Scoring is rule-based (no judge model).
"""

from __future__ import annotations

from typing import Any

PAPER: dict[str, Any] = {
    "protocol": {"max_turns": 15, "max_steps": 50},
    "agent": {"sampling": {"temperature": 0.7, "max_tokens": None}},
    "user": {"sampling": {"temperature": 0.7, "max_tokens": None}},
}

PROFILES = {"paper": PAPER}
