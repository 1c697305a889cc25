"""The travel-plan JSON: finding it in the agent's messages, and checking its shape.

Two readers exist, as in the reference:
- during the chat, `is_travel_plan(text)` decides whether an agent message ends the chat:
  the first fenced block (any language tag, or none) if the message has one, else the
  first brace-balanced object, must parse and be plan-shaped;
- at evaluation, `extract_plan(history)` takes the latest agent message mentioning both
  `days` and `city_segments` whose plan parses: a ```json fenced object first, else the
  brace-balanced object that starts at the nearest "{" before the first `"days"` (or
  `'days'`); earlier agent messages are tried when a later one yields no plan.
*Plan-shaped* means: an object whose `days` is a non-empty list whose first item is an object
with a non-empty `city_segments` list. Anything deeper is left to the metrics (malformed
segments are scored, not rejected); `validate_plan` reports the deeper shape with paths.

`parse_agent_table(text)` reads the agent's preference table ({user: {global_constraints,
city_specific_preferences}}) from a message, the same way the chat reader finds JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .chat import AGENT

ACTIVITY_TYPES = ("attraction", "food", "hotel", "rest", "intracity_transport")
INTERCITY = "intercity_transport"

_FENCED_JSON_OBJECT = re.compile(r"```json\s*(\{[\s\S]*?\})\s*```")
_FIRST_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)\n?```", re.DOTALL)


def is_plan_shaped(value: Any) -> bool:
    """The structural gate shared by both readers."""
    if not isinstance(value, dict):
        return False
    days = value.get("days")
    if not isinstance(days, list) or not days or not isinstance(days[0], dict):
        return False
    segments = days[0].get("city_segments")
    return isinstance(segments, list) and bool(segments)


def _balanced_object(text: str, start: int) -> str | None:
    """The text from the "{" at `start` to its matching "}" (braces counted raw, as the
    reference does: braces inside strings count too), or None if it never closes."""
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start:index + 1]
    return None


def _loads(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return None


def extract_plan_from_text(text: str) -> dict[str, Any] | None:
    """The plan in one agent message by the evaluation rule, or None."""
    if not isinstance(text, str):
        return None
    fenced = _FENCED_JSON_OBJECT.search(text)
    if fenced is not None:
        plan = _loads(fenced.group(1))
        if is_plan_shaped(plan):
            return plan
    for key in ('"days"', "'days'"):
        at = text.find(key)
        if at == -1:
            continue
        start = text.rfind("{", 0, at)
        if start == -1:
            continue
        plan = _loads(_balanced_object(text, start))
        if plan is not None:
            return plan if is_plan_shaped(plan) else None
    return None


def extract_plan(history: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The final plan of a chat by the evaluation rule, or None (no plan: utility, fairness
    and validity are then not computed for the trial)."""
    for entry in reversed(history):
        if entry.get("role") != AGENT:
            continue
        content = entry.get("content")
        if not isinstance(content, str) or "days" not in content or (
                "city_segments" not in content):
            continue
        plan = extract_plan_from_text(content)
        if plan is not None:
            return plan
    return None


def json_object_text(text: str) -> str | None:
    """The JSON text an agent message carries, by the chat rule: the first fenced block's
    body when there is a fence, else the first brace-balanced object."""
    if not isinstance(text, str):
        return None
    fenced = _FIRST_FENCE.search(text)
    if fenced is not None:
        return fenced.group(1).strip()
    start = text.find("{")
    return None if start == -1 else _balanced_object(text, start)


def is_travel_plan(text: str) -> bool:
    """Whether an agent message is a final plan (it ends the chat)."""
    return is_plan_shaped(_loads(json_object_text(text)))


def looks_like_agent_table(value: Any) -> bool:
    """A non-empty object whose every value is an object with `global_constraints` or
    `city_specific_preferences` (partial snapshots allowed; plans and tool blobs rejected)."""
    if not isinstance(value, dict) or not value:
        return False
    fields = {"global_constraints", "city_specific_preferences"}
    return all(isinstance(entry, dict) and bool(fields & entry.keys())
               for entry in value.values())


def parse_agent_table(text: str) -> dict[str, Any] | None:
    """The agent's preference table in a message, or None (then the previous table stays)."""
    table = _loads(json_object_text(text))
    return table if looks_like_agent_table(table) else None


# --- shape validation ------------------------------------------------------------------


@dataclass(frozen=True)
class ShapeError:
    path: str  # e.g. "days[1].city_segments[0].activities[2].avg_cost"
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class PlanShapeError(ValueError):
    """A plan that does not have the documented shape; lists every problem found."""

    def __init__(self, errors: Sequence[ShapeError]) -> None:
        self.errors = list(errors)
        shown = "; ".join(str(error) for error in self.errors[:10])
        more = f" (+{len(self.errors) - 10} more)" if len(self.errors) > 10 else ""
        super().__init__(f"plan has {len(self.errors)} shape error(s): {shown}{more}")


def _is_time(value: Any) -> bool:
    try:
        datetime.strptime(value, "%H:%M")
    except (TypeError, ValueError):
        return False
    return True


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_str(obj: Mapping[str, Any], key: str, where: str, out: list[ShapeError]) -> None:
    if key not in obj:
        out.append(ShapeError(f"{where}.{key}", "missing"))
    elif not isinstance(obj[key], str) or not obj[key]:
        out.append(ShapeError(f"{where}.{key}", f"expected a non-empty string, got "
                                                 f"{obj[key]!r}"))


def _check_times(obj: Mapping[str, Any], where: str, out: list[ShapeError]) -> None:
    for key in ("start_time", "end_time"):
        if key not in obj:
            out.append(ShapeError(f"{where}.{key}", "missing"))
        elif not _is_time(obj[key]):
            out.append(ShapeError(f"{where}.{key}", f"expected HH:MM, got {obj[key]!r}"))


def _check_cost(obj: Mapping[str, Any], where: str, out: list[ShapeError]) -> None:
    if obj.get("avg_cost") is None:
        out.append(ShapeError(f"{where}.avg_cost", "missing (a per-person number is required)"))
    elif not _is_number(obj["avg_cost"]):
        out.append(ShapeError(f"{where}.avg_cost", f"expected a number, got {obj['avg_cost']!r}"))


def _check_activity(act: Any, where: str, users: set[str] | None,
                    out: list[ShapeError]) -> None:
    if not isinstance(act, dict):
        out.append(ShapeError(where, f"expected an object, got {type(act).__name__}"))
        return
    kind = act.get("type")
    if kind not in ACTIVITY_TYPES:
        out.append(ShapeError(f"{where}.type", f"expected one of {', '.join(ACTIVITY_TYPES)}, "
                                               f"got {kind!r}"))
    if kind in ("attraction", "food", "hotel"):
        _check_str(act, "location", where, out)
    elif kind == "intracity_transport":
        _check_str(act, "from", where, out)
        _check_str(act, "to", where, out)
    _check_times(act, where, out)
    if kind in ("food", "hotel"):
        _check_cost(act, where, out)
    if "participants" in act and act["participants"] is not None:
        people = act["participants"]
        if not isinstance(people, list) or not all(isinstance(p, str) for p in people):
            out.append(ShapeError(f"{where}.participants", "expected a list of names"))
        elif users is not None:
            unknown = [p for p in people if p not in users and p != "All"]
            if unknown:
                out.append(ShapeError(f"{where}.participants",
                                      f"unknown member(s) {unknown}; use member names or "
                                      f'["All"]'))


def _check_segment(seg: Any, where: str, users: set[str] | None,
                   out: list[ShapeError]) -> None:
    if not isinstance(seg, dict):
        out.append(ShapeError(where, f"expected an object, got {type(seg).__name__}"))
        return
    if seg.get("type") == INTERCITY:
        for key in ("from_city", "to_city", "transport_mode"):
            _check_str(seg, key, where, out)
        _check_times(seg, where, out)
        _check_cost(seg, where, out)
        return
    if seg.get("type", "city_block") != "city_block":  # a block may go without a type
        out.append(ShapeError(f"{where}.type", f'expected "{INTERCITY}" or "city_block", got '
                                               f"{seg.get('type')!r}"))
    _check_str(seg, "city", where, out)
    acts = seg.get("activities")
    if not isinstance(acts, list):
        out.append(ShapeError(f"{where}.activities", "expected a list of activities"))
        return
    for index, act in enumerate(acts):
        _check_activity(act, f"{where}.activities[{index}]", users, out)


def validate_plan(plan: Any, users: Iterable[str] | None = None) -> list[ShapeError]:
    """Every deviation of `plan` from the documented shape (empty when it conforms).
    With `users`, participant names are checked against them too."""
    members = set(users) if users is not None else None
    out: list[ShapeError] = []
    if not isinstance(plan, dict):
        return [ShapeError("plan", f"expected an object, got {type(plan).__name__}")]
    days = plan.get("days")
    if not isinstance(days, list) or not days:
        return [ShapeError("days", "expected a non-empty list of days")]
    for d, day in enumerate(days):
        where = f"days[{d}]"
        if not isinstance(day, dict):
            out.append(ShapeError(where, f"expected an object, got {type(day).__name__}"))
            continue
        if not isinstance(day.get("day"), int) or isinstance(day.get("day"), bool):
            out.append(ShapeError(f"{where}.day", f"expected the day number, got "
                                                  f"{day.get('day')!r}"))
        if "date" in day:
            try:
                datetime.strptime(day["date"], "%Y-%m-%d")
            except (TypeError, ValueError):
                out.append(ShapeError(f"{where}.date", f"expected YYYY-MM-DD, got "
                                                       f"{day['date']!r}"))
        segments = day.get("city_segments")
        if not isinstance(segments, list) or not segments:
            out.append(ShapeError(f"{where}.city_segments", "expected a non-empty list"))
            continue
        for s, seg in enumerate(segments):
            _check_segment(seg, f"{where}.city_segments[{s}]", members, out)
    return out


def require_valid_plan(plan: Any, users: Iterable[str] | None = None) -> dict[str, Any]:
    """`plan` itself when it conforms, else PlanShapeError listing the problems."""
    errors = validate_plan(plan, users)
    if errors:
        raise PlanShapeError(errors)
    return plan
