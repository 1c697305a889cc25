"""TravelBench unsolvable subset: a rule check, no LLM (paper eq. 1).

Scores as the reference's `evaluation/evaluate_unsolved.py` (commit 445a29d) does: take the
content of the FIRST message with role "assistant" in the trajectory; y = 1 when it contains
one of the accepted tags as a case-sensitive substring (extra text around it is allowed),
else 0. A first assistant message that is a tool call with empty or null content scores 0
even if a later message has the tag, and so does a trajectory without any assistant message.
The reference accepts only "[Unsolved]" (the `paper` profile's `judge.abstain_tags`).
The episode itself goes on past a tagged reply (protocol default, as in the reference); only
the first assistant message counts here.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence

from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord, Judgement

UNSOLVABLE_KIND = "unsolvable"
RULE_JUDGE_MODEL = "rule"
_RULE_VERSION = "unsolvable-rule-v1"


def rule_version(tags: Sequence[str]) -> str:
    """The prompt_version of the rule check: the rule's version plus the accepted tags, so a
    different tag set is a different judgement key."""
    digest = hashlib.sha256("\x1f".join(tags).encode()).hexdigest()[:8]
    return f"{_RULE_VERSION}+{digest}"


def first_response(record: EpisodeRecord) -> str | None:
    """Content of the first assistant message ("" when it has none); None when no assistant
    message exists."""
    for m in record.messages:
        if m.role == "assistant":
            return m.content or ""
    return None


def unsolvable_hit(record: EpisodeRecord, tags: Sequence[str]) -> bool:
    text = first_response(record)
    return bool(text) and any(tag in text for tag in tags)


def judge_unsolvable(
    record: EpisodeRecord, tags: Sequence[str], thash: str | None = None
) -> Judgement:
    text = first_response(record)
    hit = unsolvable_hit(record, tags)
    if text is None:
        why = "no assistant message"
    elif not text:
        why = "first assistant message has no text (tool call only)"
    elif hit:
        why = "refusal tag found in the first assistant response"
    else:
        why = "no refusal tag in the first assistant response"
    return Judgement(
        unit=record.unit,
        trajectory_hash=thash or trajectory_hash(record),
        judge_model=RULE_JUDGE_MODEL,
        prompt_version=rule_version(tags),
        kind=UNSOLVABLE_KIND,
        score=1.0 if hit else 0.0,
        scores={"unsolvable": 1.0 if hit else 0.0},
        reasoning={"unsolvable": why},
        created_at=time.time(),
    )
