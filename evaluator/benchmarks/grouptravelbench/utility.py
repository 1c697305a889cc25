"""Group utility (GU) and group fairness (GF) of a plan against the effective preferences.

Each user is scored over six dimensions; strong tiers (must / reject, the budget, the
intensity caps) weigh 2 and weak tiers (prefer / avoid, category and hotel preferences) 1.
Positive preferences score only when something matching is scheduled, negative ones only
cost when something matching is scheduled.

- attractions, per city key of the user's preferences (exact city name), over the
  attraction activities the user joins in blocks of that city, invalid-split ones excluded:
  +2 per must_visit name found as a substring of some attraction's location, -2 per
  reject_visit name found; every other attraction the POI table knows scores +1 when a
  positive keyword is in its name or else its category is positive, and independently -1
  for the negative keywords/categories;
- food, per restaurant the user joins (known to the POI table, not invalid-split): the first
  keyword in its name among must_eat (+2), reject_eat (-2), prefer_eat (+1), avoid_eat (-1);
  with no keyword in the name, its category: must_eat +2 and reject_eat -2 (both may apply),
  and only if neither, prefer_eat +1 or else avoid_eat -1;
- transport, per intercity segment with a mode (everyone rides): must +2, reject -2 (both may
  apply), and only if neither, prefer +1 or else avoid -1;
- hotel, per hotel activity in any block (everyone stays) with a known category: prefer +1,
  else avoid -1;
- intensity, per day: -2 when the user's attractions exceed max_poi_per_day, -2 when the
  minutes of those attractions plus the user's intracity trips exceed max_active_hours;
- budget: -2 once when intercity and hotel costs plus the costs of the food the user joins
  exceed avg_budget.

GU = (sum of user totals - sum of split penalties) / users scored, rounded to 2 decimals.
GF compares the users' totals before split penalties: 100 when all equal, min/max x 100 when
none is negative, 0 when some user is negative and some positive, max/min x 100 when all are
at most 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from .planview import (
    INTERCITY,
    activities,
    activity_key,
    as_map,
    as_seq,
    city_blocks,
    contains,
    cost,
    day_label,
    days,
    duration_minutes,
    has_activities,
    invalid_split_keys,
    joins,
    number,
    segments,
    split_events,
    substring,
)
from .poi import PoiLookup, PoiTable

DIMENSIONS = ("attractions", "food", "transport", "hotel", "intensity", "budget")


class ScoreItem(msgspec.Struct, omit_defaults=True, frozen=True):
    """One scored match: which preference field, what matched, where, the signed points."""

    dimension: str
    field: str
    score: int
    item: Any = None
    city: Any = None
    location: Any = None
    day: Any = None
    actual: Any = None
    limit: Any = None


class UserUtility(msgspec.Struct, frozen=True):
    total: int
    breakdown: dict[str, int]
    items: list[ScoreItem]


class UtilityResult(msgspec.Struct, frozen=True):
    per_user: dict[str, UserUtility]
    split_penalty: int
    split_events: list[dict[str, Any]]
    total_before_penalty: int
    total: int
    num_users: int
    per_user_average: float  # GU, the headline number


class FairnessResult(msgspec.Struct, frozen=True):
    per_user: dict[str, int]
    max_score: int
    min_score: int
    fairness: float  # GF, 0..100


def _attractions(blocks: list, user: str, prefs: Mapping[str, Any], users: Sequence[str],
                 poi: PoiLookup, invalid: set) -> list[ScoreItem]:
    out: list[ScoreItem] = []
    for city, city_pref in as_map(prefs.get("city_specific_preferences", {})).items():
        wanted = as_map(as_map(city_pref).get("attractions", {}))
        must, reject = as_seq(wanted.get("must_visit", [])), as_seq(wanted.get("reject_visit", []))
        cats = as_map(wanted.get("category_pref", {}))
        positive, negative = as_seq(cats.get("positive", [])), as_seq(cats.get("negative", []))
        mine = [a for label, seg in blocks if seg.get("city", "") == city
                for a in activities(seg) if a.get("type") == "attraction"
                and joins(user, a, users) and activity_key(label, a) not in invalid]
        places = [a.get("location", "") for a in mine]
        strong: set[str] = set()
        for field, names, points in (("must_visit", must, 2), ("reject_visit", reject, -2)):
            for name in names:
                hits = [p for p in places if substring(name, p)]
                if hits:
                    out.append(ScoreItem("attractions", field, points, item=name, city=city))
                    strong.update(hits)
        for field, keywords, points in (("category_pref.positive", positive, 1),
                                        ("category_pref.negative", negative, -1)):
            for place in places:
                if not isinstance(place, str) or place in strong:
                    continue
                category = poi.category(place, city)
                if category is None:
                    continue
                word = next((k for k in keywords if substring(k, place)), None)
                if word is None and contains(keywords, category):
                    word = category
                if word is not None:
                    out.append(ScoreItem("attractions", field, points, item=word, city=city,
                                         location=place))
    return out


_FOOD_ORDER = (("must_eat", 2), ("reject_eat", -2), ("prefer_eat", 1), ("avoid_eat", -1))


def _food(blocks: list, user: str, prefs: Mapping[str, Any], users: Sequence[str],
          poi: PoiLookup, invalid: set) -> list[ScoreItem]:
    out: list[ScoreItem] = []
    for city, city_pref in as_map(prefs.get("city_specific_preferences", {})).items():
        wanted = as_map(as_map(city_pref).get("food", {}))
        tiers = {field: as_seq(wanted.get(field, [])) for field, _ in _FOOD_ORDER}
        for label, seg in blocks:
            if seg.get("city", "") != city:
                continue
            for act in activities(seg):
                if act.get("type") != "food" or not joins(user, act, users) or (
                        activity_key(label, act) in invalid):
                    continue
                place = act.get("location", "")
                category = poi.category(place, city) if isinstance(place, str) else None
                if category is None:
                    continue
                named = next(((field, points, word) for field, points in _FOOD_ORDER
                              for word in tiers[field] if substring(word, place)), None)
                if named is not None:
                    field, points, word = named
                    out.append(ScoreItem("food", field, points, item=word, city=city,
                                         location=place))
                    continue
                strong = [(f, p) for f, p in _FOOD_ORDER[:2] if contains(tiers[f], category)]
                weak = [(f, p) for f, p in _FOOD_ORDER[2:] if contains(tiers[f], category)]
                for field, points in strong or weak[:1]:
                    out.append(ScoreItem("food", field, points, item=category, city=city,
                                         location=place))
    return out


def _transport(plan: Mapping[str, Any], prefs: Mapping[str, Any]) -> list[ScoreItem]:
    wanted = as_map(as_map(prefs.get("global_constraints", {})).get("transport", {}))
    tiers = {t: as_seq(wanted.get(t, [])) for t in ("must", "reject", "prefer", "avoid")}
    out: list[ScoreItem] = []
    for day in days(plan):
        for seg in segments(day):
            mode = seg.get("transport_mode", "") if seg.get("type") == INTERCITY else None
            if not mode:
                continue
            hits = [(t, p) for t, p in (("must", 2), ("reject", -2)) if contains(tiers[t], mode)]
            if not hits:
                hits = [(t, p) for t, p in (("prefer", 1), ("avoid", -1))
                        if contains(tiers[t], mode)][:1]
            for tier, points in hits:
                out.append(ScoreItem("transport", f"transport.{tier}", points, item=mode,
                                     day=day_label(day)))
    return out


def _hotel(plan: Mapping[str, Any], prefs: Mapping[str, Any], poi: PoiLookup) -> list[ScoreItem]:
    wanted = as_map(as_map(prefs.get("global_constraints", {})).get("hotel_preference", {}))
    prefer, avoid = as_seq(wanted.get("prefer", [])), as_seq(wanted.get("avoid", []))
    out: list[ScoreItem] = []
    if not prefer and not avoid:
        return out
    for day in days(plan):
        for seg in segments(day):
            if not has_activities(seg):
                continue
            for act in activities(seg):
                place = act.get("location", "")
                if act.get("type") != "hotel" or not isinstance(place, str):
                    continue
                category = poi.category(place, seg.get("city", ""))
                if not category:
                    continue
                if contains(prefer, category):
                    out.append(ScoreItem("hotel", "hotel_preference.prefer", 1, item=category,
                                         location=place, day=day_label(day)))
                elif contains(avoid, category):
                    out.append(ScoreItem("hotel", "hotel_preference.avoid", -1, item=category,
                                         location=place, day=day_label(day)))
    return out


def _intensity(plan: Mapping[str, Any], user: str, prefs: Mapping[str, Any],
               users: Sequence[str]) -> list[ScoreItem]:
    limits = as_map(as_map(prefs.get("global_constraints", {})).get("intensity", {}))
    max_poi, max_hours = limits.get("max_poi_per_day", 0), limits.get("max_active_hours", 0)
    out: list[ScoreItem] = []
    if not max_poi and not max_hours:
        return out
    max_poi, max_hours = number(max_poi), number(max_hours)
    for day in days(plan):
        count = minutes = 0
        for seg in segments(day):
            if not has_activities(seg):
                continue
            for act in activities(seg):
                if not joins(user, act, users):
                    continue
                if act.get("type", "") == "attraction":
                    count += 1
                    minutes += duration_minutes(act)
                elif act.get("type", "") == "intracity_transport":
                    minutes += duration_minutes(act)
        if max_poi is not None and max_poi > 0 and count > max_poi:
            out.append(ScoreItem("intensity", "intensity.max_poi_per_day", -2,
                                 day=day_label(day), actual=count, limit=max_poi))
        if max_hours is not None and max_hours > 0 and minutes / 60.0 > max_hours:
            out.append(ScoreItem("intensity", "intensity.max_active_hours", -2,
                                 day=day_label(day), actual=round(minutes / 60.0, 2),
                                 limit=max_hours))
    return out


def _budget(plan: Mapping[str, Any], user: str, prefs: Mapping[str, Any],
            users: Sequence[str]) -> list[ScoreItem]:
    budget = as_map(prefs.get("global_constraints", {})).get("avg_budget", 0)
    if not budget or number(budget) is None:
        return []
    total = 0.0
    for day in days(plan):
        for seg in segments(day):
            if seg.get("type") == INTERCITY:
                total += cost(seg.get("avg_cost", 0))
            elif has_activities(seg):
                for act in activities(seg):
                    kind = act.get("type", "")
                    if kind == "hotel" or (kind == "food" and joins(user, act, users)):
                        total += cost(act.get("avg_cost", 0))
    if total > budget:
        return [ScoreItem("budget", "avg_budget", -2, actual=round(total, 2), limit=budget)]
    return []


def score_user(plan: Mapping[str, Any], user: str, prefs: Any, users: Sequence[str],
               poi: PoiLookup, invalid: set) -> UserUtility:
    """One user's utility items (no split penalty) against a bare preference object."""
    prefs = as_map(prefs)
    blocks = list(city_blocks(plan))
    parts = {
        "attractions": _attractions(blocks, user, prefs, users, poi, invalid),
        "food": _food(blocks, user, prefs, users, poi, invalid),
        "transport": _transport(plan, prefs),
        "hotel": _hotel(plan, prefs, poi),
        "intensity": _intensity(plan, user, prefs, users),
        "budget": _budget(plan, user, prefs, users),
    }
    breakdown = {name: sum(i.score for i in items) for name, items in parts.items()}
    return UserUtility(sum(breakdown.values()), breakdown,
                       [i for name in DIMENSIONS for i in parts[name]])


def group_utility(plan: Mapping[str, Any], effective: Mapping[str, Any], users: Sequence[str],
                  poi: PoiLookup | None = None) -> UtilityResult:
    """GU. Users whose entry has neither `preference` nor `global_constraints` are skipped."""
    poi = poi if poi is not None else PoiTable.empty()
    invalid = invalid_split_keys(plan, users)
    per_user: dict[str, UserUtility] = {}
    for user in users:
        entry = as_map(effective.get(user, {}))
        if "preference" not in entry and "global_constraints" not in entry:
            continue
        prefs = entry.get("preference", entry)
        per_user[user] = score_user(plan, user, prefs, users, poi, invalid)
    events = split_events(plan)
    penalty = sum(e["penalty"] for e in events)
    before = sum(u.total for u in per_user.values())
    num = len(per_user) or 1
    return UtilityResult(per_user, penalty, events, before, before - penalty, num,
                         round((before - penalty) / num, 2))


def fairness_of(scores: Sequence[int | float]) -> float:
    """GF from the users' utilities (before split penalties), rounded to 2 decimals."""
    if not scores:
        return 100.0
    high, low = max(scores), min(scores)
    if high == low:
        value = 100.0
    elif high > 0 and low >= 0:
        value = low / high * 100.0
    elif high > 0:
        value = 0.0
    else:
        value = high / low * 100.0 if low != 0 else 0.0
    return round(value, 2) + 0.0


def group_fairness(plan: Mapping[str, Any], effective: Mapping[str, Any], users: Sequence[str],
                   poi: PoiLookup | None = None) -> FairnessResult:
    """GF. Every listed user is scored; a user without preferences scores what an empty
    table earns (0)."""
    poi = poi if poi is not None else PoiTable.empty()
    invalid = invalid_split_keys(plan, users)
    per_user: dict[str, int] = {}
    for user in users:
        entry = as_map(effective.get(user, {}))
        prefs = entry.get("preference", entry)
        per_user[user] = score_user(plan, user, prefs, users, poi, invalid).total
    values = list(per_user.values())
    return FairnessResult(per_user, max(values, default=0), min(values, default=0),
                          fairness_of(values))
