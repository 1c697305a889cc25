"""TravelBench's settings profiles and the old config key names it still accepts.

The `paper` values come from the TravelBench reference code (commit 445a29d, see
`../shared/notes/travelbench_protocol.md` and docs/config.md): 20 agent steps per user turn,
10 user turns, the agent sampling at temperature 0.7 and the user simulator at 0 (the
reference's run script, `scripts/infer.sh`, and the paper), both with 8,192 output tokens, a
judge at temperature 0 / top_p 0.95 / 16,384 tokens with 10 attempts (the 8th to
10th at temperature 0.7) decoding freely (no guided JSON; the reference parses free text),
three trials, a tool simulator allowed 8,192 tokens, the reference's own argument validation,
the whole conversation shown to the judge, the `[Unsolved]` tag, the reference's prompt
layout (situation in the system prompt), and the reference's rendering of every model's input
and reading of the judges' answers (`options`, options.py). `smoke` adds to the generic smoke profile
(evaluator/profiles.py) what the built-in sample needs on the embedded model.
"""

from __future__ import annotations

from typing import Any

PAPER_EMBEDDER = "openai:http://127.0.0.1:8001/v1#Qwen/Qwen3-Embedding-8B"

PAPER: dict[str, Any] = {
    "trials": 3,
    "protocol": {
        "max_steps": 20,
        "max_turns": 10,
        "finish_marker": "[Finish Conversation]",
        "abstain_tags": ["[Unsolved]"],
        "layout": "reference",
    },
    "agent": {"sampling": {"temperature": 0.7, "max_tokens": 8192}},
    "user": {"sampling": {"temperature": 0.0, "max_tokens": 8192}},
    "judge": {
        "sampling": {"temperature": 0.0, "top_p": 0.95, "max_tokens": 16384},
        "max_attempts": 10,
        "retry_temperature": 0.7,
        "retry_temperature_from": 8,
        "meta_retry_temperature": 0.0,
        "structured_output": False,
        "max_transcript_chars": 0,
        "context_tokens": 0,
        "meta_judge": True,
        "abstain_tags": ["[Unsolved]"],
    },
    "sandbox": {
        "simulator_max_tokens": 8192,
        "validation": "reference",
        "top_k": 8,
        # the paper's retrieval model, served by vLLM (`--runner pooling`); used only when the
        # store has an index, which must have been built with the same model
        "embedder": PAPER_EMBEDDER,
    },
    "options": {"rendering": "reference", "judge_answers": "reference"},
}

SMOKE: dict[str, Any] = {
    "protocol": {
        "finish_marker": "##FINISH##",
        "abstain_tags": ["[Unsolvable]", "[Unsolved]"],
        "layout": "prefix",
    },
    "judge": {
        "meta_judge": True,
        "abstain_tags": ["[Unsolvable]", "[Unsolved]"],
    },
    "sandbox": {"validation": "reference"},
    # the judges' tool list first: one prefix the engine caches for every judge call (the
    # sample's README run on a 2-core CPU: 17.8+ -> 11.1 minutes; docs/serve.md)
    "options": {"judge_layout": "prefix"},
}

PROFILES = {"paper": PAPER, "smoke": SMOKE}

CONFIG_ALIASES = {
    "protocol.unsolvable_tags": "protocol.abstain_tags",
    "protocol.stop_at_unsolvable_tag": "protocol.stop_at_abstain_tag",
    "judge.unsolvable_tags": "judge.abstain_tags",
}
"""Config keys of runs written before benchmarks became plugins -> their current names."""
