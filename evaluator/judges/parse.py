"""Tolerant parsing of judge outputs.

Judges are asked for JSON (and guided decoding enforces it where the server supports it), but
small or unguided models wrap it in code fences, add trailing text, answer in the reference's
XML layout or use the Chinese rating words. Every parser here either returns a complete,
typed verdict or raises `JudgeParseError`; the caller retries and finally records a judge
error. Nothing is ever guessed into a score.

A rubric verdict may leave dimensions unrated, as in the TravelBench reference: a dimension
without a rating on the scale is left out (and named in `RubricVerdict.unrated`); only a
verdict with no rated dimension at all is an error.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

RATING_LABELS: tuple[str, ...] = ("Very Poor", "Poor", "Fair", "Good", "Excellent")
RATING_NAMES: dict[int, str] = {i + 1: label for i, label in enumerate(RATING_LABELS)}

META_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "rating": {"type": "string", "enum": list(RATING_LABELS)},
    },
    "required": ["reasoning", "rating"],
    "additionalProperties": False,
}
"""The JSON schema of one rated verdict {reasoning, rating}: a meta-judge's answer, and each
dimension's entry of a rubric answer (`rubric_schema`)."""


def rubric_schema(dimensions: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """The JSON schema of a rubric answer: {dimension: {reasoning, rating}} for each one."""
    return {
        "type": "object",
        "properties": {d: META_SCHEMA for d in dimensions},
        "required": list(dimensions),
        "additionalProperties": False,
    }

# normalised word -> rating. "Average" is the word the TravelBench paper's prompts use for 3;
# the Chinese words are the reference implementation's scale.
_RATING_WORDS: dict[str, int] = {
    "very poor": 1, "poor": 2, "fair": 3, "average": 3, "good": 4, "excellent": 5,
    "极差": 1, "较差": 2, "一般": 3, "较好": 4, "优秀": 5,
}
# longest first, so that "very poor" is found before "poor"
_RATING_SEARCH = sorted(_RATING_WORDS, key=len, reverse=True)
_NUMERIC = re.compile(r"^\s*([1-5])(?:\s*(?:/|out of)\s*5)?\s*$")


class JudgeParseError(ValueError):
    """The judge output does not contain a complete verdict."""


class RubricVerdict(msgspec.Struct):
    """`ratings` holds the dimensions rated on the scale (at least one); `unrated` says why
    each other dimension was left out."""

    ratings: dict[str, int]
    reasoning: dict[str, str]
    unrated: dict[str, str] = msgspec.field(default_factory=dict)


class MetaVerdict(msgspec.Struct):
    rating: int
    reasoning: str


class WindowItem(msgspec.Struct):
    satisfied: bool
    justification: str = ""


def rating_value(value: Any) -> int | None:
    """Map a rating (label, Chinese word, or 1..5 number) to 1..5; None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value) if value in (1, 2, 3, 4, 5) else None
    if not isinstance(value, str):
        return None
    text = value.strip().strip("*_`\"'.:;,!()[]<> ").strip()
    low = " ".join(text.lower().split())
    if low in _RATING_WORDS:
        return _RATING_WORDS[low]
    m = _NUMERIC.match(low)
    if m:
        return int(m.group(1))
    # a label inside a short phrase ("Rating: Good."); ambiguous phrases give None
    found: set[int] = set()
    rest = low
    for word in _RATING_SEARCH:
        if word in rest:
            found.add(_RATING_WORDS[word])
            rest = rest.replace(word, " ")
    if len(found) == 1 and len(low) <= 40:
        return found.pop()
    return None


# ---------------------------------------------------------------- JSON extraction

_FENCE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.DOTALL)


def balanced_spans(text: str, open_ch: str, close_ch: str) -> list[str]:
    """Top-level balanced {...} / [...] spans, string-literal aware."""
    spans: list[str] = []
    depth = 0
    start = -1
    in_str = False
    escape = False
    for i, ch in enumerate(text):
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"' and depth > 0:
            in_str = True
        elif ch == open_ch:
            if depth == 0:
                start = i
            depth += 1
        elif ch == close_ch and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


def _loads(text: str) -> Any | None:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    # trailing commas are the commonest small-model slip
    try:
        return json.loads(re.sub(r",\s*([}\]])", r"\1", text))
    except (ValueError, RecursionError):
        return None


def json_candidates(text: str) -> list[Any]:
    """Every JSON value found in `text`: the whole text, fenced blocks, balanced spans."""
    out: list[Any] = []
    pieces = [text.strip()] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    for piece in pieces:
        value = _loads(piece)
        if value is not None:
            out.append(value)
            continue
        for span in balanced_spans(piece, "{", "}") + balanced_spans(piece, "[", "]"):
            value = _loads(span)
            if value is not None:
                out.append(value)
    return out


# ---------------------------------------------------------------- XML-ish extraction

def _tag_body(text: str, tag: str, stop_tags: tuple[str, ...] = ()) -> str | None:
    """Body of <tag>...</tag>, tolerating spaces ("</ tag >") and a missing close tag."""
    t = re.escape(tag)
    m = re.search(rf"<\s*{t}\s*>(.*?)<\s*/\s*{t}\s*>", text, re.DOTALL | re.IGNORECASE)
    if m:
        return m.group(1)
    m = re.search(rf"<\s*{t}\s*>", text, re.IGNORECASE)
    if not m:
        return None
    body = text[m.end():]
    ends = [len(body)]
    for stop in stop_tags:
        s = re.search(rf"<\s*/?\s*{re.escape(stop)}\s*>", body, re.IGNORECASE)
        if s:
            ends.append(s.start())
    return body[: min(ends)]


def _xml_rating(body: str) -> tuple[int | None, str]:
    rating_text = _tag_body(body, "rating", ("reasoning",))
    if rating_text is None:
        return None, ""
    reasoning = _tag_body(body, "reasoning", ("rating",)) or ""
    first_line = rating_text.strip().splitlines()[0] if rating_text.strip() else ""
    return rating_value(first_line), reasoning.strip()


# ---------------------------------------------------------------- verdict parsers

def _dim_entry(value: Any) -> tuple[int | None, str]:
    if isinstance(value, dict):
        low = {str(k).lower(): v for k, v in value.items()}
        reasoning = low.get("reasoning", low.get("justification", ""))
        return rating_value(low.get("rating", low.get("score"))), str(reasoning or "")
    return rating_value(value), ""


def _find_dims(obj: Any, dimensions: list[str], depth: int = 0) -> dict[str, Any] | None:
    """The dict (searched up to 3 levels deep) holding the most of `dimensions` (at least one)."""
    if not isinstance(obj, dict) or depth > 3:
        return None
    best = obj if any(d in obj for d in dimensions) else None
    if best is not None and all(d in obj for d in dimensions):
        return best
    for value in obj.values():
        found = _find_dims(value, dimensions, depth + 1)
        if found is not None and (best is None or _n_dims(found, dimensions) > _n_dims(
                best, dimensions)):
            best = found
    return best


def _n_dims(obj: dict[str, Any], dimensions: list[str]) -> int:
    return sum(1 for d in dimensions if d in obj)


def _json_verdict(dims: dict[str, Any], dimensions: list[str]) -> RubricVerdict:
    verdict = RubricVerdict({}, {})
    for d in dimensions:
        if d not in dims:
            verdict.unrated[d] = "not rated"
            continue
        value, why = _dim_entry(dims[d])
        if value is None:
            verdict.unrated[d] = f"rating {_show(dims[d])} is not on the scale"
        else:
            verdict.ratings[d], verdict.reasoning[d] = value, why
    return verdict


def _xml_verdict(text: str, dimensions: list[str]) -> RubricVerdict:
    verdict = RubricVerdict({}, {})
    for d in dimensions:
        body = _tag_body(text, d, tuple(x for x in dimensions if x != d) + ("response",))
        if body is None:
            verdict.unrated[d] = "not rated"
            continue
        value, why = _xml_rating(body)
        if value is None:
            verdict.unrated[d] = f"<{d}>: no rating on the scale"
        else:
            verdict.ratings[d], verdict.reasoning[d] = value, why
    return verdict


def _show(value: Any) -> str:
    text = repr(value.get("rating", value.get("score")) if isinstance(value, dict) else value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_rubric(text: str, dimensions: list[str]) -> RubricVerdict:
    """Ratings from JSON `{dim: {reasoning, rating}}` or the XML layout: the candidate that
    rates the most dimensions. Raises `JudgeParseError` when none rates any dimension."""
    best: RubricVerdict | None = None
    for candidate in json_candidates(text):
        dims = _find_dims(candidate, dimensions)
        if dims is None:
            continue
        verdict = _json_verdict(dims, dimensions)
        if best is None or len(verdict.ratings) > len(best.ratings):
            best = verdict
        if len(best.ratings) == len(dimensions):
            return best
    xml = _xml_verdict(text, dimensions)
    if best is None or len(xml.ratings) > len(best.ratings):
        best = xml
    if best.ratings:
        return best
    detail = "; ".join(f"{d}: {why}" for d, why in best.unrated.items() if why != "not rated")
    raise JudgeParseError(detail or f"no rating for any of {', '.join(dimensions)}")


def parse_meta(text: str) -> MetaVerdict:
    """The meta-judge's single rating, from JSON `{reasoning, rating}` or <meta_evaluation>."""
    for candidate in json_candidates(text):
        if isinstance(candidate, dict):
            low = {str(k).lower(): v for k, v in candidate.items()}
            inner = low.get("meta_evaluation")
            if isinstance(inner, dict):
                low = {str(k).lower(): v for k, v in inner.items()}
            value, why = _dim_entry(low)
            if value is not None:
                return MetaVerdict(value, why)
    body = _tag_body(text, "meta_evaluation") or text
    value, why = _xml_rating(body)
    if value is None:
        raise JudgeParseError("no meta rating on the scale")
    return MetaVerdict(value, why)


def _truthy(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "yes", "1", "satisfied", "met"):
            return True
        if low in ("false", "no", "0", "unsatisfied", "not satisfied", "not met"):
            return False
    return None


def _window_items(obj: Any) -> list[dict[str, Any]] | None:
    if isinstance(obj, list) and all(isinstance(x, dict) for x in obj):
        return obj
    if isinstance(obj, dict):
        for key in ("rubrics", "results", "rubric_status", "items"):
            if key in obj:
                return _window_items(obj[key])
    return None


def parse_window(text: str, rubric_keys: list[str]) -> dict[str, WindowItem]:
    """Verdicts by rubric key from `{"rubrics": [{rubric_key, satisfied, justification}]}`
    (or a bare list); the reference's `meetExpectation` field is accepted for `satisfied`.
    Items may also be matched by position when the key is missing. As in the reference, an
    answer may leave rubrics out (they keep their state); one with no usable item at all is
    unparseable. Other fields (an `overturned` flag of older prompts) are ignored."""
    for candidate in json_candidates(text):
        items = _window_items(candidate)
        if items is None:
            continue
        out: dict[str, WindowItem] = {}
        for pos, item in enumerate(items):
            key = item.get("rubric_key", item.get("rubric_idx", item.get("key", item.get("id"))))
            if key not in rubric_keys:
                key = rubric_keys[pos] if pos < len(rubric_keys) and key is None else key
            if key not in rubric_keys:
                continue
            sat = _truthy(item.get("satisfied", item.get("meetExpectation")))
            if sat is None:
                continue
            out[str(key)] = WindowItem(sat, str(item.get("justification", "") or ""))
        if out:
            return out
    raise JudgeParseError(f"no window verdict for any of the rubric keys {rubric_keys}")
