"""`judge.window_final_state`: the sliding-window judge sees the database records the episode
created or changed (off by default, as the reference, whose judge sees an empty database);
recorded in the prompt version, so judgements with and without it never mix."""

from __future__ import annotations

import json

from backends.types import ChatMessage
from bench_data.types import Task
from evaluator.benchmarks import get
from evaluator.benchmarks.base import JudgeInput, ScoreContext
from evaluator.config import load_config
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.sliding_window import (
    FINAL_STATE_HEADING,
    SLIDING_WINDOW_KIND,
    prompt_version,
)
from evaluator.judges.transcript import trajectory_hash
from evaluator.scoring import JudgementIndex
from tests.evaluator.judge_fakes import ScriptedClient, make_record

ORDER = {"order_id": "OT0000000001", "status": "paid", "note": "no chili, 辣"}
VERDICT = ('{"rubrics": [{"rubric_key": "rubric_0", "justification": "[2] paid", '
           '"satisfied": true}]}')


def _task() -> Task:
    return Task(benchmark="vitabench", subset="delivery", task_id="t1",
                rubrics=["The order is paid"], instructions="order noodles",
                extra={"time": "2025-06-21 11:20:00"})


def _record(changes: dict | None):
    rec = make_record("delivery", benchmark="vitabench", messages=[
        ChatMessage(role="system", content="sys"),
        ChatMessage(role="user", content="noodles please"),
        ChatMessage(role="assistant", content="ordered and paid"),
    ])
    rec.extra = {"db_changes": changes} if changes is not None else {}
    return rec


async def _judge(settings: JudgeSettings, changes: dict | None):
    client = ScriptedClient(lambda prompt, i: VERDICT)
    spec = get("vitabench").judges[SLIDING_WINDOW_KIND]
    rec = _record(changes)
    j = await spec.run(JudgeInput(record=rec, task=_task(), thash="h1", settings=settings,
                                  prompts=None, tools=None, client=client, model="m"))
    return j, [c["prompt"] for c in client.calls], rec


def test_versions():
    assert prompt_version(10, 2) == "sliding-window-v3+w10d2"
    assert prompt_version(10, 2, True) == "sliding-window-v3+w10d2+state"
    version = get("vitabench").judges[SLIDING_WINDOW_KIND].version
    assert version(JudgeSettings(), None) == "sliding-window-v3+w10d2"
    assert version(JudgeSettings(window_final_state=True), None) == \
        "sliding-window-v3+w10d2+state"
    assert version(JudgeSettings(rubric_set="union"), None) == \
        "sliding-window-v3+w10d2+rubrics-union"
    cfg, _ = load_config(None, [("judge.window_final_state", True, "--set")])
    assert cfg.judge.window_final_state is True
    assert load_config(None, [])[0].judge.window_final_state is False


async def test_off_by_default_the_prompt_has_no_state():
    j, prompts, _ = await _judge(JudgeSettings(), {"orders": {ORDER["order_id"]: ORDER}})
    assert len(prompts) == 1 and j.score == 1.0
    assert j.prompt_version == "sliding-window-v3+w10d2"
    assert FINAL_STATE_HEADING not in prompts[0] and "OT0000000001" not in prompts[0]
    # the reference's env_info: the time with its weekday, no database, no addresses
    assert "# Environment\nCurrent time: 2025-06-21 11:20:00 Saturday\n\n# What the user " \
        "wanted" in prompts[0]


async def test_on_the_judge_sees_the_changed_records():
    j, prompts, rec = await _judge(JudgeSettings(window_final_state=True),
                                   {"orders": {ORDER["order_id"]: ORDER}})
    assert j.prompt_version == "sliding-window-v3+w10d2+state"
    want = (f"{FINAL_STATE_HEADING} (for checking what really happened)\n"
            "Database records created or changed (per table, as they were left):\n"
            + json.dumps({"orders": {ORDER["order_id"]: ORDER}}, ensure_ascii=False))
    assert want in prompts[0] and "辣" in prompts[0]
    _, prompts, _ = await _judge(JudgeSettings(window_final_state=True), {})
    assert f"{FINAL_STATE_HEADING} (for checking what really happened)\nNo database " \
        "records were created or changed." in prompts[0]
    # scoring looks the judgement up under the version of the run's settings
    bench = get("vitabench")
    j.trajectory_hash = trajectory_hash(rec)
    index = JudgementIndex([j], "m")
    on = bench.score(rec, index, ScoreContext(JudgeSettings(window_final_state=True)))
    off = bench.score(rec, index, ScoreContext(JudgeSettings()))
    assert on.score == 1.0 and on.success
    assert off.score is None and off.judge_error == "not judged"
