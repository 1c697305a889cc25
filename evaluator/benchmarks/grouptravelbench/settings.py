"""GroupTravelBench's settings profiles.

`paper`: the seed's evaluation (section 5.1) with the reference code's run scripts: three
trials, the agent at temperature 0.7 with 12,288 output tokens, the user simulators at
temperature 0 with 16,384 (`scripts/infer.sh`; enough for a thinking simulator's reasoning
and reply), the tool simulator at 8,192, 20 model calls per agent turn, the judge at
temperature 0.1 with 32,768 output tokens and up to 10 attempts (the 8th to 10th at 0.7)
reading free text (no guided JSON), the meta-judge calibration on (the reference's full
evaluation has it on), the tool simulator shown the 8 nearest cached examples, and the
reference's behaviour in every GroupTravelBench option (`options.py`). Rounds and kappa follow
each task's difficulty (scheduler.ROUND_SETTINGS). The judge's context guard is off
(`context_tokens` 0): the reference shows its judge the whole chat, so a guard set for a
smaller judge is a recorded deviation. The POI table is required (environment.py).
"""

from __future__ import annotations

from typing import Any

AGENT_MAX_TOKENS = 12288
USER_MAX_TOKENS = 16384

PAPER: dict[str, Any] = {
    "trials": 3,
    "protocol": {"max_steps": 20},
    "agent": {"sampling": {"temperature": 0.7, "max_tokens": AGENT_MAX_TOKENS}},
    "user": {"sampling": {"temperature": 0.0, "max_tokens": USER_MAX_TOKENS}},
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
    "options": {"crash_rule": "failed_run", "judge_average": "tasks",
                "summary_style": "mediation", "judge_parser": "reference"},
}

PROFILES = {"paper": PAPER}
