"""Hierarchical preference tables: the typed model, the tiers, dotted field paths.

A task gives each group member `{role, preference, compromisable}`; `preference` holds
`global_constraints` (budget, transport tiers, intensity caps, hotel categories) and
`city_specific_preferences` (per destination city: attraction and food tiers).

Three tables exist during an episode (see `compromise`): the original (task data), the
agent's inferred table, and the effective table (original + accepted compromises). Scoring
works on the effective table as plain JSON values, because an accepted compromise may write
any JSON value at any path and the reference scores whatever is there; `parse_group` gives
the typed view of well-formed tables (all task data) and names the first bad field otherwise.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import msgspec

Number = int | float


class Tier(StrEnum):
    """The four preference tiers. Strong tiers weigh 2, weak tiers 1; positive tiers earn
    points only when satisfied, negative tiers cost points only when violated."""

    MUST = "must"
    REJECT = "reject"
    PREFER = "prefer"
    AVOID = "avoid"

    @property
    def weight(self) -> int:
        """Signed utility contribution of one match: must +2, reject -2, prefer +1, avoid -1."""
        return {"must": 2, "reject": -2, "prefer": 1, "avoid": -1}[self.value]


class _Strict(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    pass


class TransportTiers(_Strict):
    must: list[str] = []
    prefer: list[str] = []
    avoid: list[str] = []
    reject: list[str] = []


class Intensity(_Strict):
    max_poi_per_day: Number = 0
    max_active_hours: Number = 0


class HotelPreference(_Strict):
    prefer: list[str] = []
    avoid: list[str] = []


class GlobalConstraints(_Strict):
    avg_budget: Number = 0
    transport: TransportTiers = TransportTiers()
    intensity: Intensity = Intensity()
    hotel_preference: HotelPreference = HotelPreference()


class CategoryPref(_Strict):
    positive: list[str] = []
    negative: list[str] = []


class AttractionPrefs(_Strict):
    must_visit: list[str] = []
    reject_visit: list[str] = []
    category_pref: CategoryPref = CategoryPref()


class FoodPrefs(_Strict):
    must_eat: list[str] = []
    prefer_eat: list[str] = []
    avoid_eat: list[str] = []
    reject_eat: list[str] = []


class CityPrefs(_Strict):
    attractions: AttractionPrefs = AttractionPrefs()
    food: FoodPrefs = FoodPrefs()


class Preference(_Strict):
    global_constraints: GlobalConstraints = GlobalConstraints()
    city_specific_preferences: dict[str, CityPrefs] = {}


class GroupMember(msgspec.Struct, frozen=True):
    """One member as the task gives it. Unknown wrapper keys (e.g. `trace_id`) are kept out."""

    preference: Preference
    role: str = ""
    compromisable: bool = False


class PreferenceTableError(ValueError):
    """A preference table does not have the documented shape; names the user and the field."""


def parse_group(user_preferences: Mapping[str, Any]) -> dict[str, GroupMember]:
    """The typed view of a task's `user_preferences` ({user: {role, preference,
    compromisable}}), in the task's member order. Raises PreferenceTableError naming the user
    and the offending field."""
    if not isinstance(user_preferences, Mapping) or not user_preferences:
        raise PreferenceTableError("user_preferences: expected a non-empty object of members")
    group: dict[str, GroupMember] = {}
    for user, entry in user_preferences.items():
        try:
            group[user] = msgspec.convert(entry, GroupMember)
        except msgspec.ValidationError as exc:
            raise PreferenceTableError(f"user_preferences.{user}: {exc}") from None
    return group


def parse_preference(value: Any, where: str = "preference") -> Preference:
    """The typed view of one bare preference object (e.g. an effective table entry)."""
    try:
        return msgspec.convert(value, Preference)
    except msgspec.ValidationError as exc:
        raise PreferenceTableError(f"{where}: {exc}") from None


def preference_of(entry: Any) -> Any:
    """The preference object inside a member entry: `entry["preference"]` when the entry is
    wrapped, else the entry itself (every scorer accepts both forms)."""
    if isinstance(entry, Mapping) and "preference" in entry:
        return entry["preference"]
    return entry


@dataclass(frozen=True)
class FieldSpec:
    """One compared leaf of a preference object.

    `path` is relative to the preference object with `{city}` standing for a city key;
    `kind` is "list" or "scalar"; `tier` is the list's tier (None for scalars: budget and
    intensity caps are strong constraints, only violations cost 2)."""

    path: str
    kind: str
    tier: Tier | None = None

    def at(self, city: str | None = None) -> str:
        """The concrete dotted path (`{city}` replaced)."""
        return self.path.replace("{city}", city) if city is not None else self.path

    def segments(self, city: str | None = None) -> list[str]:
        """The path's segments with `{city}` replaced (safe for any city name)."""
        return [city if seg == "{city}" and city is not None else seg
                for seg in self.path.split(".")]


GLOBAL_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("global_constraints.avg_budget", "scalar"),
    FieldSpec("global_constraints.transport.must", "list", Tier.MUST),
    FieldSpec("global_constraints.transport.prefer", "list", Tier.PREFER),
    FieldSpec("global_constraints.transport.avoid", "list", Tier.AVOID),
    FieldSpec("global_constraints.transport.reject", "list", Tier.REJECT),
    FieldSpec("global_constraints.intensity.max_poi_per_day", "scalar"),
    FieldSpec("global_constraints.intensity.max_active_hours", "scalar"),
    FieldSpec("global_constraints.hotel_preference.prefer", "list", Tier.PREFER),
    FieldSpec("global_constraints.hotel_preference.avoid", "list", Tier.AVOID),
)
"""Global fields in the order preference completeness compares them."""

CITY_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("city_specific_preferences.{city}.attractions.must_visit", "list", Tier.MUST),
    FieldSpec("city_specific_preferences.{city}.attractions.reject_visit", "list", Tier.REJECT),
    FieldSpec("city_specific_preferences.{city}.attractions.category_pref.positive", "list",
              Tier.PREFER),
    FieldSpec("city_specific_preferences.{city}.attractions.category_pref.negative", "list",
              Tier.AVOID),
    FieldSpec("city_specific_preferences.{city}.food.must_eat", "list", Tier.MUST),
    FieldSpec("city_specific_preferences.{city}.food.prefer_eat", "list", Tier.PREFER),
    FieldSpec("city_specific_preferences.{city}.food.avoid_eat", "list", Tier.AVOID),
    FieldSpec("city_specific_preferences.{city}.food.reject_eat", "list", Tier.REJECT),
)
"""Per-city fields in the order preference completeness compares them."""


def split_path(path: str) -> list[str]:
    return path.split(".")


def get_path(obj: Any, path: str | list[str], default: Any = None) -> Any:
    """The value at a dotted path (or list of segments) of nested objects, or `default` when
    a segment is missing."""
    cursor = obj
    for segment in split_path(path) if isinstance(path, str) else path:
        if not isinstance(cursor, Mapping) or segment not in cursor:
            return default
        cursor = cursor[segment]
    return cursor


def set_path(obj: dict[str, Any], path: str, value: Any) -> bool:
    """Write `value` at a dotted path. Every segment but the last must already exist as a key
    of an object; the last is overwritten or created (as the reference does, so a misspelt
    leaf adds a key). Returns False, changing nothing, when an intermediate is missing."""
    segments = split_path(path)
    cursor: Any = obj
    for segment in segments[:-1]:
        if not isinstance(cursor, dict) or segment not in cursor:
            return False
        cursor = cursor[segment]
    if not isinstance(cursor, dict):
        return False
    cursor[segments[-1]] = value
    return True


def leaf_paths(preference: Any) -> Iterator[tuple[str, Any]]:
    """Every (dotted path, value) leaf of a preference object, objects descended, lists and
    scalars as leaves, in document order."""

    def walk(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
        if isinstance(value, Mapping) and value:
            for key, child in value.items():
                yield from walk(f"{prefix}.{key}" if prefix else str(key), child)
        elif prefix:
            yield prefix, value

    yield from walk("", preference)


def compared_fields(preference: Any) -> Iterator[tuple[FieldSpec, str, Any]]:
    """The compared leaves of one preference object: (spec, concrete path, value or None),
    global fields first, then each city of the object in its order."""
    for spec in GLOBAL_FIELDS:
        yield spec, spec.path, get_path(preference, spec.segments())
    cities = get_path(preference, "city_specific_preferences")
    if isinstance(cities, Mapping):
        for city in cities:
            for spec in CITY_FIELDS:
                yield spec, spec.at(str(city)), get_path(preference, spec.segments(str(city)))


def effective_copy(user_preferences: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of the original table, the starting point of the effective table."""
    return copy.deepcopy(dict(user_preferences))
