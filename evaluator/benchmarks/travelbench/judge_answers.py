"""Reading the judges' answers as the TravelBench reference reads them
(`options.judge_answers = "reference"`; `utils/eval_util.py` at commit 445a29d).

The rules, in this project's words:
- the answer is stripped; a leading "```xml" and a trailing "```" are cut off, and it is stripped
  again;
- rubric: the first `<response>...</response>` (shortest match) is kept if there is one; the
  text is parsed as XML (Python's ElementTree); if that fails the tags are repaired
  (`repair_tags`) and it is parsed once more; failing again, the answer is unusable. Each
  dimension is the root's direct child of that name, its `<reasoning>` text as it is and its
  `<rating>` text stripped;
- meta: the first `<meta_evaluation>...</meta_evaluation>` likewise, parsed without repair; its
  root's `<reasoning>` and `<rating>`;
- a rating counts only when it is exactly one of 极差 较差 一般 较好 优秀 (1..5): `**较好**`,
  `较好。`, `Good` or `4` are not ratings. A rubric answer with no rating is unusable (the
  reference asks again); a meta answer without one is unusable too;
- an unescaped `&` (or any other XML error the repair does not fix) makes the answer unusable.
Unusable answers raise `JudgeParseError`, so `call_judge` retries them as the reference does
(the profile's `judge.max_attempts` and retry temperature).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import NamedTuple

from evaluator.judges.parse import JudgeParseError, MetaVerdict, RubricVerdict

RATING_WORDS: dict[str, int] = {"极差": 1, "较差": 2, "一般": 3, "较好": 4, "优秀": 5}
"""The reference's rating scale (exact match)."""
_TAG = re.compile(r"</?[^>]+>")


class Dimension(NamedTuple):
    """One dimension of a parsed rubric answer: its reasoning text (as it is) and its rating
    text (stripped); both "" when the answer has no such element."""

    reasoning: str
    rating: str


def unfence(text: str) -> str:
    text = text.strip()
    text = text.removeprefix("```xml")
    text = text.removesuffix("```")
    return text.strip()


def repair_tags(text: str, dimensions: list[str]) -> str:
    """The reference's tag repair, rule for rule (including its quirks):
    - every `<...>` is a tag; one starting with `</` closes, any other opens (comments and
      self-closing tags included) and is pushed on a stack;
    - a closer matching the top of the stack pops it; when it closes a dimension whose
      inner tags have `<reasoning>` but no `</reasoning>`, a `</reasoning>` is inserted before
      it; when the inner tags have either reasoning tag, a missing `<rating>` and a missing
      `</rating>` are inserted there too (in that order);
    - a closer matching a deeper opener pops every tag down to and including that opener and
      inserts a closer for each before itself (so that opener ends up closed twice); a closer
      matching nothing is left alone;
    - tags still open at the end are closed there, innermost first.
    """
    tags = list(_TAG.finditer(text))
    if not tags:
        return text
    stack: list[tuple[str, int]] = []  # (name, index in tags)
    inserts: list[tuple[int, str]] = []
    for i, m in enumerate(tags):
        tag = m.group()
        if not tag.startswith("</"):
            stack.append((tag[1:-1], i))
            continue
        name = tag[2:-1]
        if stack and stack[-1][0] == name:
            _, opened = stack.pop()
            if name in dimensions:
                inner = {t.group() for t in tags[opened + 1:i]}
                if "<reasoning>" in inner and "</reasoning>" not in inner:
                    inserts.append((m.start(), "</reasoning>"))
                if "<reasoning>" in inner or "</reasoning>" in inner:
                    if "<rating>" not in inner:
                        inserts.append((m.start(), "<rating>"))
                    if "</rating>" not in inner:
                        inserts.append((m.start(), "</rating>"))
            continue
        depth = next((d for d in range(len(stack) - 1, -1, -1) if stack[d][0] == name), None)
        if depth is not None:
            while len(stack) > depth:
                inserts.append((m.start(), f"</{stack.pop()[0]}>"))
    inserts += [(len(text), f"</{name}>") for name, _ in reversed(stack)]
    for pos, tag in reversed(inserts):  # back to front; equal positions keep their order
        text = text[:pos] + tag + text[pos:]
    return text


def read_rubric(answer: str, dimensions: list[str]) -> dict[str, Dimension] | None:
    """Every dimension's (reasoning, rating) texts, or None when the answer is not XML the
    reference can read."""
    text = unfence(answer)
    m = re.search(r"<response>(.*?)</response>", text, re.DOTALL)
    if m:
        text = f"<response>{m.group(1)}</response>"
    try:
        try:
            root = ET.fromstring(text)
        except ET.ParseError:
            root = ET.fromstring(repair_tags(text, dimensions))
        out = {}
        for d in dimensions:
            reasoning = rating = ""
            element = root.find(d)
            if element is not None:
                r, g = element.find("reasoning"), element.find("rating")
                reasoning = (r.text or "") if r is not None else ""
                rating = (g.text or "").strip() if g is not None else ""
            out[d] = Dimension(reasoning, rating)
        return out
    except Exception:  # noqa: BLE001 - the reference reads any failure as "ask again"
        return None


def rubric_scores(parsed: dict[str, Dimension], dimensions: list[str]
                  ) -> tuple[dict[str, int | None], float | None]:
    """Per dimension the rating's score (None off the scale) and the mean of the scored ones
    (None when none is), computed as the reference computes them."""
    scores = {d: RATING_WORDS.get(parsed[d].rating) for d in dimensions}
    values = [s for s in scores.values() if s is not None]
    return scores, (sum(values) / len(values) if values else None)


def parse_rubric(answer: str, dimensions: list[str]) -> RubricVerdict:
    parsed = read_rubric(answer, dimensions)
    if parsed is None:
        raise JudgeParseError("not XML the reference can read (after its tag repair)")
    scores, average = rubric_scores(parsed, dimensions)
    if average is None:
        shown = ", ".join(f"{d}={parsed[d].rating!r}" for d in dimensions)
        raise JudgeParseError(f"no rating is one of 极差 较差 一般 较好 优秀 ({shown})")
    verdict = RubricVerdict({}, {})
    for d in dimensions:
        score = scores[d]
        if score is not None:
            verdict.ratings[d], verdict.reasoning[d] = score, parsed[d].reasoning
        elif parsed[d].rating:
            verdict.unrated[d] = f"rating {parsed[d].rating!r} is not one of 极差..优秀"
        else:
            verdict.unrated[d] = "not rated"
    return verdict


def read_meta(answer: str) -> Dimension | None:
    """The meta answer's (reasoning, rating) texts, or None when it is not XML."""
    text = unfence(answer)
    m = re.search(r"<meta_evaluation>(.*?)</meta_evaluation>", text, re.DOTALL)
    if m:
        text = f"<meta_evaluation>{m.group(1)}</meta_evaluation>"
    try:
        root = ET.fromstring(text)
        r, g = root.find("reasoning"), root.find("rating")
        return Dimension((r.text or "") if r is not None else "",
                         (g.text or "").strip() if g is not None else "")
    except Exception:  # noqa: BLE001 - the reference reads any failure as "ask again"
        return None


def parse_meta(answer: str) -> MetaVerdict:
    parsed = read_meta(answer)
    if parsed is None:
        raise JudgeParseError("not XML the reference can read")
    score = RATING_WORDS.get(parsed.rating)
    if score is None:
        raise JudgeParseError(f"meta rating {parsed.rating!r} is not one of 极差..优秀")
    return MetaVerdict(score, parsed.reasoning)
