"""TRIP-Bench's report section from unit scores: strict/loose by difficulty and hard set,
violations by check, turns, tool calls and context length."""

from __future__ import annotations

from evaluator.benchmarks.tripbench.judging import summarize, tables
from evaluator.records import UnitId, UnitScore


def unit(i: int, difficulty: str, hard: str, strict: float, loose: float, **dims: float
         ) -> UnitScore:
    base = {"loose": loose, "turns": 5.0 + i, "tool_calls": 10.0 * i,
            "context_tokens": 1000.0 * (i + 1), "viol:time_continuity": 0.0,
            "viol:opening_hours": 0.0}
    return UnitScore(unit=UnitId(run="r", task=f"tripbench/{difficulty}/t{i}", trial=0, seed=0),
                     benchmark="tripbench", subset=difficulty, task_id=f"t{i}", score=strict,
                     success=strict == 1.0, dims={**base, **dims},
                     labels={"difficulty": difficulty, "hard_set": hard})


def test_summary_and_tables():
    units = [unit(0, "easy", "none", 1.0, 1.0),
             unit(1, "easy", "none", 0.0, 1.0, **{"viol:opening_hours": 3.0}),
             unit(2, "hard", "FIT", 0.0, 0.0, **{"viol:time_continuity": 1.0,
                                                 "viol:opening_hours": 1.0}),
             unit(3, "hard", "LIT", 0.0, 1.0, turn_strict=0.5, turn_loose=1.0)]
    unjudged = UnitScore(unit=UnitId(run="r", task="tripbench/mid/x", trial=0, seed=0),
                         benchmark="tripbench", subset="mid", task_id="x", score=None,
                         judge_error="not judged")
    s = summarize([*units, unjudged])
    assert s is not None and s.unjudged == 1
    assert (s.overall.units, s.overall.strict, s.overall.loose) == (4, 25.0, 75.0)
    assert s.difficulties["easy"].strict == 50.0 and s.difficulties["hard"].loose == 50.0
    assert set(s.hard_sets) == {"FIT", "LIT"} and s.hard_sets["LIT"].loose == 100.0
    assert (s.hard_sets["LIT"].turn_strict, s.hard_sets["FIT"].turn_strict) == (50.0, None)
    assert s.overall.turn_loose == 100.0
    assert s.violations == {"opening_hours": 50.0, "time_continuity": 25.0}
    assert s.findings == {"opening_hours": 4, "time_continuity": 1}
    assert s.turns == 6.5 and s.tool_calls == 15.0
    assert s.context_tokens_max == 4000 and s.context_tokens_mean == 2500.0
    main, viol, eff = tables([("r", s)])
    groups = [row[1] for row in main.rows]
    assert groups == ["overall", "difficulty easy", "difficulty hard", "hard set FIT",
                      "hard set LIT"]
    assert ["r", "opening_hours", "50.0", "4"] in viol.rows
    assert main.rows[0] == ["r", "overall", "4", "25.0", "75.0", "50.0", "100.0"]
    assert main.rows[3][-2:] == ["—", "—"]
    assert eff.rows == [["r", "6.50", "15.00", "2500", "4000", "1"]]
    assert summarize([unjudged]) is None
