"""Reading the judge's and the meta-judge's answers as the reference reads them.

The five-dimension review is XML: `<response><dim><reasoning>..</reasoning><rating>..</rating>
</dim>...</response>`. Before parsing, the answer is repaired as the reference repairs it:
code fences dropped; whitespace inside tags removed; a tag that is not a known one but is
contained in (or contains) a dimension name renamed to that dimension; a missing `<response>`
put before the first dimension and a missing `</response>` after the last one; the reasoning
text of each dimension's first block escaped when it holds `<`/`>` but no reasoning or rating
tag (unless it already holds an escape); a dimension's missing closing tag put before the next
dimension (or `</response>`); a missing `</reasoning>` before `<rating>` (or the dimension's
end); an empty `<rating></rating>` added when absent, a missing `</rating>` added; XML comments
removed. Then the text between the first `<response>` and the last `</response>` is parsed as
XML; when that fails, each dimension's reasoning and rating are cut out with patterns (a rating
reduced to the first rating word it contains), and the answer fails only when no dimension
gave a rating field.

A rating is a rating word (a leading `评级：`/`评级:` dropped): the exact word, else the first
word of the scale contained in it; the review counts when at least one dimension maps. The
meta-judge's answer is `<meta_evaluation><reasoning/><rating/></meta_evaluation>`, parsed
strictly (no repair). The words are the imported prompts' (Chinese, the reference's only ones);
the built-in prompts ask for English ones, also accepted then (`words_for`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any

CHINESE_WORDS: tuple[tuple[str, int], ...] = (
    ("极差", 1), ("较差", 2), ("一般", 3), ("较好", 4), ("优秀", 5))
ENGLISH_WORDS: tuple[tuple[str, int], ...] = (
    ("Very Poor", 1), ("Excellent", 5), ("Good", 4), ("Fair", 3), ("Poor", 2))
"""Longer words first where one contains another ("Poor" in "Very Poor")."""
_LABEL_PREFIXES = ("评级：", "评级:")


def words_for(builtin: bool) -> tuple[tuple[str, int], ...]:
    """The rating words of a prompt set: the reference's, and the built-in prompts' too."""
    return CHINESE_WORDS + ENGLISH_WORDS if builtin else CHINESE_WORDS


def rating_score(rating: str | None, words: Sequence[tuple[str, int]] = CHINESE_WORDS
                 ) -> int | None:
    if not rating:
        return None
    text = rating.strip()
    for prefix in _LABEL_PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix):].strip()
            break
    exact = dict(words)
    if text in exact:
        return exact[text]
    return next((score for word, score in words if word in text), None)


def _unfence(text: str, plain_fence: bool = True) -> str:
    text = text.strip()
    text = text.removeprefix("```xml")
    if plain_fence and text.startswith("```"):
        text = text[3:]
    text = text.removesuffix("```")
    return text.strip()


_TAG = re.compile(r"</?([a-zA-Z_][a-zA-Z0-9_]*)>")


def _rename_tags(text: str, dims: Sequence[str]) -> str:
    known = {*dims, "response", "reasoning", "rating", "meta_evaluation"}

    def fix(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in known:
            return match.group(0)
        for dim in dims:
            if name in dim or dim in name:
                return ("</" if match.group(0).startswith("</") else "<") + dim + ">"
        return match.group(0)

    return _TAG.sub(fix, text)


def _wrap(text: str, dims: Sequence[str]) -> str:
    if "<response>" not in text:
        starts = [i for d in dims if (i := text.find(f"<{d}>")) != -1]
        if starts:
            first = min(starts)
            text = text[:first] + "<response>" + text[first:]
    if "</response>" not in text:
        ends = [i + len(f"</{d}>") for d in dims if (i := text.rfind(f"</{d}>")) != -1]
        if ends and max(ends) > 0:
            last = max(ends)
            text = text[:last] + "</response>" + text[last:]
    return text


def _escape_reasoning(text: str, dims: Sequence[str]) -> str:
    for dim in dims:
        m = re.search(rf"(<{dim}>\s*<reasoning>)(.*?)(</reasoning>)", text, re.DOTALL)
        if m is None:
            continue
        body = m.group(2)
        if re.findall(r"</?(?:reasoning|rating)>", body) or not re.search(r"[<>]", body):
            continue
        if not ("&lt;" in body or "&gt;" in body or "&amp;" in body):
            body = body.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        text = text[:m.start()] + m.group(1) + body + m.group(3) + text[m.end():]
    return text


def _close_blocks(text: str, dims: Sequence[str]) -> str:
    for dim in dims:
        open_tag, close_tag = f"<{dim}>", f"</{dim}>"
        if open_tag not in text:
            continue
        start = text.find(open_tag)
        end = text.find(close_tag, start)
        if end == -1:
            bound = len(text)
            for other in dims:
                if other != dim:
                    at = text.find(f"<{other}>", start + len(open_tag))
                    if at != -1 and at < bound:
                        bound = at
            at = text.find("</response>", start)
            if at != -1 and at < bound:
                bound = at
            text = text[:bound] + close_tag + text[bound:]
            end = bound
        block = text[start:end + len(close_tag)]
        if "<reasoning>" in block and "</reasoning>" not in block:
            at = block.find("<rating>")
            pos = start + at if at != -1 else text.find(close_tag, start)
            text = text[:pos] + "</reasoning>" + text[pos:]
        start = text.find(open_tag)
        end = text.find(close_tag, start)
        block = text[start:end + len(close_tag)]
        if "</reasoning>" in block and "<rating>" not in block:
            pos = text.find("</reasoning>", start) + len("</reasoning>")
            text = text[:pos] + "<rating></rating>" + text[pos:]
        elif "<rating>" in block and "</rating>" not in block:
            pos = text.find(close_tag, start)
            text = text[:pos] + "</rating>" + text[pos:]
    return text


def repair(text: str, dims: Sequence[str]) -> str:
    """The reference's repair of a review answer (module doc), before it is parsed."""
    text = re.sub(r"<\s+", "<", text)
    text = re.sub(r"\s+>", ">", text)
    text = re.sub(r"<\s*/\s*", "</", text)
    text = _rename_tags(text, dims)
    text = _wrap(text, dims)
    text = _escape_reasoning(text, dims)
    text = _close_blocks(text, dims)
    return re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)


def _cut_out(text: str, dims: Sequence[str], words: Sequence[tuple[str, int]]
             ) -> dict[str, dict[str, str]] | None:
    out: dict[str, dict[str, str]] = {}
    found = False
    for dim in dims:
        out[dim] = {"reasoning": "", "rating": ""}
        m = (re.search(rf"<{dim}>(.*?)</{dim}>", text, re.DOTALL)
             or re.search(rf"<{dim}>(.*)</{dim}>", text, re.DOTALL))
        if m is None:
            continue
        block = m.group(1)
        r = (re.search(r"<reasoning>(.*?)(?:</reasoning>|<rating>)", block, re.DOTALL)
             or re.search(r"<reasoning>(.*)", block, re.DOTALL))
        if r is not None:
            out[dim]["reasoning"] = r.group(1).strip()
        g = re.search(r"<rating>(.*?)(?:</rating>|$)", block, re.DOTALL)
        if g is not None:
            rating = g.group(1).strip()
            rating = next((w for w, _ in words if w in rating), rating)
            out[dim]["rating"] = rating
            found = True
    return out if found else None


def read_review(answer: str, dims: Sequence[str],
                words: Sequence[tuple[str, int]] = CHINESE_WORDS
                ) -> dict[str, dict[str, str]] | None:
    """{dimension: {"reasoning", "rating"}} read from a review answer, or None."""
    try:
        text = repair(_unfence(answer), dims)
        m = re.search(r"<response>(.*)</response>", text, re.DOTALL)
        if m is not None:
            text = f"<response>{m.group(1)}</response>"
        try:
            root = ET.fromstring(text)
        except ET.ParseError:
            return _cut_out(text, dims, words)
        out = {dim: {"reasoning": "", "rating": ""} for dim in dims}
        for dim in dims:
            element = root.find(dim)
            if element is None:
                continue
            reasoning, rating = element.find("reasoning"), element.find("rating")
            if reasoning is not None:
                out[dim]["reasoning"] = reasoning.text or ""
            if rating is not None:
                out[dim]["rating"] = (rating.text or "").strip()
        return out
    except Exception:  # noqa: BLE001 - the reference treats any failure as "no answer"
        return None


def review_scores(parsed: dict[str, dict[str, str]] | None, dims: Sequence[str],
                  words: Sequence[tuple[str, int]] = CHINESE_WORDS
                  ) -> dict[str, int | None]:
    """Each dimension's 1..5 rating (None when its rating does not map)."""
    parsed = parsed or {}
    return {dim: rating_score(parsed.get(dim, {}).get("rating", ""), words) for dim in dims}


def read_meta(answer: str) -> dict[str, str] | None:
    """{"reasoning", "rating"} of a meta-judge answer, or None (strict XML)."""
    text = _unfence(answer, plain_fence=False)
    m = re.search(r"<meta_evaluation>(.*?)</meta_evaluation>", text, re.DOTALL)
    if m is not None:
        text = f"<meta_evaluation>{m.group(1)}</meta_evaluation>"
    try:
        root = ET.fromstring(text)
    except Exception:  # noqa: BLE001 - ParseError and friends: no answer
        return None
    reasoning, rating = root.find("reasoning"), root.find("rating")
    return {"reasoning": (reasoning.text or "") if reasoning is not None else "",
            "rating": (rating.text or "").strip() if rating is not None else ""}


def average(values: Sequence[Any]) -> float | None:
    rated = [v for v in values if v is not None]
    return sum(rated) / len(rated) if rated else None
