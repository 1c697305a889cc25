"""What a reader must know before trusting a run's numbers, said at the top of every report:
scores computed from only part of the units (judge errors, units not judged yet)."""

from __future__ import annotations

from evaluator.report.summary import RunSummary, SubsetSummary

LOUD_BELOW = 0.9   # a score from fewer than this share of the units is a WARNING, not a note


def scored_text(s: SubsetSummary) -> str:
    """"9 of 36 scored" when some units have no score, else ""."""
    return "" if s.n_scored >= s.n_units else f"{s.n_scored} of {s.n_units} scored"


def coverage_warnings(runs: list[RunSummary]) -> list[str]:
    """One line per run whose score leaves units out ("all"), and one per subset where fewer
    than LOUD_BELOW of the units are scored: a WARNING (the headline then describes a part of
    the run), else a note."""
    out = []
    for run in runs:
        for s in run.subsets:
            if not s.n_units or s.n_scored >= s.n_units:
                continue
            share = s.n_scored / s.n_units
            level = "WARNING" if share < LOUD_BELOW else "note"
            if s.name != "all" and level == "note":
                continue
            why = []
            if s.judge_errors:
                why.append(f"{s.judge_errors} judge errors")
            if s.unjudged:
                why.append(f"{s.unjudged} not judged")
            if not s.n_scored:
                out.append(f"{level}: {run.label} {s.name}: no unit is scored "
                           f"({', '.join(why)}); its score is empty")
                continue
            fix = (f" (`agentsweep judge {run.run_dir} --retry-errors` asks again)"
                   if s.judge_errors else "")
            out.append(f"{level}: {run.label} {s.name}: the score is from {s.n_scored} of "
                       f"{s.n_units} units ({share:.0%}; {', '.join(why)}){fix}")
    return out
