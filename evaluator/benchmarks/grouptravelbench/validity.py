"""Plan validity (PV): nine feasibility checks; a plan is valid when none reports an issue.

1. missing_intercity_transport: within a day a block's city must equal the current city
   (the last block's city or the last intercity segment's to_city); across days, a day
   starting in another city than the previous day ended in must begin with an intercity
   segment. Names match when equal or equal after dropping one trailing 市/区/县/自治州/地区.
2. missing_hotel / hotel_not_last_activity: every day but the last (plans of 2+ days) must
   end its last activity block with a hotel.
3. invalid_time_format / invalid_time_range: intercity times must parse (overnight allowed);
   non-hotel activities must parse and end after they start. Hotels are not checked.
4. time_overlap: per block and user, every overlapping pair of the user's non-hotel
   activities is one issue.
5. outside_opening_hours: an attraction on a dated day, in a block with a city, visited when
   the POI table says it is closed or outside every opening window (unknown: skipped).
6. missing_intracity_transport / intracity_transport_origin_mismatch: each user's position
   is followed through the day (reset daily, not per block; an intercity segment puts
   everyone at an arrival hub, from where the first move must be intracity transport).
7. timeline_order_violation: per user, along the day's segments and activities in order,
   each item must not start before the previous item ended (hotels are checked but do not
   move the clock; items ending before they start do not move it either).
8. missing_avg_cost: intercity segments, food and hotels need a non-null avg_cost (0 is ok).
9. invalid_participants: a non-hotel activity's participants, when present and not null,
   must be a non-empty list of member names or "All" (one issue per unknown name).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import msgspec

from .planview import (
    INTERCITY,
    activities,
    contains,
    day_label,
    days,
    has_activities,
    hashable,
    overlaps,
    parse_time,
    participants,
    place_of,
    segments,
)
from .poi import PoiLookup, PoiTable, within_opening_hours

CHECKS = (
    "missing_intercity_transport", "missing_hotel", "hotel_not_last_activity",
    "invalid_time_format", "invalid_time_range", "time_overlap", "outside_opening_hours",
    "missing_intracity_transport", "intracity_transport_origin_mismatch",
    "timeline_order_violation", "missing_avg_cost", "invalid_participants",
)
"""Issue types, in the order the checks run."""

_CITY_SUFFIXES = ("市", "区", "县", "自治州", "地区")
_ARRIVAL_HUB = object()


class ValidityIssue(msgspec.Struct, omit_defaults=True, frozen=True):
    type: str
    day: Any
    message: str
    user: str | None = None
    detail: dict[str, Any] = {}


class ValidityResult(msgspec.Struct, frozen=True):
    valid: bool
    total_issues: int
    issue_counts: dict[str, int]
    issues: list[ValidityIssue]


def _bare_city(city: Any) -> Any:
    if not isinstance(city, str) or not city:
        return city
    for suffix in _CITY_SUFFIXES:
        if city.endswith(suffix) and len(city) > len(suffix):
            return city[:-len(suffix)]
    return city


def same_city(a: Any, b: Any) -> bool:
    return a == b or _bare_city(a) == _bare_city(b)


def _check_intercity(plan: Mapping[str, Any], out: list[ValidityIssue]) -> None:
    all_days = days(plan)
    for day in all_days:
        current: Any = None
        for index, seg in enumerate(segments(day)):
            if seg.get("type") == INTERCITY:
                current = seg.get("to_city", "")
            elif "city" in seg:
                city = seg.get("city", "")
                if current is not None and not same_city(current, city):
                    out.append(ValidityIssue("missing_intercity_transport", day_label(day),
                                             f"moves from {current} to {city} without an "
                                             f"intercity segment",
                                             detail={"segment_index": index}))
                current = city

    def last_city(segs: list) -> Any:
        for seg in reversed(segs):
            if "city" in seg:
                return seg["city"]
            if seg.get("type") == INTERCITY:
                return seg.get("to_city")
        return None

    def first_city(segs: list) -> Any:
        for seg in segs:
            if seg.get("type") == INTERCITY:
                return seg.get("to_city")
            if "city" in seg:
                return seg["city"]
        return None

    for prev, day in itertools.pairwise(all_days):
        before, after = last_city(segments(prev)), first_city(segments(day))
        if before and after and not same_city(before, after):
            segs = segments(day)
            if not segs or segs[0].get("type") != INTERCITY:
                out.append(ValidityIssue("missing_intercity_transport", day_label(day),
                                         f"starts in {after} after the previous day ended in "
                                         f"{before}, without an intercity segment first"))


def _check_hotels(plan: Mapping[str, Any], out: list[ValidityIssue]) -> None:
    all_days = days(plan)
    if len(all_days) <= 1:
        return
    for day in all_days[:-1]:
        segs = segments(day)
        block = next((s for s in reversed(segs) if has_activities(s)
                      and s.get("type") != INTERCITY), None)
        acts = activities(block) if block is not None else []
        if not acts:
            why = "no activity block" if block is None else "its last block has no activity"
            out.append(ValidityIssue("missing_hotel", day_label(day), f"no hotel: {why}"))
            continue
        if acts[-1].get("type") == "hotel":
            continue
        if any(a.get("type") == "hotel" for s in segs if has_activities(s)
               for a in activities(s)):
            out.append(ValidityIssue("hotel_not_last_activity", day_label(day),
                                     "the hotel is not the last activity of the day's last "
                                     "block"))
        else:
            out.append(ValidityIssue("missing_hotel", day_label(day), "no hotel for the night"))


def _check_times(plan: Mapping[str, Any], out: list[ValidityIssue]) -> None:
    for day in days(plan):
        for seg in segments(day):
            if seg.get("type") == INTERCITY:
                items = [(seg, INTERCITY, True)]
            elif has_activities(seg):
                items = [(a, a.get("type", ""), False) for a in activities(seg)
                         if a.get("type", "") != "hotel"]
            else:
                continue
            for item, kind, overnight_ok in items:
                start, end = item.get("start_time", ""), item.get("end_time", "")
                t0, t1 = parse_time(start), parse_time(end)
                where = {"activity_type": kind, "place": place_of(item),
                         "start_time": start, "end_time": end}
                if t0 is None or t1 is None:
                    out.append(ValidityIssue("invalid_time_format", day_label(day),
                                             f"{kind} {place_of(item)!r}: times {start!r}-"
                                             f"{end!r} are not HH:MM", detail=where))
                elif t1 <= t0 and not overnight_ok:
                    out.append(ValidityIssue("invalid_time_range", day_label(day),
                                             f"{kind} {place_of(item)!r}: ends at {end}, not "
                                             f"after its start {start}", detail=where))


def _check_overlap(plan: Mapping[str, Any], users: Sequence[str],
                   out: list[ValidityIssue]) -> None:
    for day in days(plan):
        for seg in segments(day):
            if not has_activities(seg):
                continue
            acts = [a for a in activities(seg) if a.get("type", "") != "hotel"]
            for user in users:
                mine = [a for a in acts if contains(participants(a, users), user)]
                for i, a in enumerate(mine):
                    for b in mine[i + 1:]:
                        if overlaps(a, b):
                            out.append(ValidityIssue(
                                "time_overlap", day_label(day),
                                f"{user} is in {place_of(a)!r} ({a.get('start_time', '')}-"
                                f"{a.get('end_time', '')}) and {place_of(b)!r} "
                                f"({b.get('start_time', '')}-{b.get('end_time', '')}) at once",
                                user=user))


def _check_opening_hours(plan: Mapping[str, Any], poi: PoiLookup,
                         out: list[ValidityIssue]) -> None:
    for day in days(plan):
        date = day.get("date", "")
        if not date:
            continue
        for seg in segments(day):
            city = seg.get("city", "")
            if not has_activities(seg) or not city:
                continue
            for act in activities(seg):
                place, start, end = (act.get("location", ""), act.get("start_time", ""),
                                     act.get("end_time", ""))
                if act.get("type") != "attraction" or not (place and start and end):
                    continue
                if not all(isinstance(v, str) for v in (place, start, end, city)):
                    continue
                if within_opening_hours(poi, place, city, date, start, end) is not False:
                    continue
                windows = poi.opening_windows(place, city, date) or []
                hours = ", ".join(f"{w.get('open', '')}-{w.get('close', '')}" for w in windows)
                why = f"open {hours}" if windows else "closed that day"
                out.append(ValidityIssue("outside_opening_hours", day_label(day),
                                         f"{place!r} visited {start}-{end} on {date}: {why}",
                                         detail={"city": city, "opening_hours": hours}))


def _check_continuity(plan: Mapping[str, Any], users: Sequence[str],
                      out: list[ValidityIssue]) -> None:
    for day in days(plan):
        where: dict[Any, Any] = {user: None for user in users}
        for seg in segments(day):
            if seg.get("type") == INTERCITY:
                where.update((user, _ARRIVAL_HUB) for user in users)
                continue
            if not has_activities(seg):
                continue
            for act in activities(seg):
                kind = act.get("type", "")
                start = act.get("location") if kind in ("attraction", "food", "hotel") else (
                    act.get("from") if kind == "intracity_transport" else None)
                end = act.get("location") if kind in ("attraction", "food", "hotel") else (
                    act.get("to") if kind == "intracity_transport" else None)
                people = participants(act, users)
                for user in people if isinstance(people, list | tuple | str) else list(people):
                    user = hashable(user)
                    here = where.get(user)
                    if kind == "rest":
                        continue
                    if here is _ARRIVAL_HUB:
                        if kind != "intracity_transport":
                            out.append(ValidityIssue(
                                "missing_intracity_transport", day_label(day),
                                f"{user} goes from the arrival hub to {start!r} without "
                                f"intracity transport", user=str(user)))
                        if end is not None:
                            where[user] = end
                        continue
                    moved = here is not None and start is not None and here != start
                    if moved and kind == "intracity_transport":
                        out.append(ValidityIssue(
                            "intracity_transport_origin_mismatch", day_label(day),
                            f"{user} is at {here!r} but the trip starts at {start!r}",
                            user=str(user)))
                    elif moved:
                        out.append(ValidityIssue(
                            "missing_intracity_transport", day_label(day),
                            f"{user} goes from {here!r} to {start!r} without intracity "
                            f"transport", user=str(user)))
                    if (end if kind == "hotel" else end is not None):
                        where[user] = end


def _check_timeline(plan: Mapping[str, Any], users: Sequence[str],
                    out: list[ValidityIssue]) -> None:
    for day in days(plan):
        items: list[tuple[Any, str, Any, Any, str]] = []
        for seg in segments(day):
            if seg.get("type") == INTERCITY:
                items.append((list(users), INTERCITY, seg.get("start_time", ""),
                              seg.get("end_time", ""),
                              f"intercity {seg.get('from_city', '')}->{seg.get('to_city', '')}"))
            elif has_activities(seg):
                for act in activities(seg):
                    kind = act.get("type", "")
                    items.append((participants(act, users), kind, act.get("start_time", ""),
                                  act.get("end_time", ""), f"{kind} {place_of(act)}"))
        for user in users:
            clock: datetime | None = None
            last = ""
            for people, kind, start, end, label in items:
                if not contains(people, user):
                    continue
                t0, t1 = parse_time(start), parse_time(end)
                if clock is not None and t0 is not None and t0 < clock:
                    out.append(ValidityIssue(
                        "timeline_order_violation", day_label(day),
                        f"{user}: {label!r} starts at {start}, before {last!r} ends at "
                        f"{clock.strftime('%H:%M')}", user=user))
                if kind != "hotel" and t1 is not None and (t0 is None or t1 >= t0):
                    clock, last = t1, label


def _check_costs(plan: Mapping[str, Any], out: list[ValidityIssue]) -> None:
    for day in days(plan):
        for seg in segments(day):
            if seg.get("type") == INTERCITY:
                missing = [(INTERCITY, f"{seg.get('from_city', '')}->{seg.get('to_city', '')}")
                           ] if seg.get("avg_cost") is None else []
            elif has_activities(seg):
                missing = [(a.get("type"), a.get("location", "")) for a in activities(seg)
                           if a.get("type", "") in ("food", "hotel") and a.get("avg_cost") is None]
            else:
                continue
            for kind, place in missing:
                out.append(ValidityIssue("missing_avg_cost", day_label(day),
                                         f"{kind} {place!r} has no avg_cost"))


def _check_participants(plan: Mapping[str, Any], users: Sequence[str],
                        out: list[ValidityIssue]) -> None:
    valid = set(users) | {"All"}
    for day in days(plan):
        for seg in segments(day):
            if not has_activities(seg):
                continue
            for act in activities(seg):
                people = act.get("participants")
                if act.get("type", "") == "hotel" or people is None:
                    continue
                label = f"{act.get('type', '')} {place_of(act)!r}"
                if not isinstance(people, list):
                    bad = [f"{label}: participants is not a list"]
                elif not people:
                    bad = [f"{label}: participants is an empty list"]
                else:
                    bad = [f"{label}: unknown participant {name!r}" for name in people
                           if not contains(valid, name)]
                for message in bad:
                    out.append(ValidityIssue("invalid_participants", day_label(day), message))


def plan_validity(plan: Mapping[str, Any], users: Sequence[str],
                  poi: PoiLookup | None = None) -> ValidityResult:
    """Run the nine checks; PV counts a trial as valid when `valid` is True."""
    poi = poi if poi is not None else PoiTable.empty()
    issues: list[ValidityIssue] = []
    _check_intercity(plan, issues)
    _check_hotels(plan, issues)
    _check_times(plan, issues)
    _check_overlap(plan, users, issues)
    _check_opening_hours(plan, poi, issues)
    _check_continuity(plan, users, issues)
    _check_timeline(plan, users, issues)
    _check_costs(plan, issues)
    _check_participants(plan, users, issues)
    counts: dict[str, int] = {}
    for issue in issues:
        counts[issue.type] = counts.get(issue.type, 0) + 1
    return ValidityResult(not issues, len(issues), counts, issues)
