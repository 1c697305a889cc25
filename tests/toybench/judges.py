"""Toybench's judges: a rule check (is the expected number in the final answer?) and an LLM
grader (correct / wrong, with its reasoning).

A judge is a `JudgeSpec`: its kind and prompt version (both part of the judgement key, so a
new prompt is a new version), the prompt files it uses, and how it judges one episode. Judge
failures become a Judgement with `error`; infrastructure errors propagate (the pool retries).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from string import Template

from evaluator.benchmarks.base import JudgeInput, JudgeSpec
from evaluator.judges.call import JudgeFailed, call_judge
from evaluator.judges.parse import JudgeParseError, json_candidates
from evaluator.judges.transcript import conversation_turns, render_conversation
from evaluator.records import Judgement

from .data import ToyTask

EXACT, GRADE = "toy_exact", "toy_grade"
GRADER = Path(__file__).with_name("prompts") / "grader.txt"
GRADER_VERSION = "toy-grader-v1"
SCHEMA = {"type": "object", "additionalProperties": False, "required": ["reasoning", "verdict"],
          "properties": {"reasoning": {"type": "string"},
                         "verdict": {"type": "string", "enum": ["correct", "wrong"]}}}


def _expected(inp: JudgeInput) -> str:
    return inp.task.payload_as(ToyTask).answer if inp.task is not None else ""


def exact(inp: JudgeInput) -> Judgement:
    answer = inp.record.final_answer
    if inp.options is not None and inp.options.final_only:
        numbers = re.findall(r"\d+", answer)
        hit = bool(numbers) and numbers[-1] == _expected(inp)
    else:
        hit = bool(re.search(rf"(?<!\d){re.escape(_expected(inp))}(?!\d)", answer))
    return Judgement(unit=inp.record.unit, trajectory_hash=inp.thash, judge_model="rule",
                     prompt_version="toy-exact-v1", kind=EXACT, score=float(hit),
                     scores={"exact": float(hit)}, created_at=time.time())


def parse_grade(text: str) -> tuple[str, str]:
    for obj in json_candidates(text):
        if isinstance(obj, dict) and obj.get("verdict") in ("correct", "wrong"):
            return str(obj["verdict"]), str(obj.get("reasoning", ""))
    raise JudgeParseError("no verdict")


async def grade(inp: JudgeInput) -> Judgement:
    task = inp.task.payload_as(ToyTask) if inp.task is not None else None
    prompt = Template(GRADER.read_text(encoding="utf-8")).safe_substitute(
        question=task.question if task else "?", answer=task.answer if task else "?",
        conversation=render_conversation(conversation_turns(inp.record)))
    base = {"unit": inp.record.unit, "trajectory_hash": inp.thash, "judge_model": inp.model,
            "prompt_version": GRADER_VERSION, "kind": GRADE}
    try:
        (verdict, why), attempts, raw = await call_judge(
            inp.client, inp.model, prompt, schema_name="toy_grade", schema=SCHEMA,
            parse=parse_grade, settings=inp.settings)
    except JudgeFailed as exc:
        return Judgement(**base, score=None, error=exc.detail, attempts=exc.attempts,
                         raw=exc.raw, created_at=time.time())
    ok = float(verdict == "correct")
    return Judgement(**base, score=ok, scores={"graded": ok}, reasoning={"grade": why},
                     attempts=attempts, raw=raw, created_at=time.time())


JUDGES = {
    EXACT: JudgeSpec(kind=EXACT, version=lambda s, p: "toy-exact-v1", run=exact, rule=True,
                     pass_threshold=1.0),
    GRADE: JudgeSpec(kind=GRADE, version=lambda s, p: GRADER_VERSION, run=grade,
                     prompt_files=("prompts/grader.txt",), pass_threshold=1.0),
}
