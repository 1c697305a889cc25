"""The generator's query cache (the same rows as the world, a fresh list per caller, bounded)
and its shares of tasks per worker process."""

from __future__ import annotations

from pathlib import Path

from evaluator.benchmarks.tripbench.synthesis.generate import CachedQueries
from evaluator.benchmarks.tripbench.world import open_world


class Counting:
    def __init__(self, world) -> None:
        self.world, self.calls, self.path = world, 0, world.path

    def query(self, sql, params=()):
        self.calls += 1
        return self.world.query(sql, params)


def test_cached_queries(world_path: Path) -> None:
    with open_world(world_path) as world:
        inner = Counting(world)
        cached = CachedQueries(inner, limit=30)
        sql = "SELECT id, name FROM hotels WHERE city_id = ? ORDER BY id"
        city = world.query("SELECT city_id FROM hotels LIMIT 1")[0]["city_id"]
        first = cached.query(sql, [city])
        assert first == world.query(sql, [city]) and first
        first.append({"id": "mine"})                     # a caller's list is its own
        again = cached.query(sql, (city,))
        assert again == world.query(sql, [city]) and inner.calls == 1
        named = cached.query("SELECT id FROM hotels WHERE city_id = :c", {"c": city})
        assert named == cached.query("SELECT id FROM hotels WHERE city_id = :c", {"c": city})
        assert inner.calls == 2
        everything = cached.query("SELECT id FROM hotels")      # more rows than the limit
        assert len(everything) > 30
        cached.query(sql, [city])                        # dropped to make room: asked again
        assert inner.calls == 4
        assert cached.path == world.path                 # everything else is the world's


def test_balanced_shares() -> None:
    from evaluator.benchmarks.tripbench.synthesis.generate import balanced_shares

    shares = balanced_shares(400, 2, 8)
    assert sorted(i for share in shares for i in share) == list(range(400))
    for share in shares:          # each worker: 25 of each of the 8 positions of the mix
        assert [sum(1 for i in share if i % 8 == p) for p in range(8)] == [25] * 8
    three = balanced_shares(7 * 9, 3, 7)
    assert [len(s) for s in three] == [21, 21, 21]
    assert all({i % 7 for i in s} == set(range(7)) for s in three)


def test_each_task_gets_its_own_checker(world_path: Path, monkeypatch) -> None:
    """The solvability caches are per trip; one checker for every task of a worker held them
    all (60-85 MB a paper task: a 400-task generation ran out of memory)."""
    from evaluator.benchmarks.tripbench.synthesis import generate

    made = []
    real = generate.Checker

    def counting(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(generate, "Checker", counting)
    with open_world(world_path) as world:
        tasks = list(generate.iter_tasks(world, 0, "small", 3))
    assert len(tasks) == 3 and len(made) == 3
