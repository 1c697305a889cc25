"""Fuzzy string scores as the reference ranks and matches with them (thefuzz over rapidfuzz).

The reference ranks search results and resolves addresses and cities with
`thefuzz.process.extract(query, choices, limit=None, scorer=fuzz.partial_ratio)` and tests
pairs with `fuzz.partial_ratio` / `fuzz.ratio`. This module computes the same numbers without
those packages:

- `ratio(a, b)`: 100 * 2 * LCS(a, b) / (len(a) + len(b)) (normalized Indel similarity),
  100 for two empty strings;
- `partial_ratio(a, b)`: the best `ratio` of the shorter string (the needle) against the
  windows of the longer one: every full-length window plus the shorter prefix and suffix
  windows (rapidfuzz 3.x's compiled scorer is exact in the same way, long needles included).
  Equal lengths are scored both ways;
- `default_process(s)`: lower case, every non-alphanumeric character a space, trimmed;
- `rank(query, docs)`: `process.extract` with those defaults: every choice and the query
  processed, scored with `partial_ratio`, sorted by the unrounded score (stable), scores
  rounded half-to-even as thefuzz does.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache


def default_process(text: str) -> str:
    out = []
    for ch in text:
        out.append(ch.lower()[0] if ch.isalnum() else " ")
    return "".join(out).strip()


def _lcs_len(pattern: dict[str, int], mask: int, n: int, text: str) -> int:
    """Length of the longest common subsequence (bit-parallel over the needle's positions)."""
    v = mask
    for ch in text:
        u = v & pattern.get(ch, 0)
        v = ((v + u) | (v - u)) & mask
    return n - v.bit_count()


def _pattern(needle: str) -> tuple[dict[str, int], int]:
    table: dict[str, int] = {}
    bit = 1
    for ch in needle:
        table[ch] = table.get(ch, 0) | bit
        bit <<= 1
    return table, bit - 1


def _ratio_with(pattern: dict[str, int], mask: int, needle: str, text: str) -> float:
    total = len(needle) + len(text)
    if not total:
        return 100.0
    lcs = _lcs_len(pattern, mask, len(needle), text)
    return (1.0 - (total - 2 * lcs) / total) * 100.0


def ratio(a: str, b: str) -> float:
    pattern, mask = _pattern(a)
    return _ratio_with(pattern, mask, a, b)


def _partial(needle: str, hay: str) -> float:
    n, m = len(needle), len(hay)
    chars = set(needle)
    pattern, mask = _pattern(needle)
    best = 0.0
    for end in range(1, n):  # prefixes of the haystack shorter than the needle
        if hay[end - 1] in chars:
            best = max(best, _ratio_with(pattern, mask, needle, hay[:end]))
            if best == 100.0:
                return best
    for start in range(m - n):  # full-length windows
        if hay[start + n - 1] in chars:
            best = max(best, _ratio_with(pattern, mask, needle, hay[start:start + n]))
            if best == 100.0:
                return best
    for start in range(m - n, m):  # suffixes, full length down to one character
        if hay[start] in chars:
            best = max(best, _ratio_with(pattern, mask, needle, hay[start:]))
            if best == 100.0:
                return best
    return best


@lru_cache(maxsize=65536)
def partial_ratio(a: str, b: str) -> float:
    if not a and not b:
        return 100.0
    if len(a) <= len(b):
        score = _partial(a, b)
        if score != 100.0 and len(a) == len(b):
            score = max(score, _partial(b, a))
        return score
    return _partial(b, a)


def round_score(score: float) -> int:
    return round(score)  # half to even, as thefuzz rounds


def rank(query: str, docs: Iterable[str]) -> list[tuple[int, float]]:
    """(index into docs, unrounded score) best first, as `process.extract(limit=None)` orders
    them: processed query and choices, `partial_ratio`, ties in input order."""
    q = default_process(query)
    scored = [(i, partial_ratio(q, default_process(d)) if q else 0.0)
              for i, d in enumerate(docs)]
    scored.sort(key=lambda item: -item[1])
    return scored


def rerank(query: str, docs: dict[str, str]) -> list[tuple[str, str, int]]:
    """The reference's `rerank(query, {key: text})`: (key, text, rounded score) best first.

    Texts are matched back to keys through a text -> key map, so two keys with the same text
    both come back as the later key (and the earlier one never), as in the reference."""
    texts = list(docs.values())
    key_of = {text: key for key, text in docs.items()}
    return [(key_of[texts[i]], texts[i], round_score(score)) for i, score in rank(query, texts)]
