"""Optional: every message list agentsweep sends under the paper profile with the imported
prompts is the reference's own, for all 200 tasks of the release (delivery and in-store) and
for merged delivery + in-store environments: the agent's (system prompt, tools, every
message), the user simulator's and the sliding-window judge's, request by request, and the
judge's verdicts.

Runs only when VITABENCH_REFERENCE_SRC names the reference's `src/` directory (its
dependencies importable, VITABENCH_REFERENCE_DEPS may add a directory; see
reference_runner.py). The prompt set is imported from that checkout into a temporary
directory. Messages are compared as the server reads them (`canonical`: every text byte for
byte; `null` fields count as absent).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench_data.vitabench import load_vitabench_file
from evaluator.benchmarks.vitabench.prompt_import import import_reference
from evaluator.benchmarks.vitabench.prompting import ROLES
from evaluator.prompt_sets import PromptSet, load_prompt_set

from .helpers import VITA_DATA, load_tasks
from .parity_scripts import judge_script, our_judgement, our_trial, trial_script
from .reference_runner import REF_SRC, Crashed, ReferenceRunner, canonical, needs_reference

pytestmark = needs_reference


@pytest.fixture(scope="module")
def ref() -> ReferenceRunner:
    return ReferenceRunner()


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> PromptSet:
    out, _ = import_reference(Path(REF_SRC).parent, tmp_path_factory.mktemp("ps") / "vita")
    return load_prompt_set(out, ROLES)


def differences(ours: dict[str, list[Any]], theirs: dict[str, list[Any]]) -> list[str]:
    out = []
    for role, sent in ours.items():
        if len(sent) != len(theirs[role]):
            out.append(f"{role}: {len(sent)} requests, reference {len(theirs[role])}")
            continue
        for i, (a, b) in enumerate(zip(sent, theirs[role], strict=True)):
            if canonical(a["messages"]) != canonical(b["messages"]):
                for j, (x, y) in enumerate(zip(canonical(a["messages"]),
                                               canonical(b["messages"]), strict=False)):
                    if x != y:
                        out.append(f"{role} request {i} message {j}: {x!r:.300} != {y!r:.300}")
                        break
                else:
                    out.append(f"{role} request {i}: {len(a['messages'])} messages, reference "
                               f"{len(b['messages'])}")
            if a["tools"] != b["tools"]:
                out.append(f"{role} request {i}: tools differ")
    return out


async def compare(ref: ReferenceRunner, ps: PromptSet, domain: str, index: int,
                  domains: tuple[str, ...] | None = None) -> list[str]:
    raw = load_tasks(domain)[index]
    task = load_vitabench_file(VITA_DATA / domain / "tasks_en.json").tasks[index]
    doms = domains or (domain,)
    agent, user = trial_script(raw, doms)
    ours, record, ids = await our_trial(task, ps, agent, user, domains=domains)
    theirs, sim = ref.trial(raw, list(doms), agent, user, ids)
    if isinstance(sim, Crashed):
        return [f"reference crashed: {sim}"]
    problems = differences(ours, theirs)
    if record.termination != sim.termination_reason:
        problems.append(f"termination {record.termination} != {sim.termination_reason}")
    n = len(task.extra["rubric_sets"]["union"])
    answers = judge_script(n)
    our_judge, j = await our_judgement(task, record, ps, answers)
    ref_judge, info = ref.judge(raw, sim.messages, answers)
    problems += differences({"judge": our_judge}, {"judge": ref_judge})
    if isinstance(info, Crashed):
        problems.append(f"reference judge crashed: {info}")
    else:
        met = {f"rubric_{i}": 1.0 if c.met else 0.0 for i, c in enumerate(info.nl_rubrics)}
        if (j.score, j.scores) != (info.reward, met):
            problems.append(f"score {j.score} {j.scores} != {info.reward} {met}")
    return problems


@pytest.mark.parametrize("domain", ["delivery", "instore"])
async def test_every_task(ref: ReferenceRunner, imported: PromptSet, domain: str) -> None:
    bad: dict[int, list[str]] = {}
    requests = 0
    for index in range(len(load_tasks(domain))):
        problems = await compare(ref, imported, domain, index)
        if problems:
            bad[index] = problems[:3]
        requests += 1
    print(f"\n{domain}: {requests} tasks compared, {len(bad)} with differences")
    assert not bad, bad


async def test_merged_delivery_and_instore(ref: ReferenceRunner, imported: PromptSet) -> None:
    bad = {}
    for domain in ("delivery", "instore"):
        for index in range(0, 100, 25):
            problems = await compare(ref, imported, domain, index, ("delivery", "instore"))
            if problems:
                bad[(domain, index)] = problems[:3]
    assert not bad, bad


def _say(text: str | None, *calls: dict[str, Any]) -> dict[str, Any]:
    return {"content": text, "tool_calls": list(calls) or None}


def _call(name: str, arguments: str, call_id: str = "k1") -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


# name -> (agent answers, user answers, max_steps, our termination, the reference's or
# "crash" for a trial it reruns)
EDGES: dict[str, tuple[list[Any], list[Any], int, str, str]] = {
    "three empty agent replies": ([_say(""), _say(None), _say("  ")], [_say("Hi")], 300,
                                  "invalid_agent_message", "invalid_agent_message"),
    "a stop on the last step": ([_say(None, _call("get_user_all_orders", "")),
                                 _say("Bye ###STOP###")], [_say("Hi")], 4,
                                "max_steps", "max_steps"),
    "a stop one step before": ([_say(None, _call("get_user_all_orders", "")),
                                _say("Bye ###STOP###")], [_say("Hi")], 5,
                               "agent_stop", "agent_stop"),
    "the step limit": ([_say(None, _call("get_user_all_orders", "{}"))], [_say("Hi")], 3,
                       "max_steps", "max_steps"),
    "the user's stop marker": ([], [_say("Never mind ###STOP###")], 300,
                               "user_stop", "user_stop"),
    "arguments that are no JSON": ([_say(None, _call("get_user_all_orders", "{oops"))],
                                   [_say("Hi")], 300, "malformed_tool_call", "crash"),
    "arguments that are a list": ([_say(None, _call("get_user_all_orders", "[1]"))],
                                  [_say("Hi")], 300, "malformed_tool_call", "crash"),
    "an empty user reply": ([], [_say("")], 300, "empty_user_reply", "crash"),
}


@pytest.mark.parametrize("name", list(EDGES))
async def test_terminations(ref: ReferenceRunner, imported: PromptSet, name: str) -> None:
    agent, user, max_steps, ours_end, theirs_end = EDGES[name]
    raw = load_tasks("delivery")[0]
    task = load_vitabench_file(VITA_DATA / "delivery" / "tasks_en.json").tasks[0]
    # agentsweep plays a failed trial 4 times (the paper profile's reruns): 4 scripts
    ours, record, ids = await our_trial(task, imported, agent * 4, user * 4,
                                        max_steps=max_steps)
    theirs, sim = ref.trial(raw, ["delivery"], agent, user, ids, max_steps=max_steps)
    assert record.termination == ours_end
    if theirs_end == "crash":
        assert isinstance(sim, Crashed)
        assert record.extra["dropped"] is True and record.extra["trial_attempt"] == 4
        assert [f["reason"] for f in record.extra["failed_attempts"]] == [ours_end] * 3
        first = {role: reqs[:len(theirs[role])] for role, reqs in ours.items()}
        assert differences(first, theirs) == []  # the first attempt, up to the failure
        assert sum(len(r) for r in ours.values()) == 4 * sum(len(r) for r in theirs.values())
    else:
        assert not isinstance(sim, Crashed) and sim.termination_reason == theirs_end
        assert differences(ours, theirs) == []
        assert record.extra["steps"] == _steps(sim.messages)


def _steps(messages: list[Any]) -> int:
    """The reference's step count of a trajectory: one per user message, agent message and
    batch of tool results (the greeting is none)."""
    steps, previous = 0, None
    for msg in messages[1:]:
        if msg.role != "tool" or previous != "tool":
            steps += 1
        previous = msg.role
    return steps
