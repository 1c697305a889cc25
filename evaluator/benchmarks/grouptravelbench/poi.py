"""The POI table the metrics consult: a place's category and its opening hours.

Utility scores attractions, restaurants and hotels by the category the benchmark's POI table
gives them (a place the table does not know scores nothing), and plan validity checks
attraction visits against opening hours. The reference reads both from one JSON file,
`{city: [{name, poi_type, custom_category, opening_hours}, ...]}` (`poi2category/
all_poi_by_city.json` in its data archive); `PoiTable` reads the same layout from a path or
a mapping. Without the file, `PoiTable.empty()` knows no place: category-based points and
opening-hour issues then never occur (name-based matches still score).

Lookup of a name in a city: the exact name, else the entry whose name contains the query
with the highest len(query)/len(name) (the first such entry on ties). City names are matched
exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import msgspec

HOTEL_CATEGORIES = frozenset({
    "舒适型", "经济型", "高档型", "民宿", "商务酒店", "豪华型", "快捷酒店", "旅馆", "客栈",
    "度假酒店", "电竞酒店", "公寓式酒店", "主题酒店",
})
"""Hotel categories preferences use; any other hotel category reads as 商务酒店."""
EXCLUDED_CATEGORIES = {"attractions": frozenset({"旅游景点", "滑雪", "游客中心"}),
                       "food": frozenset({"食堂", "米粉"})}
FALLBACK_CATEGORY = {"attractions": "公园", "food": "中餐", "hotels": "商务酒店"}
"""What a blank or excluded category reads as, per poi_type."""


class PoiLookup(Protocol):
    """What the metrics need from a POI table."""

    def category(self, name: str, city: str) -> str | None: ...

    def opening_windows(self, name: str, city: str, date: str) -> list[dict[str, str]] | None:
        ...


class PoiTable:
    """Categories and opening hours by (name, city)."""

    def __init__(self, by_city: Mapping[str, Any]) -> None:
        self._index: dict[str, dict[str, Mapping[str, Any]]] = {}
        for city, pois in by_city.items():
            names: dict[str, Mapping[str, Any]] = {}
            for poi in pois or ():
                name = poi.get("name", "") if isinstance(poi, Mapping) else ""
                if name:
                    names[name] = poi
            self._index[city] = names

    @classmethod
    def empty(cls) -> PoiTable:
        return cls({})

    @classmethod
    def from_file(cls, path: Path | str) -> PoiTable:
        """Read the reference's all_poi_by_city.json; a clear error names the file."""
        path = Path(path)
        try:
            data = msgspec.json.decode(path.read_bytes())
        except FileNotFoundError:
            raise FileNotFoundError(f"POI table not found: {path}") from None
        except msgspec.DecodeError as exc:
            raise ValueError(f"POI table {path} is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise TypeError(f"POI table {path}: expected an object of city -> POI list")
        return cls(data)

    def __len__(self) -> int:
        return sum(len(names) for names in self._index.values())

    def match(self, name: str, city: str) -> Mapping[str, Any] | None:
        """The POI entry a plan's place name refers to, or None."""
        names = self._index.get(city) if isinstance(city, str) else None
        if not names or not isinstance(name, str):
            return None
        if name in names:
            return names[name]
        best, best_ratio = None, 0.0
        for full_name, poi in names.items():
            if name in full_name:
                ratio = len(name) / len(full_name)
                if ratio > best_ratio:
                    best, best_ratio = poi, ratio
        return best

    def category(self, name: str, city: str) -> str | None:
        """The category the metrics use for a place, or None when the table lacks it."""
        poi = self.match(name, city)
        if poi is None:
            return None
        category = poi.get("custom_category", "")
        kind = poi.get("poi_type", "unknown")
        if not category:
            return FALLBACK_CATEGORY.get(kind)
        if kind == "hotels":
            return category if category in HOTEL_CATEGORIES else FALLBACK_CATEGORY["hotels"]
        if category in EXCLUDED_CATEGORIES.get(kind, ()):
            return FALLBACK_CATEGORY.get(kind, category)
        return category

    def opening_windows(self, name: str, city: str, date: str) -> list[dict[str, str]] | None:
        """The place's opening windows on `date` (YYYY-MM-DD): a list of {open, close}; []
        when closed that weekday; None when unknown (no data, always open, no rule applies,
        or a bad date)."""
        poi = self.match(name, city)
        hours = poi.get("opening_hours") if poi is not None else None
        if not isinstance(hours, Mapping) or hours.get("always_open", False):
            return None
        rules = hours.get("rules") or []
        try:
            day = datetime.strptime(date, "%Y-%m-%d")
        except (TypeError, ValueError):
            return None
        weekday, month_day = day.isoweekday(), day.strftime("%m-%d")
        for rule in rules:
            span = rule.get("date_range")
            if span:
                start, end = span.get("start", "01-01"), span.get("end", "12-31")
                inside = (start <= month_day <= end) if start <= end else (
                    month_day >= start or month_day <= end)
                if not inside:
                    continue
            if weekday not in rule.get("weekdays", [1, 2, 3, 4, 5, 6, 7]):
                return []
            windows = rule.get("time_windows", [])
            if windows:
                return windows
        return None


def within_opening_hours(table: PoiLookup, name: str, city: str, date: str, start: str,
                         end: str) -> bool | None:
    """True when [start, end] lies inside one opening window, False when closed or outside,
    None when unknown. Times compare as strings, as the reference compares them."""
    windows = table.opening_windows(name, city, date)
    if windows is None:
        return None
    for window in windows:
        opens, closes = window.get("open", ""), window.get("close", "")
        if opens and closes and start >= opens and end <= closes:
            return True
    return False
