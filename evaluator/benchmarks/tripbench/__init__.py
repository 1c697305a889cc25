"""TRIP-Bench (long-horizon travel planning with 18 tools; arXiv 2025, LongCat/Meituan).

The paper's POI data (TripTailor, extended) is not released, so the world is generated:
`world/` (seeded generator, the read-only SQLite world), `tools.py` (the 18 tools of the
paper's appendix B.1 over it; `searches.py` over `columns.py`, `render.py` for the paper's text
answers), `environment.py` (the environment factory; calls on worker threads). Tasks are
synthesised from a world and a seed (`synthesis/`: meta-information, the 37 rubric types in the
paper's forms with modification chains, difficulty tiers, the hard sets LIT/FIT/AIS/PMR, the
dialogue graph) and loaded by `bench_data/tripbench.py` (subsets: the evaluation splits). The
episode (`protocol.py`, `simulator.py`, `graph.py`: the agent and the graph-driven user
simulator, table 5's protocols, `prompts/`), the rule judge and unit scores (`judging.py`),
the report section (`report.py`), the `paper` profile and options (`settings.py`) and the
`agentsweep data tripbench generate` command (`cli.py`) make `BENCHMARK`. docs/tripbench*.md
describe them.
"""

from __future__ import annotations

from bench_data.tripbench import DIFFICULTIES, FORMAT
from evaluator.benchmarks.base import Benchmark, JudgeSpec

from .cli import data_commands
from .environment import ENVIRONMENT
from .judging import RULES, RULES_VERSION, SECTION, judge_kinds, rules, score
from .protocol import run_trip
from .settings import PROFILES, TripOptions

BENCHMARK = Benchmark(
    name="tripbench",
    title="TRIP-Bench",
    data=FORMAT,
    protocols={d: run_trip for d in DIFFICULTIES},
    environment=ENVIRONMENT,
    judges={RULES: JudgeSpec(kind=RULES, version=lambda s, p: RULES_VERSION, run=rules,
                             rule=True, pass_threshold=1.0)},
    judge_kinds=judge_kinds,
    score=score,
    report=SECTION,
    ok_terminations=("completed", "max_turns"),
    profiles=PROFILES,
    data_commands=data_commands,
    options=TripOptions,
    description="long-horizon multi-turn trip planning over 18 tools on a generated world, "
                "a user simulator driven by each task's dialogue graph; rule scoring "
                "(Overall strict / loose)",
)
