"""How much of a TravelBench judge call the engine's prefix cache can serve, per judge layout.

    python -m perf.judge_prefix

Builds the rubric and meta prompts of the built-in sample's single- and multi-turn tasks (a
short conversation each: the request and an answer), in both `options.judge_layout`s, one
after another as a judge pool sends them, and tokenizes them with the bundled model's chat
template (the converted SmolLM2 under `$AGENTSWEEP_HOME`; `bash scripts/setup.sh` makes it).
Printed per layout, side by side: the mean prompt tokens, the mean tokens a call shares with
the longest matching earlier call (what a prefix cache can hold; vLLM on CPU holds whole
128-token blocks, so a little less), the mean tokens left to prefill, and the ratio of the
tokens left between the layouts. Needs no engine; a few seconds.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from backends.types import ChatMessage
from evaluator import benchmarks  # noqa: F401  (registers the built-in sample's format)
from evaluator.benchmarks.travelbench.judge_prompts import build_meta_prompt, build_rubric_prompt
from evaluator.benchmarks.travelbench.options import TravelBenchOptions
from evaluator.judges.settings import JudgeSettings
from evaluator.records import EpisodeRecord, Judgement, UnitId

LAYOUTS = ("reference", "prefix")


def _records(tasks: list[Any]) -> list[EpisodeRecord]:
    out = []
    for t in tasks:
        messages = [ChatMessage(role="user", content=t.payload.query),
                    ChatMessage(role="assistant", content=f"An answer to: {t.payload.query}")]
        out.append(EpisodeRecord(unit=UnitId(run="p", task=f"travelbench/{t.subset}/{t.task_id}",
                                             trial=0, seed=1),
                                 benchmark="travelbench", subset=t.subset, task_id=t.task_id,
                                 messages=messages))
    return out


def _rubric(record: EpisodeRecord) -> Judgement:
    return Judgement(unit=record.unit, trajectory_hash="h", judge_model="m",
                     prompt_version="v", kind="travel_rubric", score=0.5,
                     scores={"reasoning_planning": 3.0}, reasoning={"reasoning_planning": "r"})


def prompts(layout: str, tasks: list[Any], tools: list[dict[str, Any]]) -> list[str]:
    """The rubric, then the meta prompt, of every task, in the order a judge pool sends them."""
    options, settings = TravelBenchOptions(judge_layout=layout), JudgeSettings()
    by_id = {t.task_id: t for t in tasks}
    out = []
    for r in _records(tasks):
        task = by_id[r.task_id]
        out.append(build_rubric_prompt(r, task, settings, tools, options=options))
        out.append(build_meta_prompt(r, task, _rubric(r), settings, tools, options=options))
    return out


def shared_prefixes(token_lists: list[list[int]]) -> list[int]:
    """Per call, the longest prefix it shares with any earlier call (0 for the first)."""
    return [max((len(os.path.commonprefix([ids, prev])) for prev in token_lists[:i]), default=0)
            for i, ids in enumerate(token_lists)]


def main() -> int:
    from backends.model import default_model_dir
    from bench_data.registry import load_tasks

    model = default_model_dir()
    if not (model / "tokenizer.json").exists() and not (model / "tokenizer_config.json").exists():
        print(f"perf.judge_prefix: no converted default model at {model} (its tokenizer is "
              "needed); run `bash scripts/setup.sh` first", file=sys.stderr)
        return 2
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model))
    taskset = load_tasks("sample", subsets=["single_turn", "multi_turn"])
    rows = {}
    for layout in LAYOUTS:
        texts = prompts(layout, list(taskset.tasks), taskset.tool_schemas)
        ids = [tok(tok.apply_chat_template([{"role": "user", "content": t}], tokenize=False,
                                           add_generation_prompt=True))["input_ids"]
               for t in texts]
        shared = shared_prefixes(ids)
        n = len(ids)
        total = sum(len(x) for x in ids) / n
        rows[layout] = (n, total, sum(shared) / n, total - sum(shared) / n)
    print(f"{'layout':<10} {'calls':>5} {'prompt tokens':>14} {'shared':>8} {'to prefill':>11}")
    for layout, (n, total, shared, fresh) in rows.items():
        print(f"{layout:<10} {n:>5} {total:>14.0f} {shared:>8.0f} {fresh:>11.0f}")
    ratio = rows["reference"][3] / rows["prefix"][3]
    print(f"tokens to prefill per judge call, reference / prefix layout: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
