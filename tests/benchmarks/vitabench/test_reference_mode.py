"""The VitaBench protocol under the paper profile's options (the reference's rendering and
termination rules), with scripted models over a real delivery task and the built-in prompts.
Expected values follow the reference's rules (docs/vitabench.md, "Reference mode"): what the
prompts carry, that nothing is stripped, how arguments are re-serialised, named tool
messages, three empty replies, the limit on the last step, and trial reruns with a fresh
database until the trial is dropped."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from backends.errors import HTTPStatusError
from backends.types import ChatMessage, ChatResponse, Choice, FunctionCall, ToolCall, Usage
from evaluator.benchmarks import get
from evaluator.benchmarks.base import ScoreContext, Unjudgeable
from evaluator.benchmarks.vitabench.environment import VitaEpisodes
from evaluator.benchmarks.vitabench.options import REFERENCE, VitaOptions
from evaluator.benchmarks.vitabench.prompting import (
    USER_ID_LINE,
    agent_system_prompt,
    user_system_prompt,
)
from evaluator.benchmarks.vitabench.protocol import run_episode
from evaluator.judges.settings import JudgeSettings
from evaluator.protocols import EpisodeContext, ProtocolSettings
from evaluator.records import UnitId

from .test_protocol import _order_call, _task


class Scripted:
    """Answers from a script; an exception in the script is raised instead."""

    def __init__(self, script: list[Any]) -> None:
        self.model = "fake"
        self.script = list(script)
        self.requests: list[list[ChatMessage]] = []

    async def complete(self, messages, *, tools=None, tool_choice=None, response_format=None):
        self.requests.append(msgspec.convert(msgspec.to_builtins(list(messages)),
                                             list[ChatMessage]))
        assert self.script, "script exhausted"
        answer = self.script.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return ChatResponse(id="r", model="fake", usage=Usage(prompt_tokens=10),
                            choices=[Choice(index=0, message=answer)])


def say(text: str | None, *calls: ToolCall) -> ChatMessage:
    return ChatMessage(role="assistant", content=text, tool_calls=list(calls) or None)


def ctx(task: Any, agent: Scripted, user: Scripted, options: VitaOptions = REFERENCE,
        max_steps: int = 300, attempts: dict[str, int] | None = None) -> EpisodeContext:
    unit = UnitId("r", task.key, 0, 0)
    return EpisodeContext(unit=unit, task=task, agent=agent, user=user,
                          sandbox=VitaEpisodes(attempts=attempts).episode(task),
                          settings=ProtocolSettings(max_steps=max_steps, options=options))


def test_agent_and_user_prompts_follow_the_options() -> None:
    task, env = _task()
    paper = ProtocolSettings(options=REFERENCE)
    text = agent_system_prompt(task, paper)
    time = env["time"]
    from datetime import datetime

    day = datetime.strptime(time, "%Y-%m-%d %H:%M:%S").strftime("%A")
    assert f"{time} {day}" in text and env["user_id"] not in text and "###STOP###" in text
    project = agent_system_prompt(task, ProtocolSettings())
    assert project.endswith(USER_ID_LINE.format(user_id=env["user_id"]))
    assert f"{time} {day}" not in project and time in project
    # the persona: the Python repr of the profile (the reference's str(user_profile))
    user = user_system_prompt(task, paper)
    assert str(task.extra["user_profile"]) in user and "###STOP###" not in user
    assert task.extra["instruction_text"] in user
    bullets = user_system_prompt(task, ProtocolSettings())
    key, value = next(iter(task.extra["user_profile"].items()))
    assert f"- {key}: {value}" in bullets and bullets.rstrip().endswith(
        "###STOP### alone as your message; never write it before then.")


async def test_nothing_is_stripped_arguments_are_reserialised_and_tools_named() -> None:
    task, env = _task()
    call = _order_call(env, 1)
    args = json.loads(call.function.arguments)
    args["note"] = "不要香菜"
    call.function.arguments = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
    empty = ToolCall(id="c2", function=FunctionCall(name="get_user_all_orders", arguments=""))
    agent = Scripted([say("  Placing it.\n", call, empty), say(" Done. "), say("###STOP###")])
    user = Scripted([say(" I want lunch.\n"), say("thanks ")])
    record = await run_episode(ctx(task, agent, user))
    assert record.termination == "agent_stop"
    assistant = record.messages[2]
    assert assistant.content == "  Placing it.\n"
    assert assistant.tool_calls[0].function.arguments == json.dumps(args)  # ensure_ascii
    assert "\\u4e0d" in assistant.tool_calls[0].function.arguments
    assert assistant.tool_calls[1].function.arguments == "{}"
    tools = [m for m in record.messages if m.role == "tool"]
    assert [(m.name, m.tool_call_id) for m in tools] == [("create_delivery_order", "c1"),
                                                         ("get_user_all_orders", "c2")]
    assert record.messages[1].content == " I want lunch.\n"
    # the simulator sees the agent's reply as written, its own message as written
    assert user.requests[1][-2:] == [ChatMessage(role="assistant", content=" I want lunch.\n"),
                                     ChatMessage(role="user", content=" Done. ")]
    assert record.extra["trial_attempt"] == 1 and "failed_attempts" not in record.extra


async def test_three_empty_replies_end_the_episode_unjudged() -> None:
    task, _ = _task()
    agent = Scripted([say(""), say(None), say("   ")])
    record = await run_episode(ctx(task, agent, Scripted([say("Hi")])))
    assert record.termination == "invalid_agent_message"
    assert len(agent.requests) == 3 and agent.requests[0] == agent.requests[2]
    assert record.extra["steps"] == 1  # the reference counts no step for them
    bench = get("vitabench")
    with pytest.raises(Unjudgeable, match="invalid_agent_message"):
        bench.judge_kinds(record, task, JudgeSettings())

    class Nothing:
        def get(self, *a: Any) -> None:
            return None

    unit = bench.score(record, Nothing(), ScoreContext(settings=JudgeSettings(),
                                                       options=REFERENCE))
    assert unit is not None and unit.score == 0.0
    # one empty reply is asked again and the dialogue goes on
    agent = Scripted([say(""), say("###STOP###")])
    assert (await run_episode(ctx(task, agent, Scripted([say("Hi")])))).termination == \
        "agent_stop"


@pytest.mark.parametrize("limit, on_last_step, expected", [
    (4, True, "max_steps"), (4, False, "agent_stop"), (5, True, "agent_stop")])
async def test_a_stop_on_the_last_step(limit: int, on_last_step: bool, expected: str) -> None:
    task, env = _task()
    agent = Scripted([say(None, _order_call(env, 1)), say("Bye ###STOP###")])
    options = msgspec.structs.replace(REFERENCE, limit_on_last_step=on_last_step)
    record = await run_episode(ctx(task, agent, Scripted([say("Hi")]), options, limit))
    assert record.termination == expected and record.extra["steps"] == 4


def _overflow() -> HTTPStatusError:
    return HTTPStatusError("u", 400, "This model's maximum context length is 8192 tokens")


@pytest.mark.parametrize("failure, reason", [
    ("arguments", "malformed_tool_call"), ("list", "malformed_tool_call"),
    ("user", "empty_user_reply"), ("overflow", "context_overflow"),
    ("rejected", "request_rejected")])
async def test_a_failed_trial_is_played_again_then_dropped(failure: str, reason: str) -> None:
    task, env = _task()
    write = _order_call(env, 1)
    bad = {"arguments": say(None, ToolCall(id="b", function=FunctionCall(
        name="get_user_all_orders", arguments="{oops"))),
           "list": say(None, ToolCall(id="b", function=FunctionCall(
               name="get_user_all_orders", arguments="[1]"))),
           "overflow": _overflow(), "rejected": HTTPStatusError("u", 422, "bad request")}
    # each attempt: a write, then the failure (the user fails on its second turn)
    agent_turn = [say(None, write), say("Ordered.")] + ([bad[failure]] if failure in bad
                                                       else [])
    user_turn = [say("Hi"), say("" if failure == "user" else "More please")]
    agent, user = Scripted(agent_turn * 4), Scripted(user_turn * 4)
    record = await run_episode(ctx(task, agent, user))
    assert record.termination == reason and record.extra["dropped"] is True
    assert record.extra["trial_attempt"] == 4
    assert [f["reason"] for f in record.extra["failed_attempts"]] == [reason] * 3
    assert agent.script == [] and user.script == []
    # every attempt starts on a fresh database: one order each, not four
    assert len(record.extra["db_changes"]["orders"]) == 1
    answered = len(agent.requests) - (4 if failure in ("overflow", "rejected") else 0)
    assert record.usage["agent"].prompt_tokens == 10 * answered  # every attempt's
    bench = get("vitabench")
    with pytest.raises(Unjudgeable, match="trial dropped"):
        bench.judge_kinds(record, task, JudgeSettings())
    unit = bench.score(record, None, ScoreContext(settings=JudgeSettings(), options=REFERENCE))
    assert unit is not None and unit.score is None and unit.judge_error.startswith(
        "trial dropped")


async def test_a_rerun_succeeds_on_its_next_attempt() -> None:
    task, _ = _task()
    agent = Scripted([_overflow(), say("###STOP###")])
    record = await run_episode(ctx(task, agent, Scripted([say("Hi"), say("Hi")])))
    assert record.termination == "agent_stop" and record.extra["trial_attempt"] == 2
    assert record.extra["failed_attempts"][0]["reason"] == "context_overflow"
    assert "dropped" not in record.extra


async def test_kept_failures_end_the_episode_as_they_are() -> None:
    task, _ = _task()
    keep = msgspec.structs.replace(REFERENCE, trial_failures="keep")
    record = await run_episode(ctx(task, Scripted([_overflow()]), Scripted([say("Hi")]), keep))
    assert record.termination == "context_overflow" and "dropped" not in record.extra
    bad = say(None, ToolCall(id="b", function=FunctionCall(name="get_user_all_orders",
                                                           arguments="{oops")))
    record = await run_episode(ctx(task, Scripted([bad, say("###STOP###")]),
                                   Scripted([say("Hi")]), keep))
    assert record.termination == "agent_stop"
    assert record.tool_calls[0].error_category == "malformed_json"
    assert record.messages[2].tool_calls[0].function.arguments == "{oops"


async def test_a_trial_rerun_after_its_judgement_continues_the_count() -> None:
    task, _ = _task()
    unit_key = UnitId("r", task.key, 0, 0).key
    agent = Scripted([_overflow()])
    record = await run_episode(ctx(task, agent, Scripted([say("Hi")]),
                                   attempts={unit_key: 3}))
    assert record.extra["trial_attempt"] == 4 and record.extra["dropped"] is True
    assert "failed_attempts" not in record.extra  # no attempt of this session failed before
