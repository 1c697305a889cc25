"""What VitaBench's sliding-window judge is given, against the reference evaluator's rules
(../shared/notes/vitabench_reference.md §6): the greeting is the trajectory's first message
and counts in the windows; the judge reads the user's instruction text (not the simulator's
persona); the rubric list is the state rubrics unless `judge.rubric_set` says otherwise; and
every request of one task starts with the same text, so the server's prefix cache serves the
windows, the trials and any re-judging of that task."""

from __future__ import annotations

import os

from backends.types import ChatMessage
from bench_data.types import Task
from evaluator.benchmarks import get
from evaluator.benchmarks.base import JudgeInput
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.sliding_window import SLIDING_WINDOW_KIND
from tests.evaluator.judge_fakes import ScriptedClient, make_record

SETS = {"state": ["order placed", "paid"], "overall": ["paid", "polite"],
        "union": ["order placed", "paid", "polite"]}


def _task() -> Task:
    return Task(benchmark="vitabench", subset="delivery", task_id="t1", rubrics=SETS["state"],
                instructions="Order noodles.\n\nYour profile:\n- age: 33",
                extra={"time": "2025-06-23 09:00:00", "instruction_text": "Order noodles.",
                       "rubric_sets": SETS})


def _record(n: int, trial: int = 0, greeting: str = "Hello, how can I help you?"):
    msgs = [ChatMessage(role="system", content="sys")] + [
        ChatMessage(role="user" if i % 2 == 0 else "assistant", content=f"m{i} of {trial}")
        for i in range(n)]
    rec = make_record("delivery", trial=trial, benchmark="vitabench", messages=msgs)
    rec.extra = {"greeting": greeting} if greeting else {}
    return rec


async def _prompts(record, settings: JudgeSettings) -> tuple[object, list[str]]:
    def answer(prompt: str, i: int) -> str:
        return '{"rubrics": [{"rubric_key": "rubric_0", "justification": "x", "satisfied": true}]}'

    client = ScriptedClient(answer)
    spec = get("vitabench").judges[SLIDING_WINDOW_KIND]
    j = await spec.run(JudgeInput(record=record, task=_task(), thash="h", settings=settings,
                                  prompts=None, tools=None, client=client, model="m"))
    return j, [c["prompt"] for c in client.calls]


async def test_the_greeting_is_message_0_and_counts_in_the_windows():
    # 9 messages + the greeting = 10: one window, as the reference cuts it
    _, prompts = await _prompts(_record(9), JudgeSettings())
    assert len(prompts) == 1
    assert "(messages 0 to 9)" in prompts[0]
    assert prompts[0].index("Hello, how can I help you?") < prompts[0].index("m0 of 0")
    # 10 messages + the greeting = 11: two windows (0-9, 8-10)
    _, prompts = await _prompts(_record(10), JudgeSettings())
    assert [p.count("# Window ") for p in prompts] == [1, 1]
    assert "(messages 8 to 10)" in prompts[1]
    # a record without a greeting (another protocol) is judged from its first message
    _, prompts = await _prompts(_record(9, greeting=""), JudgeSettings())
    assert "(messages 0 to 8)" in prompts[0]


async def test_the_judge_reads_the_instruction_text_not_the_persona():
    _, prompts = await _prompts(_record(3), JudgeSettings())
    assert "Order noodles." in prompts[0]
    assert "Your profile" not in prompts[0] and "age: 33" not in prompts[0]
    assert "Current time: 2025-06-23 09:00:00 Monday" in prompts[0]


async def test_the_rubric_set():
    for name, want in [("", SETS["state"]), *SETS.items()]:
        j, prompts = await _prompts(_record(3), JudgeSettings(rubric_set=name))
        assert list(j.scores) == [f"rubric_{i}" for i in range(len(want))], name
        for i, text in enumerate(want):
            assert f"- rubric_{i}: {text}\n" in prompts[0], name
        # rubrics the answer left out keep their state (false): only rubric_0 is met
        assert j.score == 0.0 and j.scores["rubric_0"] == 1.0


async def test_one_task_shares_one_prefix_across_windows_trials_and_rejudging():
    _, a = await _prompts(_record(30, trial=0), JudgeSettings())
    _, b = await _prompts(_record(30, trial=1), JudgeSettings())
    assert len(a) == 4
    head = os.path.commonprefix([*a, *b])
    # everything that depends only on the task comes before the first window-dependent line
    assert head.endswith("\n# Window ")
    for text in ("Order noodles.", "- rubric_1: paid", "Current time:", "# Output"):
        assert text in head
    # the shared part is most of a request here (the windows are short)
    assert len(head) > 0.5 * min(map(len, a))
