"""The constraint language the synthesiser draws (paper 3.2, B.2): all 37 rubric types; bounds
as thresholds either way, "around", ranges and excluded bands; hotel cost at its five levels
and transport cost at its three; times on departure and arrival; distances from the centre
and from the hotel; 80+ sentences. Every draw is a valid rubric, its tighter version keeps a
subset of the feasible items, and the impossible one leaves none usable."""

from __future__ import annotations

import random
from collections import Counter

import msgspec
import pytest

from bench_data.tripbench import TripMeta, TripStay
from evaluator.benchmarks.tripbench.evaluation import rubrics
from evaluator.benchmarks.tripbench.evaluation.rubric_base import Bound
from evaluator.benchmarks.tripbench.synthesis import constraints as K
from evaluator.benchmarks.tripbench.synthesis import wording
from evaluator.benchmarks.tripbench.synthesis.bands import shape_of
from evaluator.benchmarks.tripbench.synthesis.meta import to_trip
from evaluator.benchmarks.tripbench.synthesis.solvability import Checker
from evaluator.benchmarks.tripbench.world import World

TRIP = to_trip(TripMeta(origin="Shanghai", stays=[TripStay("Beijing", 2), TripStay("Nanjing", 2)],
                        start_date="2025-10-02", end_date="2025-10-06", number_of_people=2))
DRAWS = 40


@pytest.fixture(scope="module")
def drawn(world: World) -> dict[str, list]:
    cache: dict = {}
    out: dict[str, list] = {}
    for kind in K.TYPES:
        for i in range(DRAWS):
            rng = random.Random(f"{kind}/{i}")
            city = rng.choice([None, "Beijing", "Nanjing"]) if K.city_scoped(kind) else None
            scope = K.Scope(world, TRIP, city, cache)
            e = K.first(kind, rng, scope)
            if e is not None:
                out.setdefault(kind, []).append((e, scope, rng))
    return out


def test_every_rubric_type_is_drawn(drawn):
    assert set(K.TYPES) == set(rubrics.RUBRICS) and len(K.TYPES) == 37
    assert set(drawn) == set(K.TYPES), set(K.TYPES) - set(drawn)
    assert {K.FAMILY[k] for k in K.TYPES} == set(K.FAMILIES)


def test_the_forms_of_the_papers_language(drawn):
    shapes = Counter()
    for items in drawn.values():
        for e, _, _ in items:
            if hasattr(e, "bound"):
                shapes[shape_of(e.bound, bool(getattr(e, "exclude", False)))] += 1
    assert {"min", "max", "range", "around", "exclude", "free", "exact"} <= set(shapes)
    levels = {e.level for e, _, _ in drawn["COST"]}
    assert levels == {"room_night", "person_night", "night_total", "person_total",
                      "trip_total"}
    assert {e.level for e, _, _ in drawn["COST_TRANSPORT"]} == {"one_way", "round_trip",
                                                                "total"}
    times = drawn["TIME_DEPART"] + drawn["TIME_RETURN"]
    assert {e.target for e, _, _ in times} == {"depart", "arrive"}
    assert any(e.period for e, _, _ in times) and any(e.after for e, _, _ in times)
    assert any(e.before for e, _, _ in times)
    assert {e.reference for e, _, _ in drawn["DISTANCE"]} == {"center", "hotel"}
    assert any(e.except_last_night for e, _, _ in drawn["LOCATION"])
    assert {e.exclude for e, _, _ in drawn["HOTEL_TYPE"]} == {False, True}
    assert {e.exclude for e, _, _ in drawn["PLATFORM"]} == {False, True}
    assert {e.aspect for e, _, _ in drawn["ASPECT_RATING"]} >= {"all", "service"}


def test_sentences(drawn, world):
    assert wording.EXPRESSIONS >= 80
    seen = set()
    for kind, items in drawn.items():
        for variant in range(3):
            for e, _, _ in items[:8]:
                text = K.say(kind, e, world, variant)
                assert "{" not in text and text[0].isupper() and text.endswith("."), text
                assert text != "." and "None" not in text, (kind, text)
                seen.add(text)
        assert K.vague(kind).endswith(".")
    assert len(seen) > 200


def test_tighter_versions_and_impossible_ones(drawn, world):
    checker = Checker(world, 2.0)
    tightened = impossible = 0
    for kind, items in drawn.items():
        for e, scope, rng in items[:6]:
            assert rubrics.decode_spec(msgspec.to_builtins(e)) == e
            nxt = K.tighten(kind, rng, scope, e)
            if nxt is not None and rubrics.definition(e).mode in ("all",):
                first = set(rubrics.generate(e, world, TRIP).feasible)
                assert set(rubrics.generate(nxt, world, TRIP).feasible) <= first, (kind, e, nxt)
                tightened += 1
            bad = K.impossible(kind, scope, e)
            if bad is not None:
                assert not checker.check(TRIP, [bad]).ok, (kind, bad)
                impossible += 1
    assert tightened > 40 and impossible > 40


def test_bound_shapes_by_hand():
    assert shape_of(Bound(min=3)) == "min" and shape_of(Bound(max=3)) == "max"
    assert shape_of(Bound(min=1, max=3)) == "range" and shape_of(Bound(min=3, max=3)) == "exact"
    assert shape_of(Bound(around=80)) == "around" and shape_of(Bound(max=0)) == "free"
    assert shape_of(Bound(max=2), exclude=True) == "exclude"
