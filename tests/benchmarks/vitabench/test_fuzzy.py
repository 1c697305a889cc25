"""The fuzzy scores behind the reference's searches and address/city matching.

`partial_ratio` is checked against its definition (the best Indel ratio of the shorter string
against every window of the longer, computed here by plain dynamic programming); when
rapidfuzz happens to be installed, against rapidfuzz itself too.
"""

from __future__ import annotations

import random

import pytest

from evaluator.benchmarks.vitabench.env import fuzzy


def _lcs(a: str, b: str) -> int:
    row = [0] * (len(b) + 1)
    for ch in a:
        prev = 0
        for j, other in enumerate(b, start=1):
            prev, row[j] = row[j], prev + 1 if ch == other else max(row[j], row[j - 1])
    return row[-1]


def _ratio(a: str, b: str) -> float:
    total = len(a) + len(b)
    return 100.0 if not total else 200.0 * _lcs(a, b) / total


def _partial(a: str, b: str) -> float:
    if not a and not b:
        return 100.0
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    n = len(short)
    if not n:
        return 0.0
    windows = {long_[i:i + n] for i in range(len(long_) - n + 1)}
    windows |= {long_[:k] for k in range(1, n)} | {long_[-k:] for k in range(1, n)}
    best = max((_ratio(short, w) for w in windows), default=0.0)
    if len(a) == len(b) and best != 100.0:
        windows = {short[:k] for k in range(1, n)} | {short[-k:] for k in range(1, n)}
        best = max([best, *(_ratio(long_, w) for w in windows)])
    return best


def _random_pairs(seed: int, count: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        alphabet = "abcde "[: rng.randint(2, 6)]
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        b = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 90)))
        pairs.append((a, b) if rng.random() < 0.5 else (b, a))
    return pairs


def test_partial_ratio_matches_its_definition() -> None:
    for a, b in _random_pairs(7, 400):
        assert fuzzy.partial_ratio(a, b) == pytest.approx(_partial(a, b), abs=1e-9), (a, b)
        assert fuzzy.ratio(a, b) == pytest.approx(_ratio(a, b), abs=1e-9)


def test_known_values() -> None:
    assert fuzzy.ratio("this is a test", "this is a test!") == pytest.approx(96.5517241)
    assert fuzzy.partial_ratio("this is a test", "this is a test!") == 100.0
    assert fuzzy.partial_ratio("", "") == 100.0 and fuzzy.partial_ratio("", "abc") == 0.0
    assert fuzzy.default_process("  Hello_World, É 中文！") == "hello world  é 中文"
    assert fuzzy.round_score(62.5) == 62 and fuzzy.round_score(63.5) == 64  # half to even


def test_rank_and_rerank() -> None:
    ranked = fuzzy.rank("abc", ["xyz", "abd", "abc", "qbc", "abd"])
    assert [i for i, _ in ranked] == [2, 1, 3, 4, 0]  # ties keep input order
    assert [i for i, _ in fuzzy.rank("", ["b", "a"])] == [0, 1]
    # two keys with one text both come back as the later key (the reference's reverse map)
    assert [k for k, _, _ in fuzzy.rerank("pho", {"s1": "Pho", "s2": "Pho", "s3": "x"})] == \
        ["s2", "s2", "s3"]


def test_against_rapidfuzz_when_installed() -> None:
    rf = pytest.importorskip("rapidfuzz")
    for a, b in _random_pairs(11, 2000):
        assert fuzzy.partial_ratio(a, b) == rf.fuzz.partial_ratio(a, b), (a, b)
        assert fuzzy.ratio(a, b) == rf.fuzz.ratio(a, b)
        assert fuzzy.default_process(a + "_É!") == rf.utils.default_process(a + "_É!")
