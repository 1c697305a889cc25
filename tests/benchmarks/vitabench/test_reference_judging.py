"""The sliding-window judge under the paper profile's options (the reference's layout and
reading), without the reference: what each window's two messages hold, every canned answer
of judge_cases.py (the outcome and the number of calls the reference's rules give), the
judgement keys, scoring of a trial to rerun or dropped, and which units a resumed run plays
again. Expected values are derived from the reference's rules (docs/judges.md)."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from backends.types import ChatMessage, FunctionCall, ToolCall
from bench_data.types import Task
from evaluator.benchmarks import get
from evaluator.benchmarks.base import ScoreContext
from evaluator.benchmarks.vitabench.judge import judge_version, rerun_attempts
from evaluator.benchmarks.vitabench.judge_read import Unreadable, repair_loads
from evaluator.benchmarks.vitabench.judge_reference import (
    TRIAL_RERUN,
    env_info,
    reference_rubrics,
    status_json,
    window_lines,
)
from evaluator.benchmarks.vitabench.options import REFERENCE, VitaOptions
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash
from evaluator.records import EpisodeRecord, Judgement, UnitId
from evaluator.scoring import JudgementIndex

from .judge_cases import cases
from .parity_scripts import PAPER_JUDGE, our_judgement

RUBRICS = ["Order the noodles", "Deliver before 12:00", "Note: no cilantro"]


def make_task() -> Task:
    extra = {"time": "2025-06-21 11:20:00", "environment": {"time": "2025-06-21 11:20:00"},
             "instruction_text": "Order noodles.\n", "overall_rubrics": [RUBRICS[0], RUBRICS[2]],
             "expected_states": [{"state_rubrics": RUBRICS[:2]}],
             "rubric_sets": {"state": RUBRICS[:2], "union": RUBRICS}}
    return Task(benchmark="vitabench", subset="delivery", task_id="t1", rubrics=RUBRICS[:2],
                instructions="Order noodles.", extra=extra)


def _calls(*calls: tuple[str, str]) -> list[ToolCall]:
    return [ToolCall(id=f"c{i}", function=FunctionCall(name=n, arguments=a))
            for i, (n, a) in enumerate(calls)]


def make_record(termination: str = "agent_stop", attempt: int = 1) -> EpisodeRecord:
    msgs = [ChatMessage(role="system", content="sys"),
            ChatMessage(role="user", content="I want noodles.")]
    msgs.append(ChatMessage(role="assistant", content=None, tool_calls=_calls(
        ("delivery_store_search_recommand", json.dumps({"keywords": ["面", "noodles"]})),
        ("longitude_latitude_to_distance", '{"longitude1": 1.5, "latitude1": 2}'))))
    msgs += [ChatMessage(role="tool", content="Store(...)", tool_call_id="c0"),
             ChatMessage(role="tool", content="", tool_call_id="c1")]
    for i in range(4):
        msgs.append(ChatMessage(role="assistant", content=f"Option {i}?"))
        msgs.append(ChatMessage(role="user", content=f"Yes {i}"))
    msgs.append(ChatMessage(role="assistant", content="Bye ###STOP###"))
    return EpisodeRecord(unit=UnitId("r", "vitabench/delivery/t1", 0, 0), benchmark="vitabench",
                         subset="delivery", task_id="t1", messages=msgs, termination=termination,
                         extra={"greeting": "Hello, how can I help you?",
                                "trial_attempt": attempt})


def test_window_lines_are_the_references() -> None:
    record = make_record()
    turns = [ChatMessage(role="assistant", content="Hello, how can I help you?"),
             *record.messages[1:]]
    lines = window_lines(turns[:6], 0).split("\n")
    assert lines[0] == "[1] assistant: Hello, how can I help you?"
    assert lines[1] == "[2] user: I want noodles."
    # calls: name(k=repr(v)) joined by "."; arguments as parsed JSON values
    assert lines[2] == ("[3] assistant: delivery_store_search_recommand(keywords=['面', "
                        "'noodles']).longitude_latitude_to_distance(longitude1=1.5, latitude1=2)")
    assert lines[3] == "[4] tool: Store(...)"
    assert len(lines) == 5 and lines[4].startswith("[6] ")  # an empty tool result: no line
    text = ChatMessage(role="assistant", content="Looking.", tool_calls=_calls(("f", "{oops")))
    assert window_lines([text], 8) == "[9] assistant: Looking. f({oops)"


def test_states_environment_and_rubric_list() -> None:
    task = make_task()
    assert reference_rubrics(task, "union") == RUBRICS
    assert reference_rubrics(task, "state") == RUBRICS[:2]
    assert env_info(task, []) == "{'system_time': '2025-06-21 11:20:00 Saturday', 'database': []}"
    states = {"rubric_0": {"rubric": "Ñ", "justification": "Not evaluated yet",
                           "meetExpectation": False}}
    assert status_json(states) == ('[\n  {\n    "rubric_idx": "rubric_0",\n    "rubric": "Ñ",\n'
                                   '    "justification": "Not evaluated yet",\n'
                                   '    "meetExpectation": false\n  }\n]')


async def test_each_window_sends_the_references_two_messages() -> None:
    answers = [json.dumps([{"rubric_idx": "rubric_0", "justification": 5,
                            "meetExpectation": "true"}]), "[]"]
    requests, j = await our_judgement(make_task(), make_record(), None, answers)
    assert len(requests) == 2
    system, user = (ChatMessage(**m) for m in requests[0]["messages"])
    assert system.role == "system" and user.role == "user"
    assert "{'system_time': '2025-06-21 11:20:00 Saturday', 'database': []}" in system.content
    assert "Order noodles.\n" in system.content and "window 1 of 2" in system.content
    assert "[1] assistant: Hello" in user.content and "[10] " in user.content
    assert "[5] " not in user.content and "[11] " not in user.content  # [5]: an empty result
    # the second window starts at message 9 and carries the answer's values as given
    second = requests[1]["messages"][1]["content"]
    assert second.split("<window_content>\n")[1].startswith("[9] ")
    assert '"justification": 5,\n    "meetExpectation": "true"' in second
    # ... and a justification that is not a string fails the trial at the end
    assert j.score is None and j.error.startswith(f"{TRIAL_RERUN}: final states")


@pytest.mark.parametrize("case", cases(len(RUBRICS)), ids=lambda c: c[0])
async def test_canned_answers(case: tuple[str, list[str], tuple[Any, ...], int]) -> None:
    _, answers, expected, calls = case
    requests, j = await our_judgement(make_task(), make_record(), None, answers)
    assert len(requests) == calls
    if expected == ("rerun",):
        assert j.score is None and j.error.startswith(TRIAL_RERUN), j
    else:
        scores = {f"rubric_{i}": v for i, v in expected[2].items()}
        assert (j.score, j.scores, j.error) == (expected[1], scores, None)


async def test_the_tolerant_reader_retries_and_keeps_states() -> None:
    tolerant = msgspec.structs.replace(REFERENCE, judge_reader="tolerant")
    answers = ["no idea", "still none", "nothing", json.dumps(
        [{"meetExpectation": True}, {"meetExpectation": True}, {"meetExpectation": True}])]
    requests, j = await our_judgement(make_task(), make_record(), None, answers, tolerant)
    assert len(requests) == 4  # window 1: 3 attempts; window 2: items matched by position
    assert j.score == 1.0 and j.warnings and j.warnings[0].startswith("window 1/2")


def test_repair_loads_rules() -> None:
    assert repair_loads('x\n```json\n[1, 2,]\n```') == [1, 2]
    assert repair_loads("# title\n[None, True]") == [None, True]
    assert repair_loads("[1] then [2]") == [2]  # the same shape again: replaced
    assert repair_loads("[1] then [2, 3]") == [[1], [2, 3]]
    assert repair_loads('[{"a": "b') == [{"a": "b"}]
    assert repair_loads('[{"a": 1}, {') == [{"a": 1}]
    for text in ("prose only", "", "see #[1]", None):
        with pytest.raises(Unreadable):
            repair_loads(text)


def test_judgement_keys_follow_the_options_and_the_prompt_set() -> None:
    s = PAPER_JUDGE
    assert judge_version(JudgeSettings(), None, None) == "sliding-window-v3+w10d2"
    assert judge_version(s, None, REFERENCE) == (
        "sliding-window-v3+w10d2+rubrics-union+ref+refread+keepmet")
    tolerant = msgspec.structs.replace(REFERENCE, judge_reader="tolerant")
    assert judge_version(s, None, tolerant) == "sliding-window-v3+w10d2+rubrics-union+ref+keepmet"
    spec = get("vitabench").judges["sliding_window"]
    assert spec.key_version(s, None, REFERENCE) == judge_version(s, None, REFERENCE)


def _judgement(record: EpisodeRecord, error: str | None, options: VitaOptions) -> Judgement:
    return Judgement(unit=record.unit, trajectory_hash=trajectory_hash(record), judge_model="m",
                     prompt_version=judge_version(PAPER_JUDGE, None, options),
                     kind="sliding_window", score=None if error else 1.0, error=error,
                     scores={} if error else {"rubric_0": 1.0}, created_at=0.0)


@pytest.mark.parametrize("attempt, want", [(1, "awaiting its rerun"), (3, "awaiting its rerun"),
                                           (4, "trial dropped")])
def test_a_trial_to_rerun_is_not_scored(attempt: int, want: str) -> None:
    record = make_record(attempt=attempt)
    j = _judgement(record, f"{TRIAL_RERUN}: window 1/2: the answer is an object", REFERENCE)
    index = JudgementIndex([j], "m")
    unit = get("vitabench").score(record, index, ScoreContext(PAPER_JUDGE, None, REFERENCE))
    assert unit is not None and unit.score is None and unit.judge_error.startswith(want)
    kept = msgspec.structs.replace(REFERENCE, trial_failures="keep")
    index = JudgementIndex([_judgement(record, j.error, kept)], "m")
    unit = get("vitabench").score(record, index, ScoreContext(PAPER_JUDGE, None, kept))
    assert unit is not None and unit.judge_error.startswith(TRIAL_RERUN)  # a judge error


def test_rerun_attempts_reads_the_run(tmp_path) -> None:
    records = [make_record(attempt=a) for a in (1, 4)]
    records[1] = msgspec.structs.replace(records[1], unit=UnitId("r", "vitabench/delivery/t1",
                                                                 1, 1))
    records.append(msgspec.structs.replace(make_record(), unit=UnitId("r", "x/y/z", 2, 2),
                                           messages=records[0].messages[:3]))
    (tmp_path / "episodes.jsonl").write_bytes(
        b"".join(msgspec.json.encode(r) + b"\n" for r in records))
    err = f"{TRIAL_RERUN}: window 1/2: no JSON in the answer"
    judgements = [_judgement(records[0], err, REFERENCE), _judgement(records[2], None,
                                                                      REFERENCE)]
    (tmp_path / "judgements.jsonl").write_bytes(
        b"".join(msgspec.json.encode(j) + b"\n" for j in judgements))
    # records 0 and 1 share a trajectory: the first has reruns left, the second (attempt 4)
    # none; record 2 was judged
    assert rerun_attempts(tmp_path, REFERENCE) == {records[0].unit.key: 1}
    assert get("vitabench").reruns(tmp_path, REFERENCE) == {records[0].unit.key}
    assert rerun_attempts(tmp_path, VitaOptions()) == {}
    assert rerun_attempts(tmp_path / "nothing", REFERENCE) == {}
