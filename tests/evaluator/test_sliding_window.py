import itertools

import pytest

from backends.types import ChatMessage
from bench_data.types import Task
from evaluator.judges.call import JudgeFailed
from evaluator.judges.parse import WindowItem
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.sliding_window import (
    RubricState,
    apply_window,
    judge_sliding_window,
    llm_window_judge,
    make_windows,
)

from .judge_fakes import ScriptedClient, make_record


@pytest.mark.parametrize("n,w,d", [(0, 10, 2), (1, 10, 2), (10, 10, 2), (11, 10, 2),
                                   (25, 10, 2), (40, 10, 2), (7, 3, 1), (9, 4, 0)])
def test_windows_cover_all_turns_with_overlap(n, w, d):
    windows = make_windows(n, w, d)
    covered = set()
    for s, e in windows:
        assert 0 < e - s <= w
        covered.update(range(s, e))
    assert covered == set(range(n))
    for (_, e1), (s2, _) in itertools.pairwise(windows):
        assert e1 - s2 == d  # neighbours share exactly delta turns
    assert make_windows(25, 10, 2) == [(0, 10), (8, 18), (16, 25)]


def test_bad_geometry():
    with pytest.raises(ValueError):
        make_windows(5, 3, 3)


def test_each_answer_is_the_new_state_and_silence_keeps_it():
    s = RubricState.initial(["a", "b"])
    s = apply_window(s, {"a": WindowItem(True, justification="[3] ordered"),
                         "b": WindowItem(False, justification="nothing yet")})
    assert s.satisfied == {"a": True, "b": False}
    assert s.notes == {"a": "[3] ordered", "b": "nothing yet"}
    # the reference overwrites status and justification with the window's answer: a later
    # false is a false (the prompt, not the code, tells the judge to keep met rubrics met)
    s = apply_window(s, {"a": WindowItem(False, justification="[12] cancelled")})
    assert s.satisfied == {"a": False, "b": False}
    assert s.notes == {"a": "[12] cancelled", "b": "nothing yet"}   # b left out: kept
    s = apply_window(s, {"b": WindowItem(True, justification="[14] paid")})
    assert s.satisfied == {"a": False, "b": True} and s.notes["b"] == "[14] paid"


def _task(n_rubrics=2):
    return Task(benchmark="vitabench", subset="delivery", task_id="v1",
                rubrics=[f"rule {i}" for i in range(n_rubrics)], instructions="order noodles")


def _record(n_turns):
    msgs = [ChatMessage(role="system", content="sys")] + [
        ChatMessage(role="user" if i % 2 == 0 else "assistant", content=f"turn {i}")
        for i in range(n_turns)]
    return make_record("delivery", "v1", benchmark="vitabench", messages=msgs)


async def test_scripted_windows_drive_the_state():
    seen = []
    script = [
        {"rubric_0": WindowItem(True, justification="w1"), "rubric_1": WindowItem(False)},
        {"rubric_1": WindowItem(True, justification="w2")},
        {"rubric_0": WindowItem(False, justification="w3 undone")},
    ]

    async def judge(req):
        seen.append((req.index, req.count, req.first_turn, req.last_turn, len(req.turns),
                     dict(req.state.satisfied), dict(req.state.notes)))
        return script[req.index - 1], 1, f"w{req.index}"

    j = await judge_sliding_window(_record(25), _task(), judge, "m", JudgeSettings())
    assert [s[:5] for s in seen] == [(1, 3, 0, 9, 10), (2, 3, 8, 17, 10), (3, 3, 16, 24, 9)]
    assert seen[2][5] == {"rubric_0": True, "rubric_1": True}  # state is carried forward
    assert seen[2][6] == {"rubric_0": "w1", "rubric_1": "w2"}  # and so are justifications
    assert j.scores == {"rubric_0": 0.0, "rubric_1": 1.0}
    assert j.reasoning == {"rubric_0": "w3 undone", "rubric_1": "w2"}
    assert j.score == 0.0 and j.error is None and j.warnings == []


async def test_a_failed_window_keeps_the_states_and_the_next_goes_on():
    async def judge(req):
        if req.index == 2:
            raise JudgeFailed("unparseable judge output", 3, "garbage")
        return {k: WindowItem(req.index == 1 or k == "rubric_1") for k in req.rubrics}, 1, "ok"

    j = await judge_sliding_window(_record(25), _task(), judge, "m", JudgeSettings())
    # window 1 set both, window 2 failed (kept), window 3 set rubric_0 back to false
    assert j.error is None and j.score == 0.0
    assert j.scores == {"rubric_0": 0.0, "rubric_1": 1.0}
    assert j.warnings == ["window 2/3: unparseable judge output"]
    assert j.attempts == 1 + 3 + 1 and "[window 2: failed, states kept]\ngarbage" in j.raw


async def test_all_satisfied_is_success_and_no_window_judged_is_a_judge_error():
    async def yes(req):
        return {k: WindowItem(True) for k in req.rubrics}, 1, "ok"

    j = await judge_sliding_window(_record(4), _task(3), yes, "m", JudgeSettings())
    assert j.score == 1.0

    async def broken(req):
        raise JudgeFailed("unparseable judge output", 3, "garbage")

    j = await judge_sliding_window(_record(4), _task(), broken, "m", JudgeSettings())
    assert j.score is None and "every window failed; window 1/1" in j.error
    assert j.attempts == 3
    j = await judge_sliding_window(_record(25), _task(), broken, "m", JudgeSettings())
    assert j.score is None and j.attempts == 9


async def test_llm_window_judge_with_fake_client():
    def answer(prompt, i):
        assert "rule 0" in prompt and "order noodles" in prompt
        return ('{"rubrics": [{"rubric_key": "rubric_0", "justification": "done", '
                '"satisfied": true}, {"rubric_key": "rubric_1", '
                '"justification": "no", "satisfied": false}]}')

    client = ScriptedClient(answer)
    settings = JudgeSettings(window_turns=4, window_overlap=1)
    judge = llm_window_judge(_task(), client, "m", settings)
    j = await judge_sliding_window(_record(10), _task(), judge, "m", settings)
    assert len(client.calls) == 3  # windows (0,4) (3,7) (6,10)
    assert j.scores == {"rubric_0": 1.0, "rubric_1": 0.0}
    assert client.calls[0]["response_format"]["type"] == "json_schema"
