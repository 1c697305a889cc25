"""Canned judge answers for one trajectory of two windows: what the reference reader must do
with each (shared by the reference-free unit tests and the optional parity test).

Each case: (name, answers per window, expected) with expected either ("score", reward,
{rubric index: met}) or ("rerun",), and the number of judge calls the case costs. `n` is the
number of rubrics; answers are built for it.
"""

from __future__ import annotations

import json
from typing import Any


def item(i: int, met: Any = True, why: Any = "[2] shown", **extra: Any) -> dict[str, Any]:
    out = {"rubric_idx": f"rubric_{i}", "rubric": "restated", "justification": why,
           "meetExpectation": met}
    out.update(extra)
    return out


def all_items(n: int, met: Any = True) -> list[dict[str, Any]]:
    return [item(i, met) for i in range(n)]


def cases(n: int) -> list[tuple[str, list[str], tuple[Any, ...], int]]:
    """(name, answers, expected, judge calls) for a trajectory of two windows."""
    everything = json.dumps(all_items(n))
    none_met = {i: 0.0 for i in range(n)}
    all_met = {i: 1.0 for i in range(n)}
    first_met = {**none_met, 0: 1.0}
    no_ids = json.dumps([{"meetExpectation": True, "justification": "ok"} for _ in range(n)])
    return [
        # the cases
        ("prose", ["All rubrics are satisfied.", "[]"], ("rerun",), 1),
        ("object", [json.dumps(item(0)), "[]"], ("rerun",), 1),
        ("items without a rubric id are ignored", [no_ids, no_ids], ("score", 0.0, none_met), 2),
        ("empty lists keep the states, one call each", ["[]", "[]"], ("score", 0.0, none_met),
         2),
        # our own
        ("every rubric met at once", [everything, "[]"], ("score", 1.0, all_met), 2),
        ("a fenced list after prose, trailing comma",
         ["My evaluation:\n```json\n" + everything[:-1] + ",]\n```\nThat is all.", "[]"],
         ("score", 1.0, all_met), 2),
        ("Python literals", [everything.replace("true", "True"), "[]"],
         ("score", 1.0, all_met), 2),
        ("statuses as yes/no strings", [json.dumps([item(i, "yes") for i in range(n)]),
                                         json.dumps([item(0, "no")])],
         ("score", 0.0, {**all_met, 0: 0.0}), 2),
        ("a met rubric overturned later", [everything, json.dumps([item(0, False)])],
         ("score", 0.0, {**all_met, 0: 0.0}), 2),
        ("a null status fails at the end", [json.dumps([item(0, None)]), "[]"], ("rerun",), 2),
        ("a numeric justification fails at the end", [json.dumps([item(0, True, 7)]), "[]"],
         ("rerun",), 2),
        ("a status 'maybe' fails at the end", [json.dumps([item(0, "maybe")]), "[]"],
         ("rerun",), 2),
        ("a list of strings", ['["rubric_0 met"]', "[]"], ("rerun",), 1),
        ("unknown or numeric ids are ignored",
         [json.dumps([{**item(0), "rubric_idx": 0}, {**item(1), "rubric_idx": "rubric_99"},
                      item(0)]), "[]"], ("score", 0.0 if n > 1 else 1.0, first_met), 2),
        ("a list as the id", [json.dumps([{**item(0), "rubric_idx": ["rubric_0"]}]), "[]"],
         ("rerun",), 1),
        ("missing fields keep the status", [json.dumps([{"rubric_idx": "rubric_0"}]), "[]"],
         ("score", 0.0, none_met), 2),
        ("an answer cut off inside a string",
         [everything, json.dumps([item(0, False, "[9] the order was cancel")])[:-12]],
         ("score", 1.0, all_met), 2),
        ("the same list twice: the last one counts",
         [json.dumps(all_items(n, False)) + "\nand again\n" + everything, "[]"],
         ("score", 1.0, all_met), 2),
        ("two different lists in one answer",
         [everything + "\nand\n" + json.dumps([item(0), item(0)] * n), "[]"], ("rerun",), 1),
        ("a comment line before the list", ["# Result\n" + everything, "[]"],
         ("score", 1.0, all_met), 2),
        ("a list after a '#' on the same line", ["Window #1: " + everything, "[]"],
         ("rerun",), 1),
        ("null and {} keep the states", ["null", "{}"], ("score", 0.0, none_met), 2),
        ("an empty answer", ["", "[]"], ("rerun",), 1),
        ("whitespace only", ["  \n", "[]"], ("rerun",), 1),
        ("true alone", ["true", "[]"], ("rerun",), 1),
    ]
