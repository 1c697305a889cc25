"""TRIP-Bench's report section from unit scores: strict/loose pooled, with the paper's split
weights, per split and difficulty; pass@k / pass^k / avg@k on both metrics; violations by
check, turns, tool calls and context length."""

from __future__ import annotations

from evaluator.benchmarks.tripbench.report import summarize, tables
from evaluator.records import UnitId, UnitScore

HARD = ("LIT", "FIT", "AIS", "PMR")


def unit(i: int, difficulty: str, hard: str, strict: float, loose: float, trial: int = 0,
         **dims: float) -> UnitScore:
    base = {"loose": loose, "turns": 5.0 + i, "tool_calls": 10.0 * i,
            "context_tokens": 1000.0 * (i + 1), "viol:time_continuity": 0.0,
            "viol:opening_hours": 0.0}
    return UnitScore(unit=UnitId(run="r", task=f"tripbench/{difficulty}/t{i}", trial=trial,
                                 seed=0),
                     benchmark="tripbench", subset=difficulty, task_id=f"t{i}", score=strict,
                     success=strict == 1.0, dims={**base, **dims},
                     labels={"difficulty": difficulty, "hard_set": hard,
                             "split": hard if hard != "none" else difficulty})


def test_summary_and_tables():
    units = [unit(0, "easy", "none", 1.0, 1.0),
             unit(1, "easy", "none", 0.0, 1.0, **{"viol:opening_hours": 3.0}),
             unit(2, "hard", "FIT", 0.0, 0.0, finished=0.0, **{"viol:time_continuity": 1.0,
                                                               "viol:opening_hours": 1.0}),
             unit(3, "hard", "LIT", 0.0, 1.0, turn_strict=0.5, turn_loose=1.0)]
    unjudged = UnitScore(unit=UnitId(run="r", task="tripbench/mid/x", trial=0, seed=0),
                         benchmark="tripbench", subset="mid", task_id="x", score=None,
                         judge_error="not judged")
    s = summarize([*units, unjudged])
    assert s is not None and s.unjudged == 1 and s.unfinished == 1
    assert (s.overall.units, s.overall.strict, s.overall.loose) == (4, 25.0, 75.0)
    assert s.paper_overall is None                        # mid, AIS and PMR are missing
    assert s.difficulties["easy"].strict == 50.0 and s.difficulties["hard"].loose == 50.0
    assert list(s.splits) == ["easy", "LIT", "FIT"]
    assert s.splits["LIT"].loose == 100.0
    assert (s.splits["LIT"].turn_strict, s.splits["FIT"].turn_strict) == (50.0, None)
    assert s.overall.turn_loose == 100.0
    assert s.violations == {"opening_hours": 50.0, "time_continuity": 25.0}
    assert s.findings == {"opening_hours": 4, "time_continuity": 1}
    assert s.turns == 6.5 and s.tool_calls == 15.0
    assert s.context_tokens_max == 4000 and s.context_tokens_mean == 2500.0
    main, passk, viol, eff = tables([("r", s)])
    groups = [row[1] for row in main.rows]
    assert groups == ["overall (pooled)", "split easy", "split LIT", "split FIT",
                      "difficulty easy", "difficulty hard"]
    assert ["r", "opening_hours", "50.0", "4"] in viol.rows
    assert main.rows[0] == ["r", "overall (pooled)", "4", "25.0", "75.0", "50.0", "100.0"]
    assert main.rows[3][-2:] == ["—", "—"]
    assert ["r", "overall", "1", "25.0", "25.0", "25.0", "75.0", "75.0", "75.0"] in passk.rows
    assert eff.rows == [["r", "6.50", "15.00", "2500", "4000", "1", "1"]]
    assert summarize([unjudged]) is None


def _split_units(per_split: dict[str, tuple[int, int, int]]) -> list[UnitScore]:
    """(tasks, strict successes, loose successes) per split -> one unit per task."""
    out, i = [], 0
    for split, (n, strict, loose) in per_split.items():
        difficulty = "hard" if split in HARD else split
        for j in range(n):
            out.append(unit(i, difficulty, split if split in HARD else "none",
                            float(j < strict), float(j < loose)))
            i += 1
    return out


def test_overall_is_the_papers_pooled_mean():
    """Table 2's GPT-5.2 (w/ thinking) row: split rates over the paper's 400 tasks pool to
    its Overall, 45.0 loose / 18.5 strict; run with equal splits (--limit N), the pooled
    mean differs and the paper-weighted one still gives the paper's number."""
    rates = {"easy": (66, 49), "mid": (55, 13), "LIT": (44, 14), "FIT": (18, 0),
             "AIS": (20, 0), "PMR": (36, 10)}
    paper = {sp: (100, ls, ll) if sp in ("easy", "mid") else (50, ls // 2, ll // 2)
             for sp, (ll, ls) in rates.items()}
    s = summarize(_split_units(paper))
    assert s is not None and s.overall.units == 400
    assert (s.overall.loose, s.overall.strict) == (45.0, 18.5)
    assert s.paper_overall is not None
    assert (s.paper_overall.loose, s.paper_overall.strict) == (45.0, 18.5)
    equal = {sp: (100, ls, ll) for sp, (ll, ls) in rates.items()}
    e = summarize(_split_units(equal))
    assert e is not None and e.paper_overall is not None
    assert (e.paper_overall.loose, e.paper_overall.strict) == (45.0, 18.5)
    assert e.overall.loose == round(sum(ll for ll, _ in rates.values()) / 6, 2) != 45.0


def test_pass_at_k_on_strict_and_loose():
    """Two tasks, three trials: task a strict 1/3 and loose 3/3, task b strict 0/3 and loose
    1/3 -> strict pass@1 1/6, pass@3 1/2; loose pass@1 2/3, pass^3 1/2, avg@3 2/3."""
    units = [unit(0, "easy", "none", float(t == 0), 1.0, trial=t) for t in range(3)]
    units += [unit(1, "easy", "none", 0.0, float(t == 2), trial=t) for t in range(3)]
    s = summarize(units)
    assert s is not None
    curves = s.curves["overall"]
    value = {k: [round(p.value, 4) for p in v] for k, v in curves.items()}
    assert value["strict pass@k"] == [round(1 / 6, 4), round((2 / 3) / 2, 4), 0.5]
    assert value["strict pass^k"] == [round(1 / 6, 4), 0.0, 0.0]
    assert value["loose pass@k"] == [round(2 / 3, 4), round((1 + 2 / 3) / 2, 4), 1.0]
    assert value["loose pass^k"] == [round(2 / 3, 4), 0.5, 0.5]
    assert value["loose avg@k"] == [round(2 / 3, 4)] * 3
    assert [p.n_tasks for p in curves["loose pass@k"]] == [2, 2, 2]
    assert set(s.curves) == {"overall", "easy"}
