"""Reading a plan the way the metrics read it: days, segments, activities, participants,
times, overlaps, subgroup splits.

The metrics take the plan as parsed JSON and read it leniently, as the reference does: a
missing key has a default, a segment is a *city block* when it has an `activities` key, and
participants that are missing, empty or exactly ["All"] mean everyone. Where the reference
would raise on a malformed value (a day or activity that is not an object, a cost that is
not a number, a name that is not a string), it is read here as absent or as not matching;
docs/grouptravelbench.md lists these cases.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

INTERCITY = "intercity_transport"
SPLITTABLE = frozenset({"attraction", "food", "rest", "intracity_transport"})


def as_map(value: Any) -> Mapping[str, Any]:
    """`value` when it is an object, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def as_seq(value: Any) -> Any:
    """A preference list as the reference iterates it: lists and strings as they are (a
    string then matches character by character, as a bare-word compromise value does),
    objects as their keys, anything else (None, numbers) as empty."""
    if isinstance(value, list | tuple | str):
        return value
    if isinstance(value, Mapping):
        return list(value)
    return []


def contains(container: Any, item: Any) -> bool:
    """`item in container`, False where Python would raise (e.g. a number in a string)."""
    try:
        return item in container
    except TypeError:
        return False


def substring(needle: Any, haystack: Any) -> bool:
    """A preference keyword found in a place name (both strings)."""
    return isinstance(needle, str) and isinstance(haystack, str) and needle in haystack


def hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def number(value: Any) -> int | float | None:
    """A numeric preference value (bools count, as in Python), else None."""
    return value if isinstance(value, int | float) else None


def cost(value: Any) -> float:
    """An `avg_cost` as the budget check adds it: falsy or unreadable costs add nothing."""
    if not value:
        return 0.0
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def parse_time(value: Any) -> datetime | None:
    """HH:MM (as `%H:%M` parses it), else None ("unknown")."""
    return _parse_clock(value) if isinstance(value, str) else None


@lru_cache(maxsize=4096)
def _parse_clock(value: str) -> datetime | None:
    # memoised: the pairwise overlap checks parse the same few times over and over
    try:
        return datetime.strptime(value, "%H:%M")
    except ValueError:
        return None


def duration_minutes(act: Mapping[str, Any]) -> int:
    start, end = parse_time(act.get("start_time", "")), parse_time(act.get("end_time", ""))
    if start is None or end is None or end <= start:
        return 0
    return int((end - start).total_seconds() / 60)


def overlaps(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Strict overlap of two activities' times; a range that does not parse, or ends at or
    before it starts, overlaps nothing."""
    a0, a1 = parse_time(a.get("start_time", "")), parse_time(a.get("end_time", ""))
    b0, b1 = parse_time(b.get("start_time", "")), parse_time(b.get("end_time", ""))
    if a0 is None or a1 is None or b0 is None or b1 is None:
        return False
    if a1 <= a0 or b1 <= b0:
        return False
    return a0 < b1 and b0 < a1


def days(plan: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    value = plan.get("days", [])
    return [d for d in value if isinstance(d, Mapping)] if isinstance(value, list) else []


def segments(day: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    value = day.get("city_segments", [])
    return [s for s in value if isinstance(s, Mapping)] if isinstance(value, list) else []


def activities(segment: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    value = segment.get("activities", [])
    return [a for a in value if isinstance(a, Mapping)] if isinstance(value, list) else []


def day_label(day: Mapping[str, Any]) -> Any:
    return hashable(day.get("day", 0))


def is_intercity(segment: Mapping[str, Any]) -> bool:
    return segment.get("type") == INTERCITY


def has_activities(segment: Mapping[str, Any]) -> bool:
    return "activities" in segment


def city_blocks(plan: Mapping[str, Any]) -> Iterator[tuple[Any, Mapping[str, Any]]]:
    """(day label, segment) for every segment with an `activities` key (intercity segments
    excluded), the blocks whose activities attractions and food are scored from."""
    for day in days(plan):
        for seg in segments(day):
            if not is_intercity(seg) and has_activities(seg):
                yield day_label(day), seg


def participants(act: Mapping[str, Any], users: Sequence[str]) -> Any:
    """Who joins an activity: everyone when the key is missing, empty or exactly ["All"],
    else the value as given (a list of names; a string then matches by substring)."""
    value = act.get("participants", [])
    if not value or value == ["All"]:
        return list(users)
    if isinstance(value, list | tuple | str | Mapping):
        return value
    return list(users)


def joins(user: str, act: Mapping[str, Any], users: Sequence[str]) -> bool:
    return contains(participants(act, users), user)


def place_of(act: Mapping[str, Any]) -> Any:
    """An activity's place label: its `location` key if present, else `to`, else ""."""
    return act["location"] if "location" in act else act.get("to", "")


def activity_key(day: Any, act: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    """How an activity excluded by an invalid split is identified: (day, place, start)."""
    return day, hashable(place_of(act)), hashable(act.get("start_time", ""))


def invalid_split_keys(plan: Mapping[str, Any], users: Sequence[str]) -> set[tuple[Any, ...]]:
    """Activities of an invalid split: within a block, two non-hotel activities one user
    joins overlap in time; both are excluded (for everyone) from attraction and food
    scoring."""
    invalid: set[tuple[Any, ...]] = set()
    for day in days(plan):
        label = day_label(day)
        for seg in segments(day):
            if not has_activities(seg):
                continue
            acts = [a for a in activities(seg) if a.get("type", "") != "hotel"]
            for user in users:
                mine = [a for a in acts if joins(user, a, users)]
                for i, a in enumerate(mine):
                    for b in mine[i + 1:]:
                        if overlaps(a, b):
                            invalid.add(activity_key(label, a))
                            invalid.add(activity_key(label, b))
    return invalid


def _team(act: Mapping[str, Any]) -> frozenset[Any]:
    value = act.get("participants", [])
    try:
        return frozenset(hashable(p) for p in value)
    except TypeError:
        return frozenset({hashable(value)})


def split_events(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Valid subgroup splits: within a block, explicitly assigned activities (attraction,
    food, rest, intracity transport with participants other than [] / ["All"]) are grouped
    by transitive time overlap; a group of 2+ whose participant sets are pairwise disjoint
    is a split into K teams and costs K - 1. Groups whose teams share someone cost nothing
    here (that is an invalid split, see `invalid_split_keys`)."""
    events: list[dict[str, Any]] = []
    for day in days(plan):
        label = day_label(day)
        for seg in segments(day):
            if not has_activities(seg):
                continue
            acts = [a for a in activities(seg) if a.get("type") in SPLITTABLE
                    and a.get("participants", []) and a.get("participants") != ["All"]]
            seen: set[int] = set()
            for i in range(len(acts)):
                if i in seen:
                    continue
                group, changed = [acts[i]], True
                seen.add(i)
                while changed:
                    changed = False
                    for j, act in enumerate(acts):
                        if j not in seen and any(overlaps(m, act) for m in group):
                            group.append(act)
                            seen.add(j)
                            changed = True
                if len(group) < 2:
                    continue
                teams = list(dict.fromkeys(_team(a) for a in group))
                if len(teams) < 2:
                    continue
                if any(teams[x] & teams[y] for x in range(len(teams))
                       for y in range(x + 1, len(teams))):
                    continue
                events.append({
                    "day": label, "teams": len(teams), "penalty": len(teams) - 1,
                    "activities": [{"place": place_of(a),
                                    "time": f"{a.get('start_time', '')}-{a.get('end_time', '')}",
                                    "participants": a.get("participants")} for a in group],
                })
    return events
