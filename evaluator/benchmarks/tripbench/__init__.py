"""TRIP-Bench (long-horizon travel planning with 18 tools; arXiv 2025, LongCat/Meituan).

The paper's POI data (TripTailor, extended) is not released, so the world is generated:
`world/` (seeded generator, the read-only SQLite world), `tools.py` (the 18 tools of the
paper's appendix B.1 over it; `searches.py` over `columns.py`, `render.py` for the paper's text
answers), `environment.py` (the environment factory; calls on worker threads). Tasks are
synthesised from a world and a seed (`synthesis/`: meta-information, the 37 rubric types in the
paper's forms with modification chains, difficulty tiers, the hard sets LIT/FIT/AIS/PMR, the
dialogue graph) and loaded by `data.py` (subsets: the evaluation splits). The
episode (`protocol.py`, `simulator.py`, `graph.py`: the agent and the graph-driven user
simulator, table 5's protocols, `prompts/`), the rule judge and unit scores (`judging.py`),
the report section (`report.py`), the `paper` profile and options (`settings.py`) and the
`agentsweep data tripbench generate` command (`cli.py`) make `BENCHMARK`. docs/tripbench*.md
describe them.
"""

from __future__ import annotations

from evaluator.benchmarks.base import (
    Benchmark,
    DeferredEnvironment,
    JudgeSpec,
    ReportSection,
    deferred,
)
from evaluator.benchmarks.tripbench.data import DIFFICULTIES, FORMAT

from .cli import data_commands
from .settings import PROFILES, RULES, RULES_VERSION, TripOptions

# the world, tools, protocol, rules and report are imported when first used: registering
# TRIP-Bench costs a run of another benchmark nothing at start-up
_JUDGING, _REPORT = f"{__name__}.judging", f"{__name__}.report"
run_trip = deferred(f"{__name__}.protocol", "run_trip")

BENCHMARK = Benchmark(
    name="tripbench",
    title="TRIP-Bench",
    data=FORMAT,
    protocols={d: run_trip for d in DIFFICULTIES},
    environment=DeferredEnvironment(f"{__name__}.environment", "ENVIRONMENT"),
    judges={RULES: JudgeSpec(kind=RULES, version=lambda s, p: RULES_VERSION,
                             run=deferred(_JUDGING, "rules"), rule=True, pass_threshold=1.0)},
    judge_kinds=deferred(_JUDGING, "judge_kinds"),
    score=deferred(_JUDGING, "score"),
    report=ReportSection.deferred(_REPORT),
    ok_terminations=("completed", "max_turns"),
    profiles=PROFILES,
    data_commands=data_commands,
    options=TripOptions,
    description="long-horizon multi-turn trip planning over 18 tools on a generated world, "
                "a user simulator driven by each task's dialogue graph; rule scoring "
                "(Overall strict / loose)",
)
