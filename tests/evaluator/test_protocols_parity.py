"""Parity of the TravelBench protocols with the reference implementation's message sequences.

The expected sequences are derived by reading the reference code (small-xiangcheng/TravelBench,
commit 445a29d), not by running it:
- `travelbench/agents/assistant.py` `generate_response`: per user message, the agent is called
  until a reply has no tool calls; every tool-calling reply is appended with one tool message
  per call; after the iteration bound (20, `DEFAULT_MAX_STEPS` in `utils/util.py`) a fixed
  apology is appended as an assistant message and returned as the reply;
- `travelbench/core/conversation.py` `_run_multi_turn_conversation`: `turn_count` counts
  rounds (agent reply + simulator reply) up to `max_turns` (10, `DEFAULT_MAX_TURNS`); the
  simulator answers every agent reply, the last one included; a simulator reply containing
  the finish marker ends the dialogue, and `_create_conversation_result` then appends it to
  the saved messages, unless the round bound was reached too (the reason is then
  "max_turns_reached" and it is not appended); the saved messages are the agent's history;
- `travelbench/simulators/user_simulator.py`: the simulator's history is its system prompt,
  the query as its own ("assistant") first message, then agent replies as "user" messages and
  its replies as "assistant" messages; the finish test is `"[Finish Conversation]" in text`;
- `travelbench/evaluation/evaluate_unsolved.py`: the content of the first message with role
  "assistant", `"[Unsolved]" in content` (case-sensitive), 1 or 0.
The apology wording is this project's own (prompt file `agent_step_limit.txt`).
"""

from __future__ import annotations

import shutil
from string import Template

import pytest

from evaluator.benchmarks.travelbench import BENCHMARK, prompting
from evaluator.benchmarks.travelbench.prompting import step_limit_reply
from evaluator.benchmarks.travelbench.unsolvable import judge_unsolvable
from evaluator.protocols import ProtocolSettings
from evaluator.records import EpisodeRecord
from tests.evaluator.test_protocols import ScriptedClient, call, make_ctx, make_task, say

QUERY = "What is the weather in Beijing tomorrow?"  # make_task's query
FINISH = "[Finish Conversation]"  # the reference simulator's finish marker
TOOL_RESULT = "sunny in Beijing"  # FakeSandbox's answer to the default call


def shape(messages) -> list[tuple[str, str | None, bool]]:
    """(role, content, has tool calls) of each message after the system prompt."""
    return [(m.role, m.content, bool(m.tool_calls)) for m in messages if m.role != "system"]


def tool_round(i: int) -> list:
    return [say(None, call("weather_forecast_days", call_id=f"c{i}"))]


async def run(subset: str, agent, user=None, **settings) -> EpisodeRecord:
    return await BENCHMARK.protocol(subset)(make_ctx(subset, agent, user, **settings))


# -- step limit ------------------------------------------------------------------------------
@pytest.mark.parametrize("subset", ["single_turn", "unsolvable"])
async def test_single_turn_step_limit_paper_value(subset: str) -> None:
    """20 tool-calling replies (paper max_steps), each with its tool message, then the apology
    as the final assistant message: the reference's saved messages for single-turn."""
    agent = ScriptedClient("agent", [m for i in range(20) for m in tool_round(i)])
    record = await run(subset, agent, max_steps=20)
    apology = step_limit_reply()
    assert shape(record.messages) == (
        [("user", QUERY, False)]
        + [("assistant", None, True), ("tool", TOOL_RESULT, False)] * 20
        + [("assistant", apology, False)]
    )
    assert record.n_agent_calls == 20 and len(record.tool_calls) == 20
    assert record.final_answer == apology and record.termination == "max_steps"


async def test_multi_turn_step_limit_apology_and_dialogue_goes_on() -> None:
    """The apology is the agent's reply of that turn: the simulator sees it and answers, and
    the agent's next turn starts from the simulator's reply."""
    apology = step_limit_reply()
    agent = ScriptedClient("agent", tool_round(0) + tool_round(1) + [say("Sunny, 20°C.")])
    user = ScriptedClient("user", [say("Just tomorrow's forecast, please."), say(FINISH)])
    record = await run("multi_turn", agent, user, max_steps=2, finish_marker=FINISH)
    assert shape(record.messages) == [
        ("user", QUERY, False),
        ("assistant", None, True), ("tool", TOOL_RESULT, False),
        ("assistant", None, True), ("tool", TOOL_RESULT, False),
        ("assistant", apology, False),
        ("user", "Just tomorrow's forecast, please.", False),
        ("assistant", "Sunny, 20°C.", False),
        ("user", FINISH, False),
    ]
    assert shape(record.user_messages) == [
        ("assistant", QUERY, False),
        ("user", apology, False),
        ("assistant", "Just tomorrow's forecast, please.", False),
        ("user", "Sunny, 20°C.", False),
        ("assistant", FINISH, False),
    ]
    assert record.termination == "user_finished"
    assert record.extra["step_limit_replies"] == 1 and record.extra["rounds"] == 2
    # the agent's second turn was requested with the apology in its history
    assert agent.requests[-1][-2].content == apology


# -- turn limit ------------------------------------------------------------------------------
async def test_turn_limit_counts_rounds_and_drops_last_simulator_reply() -> None:
    agent = ScriptedClient("agent", [say(f"Question {i}?") for i in range(3)])
    user = ScriptedClient("user", [say(f"Answer {i}.") for i in range(3)])
    record = await run("multi_turn", agent, user, max_turns=3, finish_marker=FINISH)
    assert shape(record.messages) == [
        ("user", QUERY, False),
        ("assistant", "Question 0?", False), ("user", "Answer 0.", False),
        ("assistant", "Question 1?", False), ("user", "Answer 1.", False),
        ("assistant", "Question 2?", False),
    ]
    assert shape(record.user_messages) == [
        ("assistant", QUERY, False),
        ("user", "Question 0?", False), ("assistant", "Answer 0.", False),
        ("user", "Question 1?", False), ("assistant", "Answer 1.", False),
        ("user", "Question 2?", False), ("assistant", "Answer 2.", False),
    ]
    assert record.termination == "max_turns" and record.extra["rounds"] == 3
    assert record.n_agent_calls == 3 and len(user.requests) == 3 and record.n_user_turns == 3


async def test_finish_in_the_last_round_counts_as_turn_limit() -> None:
    agent = ScriptedClient("agent", [say("Which day?"), say("Sunny.")])
    user = ScriptedClient("user", [say("Tomorrow."), say(f"Thanks {FINISH}")])
    record = await run("multi_turn", agent, user, max_turns=2, finish_marker=FINISH)
    assert record.termination == "max_turns" and record.extra["finished_in_last_round"]
    assert shape(record.messages)[-1] == ("assistant", "Sunny.", False)


# -- finish marker ---------------------------------------------------------------------------
async def test_finish_marker_is_a_case_sensitive_substring() -> None:
    agent = ScriptedClient("agent", [say("Which day?"), say("Sunny.")])
    user = ScriptedClient("user", [say("tomorrow [finish conversation]"),
                                   say(f"Great, thanks. {FINISH}")])
    record = await run("multi_turn", agent, user, max_turns=10, finish_marker=FINISH)
    assert record.termination == "user_finished" and record.extra["rounds"] == 2
    assert shape(record.messages) == [
        ("user", QUERY, False),
        ("assistant", "Which day?", False), ("user", "tomorrow [finish conversation]", False),
        ("assistant", "Sunny.", False), ("user", f"Great, thanks. {FINISH}", False),
    ]
    assert record.n_user_turns == 3


# -- unsolvable: the first assistant message -------------------------------------------------
def unsolved_score(record: EpisodeRecord) -> float:
    return judge_unsolvable(record, ["[Unsolved]"]).score


@pytest.mark.parametrize(("script", "expected_shape", "score"), [
    # tag present
    ([say("[Unsolved]")], [("assistant", "[Unsolved]", False)], 1.0),
    # tag absent
    ([say("Sunny tomorrow.")], [("assistant", "Sunny tomorrow.", False)], 0.0),
    # extra text around the tag
    ([say("这个请求无法完成 [Unsolved] 抱歉")],
     [("assistant", "这个请求无法完成 [Unsolved] 抱歉", False)], 1.0),
    # case matters
    ([say("[unsolved]")], [("assistant", "[unsolved]", False)], 0.0),
    # a tool call with empty content first, the tag later: scores 0
    ([say(None, call("weather_forecast_days")), say("[Unsolved]")],
     [("assistant", None, True), ("tool", TOOL_RESULT, False),
      ("assistant", "[Unsolved]", False)], 0.0),
    # the tag next to a tool call: the loop does not stop at the tag, the call runs
    ([say("[Unsolved]", call("weather_forecast_days")), say("Sunny.")],
     [("assistant", "[Unsolved]", True), ("tool", TOOL_RESULT, False),
      ("assistant", "Sunny.", False)], 1.0),
    # an empty first reply is kept (not retried) and scores 0
    ([say(None)], [("assistant", "", False)], 0.0),
])
async def test_unsolvable_first_reply(script, expected_shape, score) -> None:
    record = await run("unsolvable", ScriptedClient("agent", script),
                       abstain_tags=("[Unsolved]",))
    assert shape(record.messages) == [("user", QUERY, False), *expected_shape]
    assert record.termination == "answer"
    assert "[Unsolved]" in record.messages[0].content  # the prompt asks for the paper tag
    assert unsolved_score(record) == score


# -- layout and reply text -------------------------------------------------------------------
async def test_reference_layout_puts_situation_in_system_prompt() -> None:
    """The reference formats time and context into the agent's system prompt and sends the
    query alone as the first user message (`assistant.py`, `conversation.py`)."""
    seen = []
    for query, context in (("Weather in Beijing tomorrow?", "User is in Beijing."),
                           ("Train from Shanghai to Hangzhou?", "User is at Shanghai station.")):
        ctx = make_ctx("single_turn", ScriptedClient("agent", [say("Sunny.")]))
        ctx.task = make_task("single_turn", query=query, context=context)
        record = await BENCHMARK.protocol("single_turn")(ctx)
        seen.append(record)
        assert context in record.messages[0].content
        assert "2025-10-24 10:00" in record.messages[0].content
        assert query not in record.messages[0].content
        assert record.messages[1].content == query
    assert seen[0].messages[0] != seen[1].messages[0]


async def test_empty_reply_is_the_answer_and_text_is_stripped() -> None:
    """The reference's client strips reply text and keeps an empty reply as the answer."""
    record = await run("single_turn", ScriptedClient("agent", [say(None)]))
    assert record.termination == "answer" and record.final_answer == ""
    assert record.extra["empty_replies"] == 1 and record.n_agent_calls == 1
    assert shape(record.messages) == [("user", QUERY, False), ("assistant", "", False)]

    record = await run("single_turn", ScriptedClient("agent", [say("\n Sunny. \n")]))
    assert record.final_answer == "Sunny." == record.messages[-1].content


def test_system_prompt_may_place_the_situation_itself(monkeypatch, tmp_path) -> None:
    """A prompt set written like the reference's (time and context inside the system prompt)
    gets them in place under layout "reference"; layout "prefix" refuses it."""
    monkeypatch.setitem(prompting.TEMPLATES, "agent_single_turn",
                        Template("Assistant.\nTime: $time\nContext: $context"))
    task = make_task("single_turn")
    assert prompting.agent_system_prompt("single_turn", task, ProtocolSettings()) == (
        "Assistant.\nTime: 2025-10-24 10:00\nContext: User is in Beijing.")
    with pytest.raises(ValueError, match="prefix"):
        prompting.agent_system_prompt("single_turn", task, ProtocolSettings(layout="prefix"))

    shutil.copytree(prompting.PROMPT_DIR, tmp_path / "p")
    (tmp_path / "p" / "agent_step_limit.txt").write_text("Out of steps at $time.")
    with pytest.raises(ValueError, match="agent_step_limit"):
        prompting.load_templates(tmp_path / "p")
