"""How a user says a constraint (paper 3.2: "over 80 diverse natural language expressions"):
for each rubric type and each form it takes (a threshold, a range, "around", an excluded
band, a cost level, a time target, ...) one or more sentences, our own wording. A chain keeps
one wording index along its versions. `vague(kind, e)` is the AIS form, said before the
explicit one is owed.

`EXPRESSIONS` counts the sentences (tests/docs: at least 80).
"""

from __future__ import annotations

from typing import Any

from ..periods import phrase
from ..world.names import CANCEL_POLICIES
from .bands import shape_of


def _num(v: float | None) -> str:
    if v is None:
        return ""
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _where(e: Any) -> str:
    return f" in {e.city}" if getattr(e, "city", None) else ""


T = dict[str, tuple[str, ...]]

# banded types: shape -> sentences ({v}, {lo}, {hi}, {tol}, {where})
BANDED: dict[str, T] = {
    "HEAT_SCORE": {
        "min": (("Every attraction{where} should have a popularity score of at least {v} out "
                "of 10."), ("Please pick attractions{where} rated {v} or more for popularity "
                "(out of 10).")),
        "range": (("Attractions{where} with a popularity score between {lo} and {hi} (out of "
                  "10), not the very busiest ones."),),
        "exclude": (("Leave out the little-known attractions{where}: nothing with a "
                    "popularity score of {v} or less."),
                    "No attraction{where} whose popularity is at or under {v} out of 10."),
    },
    "COMMENT_SCORE": {
        "min": ("Only attractions{where} whose visitors rate them {v} or higher (out of 5).",
                "Every sight{where} should have a visitor score of {v} or more."),
        "range": ("Attractions{where} rated between {lo} and {hi} by visitors.",),
        "exclude": ("Skip the poorly rated sights{where}: nothing rated {v} or below.",),
    },
    "COMMENT_COUNT": {
        "min": ("Attractions{where} with at least {v} reviews, please.",
                "I only want attractions{where} that have {v} or more reviews."),
        "max": (("Let's find quieter places{where}: attractions with no more than {v} "
                "reviews."),),
        "range": ("Attractions{where} with between {lo} and {hi} reviews.",),
    },
    "PRICE_ATTRACTION": {
        "max": ("No attraction{where} whose cheapest ticket costs more than {v} yuan.",
                ("The cheapest entrance ticket of any attraction{where} should not exceed {v} "
                "yuan.")),
        "range": (("Attraction tickets{where} between {lo} and {hi} yuan (free ones are "
                  "out)."),),
        "free": ("Only free attractions{where}, please.",
                 "We'd like to visit only attractions{where} with free admission."),
    },
    "SIGHT_LEVEL": {
        "min": (("At least one attraction{where} should be a {v}A-level scenic spot or "
                "better."), "Include at least one {v}A (or higher) scenic area{where}."),
        "exact": (("At least one of the attractions{where} should be exactly a {v}A-level "
                  "scenic spot."),),
    },
    "STAR": {
        "min": ("Hotels{where} must be {v}-star or above.",
                "We need hotels{where} with at least {v} stars."),
        "range": ("Hotels{where} of {lo} to {hi} stars.",),
        "exclude": ("No hotel{where} of {v} stars or fewer.",),
    },
    "PRICE": {
        "max": ("Restaurants{where} should cost no more than {v} yuan per person.",
                "Keep meals{where} at or below {v} yuan a head."),
        "min": ("We'd like proper restaurants{where}: at least {v} yuan per person.",),
        "around": ("Meals{where} around {v} yuan per person (give or take {tol}%).",
                   "Something like {v} yuan a head for meals{where}, within {tol}%."),
        "range": ("Restaurants{where} at {lo} to {hi} yuan per person.",),
    },
    "RATING": {
        "min": ("Restaurants{where} need a rating of at least {v}.",
                "Every restaurant{where} should be rated {v} or better."),
        "exclude": ("No restaurant{where} rated {v} or lower.",),
    },
    "REVIEW_COUNT_HOTEL": {
        "min": ("Hotels{where} with at least {v} guest reviews.",
                "Only hotels{where} that {v} or more guests have reviewed."),
    },
    "GOOD_RATE": {
        "min": ("Hotels{where} with at least {v}% good reviews.",
                "The hotel's share of positive reviews{where} should be {v}% or more."),
    },
    "REVIEW_COUNT": {
        "min": ("Restaurants{where} with at least {v} reviews.",
                "Only restaurants{where} that have {v} or more reviews."),
    },
    "SUBRATING_FOOD": {
        "min": (("The food rating of every restaurant{where} should be at least {v} out of "
                "10."), "Restaurants{where} whose food scores {v}/10 or more."),
    },
    "SUBRATING_ENVIRONMENT": {
        "min": ("Restaurants{where} with an ambience rating of {v} out of 10 or better.",
                ("A pleasant setting: every restaurant{where} rated {v}/10 or more for "
                "environment.")),
    },
    "SUBRATING_SERVICE": {
        "min": ("Restaurants{where} with a service rating of at least {v} out of 10.",
                "Good service, please: restaurants{where} rated {v}/10 or more for it."),
    },
}

COST_LEVELS = {
    "room_night": "a room{where} per night",
    "person_night": "the hotel{where} per person and night",
    "night_total": "all our rooms{where} together per night",
    "person_total": "the hotel{where} per person for the whole stay",
    "trip_total": "the whole hotel bill{where}",
}
COST: T = {
    "max": ("The cost of {what} should stay under {v} yuan.",
            "Keep {what} at or below {v} yuan."),
    "min": ("Somewhere comfortable: at least {v} yuan for {what}.",),
    "around": ("About {v} yuan for {what} (give or take {tol}%).",),
    "range": ("Between {lo} and {hi} yuan for {what}.",),
}
TRANSPORT_LEVELS = {"one_way": "each one-way ticket per person",
                    "round_trip": "the outbound and return tickets together per person",
                    "total": "all our train and plane tickets together"}
TRANSPORT: tuple[str, ...] = ("{What} must stay under {v} yuan.",
                              "Keep {what} below {v} yuan.")
TIMING: dict[str, T] = {
    "TIME_DEPART": {
        "period": ("The outbound trip should {verb} {when}.",
                   "We want to {verb} {when} on the way out."),
        "after": ("On the way out, {verb} no earlier than {after}.",),
        "before": ("On the way out, {verb} by {before} at the latest.",),
        "window": ("The outbound journey should {verb} between {after} and {before}.",),
    },
    "TIME_RETURN": {
        "period": ("The trip home should {verb} {when}.",
                   "For the way back, please {verb} {when}."),
        "after": ("On the way home, {verb} no earlier than {after}.",),
        "before": ("On the way home, {verb} by {before} at the latest.",),
        "window": ("The return journey should {verb} between {after} and {before}.",),
    },
}
LISTED: dict[str, T] = {
    "INCLUDE_CATEGORIES": {"": (("The plan{where} has to include these kinds of attractions: "
                                "{values}."), ("Make sure we visit each of these kinds of "
                                "places{where}: {values}."))},
    "EXCLUDE_CATEGORIES": {"": ("No {values} attractions{where}, please.",
                                ("We're not interested in anything of this kind{where}: "
                                "{values}."))},
    "INCLUDE_ATTRACTIONS": {"": ("We definitely want to visit {values}.",
                                 "{values} must be on the itinerary.")},
    "EXCLUDE_ATTRACTIONS": {"": ("Please leave {values} out.", ("Please don't include "
                                 "{values}."))},
    "INCLUDE_CUISINE": {"": ("We want to have {values}{where} at least once.",
                             ("Please plan at least one meal of each of these{where}: "
                             "{values}."))},
    "EXCLUDE_CUISINE": {"": ("No {values} restaurants{where}, please.",
                             "Avoid restaurants{where} serving {values}.")},
    "CATEGORY_PRIORITY": {"": (("For sights{where}, {values} in that order of preference: "
                               "mostly the first kind, and never more of a later kind than of "
                               "an earlier one."),)},
}
OTHER: dict[str, T] = {
    "DISTANCE": {
        "center": ("Attractions{where} within {v} km of the city centre.",
                   "Keep every attraction{where} no more than {v} km from the centre."),
        "hotel": ("Every attraction{where} within {v} km of that night's hotel.",
                  ("We don't want to go further than {v} km from our hotel{where} for "
                  "sightseeing.")),
    },
    "LOCATION": {
        "all": ("Hotels{where} within {v} km of the centre.",
                "The hotel{where} should be no further than {v} km from the city centre."),
        "except_last": (("Hotels{where} within {v} km of the centre, except the last night "
                        "in each city, which can be near the station or airport."),),
    },
    "HOTEL_TYPE": {"include": ("Hotels{where} should be of the {types} kind.",
                               "We'd like {types} hotels{where}."),
                   "exclude": ("No {types} hotels{where}.",)},
    "PET_FRIENDLY": {"": ("We're bringing our dog, so hotels{where} must allow pets.",
                          ("Our pet travels with us, so the hotels{where} have to accept "
                          "pets."))},
    "ASPECT_RATING": {"all": (("Hotels{where} rated at least {v} out of 10 for rooms, "
                              "environment and service alike."),),
                      "one": ("Hotels{where} with a {aspect} rating of {v}/10 or more.",
                              ("The hotel's {aspect} rating{where} should be at least {v} out "
                              "of 10."))},
    "CANCEL_POLICY": {"": ("Rooms{where} must allow {policy}.",
                           "We need flexibility: {policy} for the rooms{where}.")},
    "BREAKFAST_NUMBER": {"min": ("Breakfast for at least {v} of us each morning{where}.",
                                 ("The rooms{where} should include {v} or more breakfasts a "
                                 "day.")),
                         "exact": (("Exactly {v} breakfasts a day included with the "
                                   "rooms{where}."),)},
    "HAS_WINDOW": {"": ("Every room{where} must have a window.",
                        "No windowless rooms{where}, please.")},
    "OPEN": {"reservable": ("Only restaurants{where} that take reservations.",
                            ("We want to book tables ahead, so restaurants{where} must take "
                            "reservations.")),
             "no_mandatory": (("No restaurants{where} that insist on a reservation in "
                              "advance."), ("Skip places{where} where booking ahead is "
                              "compulsory."))},
    "PLATFORM": {"include": ("Book the train and plane tickets on {platforms} only.",
                             "All tickets should be bought through {platforms}."),
                 "exclude": ("Don't book any ticket through {platforms}.",)},
    "ONTIME": {"rate": ("Only flights with an on-time rate of at least {rate}%.",
                        "Flights must be punctual: {rate}% on time or better."),
               "delay": ("No flight whose average delay exceeds {delay} minutes.",),
               "both": (("Flights at least {rate}% on time, with an average delay of at most "
                        "{delay} minutes."),)},
    "AIRLINE": {"": ("No flights with {airlines}.", "Avoid {airlines} flights.")},
}

VAGUE: dict[str, str] = {
    "HEAT_SCORE": "We'd rather see the well-known, popular places.",
    "COMMENT_SCORE": "The sights should be ones people actually enjoyed.",
    "COMMENT_COUNT": "I care about how many people have reviewed the sights.",
    "PRICE_ATTRACTION": "Let's not spend much on entrance tickets.",
    "SIGHT_LEVEL": "I'd like to see one of the officially top-rated landmarks.",
    "STAR": "Somewhere reasonably nice to sleep.",
    "PRICE": "Meals should fit our budget.",
    "RATING": "Only good restaurants, please.",
    "REVIEW_COUNT_HOTEL": "A hotel plenty of guests have stayed at and reviewed.",
    "GOOD_RATE": "A hotel guests are happy with.",
    "REVIEW_COUNT": "Restaurants that plenty of people have tried.",
    "SUBRATING_FOOD": "The food has to be really good.",
    "SUBRATING_ENVIRONMENT": "I like restaurants with a nice atmosphere.",
    "SUBRATING_SERVICE": "Good service matters to me when we eat out.",
    "COST": "We're watching the hotel budget.",
    "COST_TRANSPORT": "Keep the travel fares modest.",
    "TIME_DEPART": "I have some plans on the departure day.",
    "TIME_RETURN": "The way back has to fit my schedule.",
    "INCLUDE_CATEGORIES": "There are some kinds of places I'd love to see.",
    "EXCLUDE_CATEGORIES": "Some kinds of sights don't interest us.",
    "INCLUDE_ATTRACTIONS": "There's a famous sight I don't want to miss.",
    "EXCLUDE_ATTRACTIONS": "There's a place we've already been to.",
    "INCLUDE_CUISINE": "We'd like to try some particular cuisines.",
    "EXCLUDE_CUISINE": "There's food we'd rather avoid.",
    "CATEGORY_PRIORITY": "Some kinds of sights matter more to me than others.",
    "DISTANCE": "We don't want to travel far for sightseeing.",
    "LOCATION": "We'd like to stay somewhere central.",
    "HOTEL_TYPE": "A hotel that suits our style.",
    "PET_FRIENDLY": "There's a furry family member coming too.",
    "ASPECT_RATING": "The hotel should be good in every respect.",
    "CANCEL_POLICY": "Our plans might change, so I need some flexibility with the rooms.",
    "BREAKFAST_NUMBER": "We'd like breakfast sorted at the hotel.",
    "HAS_WINDOW": "I get claustrophobic in some hotel rooms.",
    "OPEN": "Booking tables is a thing for us.",
    "PLATFORM": "I have a preference for where the tickets are booked.",
    "ONTIME": "I can't afford delays on the way.",
    "AIRLINE": "There's an airline I won't fly with.",
}


def _pick(sentences: tuple[str, ...], variant: int) -> str:
    return sentences[variant % len(sentences)]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _band_fields(e: Any) -> dict[str, str]:
    b = e.bound
    value = b.around if b.around is not None else (b.min if b.min is not None else b.max)
    return {"v": _num(value), "lo": _num(b.min), "hi": _num(b.max),
            "tol": _num(round(100 * b.tolerance)), "where": _where(e)}


def say(kind: str, e: Any, world: Any = None, variant: int = 0) -> str:
    """The explicit sentence of constraint `e` of type `kind` (`variant`: which wording)."""
    where = _where(e)
    if kind in BANDED:
        shape = shape_of(e.bound, bool(getattr(e, "exclude", False)))
        return _pick(BANDED[kind][shape], variant).format(**_band_fields(e))
    if kind == "COST":
        shape = shape_of(e.bound)
        what = COST_LEVELS[e.level].format(where=where)
        return _cap(_pick(COST[shape], variant).format(what=what, **_band_fields(e)))
    if kind == "COST_TRANSPORT":
        what = TRANSPORT_LEVELS[e.level]
        return _pick(TRANSPORT, variant).format(what=what, What=_cap(what), v=_num(e.max))
    if kind in TIMING:
        verb = "leave" if e.target == "depart" else "arrive"
        shape = "period" if e.period else ("window" if e.after and e.before
                                            else "after" if e.after else "before")
        when = phrase(e.period) if e.period else ""
        return _pick(TIMING[kind][shape], variant).format(
            verb=verb, when=when, after=e.after or "", before=e.before or "")
    if kind in LISTED:
        items = list(getattr(e, "ids", None) or getattr(e, "values", []))
        if kind.endswith("ATTRACTIONS") and world is not None:
            items = [(world.attraction(i) or {}).get("name", i) for i in items]
        return _cap(_pick(LISTED[kind][""], variant).format(values=", ".join(items),
                                                              where=where))
    table = OTHER[kind]
    if kind == "DISTANCE":
        text = _pick(table[e.reference], variant).format(v=_num(e.max_km), where=where)
    elif kind == "LOCATION":
        text = _pick(table["except_last" if e.except_last_night else "all"], variant).format(
            v=_num(e.max_km), where=where)
    elif kind == "HOTEL_TYPE":
        text = _pick(table["exclude" if e.exclude else "include"], variant).format(
            types=" or ".join(e.types), where=where)
    elif kind == "ASPECT_RATING":
        text = _pick(table["all" if e.aspect == "all" else "one"], variant).format(
            v=_num(e.min), aspect=e.aspect, where=where)
    elif kind == "CANCEL_POLICY":
        policy = CANCEL_POLICIES.get(e.at_least, (e.at_least, 0))[0]
        policy = policy if e.at_least == "non_refundable" else f"{policy} or better"
        text = _pick(table[""], variant).format(policy=policy, where=where)
    elif kind == "BREAKFAST_NUMBER":
        shape = "exact" if e.bound.min == e.bound.max else "min"
        text = _pick(table[shape], variant).format(v=_num(e.bound.min), where=where)
    elif kind == "OPEN":
        text = _pick(table[e.rule], variant).format(where=where)
    elif kind == "PLATFORM":
        text = _pick(table["exclude" if e.exclude else "include"], variant).format(
            platforms=" or ".join(e.platforms))
    elif kind == "ONTIME":
        shape = "both" if e.min_rate is not None and e.max_delay is not None else (
            "rate" if e.min_rate is not None else "delay")
        text = _pick(table[shape], variant).format(rate=_num(e.min_rate),
                                                   delay=_num(e.max_delay))
    elif kind == "AIRLINE":
        text = _pick(table[""], variant).format(airlines=", ".join(e.excluded))
    else:
        text = _pick(table[""], variant).format(where=where)
    return _cap(text)


def vague(kind: str, e: Any = None) -> str:
    return VAGUE[kind]


def _count() -> int:
    n = sum(len(v) for t in BANDED.values() for v in t.values())
    n += sum(len(v) for v in COST.values()) * len(COST_LEVELS) + len(TRANSPORT) * len(
        TRANSPORT_LEVELS)
    n += sum(len(v) for t in TIMING.values() for v in t.values()) * 2   # depart / arrive
    n += sum(len(v) for t in (*LISTED.values(), *OTHER.values()) for v in t.values())
    return n


EXPRESSIONS = _count()
"""Distinct sentences (a form with its cost level or time target counted once each)."""
