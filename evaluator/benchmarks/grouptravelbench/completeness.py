"""Preference completeness (PC): the agent's inferred table against the effective table.

Only the fields in `preferences.GLOBAL_FIELDS` and, for each city of the *reference* table,
`preferences.CITY_FIELDS` are compared:
- a scalar (budget, intensity caps) counts only when the reference value is truthy: 1
  possible point, collected on exact equality (a number never equals a string). An agent
  that omits the field is read as 0, which counts as a wrong answer for precision; only an
  explicit null stays out of precision;
- a list counts only when the reference list is non-empty: one possible point per reference
  item, collected when the item appears verbatim in the agent's list. Its precision is the
  share of the agent's items that are in the reference (1.0 for an empty agent list), and
  it adds int(precision x agent items) correct items, truncating as the reference does.
Agent cities the reference lacks, and agent items in fields whose reference list is empty,
cost nothing. Recall = collected / possible (1.0 when nothing is possible); precision and F1
pool the per-field counts the same way, per user and over all users (micro-average).
PC = 100 x pooled recall.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from .planview import as_map, as_seq, contains
from .preferences import CITY_FIELDS, GLOBAL_FIELDS, FieldSpec, preference_of


class FieldComparison(msgspec.Struct, omit_defaults=True, frozen=True):
    path: str
    kind: str  # "list" | "scalar"
    collected: int
    possible: int
    agent_total: int | None = None  # lists
    precision: float | None = None  # lists
    agent_value: Any = None  # scalars
    ref_value: Any = None  # scalars
    matched: list[Any] = []
    missed: list[Any] = []
    spurious: list[Any] = []


class UserCompleteness(msgspec.Struct, frozen=True):
    collected: int
    possible: int
    recall: float
    precision: float
    f1: float
    fields: list[FieldComparison]


class CompletenessResult(msgspec.Struct, frozen=True):
    per_user: dict[str, UserCompleteness]
    collected: int
    possible: int
    recall: float  # the reference's completeness_ratio; PC = 100 x recall
    precision: float
    f1: float


def _leaf(root: Mapping[str, Any], spec: FieldSpec, city: str | None) -> Any:
    parent: Mapping[str, Any] = root
    segments = spec.segments(city)
    for segment in segments[:-1]:
        parent = as_map(parent.get(segment))
    if spec.kind == "scalar":
        return parent.get(segments[-1], 0)
    return as_seq(parent.get(segments[-1]))


def _compare(spec: FieldSpec, city: str | None, agent: Mapping[str, Any],
             ref: Mapping[str, Any]) -> FieldComparison | None:
    mine, truth = _leaf(agent, spec, city), _leaf(ref, spec, city)
    if not truth:
        return None
    path = spec.at(city)
    if spec.kind == "scalar":
        hit = int(mine == truth)
        return FieldComparison(path, "scalar", hit, 1, agent_value=mine, ref_value=truth)
    matched = [item for item in truth if contains(mine, item)]
    missed = [item for item in truth if not contains(mine, item)]
    correct = sum(1 for item in mine if contains(truth, item))
    precision = correct / len(mine) if len(mine) else 1.0
    return FieldComparison(path, "list", len(matched), len(truth), agent_total=len(mine),
                           precision=precision, matched=matched, missed=missed,
                           spurious=[item for item in mine if not contains(truth, item)])


def _precision_counts(fields: list[FieldComparison]) -> tuple[int, int]:
    correct = total = 0
    for row in fields:
        if row.kind == "list":
            assert row.agent_total is not None and row.precision is not None
            total += row.agent_total
            correct += int(row.precision * row.agent_total)
        elif row.agent_value is not None:
            total += 1
            correct += row.collected
    return correct, total


def _scores(collected: int, possible: int, correct: int, total: int) -> tuple[float, ...]:
    recall = collected / possible if possible > 0 else 1.0
    precision = correct / total if total > 0 else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return recall, precision, f1


def compare_user(agent_pref: Any, ref_pref: Any) -> UserCompleteness:
    """One user's agent preference object against the reference one (both bare)."""
    agent, ref = as_map(agent_pref), as_map(ref_pref)
    fields: list[FieldComparison] = []
    for spec in GLOBAL_FIELDS:
        row = _compare(spec, None, agent, ref)
        if row is not None:
            fields.append(row)
    for city in as_map(ref.get("city_specific_preferences")):
        for spec in CITY_FIELDS:
            row = _compare(spec, city, agent, ref)
            if row is not None:
                fields.append(row)
    collected = sum(row.collected for row in fields)
    possible = sum(row.possible for row in fields)
    correct, total = _precision_counts(fields)
    return UserCompleteness(collected, possible, *_scores(collected, possible, correct, total),
                            fields=fields)


def preference_completeness(agent_table: Any, effective: Mapping[str, Any]) -> CompletenessResult:
    """PC of the agent's table ({user: preference}) against the effective table ({user:
    {role, preference, compromisable}} or bare preferences), over the effective table's
    users."""
    agent = as_map(agent_table)
    per_user = {user: compare_user(as_map(agent.get(user, {})), preference_of(as_map(entry)))
                for user, entry in effective.items()}
    collected = sum(u.collected for u in per_user.values())
    possible = sum(u.possible for u in per_user.values())
    rows = [row for u in per_user.values() for row in u.fields]
    correct, total = _precision_counts(rows)
    return CompletenessResult(per_user, collected, possible,
                              *_scores(collected, possible, correct, total))
