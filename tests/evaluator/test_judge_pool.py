import json

import msgspec
import pytest

from backends.errors import ConnectionFailed
from backends.types import ChatMessage
from bench_data.types import Task
from evaluator.judges.pool import JudgePool, read_judgements
from evaluator.judges.settings import JudgeSettings
from evaluator.scoring import score_run

from .judge_fakes import ScriptedClient, make_record

GOOD_SINGLE = json.dumps({d: {"reasoning": "r", "rating": "Good"} for d in
                          ("reasoning_planning", "summarization_extraction", "presentation")})
GOOD_MULTI = json.dumps({d: {"reasoning": "r", "rating": "Excellent"} for d in
                         ("reasoning_planning", "summarization_extraction", "presentation",
                          "user_interaction")})
META_4 = '{"reasoning": "slightly generous", "rating": "Good"}'


def answer(prompt: str, i: int) -> str:
    if "auditing an evaluation" in prompt:
        return META_4
    if "user_interaction" in prompt:
        return GOOD_MULTI
    if "answer garbage" in prompt:
        return "I cannot rate this."
    return GOOD_SINGLE


def _episodes(run_dir, records):
    enc = msgspec.json.Encoder()
    with open(run_dir / "episodes.jsonl", "wb") as fh:
        fh.writelines(enc.encode(r) + b"\n" for r in records)


async def test_pool_judges_streamed_records(tmp_path):
    client = ScriptedClient(answer)
    pool = JudgePool(tmp_path, JudgeSettings(concurrency=3), client=client)
    await pool.start()
    recs = [make_record("single_turn", "s1", calls=2, errors=1), make_record("multi_turn", "m1"),
            make_record("unsolvable", "u1")]
    for r in recs:
        await pool.submit(r)
    await pool.close()
    js = read_judgements(tmp_path)
    kinds = sorted((j.unit.task.split("/")[1], j.kind) for j in js)
    assert kinds == [("multi_turn", "meta"), ("multi_turn", "travel_rubric"),
                     ("single_turn", "meta"), ("single_turn", "travel_rubric"),
                     ("unsolvable", "unsolvable")]
    assert all(j.judge_model in ("judge-m", "rule") for j in js)
    # judge requests: structured output, temperature 0
    assert all(c["sampling"].temperature == 0.0 for c in client.calls)
    assert all(c["response_format"]["type"] == "json_schema" for c in client.calls)
    _episodes(tmp_path, recs)
    by = {u.task_id: u for u in score_run(tmp_path, JudgeSettings(model="judge-m"))}
    assert by["s1"].score == pytest.approx(0.75 * 0.8 * 0.5)
    assert by["m1"].score == pytest.approx(1.0 * 0.8)
    assert by["u1"].score == 0.0


async def test_unparseable_is_retried_then_recorded_as_judge_error(tmp_path):
    client = ScriptedClient(answer)
    settings = JudgeSettings(max_attempts=3, retry_temperature=0.5)
    pool = JudgePool(tmp_path, settings, client=client)
    await pool.start()
    rec = make_record("single_turn", "bad", messages=[
        ChatMessage(role="user", content="q"),
        ChatMessage(role="assistant", content="answer garbage")])
    await pool.submit(rec)
    await pool.close()
    [j] = read_judgements(tmp_path)
    assert j.score is None and "unparseable" in j.error and j.attempts == 3
    assert len(client.calls) == 3  # no meta-judge after a failed rubric
    temps = [c["sampling"].temperature for c in client.calls]
    assert temps == [0.0, 0.5, 0.5]
    assert pool.stats.judge_errors == 1


async def test_recovers_after_a_bad_answer(tmp_path):
    client = ScriptedClient(lambda p, i: "garbage" if i == 0 else answer(p, i))
    pool = JudgePool(tmp_path, JudgeSettings(meta_judge=False), client=client)
    await pool.start()
    await pool.submit(make_record("single_turn", "s1"))
    await pool.close()
    [j] = read_judgements(tmp_path)
    assert j.score == pytest.approx(0.75) and j.attempts == 2


async def test_infrastructure_errors_are_not_judge_errors(tmp_path, monkeypatch):
    import evaluator.judges.call as call_mod

    async def no_sleep(_):
        return None

    monkeypatch.setattr(call_mod.asyncio, "sleep", no_sleep)
    client = ScriptedClient(lambda p, i: ConnectionFailed("down"))
    pool = JudgePool(tmp_path, JudgeSettings(infra_attempts=2), client=client)
    await pool.start()
    await pool.submit(make_record("single_turn", "s1"))
    await pool.close()
    assert read_judgements(tmp_path) == []
    assert pool.stats.infra_failed == 1 and len(client.calls) == 2


async def test_judge_run_skips_judged_keys_unless_rerun(tmp_path):
    recs = [make_record("single_turn", "s1"), make_record("single_turn", "s2"),
            make_record("unsolvable", "u1")]
    _episodes(tmp_path, recs)
    client = ScriptedClient(answer)
    stats = await JudgePool(tmp_path, JudgeSettings(), client=client).judge_run()
    assert stats.judged == 5 and len(client.calls) == 4
    stats = await JudgePool(tmp_path, JudgeSettings(), client=client).judge_run()
    assert stats.judged == 0 and stats.skipped_done == 5 and len(client.calls) == 4
    stats = await JudgePool(tmp_path, JudgeSettings(), client=client).judge_run(rerun=True)
    assert stats.judged == 5 and len(client.calls) == 8
    assert len(read_judgements(tmp_path)) == 10


async def test_torn_judgement_line_is_ignored(tmp_path):
    _episodes(tmp_path, [make_record("unsolvable", "u1")])
    await JudgePool(tmp_path, JudgeSettings(), client=ScriptedClient(answer)).judge_run()
    path = tmp_path / "judgements.jsonl"
    path.write_bytes(path.read_bytes() + b'{"unit": {"run": "r", "ta')
    assert len(read_judgements(tmp_path)) == 1
    stats = await JudgePool(tmp_path, JudgeSettings(), client=ScriptedClient(answer)).judge_run()
    assert stats.skipped_done == 1
    assert (tmp_path / "judgements.jsonl").read_bytes().endswith(b"\n")


async def test_rubric_tasks_use_the_sliding_window(tmp_path):
    task = Task(benchmark="vitabench", subset="delivery", task_id="v1", rubrics=["r0"])
    rec = make_record("delivery", "v1", benchmark="vitabench")
    client = ScriptedClient(lambda p, i: '{"rubrics": [{"rubric_key": "rubric_0", '
                            '"justification": "j", "satisfied": true, "overturned": false}]}')
    pool = JudgePool(tmp_path, JudgeSettings(), client=client, tasks={task.key: task})
    await pool.start()
    await pool.submit(rec)
    await pool.submit(make_record("delivery", "unknown", benchmark="vitabench"))
    await pool.close()
    [j] = read_judgements(tmp_path)
    assert j.kind == "sliding_window" and j.score == 1.0
    assert pool.stats.unjudgeable == {"rubric task not found": 1}


class SlowClient(ScriptedClient):
    """Yields to the loop inside every call, so concurrent workers really overlap."""

    async def chat(self, messages, **kw):
        import asyncio

        await asyncio.sleep(0.01)
        return await super().chat(messages, **kw)


@pytest.mark.parametrize("rerun", [False, True])
async def test_identical_trajectories_in_flight_are_judged_once(tmp_path, rerun):
    base = make_record("single_turn", "s1", 0, calls=1)
    recs = [base] + [msgspec.structs.replace(make_record("single_turn", "s1", t, calls=1),
                                             messages=base.messages) for t in (1, 2, 3)]
    client = SlowClient(answer)
    pool = JudgePool(tmp_path, JudgeSettings(concurrency=4, rerun=rerun), client=client)
    await pool.start()
    for r in recs:
        await pool.submit(r)
    await pool.close()
    assert len(client.calls) == 2  # one rubric + one meta call for the shared trajectory
    assert sorted(j.kind for j in read_judgements(tmp_path)) == ["meta", "travel_rubric"]
    _episodes(tmp_path, recs)
    scores = score_run(tmp_path, JudgeSettings(model="judge-m"))
    assert len(scores) == 4 and len({s.score for s in scores}) == 1
    assert scores[0].score is not None


async def test_drain_stops_when_asked_and_keeps_what_is_judged(tmp_path):
    """`drain(stop)`: judged and written, unless stopped first; then what is judged is on
    disk, what was in flight is not (it stays owed), and a later pool judges only that."""
    import asyncio

    from evaluator.judges.owed import count_owed

    class StuckOnMeta(ScriptedClient):
        async def chat(self, messages, **kw):
            if "auditing an evaluation" in messages[-1].content:
                await asyncio.Event().wait()   # a meta-judge that never answers
            return await super().chat(messages, **kw)

    recs = [make_record("single_turn", "s1"), make_record("unsolvable", "u1")]
    _episodes(tmp_path, recs)
    settings = JudgeSettings(concurrency=2)
    pool = JudgePool(tmp_path, settings, client=StuckOnMeta(answer))
    await pool.start()
    for r in recs:
        await pool.submit(r)
    stop = asyncio.Event()
    draining = asyncio.create_task(pool.drain(stop))
    for _ in range(500):   # until the rubric is written and the meta-judge asked
        if pool.stats.judged >= 2:
            break
        await asyncio.sleep(0.01)
    stop.set()
    assert await asyncio.wait_for(draining, 60) is False
    assert sorted(j.kind for j in read_judgements(tmp_path)) == ["travel_rubric", "unsolvable"]
    owed = count_owed(tmp_path, settings, "judge-m", None, {})
    assert (owed.episodes, owed.judgements) == (1, 1)       # s1's meta-judgement
    done = JudgePool(tmp_path, settings, client=ScriptedClient(answer))
    stats = await done.judge_run()
    assert stats.judged == 1 and count_owed(tmp_path, settings, "judge-m", None, {}).episodes == 0
    # nothing to judge: drain returns at once, as close() does
    again = JudgePool(tmp_path, settings, client=ScriptedClient(answer))
    await again.start()
    assert await asyncio.wait_for(again.drain(asyncio.Event()), 10) is True
