"""SYNTHETIC tool caches of realistic size and shape, for benchmarks and tests only.

Writes the release layout (`<tool>_cache.json`, normalised key -> response string) for the
TravelBench tools, plus a `SYNTHETIC` marker file; stores imported from it are flagged
`synthetic` in their header. Arguments follow each tool's schema (cities, coordinates, dates,
enums); responses are JSON text of 0.5 to 8 KB (log-uniform) built from random place/flight
records. Nothing here is real data. The tool mix follows TravelBench's Figure 10 in shape
(POI search and routing dominate), not in exact numbers.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

from cache_store.keys import normalize_call

TOOL_WEIGHTS = {
    "map_search_places": 0.30, "map_compute_routes": 0.22, "web_search": 0.12,
    "map_search_along_route": 0.07, "map_search_central_places": 0.05,
    "map_search_ranking_list": 0.06, "travel_search_flights": 0.05,
    "travel_search_trains": 0.05, "weather_forecast_days": 0.05,
    "weather_current_conditions": 0.03,
}
CITIES = ["北京市", "上海市", "广州市", "深圳市", "杭州市", "成都市", "重庆市", "西安市", "南京市",
          "武汉市", "苏州市", "天津市", "长沙市", "青岛市", "厦门市", "昆明市", "大连市", "三亚市"]
DISTRICTS = ["朝阳区", "海淀区", "浦东新区", "西湖区", "天河区", "南山区", "锦江区", "雁塔区"]
WORDS = ["火锅", "咖啡馆", "加油站", "酒店", "博物馆", "公园", "烤鸭", "商场", "充电桩", "亲子乐园",
         "书店", "夜市", "温泉", "automobile service", "Starbucks", "KFC", "高铁站", "景区"]
TIMES = [f"2025-{m:02d}-{d:02d} {h:02d}:00" for m in (9, 10, 11, 12) for d in (1, 8, 15, 22)
         for h in (8, 10, 14, 19)]


def _coord(rng: random.Random) -> str:
    return f"{rng.uniform(20, 45):.{rng.choice((4, 5, 6))}f},{rng.uniform(100, 125):.{rng.choice((4, 5, 6))}f}"


def _value(name: str, spec: dict, rng: random.Random, tool: str, time: str) -> Any:
    if "enum" in spec:
        return rng.choice(spec["enum"])
    t = spec.get("type")
    if t == "array":
        item = spec.get("items", {})
        if "enum" in item:
            return rng.sample(item["enum"], rng.randint(1, 2))
        return [_coord(rng) for _ in range(rng.randint(2, 3))]
    if t == "number":
        ranges = {"days": (0, 7), "radius": (500, 20000), "min_rating": (3, 5), "limit": (5, 20),
                  "price_min": (0, 100), "price_max": (100, 800), "max_lists": (1, 5),
                  "max_items": (3, 10), "buffer_radius": (300, 3000)}
        lo, hi = ranges.get(name, (1, 10))
        return rng.randint(lo, hi) if rng.random() < 0.8 else float(rng.randint(lo, hi))
    if t == "boolean":
        return rng.random() < 0.5
    if name in ("origin", "destination", "center") and tool.startswith("map_"):
        return _coord(rng)
    if name in ("departure_time", "arrival_time"):
        return time[:10] + f"T{rng.randint(6, 22):02d}:00:00"
    if name == "date":
        return time[:8] + f"{int(time[8:10]) + rng.randint(0, 6):02d}"
    if name in ("origin", "destination", "location", "region"):
        return rng.choice(CITIES) + (rng.choice(DISTRICTS) if rng.random() < 0.3 else "")
    return f"{rng.choice(CITIES)}{rng.choice(WORDS)}" + (f" {rng.randint(1, 999)}" if rng.random() < .7 else "")


def synth_args(fn: dict, rng: random.Random, time: str) -> dict[str, Any]:
    params = fn["parameters"]
    props, required = params.get("properties", {}), set(params.get("required", []))
    args = {}
    for name, spec in props.items():
        if name in required or rng.random() < 0.35:
            args[name] = _value(name, spec, rng, fn["name"], time)
    if "departure_time" in args and "arrival_time" in args:
        del args["arrival_time"]
    return args


def _record(rng: random.Random, i: int) -> dict[str, Any]:
    return {"place_id": f"B0{rng.getrandbits(40):010X}", "name": f"{rng.choice(CITIES)}{rng.choice(WORDS)}{i}号店",
            "address": f"{rng.choice(DISTRICTS)}{rng.randint(1, 300)}号", "location": _coord(rng),
            "rating": round(rng.uniform(3, 5), 1), "cost": rng.randint(20, 600),
            "opentime": "10:00-22:00", "tags": rng.sample(WORDS, 3)}


def synth_response(rng: random.Random) -> str:
    target = int(math.exp(rng.uniform(math.log(500), math.log(8000))))
    parts: list[str] = []
    size = 40
    while size < target:
        parts.append(json.dumps(_record(rng, len(parts) + 1), ensure_ascii=False))
        size += len(parts[-1].encode()) + 2
    body = ", ".join(parts)
    return f'{{"status": "ok", "count": {len(parts)}, "results": [{body}]}}'


def generate(out_dir: str | Path, tool_schemas: list[dict], n_entries: int = 250_000,
             seed: int = 0) -> dict[str, int]:
    """Write a synthetic release-layout cache of about `n_entries`; returns entries per tool.

    A directory that already holds `*_cache.json` files without the SYNTHETIC marker (a real
    release cache) is refused (ValueError): the synthetic files would replace real data."""
    out = Path(out_dir)
    if n_entries < 1:
        raise ValueError(f"--entries must be >= 1, got {n_entries}")
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out}: not a directory")
    real = [p.name for p in out.glob("*_cache.json")] if out.is_dir() else []
    if real and not (out / "SYNTHETIC").exists():
        raise ValueError(f"{out}: holds {len(real)} *_cache.json files and no SYNTHETIC marker "
                         "(a real cache?); refusing to overwrite it, name an empty directory")
    out.mkdir(parents=True, exist_ok=True)
    (out / "SYNTHETIC").write_text("Synthetic cache generated by cache_store.synth; not real data.\n")
    rng = random.Random(seed)
    fns = {t["function"]["name"]: t["function"] for t in tool_schemas}
    weights = {n: w for n, w in TOOL_WEIGHTS.items() if n in fns} or {n: 1.0 for n in fns}
    total_w = sum(weights.values())
    counts: dict[str, int] = {}
    for name, w in weights.items():
        n = max(1, round(n_entries * w / total_w))
        entries: dict[str, str] = {}
        while len(entries) < n:
            time = rng.choice(TIMES)
            entries[normalize_call(synth_args(fns[name], rng, time), time)] = synth_response(rng)
        tmp = out / f".{name}_cache.json.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(entries, f, ensure_ascii=False)
        tmp.replace(out / f"{name}_cache.json")
        counts[name] = n
    return counts
