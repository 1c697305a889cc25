"""Toybench: the toy benchmark of docs/adding_a_benchmark.md (arithmetic questions, a
calculator tool, a rule check and an LLM grader). It lives outside agentsweep's packages and
is registered as a plugin (`--plugin tests.toybench`, `plugins = [...]` or
$AGENTSWEEP_PLUGINS); adding it changed no generic module."""

from __future__ import annotations

from bench_data.types import Task
from evaluator.benchmarks.base import Benchmark
from evaluator.judges.settings import JudgeSettings
from evaluator.records import EpisodeRecord

from .data import FORMAT, NAME
from .environment import CalculatorFactory
from .judges import EXACT, GRADE, JUDGES
from .options import ToyOptions
from .protocol import run_qa
from .scoring import SECTION, score


def judge_kinds(record: EpisodeRecord, task: Task | None, settings: JudgeSettings) -> list[str]:
    return [EXACT, GRADE]


BENCHMARK = Benchmark(
    name=NAME,
    title="Toybench",
    data=FORMAT,
    protocols={"arith": run_qa},
    environment=CalculatorFactory(),
    judges=JUDGES,
    judge_kinds=judge_kinds,
    score=score,
    report=SECTION,
    profiles={"paper": {"trials": 2, "protocol": {"max_steps": 3},
                        "options": {"final_only": True}}},
    options=ToyOptions,
    description="arithmetic questions with a calculator (the docs' example)",
)
