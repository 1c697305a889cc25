"""Optional: canned judge answers through the reference's evaluator and agentsweep's
reference reader give the same requests, the same number of calls and the same outcome (the
verdicts, or a failed trial that the reference reruns); and agentsweep's JSON reading agrees
with `json_repair` on a corpus of judge-like answers. Runs only with VITABENCH_REFERENCE_SRC
(see reference_runner.py)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from bench_data.vitabench import load_vitabench_file
from evaluator.benchmarks.vitabench.judge_read import Unreadable, repair_loads
from evaluator.benchmarks.vitabench.judge_reference import TRIAL_RERUN
from evaluator.benchmarks.vitabench.prompt_import import import_reference
from evaluator.benchmarks.vitabench.prompting import ROLES
from evaluator.prompt_sets import PromptSet, load_prompt_set

from .helpers import VITA_DATA, load_tasks
from .judge_cases import all_items, cases, item
from .parity_scripts import our_judgement, our_trial, trial_script
from .reference_runner import REF_SRC, Crashed, ReferenceRunner, canonical, needs_reference

pytestmark = needs_reference


@pytest.fixture(scope="module")
def ref() -> ReferenceRunner:
    return ReferenceRunner()


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> PromptSet:
    out, _ = import_reference(Path(REF_SRC).parent, tmp_path_factory.mktemp("ps") / "vita")
    return load_prompt_set(out, ROLES)


def outcome_ours(j: Any) -> tuple[Any, ...]:
    if j.score is None:
        assert j.error.startswith(TRIAL_RERUN), j.error
        return ("rerun",)
    return ("score", j.score, {int(k.split("_")[1]): v for k, v in j.scores.items()})


def outcome_theirs(info: Any) -> tuple[Any, ...]:
    if isinstance(info, Crashed):
        return ("rerun",)
    return ("score", info.reward, {i: 1.0 if c.met else 0.0 for i, c in enumerate(info.nl_rubrics)})


@pytest.mark.parametrize("domain, index", [("delivery", 5), ("instore", 7)])
async def test_canned_answers(ref: ReferenceRunner, imported: PromptSet, domain: str,
                              index: int) -> None:
    raw = load_tasks(domain)[index]
    task = load_vitabench_file(VITA_DATA / domain / "tasks_en.json").tasks[index]
    agent, user = trial_script(raw, (domain,))
    _, record, ids = await our_trial(task, imported, agent, user)
    _, sim = ref.trial(raw, [domain], agent, user, ids)
    n = len(task.extra["rubric_sets"]["union"])
    checked = 0
    for name, answers, expected, calls in cases(n):
        ours_req, j = await our_judgement(task, record, imported, answers)
        theirs_req, info = ref.judge(raw, sim.messages, answers)
        assert len(ours_req) == len(theirs_req) == calls, name
        for a, b in zip(ours_req, theirs_req, strict=True):
            assert canonical(a["messages"]) == canonical(b["messages"]), name
        assert outcome_ours(j) == outcome_theirs(info) == expected, name
        checked += 1
    print(f"\n{domain} task {index}: {checked} canned answers, both sides equal")


def _corpus(seed: int = 0, n: int = 400) -> list[tuple[str, bool]]:
    """Judge-like answers: valid lists in prose, fences and comments, Python literals,
    trailing commas, several values, and answers cut off at random points (the flag)."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        items = [item(i, rng.choice([True, False, "true", "no"]), f"[{i}] why {k}")
                 for i in range(rng.randint(1, 4))]
        text = json.dumps(items, indent=rng.choice([None, 2]), ensure_ascii=rng.random() < .5)
        shape = rng.randrange(8)
        if shape == 1:
            text = f"Here is the evaluation:\n```json\n{text}\n```\nDone."
        elif shape == 2:
            text = text.replace("true", "True").replace("false", "False")
        elif shape == 3:
            text = text[:-1].rstrip() + ",\n]"
        elif shape == 4:
            text = text + "\n" + json.dumps(all_items(2))
        elif shape == 5:
            text = "## Result\n" + text
        elif shape == 6:
            text = text[:rng.randint(1, len(text) - 1)]
        elif shape == 7:
            text = json.dumps(items[0])
        out.append((text, shape == 6))
    return out


def test_json_reading_agrees_with_json_repair(ref: ReferenceRunner) -> None:
    from json_repair import repair_json

    agree = cut = cut_agree = 0
    disagreements = []
    corpus = _corpus()
    for text, truncated in corpus:
        try:
            theirs: Any = json.loads(repair_json(text))
        except ValueError:
            theirs = "unreadable"
        try:
            ours: Any = repair_loads(text)
        except Unreadable:
            ours = "unreadable"
        cut += truncated
        if ours == theirs:
            agree += 1
            cut_agree += truncated
        else:
            disagreements.append((text[-80:], ours, theirs))
    whole = len(corpus) - cut
    print(f"\njson reading: {agree}/{len(corpus)} equal to json_repair "
          f"({agree - cut_agree}/{whole} complete answers, {cut_agree}/{cut} cut off)")
    assert agree - cut_agree == whole, disagreements[:3]
