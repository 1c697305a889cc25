"""How much of a judge call the engine's prefix cache can serve, per judge layout.

    python -m perf.judge_prefix [--grouptravelbench TASKS.jsonl [--limit N]]

Builds the rubric and meta prompts of the built-in sample's single- and multi-turn tasks (a
short conversation each: the request and an answer), in both TravelBench
`options.judge_layout`s, one after another as a judge pool sends them, and tokenizes them with
the bundled model's chat template (the converted SmolLM2 under `$AGENTSWEEP_HOME`; `bash
scripts/setup.sh` makes it). With `--grouptravelbench`, the same for GroupTravelBench's judge
and meta-judge (system message included) over the first N tasks of that file (default 20), in
both of its `options.judge_layout`s.
Printed per layout, side by side: the mean prompt tokens, the mean tokens a call shares with
the longest matching earlier call (what a prefix cache can hold; vLLM on CPU holds whole
128-token blocks, so a little less), the mean tokens left to prefill, and the ratio of the
tokens left between the layouts. Needs no engine; a few seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from backends.types import ChatMessage
from evaluator import benchmarks  # noqa: F401  (registers the built-in sample's format)
from evaluator.benchmarks.base import JudgeInput
from evaluator.benchmarks.grouptravelbench.judge_inputs import transcript
from evaluator.benchmarks.grouptravelbench.judges import judge_prompt, meta_prompt
from evaluator.benchmarks.grouptravelbench.options import GroupOptions
from evaluator.benchmarks.grouptravelbench.prompting import Texts
from evaluator.benchmarks.grouptravelbench.rubric import DIMENSION_KEYS
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


def group_prompts(layout: str, tasks: list[Any]) -> list[list[dict[str, str]]]:
    """GroupTravelBench's judge, then meta-judge, messages of every task (a chat of the task's
    first user and an answer), in the order a judge pool sends them."""
    texts, options = Texts.of(None), GroupOptions(judge_layout=layout)
    review = "<response>" + "".join(
        f"<{d}><reasoning>r</reasoning><rating>Fair</rating></{d}>" for d in DIMENSION_KEYS
    ) + "</response>"
    out = []
    for t in tasks:
        users = list(t.payload.user_preferences)
        chat = [{"type": "message", "role": users[0], "content": t.payload.query},
                {"type": "message", "role": "Agent", "content": f"@{users[0]} OK?"}]
        record = EpisodeRecord(unit=UnitId(run="p", task=f"grouptravelbench/{t.subset}/"
                                           f"{t.task_id}", trial=0, seed=1),
                               benchmark="grouptravelbench", subset=t.subset,
                               task_id=t.task_id, messages=[],
                               extra={"chat": chat, "users": users})
        inp = JudgeInput(record=record, task=t, thash="h", settings=JudgeSettings(),
                         prompts=None, tools=None, client=None, model="m", options=options)
        judged = Judgement(unit=record.unit, trajectory_hash="h", judge_model="m",
                           prompt_version="v", kind="gtb_judge", score=0.5, scores={},
                           raw=review)
        conversation = transcript(chat, texts)
        out.append([{"role": "system", "content": texts.text("judge_system")},
                    {"role": "user", "content": judge_prompt(inp, conversation)}])
        out.append([{"role": "system", "content": texts.text("meta_system")},
                    {"role": "user", "content": meta_prompt(inp, judged, conversation)}])
    return out


def _table(tok: Any, calls: dict[str, list[list[dict[str, str]]]], title: str) -> None:
    rows = {}
    for layout, messages in calls.items():
        ids = [tok(tok.apply_chat_template(m, tokenize=False,
                                           add_generation_prompt=True))["input_ids"]
               for m in messages]
        shared = shared_prefixes(ids)
        n = len(ids)
        total = sum(len(x) for x in ids) / n
        rows[layout] = (n, total, sum(shared) / n, total - sum(shared) / n)
    print(title)
    print(f"{'layout':<10} {'calls':>5} {'prompt tokens':>14} {'shared':>8} {'to prefill':>11}")
    for layout, (n, total, shared, fresh) in rows.items():
        print(f"{layout:<10} {n:>5} {total:>14.0f} {shared:>8.0f} {fresh:>11.0f}")
    ratio = rows["reference"][3] / rows["prefix"][3]
    print(f"tokens to prefill per judge call, reference / prefix layout: {ratio:.2f}x")


def main(argv: list[str] | None = None) -> int:
    from backends.model import default_model_dir
    from bench_data.registry import load_tasks

    parser = argparse.ArgumentParser(prog="python -m perf.judge_prefix")
    parser.add_argument("--grouptravelbench", metavar="TASKS.jsonl",
                        help="also GroupTravelBench's judges over this task file")
    parser.add_argument("--limit", type=int, default=20,
                        help="GroupTravelBench tasks to build prompts for (20)")
    args = parser.parse_args(argv)
    model = default_model_dir()
    if not (model / "tokenizer.json").exists() and not (model / "tokenizer_config.json").exists():
        print(f"perf.judge_prefix: no converted default model at {model} (its tokenizer is "
              "needed); run `bash scripts/setup.sh` first", file=sys.stderr)
        return 2
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model))
    taskset = load_tasks("sample", subsets=["single_turn", "multi_turn"])
    _table(tok, {layout: [[{"role": "user", "content": t}] for t in prompts(
        layout, list(taskset.tasks), taskset.tool_schemas)] for layout in LAYOUTS},
        "TravelBench (the built-in sample), rubric and meta judge")
    if args.grouptravelbench:
        try:
            group = load_tasks(args.grouptravelbench, limit=args.limit,
                               benchmark="grouptravelbench")
        except (OSError, ValueError) as exc:
            print(f"perf.judge_prefix: {args.grouptravelbench}: {exc}", file=sys.stderr)
            return 2
        print()
        _table(tok, {layout: group_prompts(layout, list(group.tasks)) for layout in LAYOUTS},
               f"GroupTravelBench ({len(group.tasks)} tasks of {args.grouptravelbench}), "
               "judge and meta-judge")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
