"""How the VitaBench reference reads a judge window's answer (`options.judge_reader =
"reference"`), and what it then does with it.

The reference passes the answer through `json_repair` and `json.loads`, then, if the value is
truthy, iterates it: every item must be a dict; an item whose `rubric_idx` is a known rubric
key sets that rubric's `justification` (default "No justification provided") and
`meetExpectation` (default: unchanged), other items are ignored. A falsy value (`[]`, `{}`,
`null`) keeps every state, and costs no further call. Anything that raises there (no JSON, an
object, a list of strings, an unhashable id) fails the whole trial. At the end each
`meetExpectation` must be a boolean as pydantic reads one and each `justification` a string,
else the trial fails too.

`repair_loads` reads the answer as `json_repair` does for the shapes a judge writes: valid JSON;
JSON values inside prose or a code fence (several values make a list of them, a value that
repeats the previous one's structure replaces it, `#` and `//` start comments that run to the
end of the line); Python's `True`/`False`/`None` and trailing commas; an answer cut off in a
string or after a complete element (closed there). Answers `json_repair` rescues by deeper
guesses (unquoted keys, single quotes) are unreadable here: a failed trial. The optional test
`tests/benchmarks/vitabench/test_reference_judge.py` compares the two on a corpus.
"""

from __future__ import annotations

import json
import re
from typing import Any

NOT_EVALUATED = "Not evaluated yet"
NO_JUSTIFICATION = "No justification provided"


class Unreadable(Exception):
    """The reference would fail the trial on this answer (the message says why)."""


# ------------------------------------------------------------------ reading the JSON

_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def repair_loads(text: Any) -> Any:
    """The JSON value of a judge answer (module doc); Unreadable when there is none."""
    if not isinstance(text, str):
        raise Unreadable("the answer has no text")
    try:
        return json.loads(text)
    except ValueError:
        pass
    values: list[Any] = []
    i, n = 0, len(text)
    first = True
    while i < n:
        comma = _comma_before(text, i)
        value, i = _next_value(text, i)
        if first:
            first = False
            if value is _NOTHING:
                raise Unreadable("no JSON in the answer")
            values.append(value)
            continue
        if value is _NOTHING or not value:
            i += 1
            continue
        if (not comma and _same_shape(values[-1], value)) or not values[-1]:
            values.pop()  # a repeat of the previous value's shape, or an empty one: replaced
        values.append(value)
    if not values:
        raise Unreadable("no JSON in the answer")
    return values[0] if len(values) == 1 else values


_NOTHING = object()


def _comma_before(text: str, i: int) -> bool:
    j = i
    while j < len(text) and text[j].isspace():
        j += 1
    if j < len(text) and text[j] == ",":
        return True
    j = i - 1
    while j >= 0 and text[j].isspace():
        j -= 1
    return j >= 0 and text[j] == ","


def _next_value(text: str, i: int) -> tuple[Any, int]:
    """The next top-level value from `i` (prose and comments skipped), and where it ends."""
    n = len(text)
    while i < n:
        c = text[i]
        if c in "[{":
            return _container(text, i)
        if c == "#" or text.startswith("//", i):
            while i < n and text[i] not in "\r\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            i += 1
    return _NOTHING, n


def _same_shape(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return len(a) == len(b) and all(k in b and _same_shape(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_shape(x, y) for x, y in zip(a, b, strict=True))
    return True


def _scan(text: str, i: int) -> tuple[int, list[str], bool, int]:
    """From the opener at `i`: (end index after the balanced close or len(text), the stack
    of open brackets left, inside a string at the end, the position after the last comma at
    the innermost open level)."""
    stack: list[str] = []
    in_str = escape = False
    last_comma = -1
    j = i
    while j < len(text):
        c = text[j]
        if in_str:
            if escape:
                escape = False
            elif c == "\\":
                escape = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "[{":
            stack.append(c)
            last_comma = -1
        elif c in "]}":
            if not stack or (c == "]") != (stack[-1] == "["):
                return j, stack, False, last_comma  # a stray closer: stop here
            stack.pop()
            last_comma = -1
            if not stack:
                return j + 1, stack, False, last_comma
        elif c == ",":
            last_comma = j
        j += 1
    return j, stack, in_str, last_comma


def _fix(span: str) -> str:
    """Python literals outside strings -> JSON's; trailing commas dropped."""
    out: list[str] = []
    in_str = escape = False
    i = 0
    while i < len(span):
        c = span[i]
        if in_str:
            out.append(c)
            if escape:
                escape = False
            elif c == "\\":
                escape = True
            elif c == '"':
                in_str = False
            i += 1
            continue
        if c == '"':
            in_str = True
            out.append(c)
            i += 1
            continue
        word = re.match(r"[A-Za-z_]+", span[i:])
        if word:
            out.append(_PY_LITERALS.get(word.group(0), word.group(0)))
            i += len(word.group(0))
            continue
        out.append(c)
        i += 1
    return _TRAILING_COMMA.sub(r"\1", "".join(out))


def _loads(span: str) -> Any:
    try:
        return json.loads(span)
    except ValueError:
        return json.loads(_fix(span))


def _closers(stack: list[str]) -> str:
    return "".join("]" if c == "[" else "}" for c in reversed(stack))


def _container(text: str, i: int) -> tuple[Any, int]:
    end, stack, in_str, last_comma = _scan(text, i)
    span = text[i:end]
    if not stack:
        try:
            return _loads(span), end
        except ValueError:
            raise Unreadable("JSON the reference's repair would have to guess at") from None
    # cut off: close an open string, or go back to the last complete element, then close
    candidates = []
    if in_str:
        candidates.append(span + '"' + _closers(stack))
    body = span.rstrip()
    if not in_str and len(stack) > 1 and body.endswith(("{", "[")):  # an element just opened
        body = body[:-1].rstrip()
        stack = stack[:-1]
    candidates.append(body.rstrip(",") + _closers(stack))
    if last_comma >= 0:
        candidates.append(text[i:last_comma] + _closers(stack))
    for candidate in candidates:
        try:
            return _loads(candidate), end
        except ValueError:
            continue
    raise Unreadable("an answer cut off where the reference's repair would have to guess")


# ------------------------------------------------------------------ applying it

def apply_answer(states: dict[str, dict[str, Any]], value: Any) -> dict[str, dict[str, Any]]:
    """The rubric states after one window's answer `value`, as the reference updates them;
    Unreadable where the reference raises (module doc)."""
    out = {k: dict(v) for k, v in states.items()}
    if not value:
        return out
    if not isinstance(value, list):
        kind = "an object" if isinstance(value, dict) else f"a {type(value).__name__}"
        raise Unreadable(f"the answer is {kind}, not a list of rubric results")
    for item in value:
        if not isinstance(item, dict):
            raise Unreadable(f"a list item is a {type(item).__name__}, not an object")
        idx = item.get("rubric_idx")
        if isinstance(idx, dict | list):
            raise Unreadable("a rubric_idx is not a plain value")
        if idx and idx in out:
            state = out[idx]
            state["justification"] = item.get("justification", NO_JUSTIFICATION)
            state["meetExpectation"] = item.get("meetExpectation", state["meetExpectation"])
    return out


_TRUE = {"1", "on", "t", "true", "y", "yes"}
_FALSE = {"0", "off", "f", "false", "n", "no"}


def as_bool(value: Any) -> bool:
    """A status as pydantic (lax mode) reads a `bool`; Unreadable when it cannot."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
        return value.lower() in _TRUE
    raise Unreadable(f"a status {value!r} is not a boolean")


def final_verdicts(states: dict[str, dict[str, Any]]) -> dict[str, bool]:
    """Each rubric's final status, as the reference converts the states to its checks (a
    justification must be a string)."""
    out: dict[str, bool] = {}
    for key, state in states.items():
        if not isinstance(state["justification"], str):
            raise Unreadable(f"{key}: the justification is not a string")
        out[key] = as_bool(state["meetExpectation"])
    return out
