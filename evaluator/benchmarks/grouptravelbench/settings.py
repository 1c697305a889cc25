"""GroupTravelBench's settings profiles.

`paper`: the seed's evaluation (section 5.1) with the reference code's defaults: three
trials, the agent at temperature 0.7, the user simulators at temperature 0, 20 model calls
per agent turn, the judge at temperature 0.1 with up to 10 attempts (the 8th to 10th at 0.7)
reading free text (no guided JSON), the meta-judge calibration on (the reference's own CLI
has it off by default; the paper's scores use it), and the tool simulator shown the 8 nearest
cached examples. Rounds and kappa follow each task's difficulty (scheduler.ROUND_SETTINGS).
Output caps: the reference's `create_openai_config` gives the agent, the user simulators and
the tool simulator 8,192 tokens each (`__main__.py`), the judge 32,768; without them here the
run's generic CPU-sampling defaults (agent 160, user 96, simulator 2,048) would cut the
agent's plan JSON short. The judge's context guard is off (`context_tokens` 0): the reference
shows its judge the whole chat, so a guard set for a smaller judge is a recorded deviation.
"""

from __future__ import annotations

from typing import Any

PAPER: dict[str, Any] = {
    "trials": 3,
    "protocol": {"max_steps": 20},
    "agent": {"sampling": {"temperature": 0.7, "max_tokens": 8192}},
    "user": {"sampling": {"temperature": 0.0, "max_tokens": 8192}},
    "judge": {
        "sampling": {"temperature": 0.1, "max_tokens": 32768},
        "max_attempts": 10,
        "retry_temperature": 0.7,
        "retry_temperature_from": 8,
        "meta_retry_temperature": 0.1,
        "structured_output": False,
        "meta_judge": True,
        "context_tokens": 0,  # the reference shows the judge the whole chat
    },
    "sandbox": {"top_k": 8, "simulator_max_tokens": 8192},
}

PROFILES = {"paper": PAPER}
