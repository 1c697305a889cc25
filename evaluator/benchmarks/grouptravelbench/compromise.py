"""Compromise markers and the effective preference table.

A user who agrees to give something up ends the reply with a machine-readable marker,
`[<dotted.path> : <json value>]`, e.g. `[global_constraints.transport.must : ["高铁"]]`. The
framework checks that the agent asked for it (the previous outward message is the agent's
and @-mentions this user), writes the value into the user's slot of the effective table,
and removes the marker from what the others see. A user accepts at most
`MAX_COMPROMISES_PER_USER` compromises; at the cap the user turns non-compromisable and the
simulator's prompt must be rebuilt. A reply whose marker cannot be honoured is regenerated,
`MAX_REPLY_ATTEMPTS` replies in all; the last one is committed with its marker applied
without the solicitation check (its intent is clear) and stripped.

`CompromiseTracker.begin_reply` returns a `ReplyGate`, the small state machine a protocol
drives for one user speaking event: submit each generated reply, act on the returned step.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .chat import AGENT, detect_mention, is_pass, strip_trailing_pass
from .preferences import set_path

MAX_COMPROMISES_PER_USER = 2
MAX_REPLY_ATTEMPTS = 3

# A bracket at the very end of the message: path of word characters, CJK and dots, a colon,
# a value on one line reaching the final "]".
MARKER_PATTERN = re.compile(r"\[\s*([\w\u4e00-\u9fff.]+)\s*:\s*(.+?)\s*\]\s*\Z")

# Path segments a model tends to glue extra text onto with "_" (repaired to the bare name).
CANONICAL_SEGMENTS = frozenset({
    "global_constraints", "city_specific_preferences", "hotel_preference", "category_pref",
    "must_visit", "reject_visit", "must_eat", "prefer_eat", "avoid_eat", "reject_eat",
    "max_poi_per_day", "max_active_hours", "avg_budget",
})
FALLBACK_PREFIXES = ("global_constraints.", "city_specific_preferences.")

_NO_VALUE = object()


@dataclass(frozen=True)
class MarkerScan:
    """What the end of a reply holds: `raw` is the marker text when one is present,
    `path`/`value` are set when its value also parsed (`parsed`)."""

    raw: str | None = None
    path: str = ""
    value: Any = None
    parsed: bool = False

    @property
    def present(self) -> bool:
        return self.raw is not None


def parse_marker_value(raw_value: str) -> Any:
    """The marker's value: JSON first; else a bare word (not starting with [ { " - and not a
    plain number) is taken as a string; else a truncated list or object is repaired (a lone
    bracket is empty, a missing closing bracket is added). Returns `_NO_VALUE` on failure."""
    try:
        return json.loads(raw_value)
    except json.JSONDecodeError:
        pass
    if not raw_value.startswith(("[", "{", '"', "-")) and not raw_value.replace(
            ".", "", 1).isdigit():
        return raw_value
    text = raw_value.strip()
    if text == "[":
        return []
    if text == "{":
        return {}
    for opener, closer in (("[", "]"), ("{", "}")):
        if text.startswith(opener) and not text.endswith(closer):
            try:
                return json.loads(text + closer)
            except json.JSONDecodeError:
                pass
    return _NO_VALUE


def scan_marker(text: str) -> MarkerScan:
    """Find the marker at the end of a reply and parse its value."""
    match = MARKER_PATTERN.search(text) if isinstance(text, str) else None
    if match is None:
        return MarkerScan()
    value = parse_marker_value(match.group(2).strip())
    if value is _NO_VALUE:
        return MarkerScan(raw=match.group(0))
    return MarkerScan(raw=match.group(0), path=match.group(1).strip(), value=value, parsed=True)


def strip_marker(text: str, raw: str) -> str:
    """The reply as the others see it: the marker's first occurrence removed, trailing
    whitespace trimmed."""
    return text.replace(raw, "", 1).rstrip()


def normalise_path(path: str) -> str:
    """Repair a model's dotted path: a segment that is a canonical name plus "_..." becomes
    the canonical name; adjacent repeated segments collapse into one."""
    repaired = []
    for segment in path.split("."):
        for name in CANONICAL_SEGMENTS:
            if segment.startswith(name + "_") and len(segment) > len(name) + 1:
                segment = name
                break
        repaired.append(segment)
    collapsed = repaired[:1]
    for segment in repaired[1:]:
        if segment != collapsed[-1]:
            collapsed.append(segment)
    return ".".join(collapsed)


class CompromiseLogEntry(msgspec.Struct, frozen=True):
    """One attempt to apply a compromise that passed the user and cap checks. `ordinal` is
    the chat's event number when it happened; `field_path` the path after repair/fallback."""

    ordinal: int
    user: str
    field_path: str
    new_value: Any
    applied: bool


@dataclass(frozen=True)
class ApplyResult:
    applied: bool
    reason: str = ""  # "", "unknown_user", "cap_reached", "path_not_found"
    field_path: str = ""
    rebuild_prompt: bool = False  # the user just hit the cap while still compromisable


@dataclass(frozen=True)
class ReplyStep:
    """What the protocol does with one submitted user reply.

    action: "pass" (nothing enters the chat), "commit" (append `text` as the user's
    message), or "regenerate" (ask the simulator again; nothing enters the chat).
    `rebuild_prompt`: the user has become non-compromisable; rebuild the simulator's prompt.
    `forced`: committed after the last attempt with the marker applied unsolicited.
    `reason`: why the marker could not be honoured (regenerate, or a forced commit)."""

    action: str
    text: str = ""
    applied: bool = False
    rebuild_prompt: bool = False
    forced: bool = False
    reason: str = ""


class CompromiseTracker:
    """The effective table, the per-user accepted counts and compromisable flags, the log."""

    def __init__(self, user_preferences: Mapping[str, Any], *,
                 max_per_user: int = MAX_COMPROMISES_PER_USER) -> None:
        self.original: dict[str, Any] = copy.deepcopy(dict(user_preferences))
        self.effective: dict[str, Any] = copy.deepcopy(dict(user_preferences))
        self.max_per_user = max_per_user
        self.counts: dict[str, int] = {user: 0 for user in user_preferences}
        self.compromisable: dict[str, bool] = {
            user: bool(entry.get("compromisable", False)) if isinstance(entry, Mapping)
            else False for user, entry in user_preferences.items()}
        self.log: list[CompromiseLogEntry] = []

    @property
    def users(self) -> list[str]:
        return list(self.effective)

    @property
    def accepted(self) -> int:
        """Compromises applied over the whole chat."""
        return sum(self.counts.values())

    def is_exhausted(self, user: str) -> bool:
        return self.counts.get(user, 0) >= self.max_per_user

    def apply(self, user: str, path: str, value: Any, ordinal: int) -> ApplyResult:
        """Write a compromise into `user`'s preference object. Refused without a log entry
        for an unknown user or a user at the cap; otherwise the repaired path is tried, then
        with `global_constraints.` and `city_specific_preferences.` put in front, and the
        attempt is logged. The value's type is not checked."""
        if user not in self.effective:
            return ApplyResult(False, "unknown_user", path)
        if self.is_exhausted(user):
            return ApplyResult(False, "cap_reached", path)
        slot = self.effective[user]
        root = slot["preference"] if isinstance(slot, dict) and "preference" in slot else slot
        path = normalise_path(path)
        resolved = path
        ok = isinstance(root, dict) and set_path(root, path, value)
        if not ok and isinstance(root, dict):
            for prefix in FALLBACK_PREFIXES:
                if not path.startswith(prefix) and set_path(root, prefix + path, value):
                    ok, resolved = True, prefix + path
                    break
        self.log.append(CompromiseLogEntry(ordinal, user, resolved, copy.deepcopy(value), ok))
        if not ok:
            return ApplyResult(False, "path_not_found", resolved)
        self.counts[user] = self.counts.get(user, 0) + 1
        rebuild = self.is_exhausted(user) and self.compromisable.get(user, False)
        if rebuild:
            self.compromisable[user] = False
        return ApplyResult(True, "", resolved, rebuild)

    def begin_reply(self, user: str, previous: Mapping[str, Any] | None,
                    ordinal: int) -> ReplyGate:
        """Start one speaking event of `user`. `previous` is the last outward message of the
        chat before this reply (None at the start); `ordinal` the event number to log."""
        return ReplyGate(self, user, previous, ordinal)

    def review(self, user: str, text: str, previous: Mapping[str, Any] | None,
               ordinal: int) -> ReplyStep:
        """Judge one reply: pass, commit (marker honoured or absent), or regenerate."""
        text = strip_trailing_pass(text)
        if is_pass(text):
            return ReplyStep("pass")
        scan = scan_marker(text)
        if not scan.present:
            return ReplyStep("commit", text)
        if not scan.parsed:
            return ReplyStep("regenerate", text, reason="malformed_marker")
        assert scan.raw is not None
        visible = strip_marker(text, scan.raw)
        if previous is None or previous.get("role") != AGENT:
            return ReplyStep("regenerate", visible, reason="previous_not_agent")
        mentioned = detect_mention(previous.get("content") or "", self.users + [AGENT])
        if mentioned != user:
            return ReplyStep("regenerate", visible, reason="not_mentioned")
        result = self.apply(user, scan.path, scan.value, ordinal)
        if not result.applied:
            return ReplyStep("regenerate", visible, reason=result.reason)
        return ReplyStep("commit", visible, applied=True, rebuild_prompt=result.rebuild_prompt)

    def force(self, user: str, raw_text: str, ordinal: int, reason: str) -> ReplyStep:
        """The last attempt's commit: the marker of the raw reply (as generated, trailing
        `[pass]` kept) is stripped and, when its value parses, applied without the
        solicitation check (cap and path rules still hold)."""
        scan = scan_marker(raw_text)
        if not scan.present:
            return ReplyStep("commit", raw_text, forced=True, reason=reason)
        assert scan.raw is not None
        visible = strip_marker(raw_text, scan.raw)
        applied = rebuild = False
        if scan.parsed:
            result = self.apply(user, scan.path, scan.value, ordinal)
            applied, rebuild = result.applied, result.rebuild_prompt
        return ReplyStep("commit", visible, applied=applied, rebuild_prompt=rebuild, forced=True,
                         reason=reason)

    def snapshot(self) -> dict[str, Any]:
        """A deep copy of the effective table, for the episode record."""
        return copy.deepcopy(self.effective)


@dataclass
class ReplyGate:
    """One user speaking event: submit replies until the step is "pass" or "commit".

    Up to `MAX_REPLY_ATTEMPTS` replies are reviewed; a reply whose marker cannot be honoured
    asks for regeneration, and the last attempt is committed by `CompromiseTracker.force`."""

    tracker: CompromiseTracker
    user: str
    previous: Mapping[str, Any] | None
    ordinal: int
    max_attempts: int = MAX_REPLY_ATTEMPTS
    attempts: int = 0
    steps: list[ReplyStep] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return bool(self.steps) and self.steps[-1].action != "regenerate"

    def submit(self, raw_text: str) -> ReplyStep:
        if self.done:
            raise RuntimeError(f"reply of {self.user} already settled: {self.steps[-1].action}")
        self.attempts += 1
        step = self.tracker.review(self.user, raw_text, self.previous, self.ordinal)
        if step.action == "regenerate" and self.attempts >= self.max_attempts:
            step = self.tracker.force(self.user, raw_text, self.ordinal, step.reason)
        self.steps.append(step)
        return step
