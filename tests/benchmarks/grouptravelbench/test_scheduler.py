"""@-mentions, [pass], outward messages and the speaking scheduler, traced by hand."""

from __future__ import annotations

import pytest

from evaluator.benchmarks.grouptravelbench.chat import (
    detect_mention,
    has_news_since_last_spoke,
    is_pass,
    last_outward,
    message,
    outward_messages,
    strip_trailing_pass,
)
from evaluator.benchmarks.grouptravelbench.scheduler import (
    ScheduleConfig,
    SchedulerState,
    Turn,
    advance,
    next_turn,
)

ROLES = ["User1", "User2", "User10", "Agent"]


@pytest.mark.parametrize(("text", "who"), [
    ("@User1 你觉得呢", "User1"),
    ("@User1你觉得呢", "User1"),  # CJK right after the name still counts
    ("@User10 呢", "User10"),  # the longer name wins
    ("@User1x 呢", None),
    ("@User2 查到了... @User1 你能接受吗？", "User1"),  # the last mention is the addressee
    ("User1 没有 at", None),
])
def test_detect_mention(text, who):
    assert detect_mention(text, ROLES) == who


def test_pass_tokens():
    assert is_pass(" [pass]\n") and not is_pass("[pass] 我补充一句")
    assert strip_trailing_pass("好的\n[pass]\n[PASS]") == "好的"
    assert strip_trailing_pass("[pass]\n[pass]") == "[pass]\n[pass]"


def test_outward_messages_and_news():
    history = [
        {"role": "User1", "content": "开场"},  # broadcast entries carry no type
        message("Agent", "我先查一下", has_tool_calls=True),
        {"type": "tool_call", "name": "search_poi", "arguments": "{}"},
        message("Agent", "@User1 查到了"),
    ]
    assert last_outward(history) == (3, history[3])
    assert [m["content"] for m in outward_messages(history)] == ["开场", "@User1 查到了"]
    assert has_news_since_last_spoke("User1", history)
    assert has_news_since_last_spoke("User2", history)  # never spoke
    assert not has_news_since_last_spoke("User1", history[:3])  # only hidden agent steps


def test_config_for_difficulty():
    assert ScheduleConfig.for_difficulty(["User1"], "hard").max_rounds == 25
    assert ScheduleConfig.for_difficulty(["User1"], "medium").kappa == 4
    assert ScheduleConfig.for_difficulty(["User1"], "").kappa == 3
    with pytest.raises(ValueError):
        ScheduleConfig(("Agent",))


def test_a_whole_chat_traced_by_hand():
    config = ScheduleConfig(("User1", "User2"), kappa=2, max_rounds=3)
    history = [{"role": "User1", "content": "我要去兵马俑"}, {"role": "User2", "content": "预算有限"}]
    state = SchedulerState()

    def step(expected: Turn, reply: str | None = None, **outcome):
        nonlocal state
        turn = next_turn(state, config, history)
        assert turn == expected
        if reply is not None:
            history.append(message(turn.speaker, reply))
        state = advance(state, config, turn, **outcome)

    step(Turn("opening_summary"), "大家好。@User2 人均预算多少？")  # history[2]
    assert (state.events, state.rounds) == (1, 0)
    step(Turn("mention", "User2", mentioned=True, source_index=2), "3000")  # preempt
    assert (state.polling_index, state.events_in_round) == (0, 1)
    step(Turn("poll", "User1"))  # User1 answers [pass]: nothing appended, slot used
    step(Turn("skip", "User2"))  # nothing new since User2's "3000"
    step(Turn("poll", "Agent"), "好的，我整理一下。")  # closes round 1
    assert (state.rounds, state.polling_index, state.events) == (1, 0, 4)
    step(Turn("poll", "User1"), "别忘了兵马俑")  # round 1 % kappa 2 != 0: no summary
    step(Turn("poll", "User2"))  # [pass]
    step(Turn("poll", "Agent"), "@User1 第二天去可以吗？")  # history[6]; closes round 2
    assert state.rounds == 2
    # the mention outranks the kappa summary; User1 keeps passing -> the mention is consumed
    step(Turn("mention", "User1", mentioned=True, source_index=6), pass_exhausted=True)
    assert state.consumed == frozenset({(6, "User1")})
    step(Turn("summary"), "目前的偏好和冲突：……")  # round 2 % 2 == 0; closes a round
    assert (state.rounds, state.events) == (3, 9)
    step(Turn("final_plan"), "{...}")  # 3 rounds done without a plan
    assert state.finished and state.events == 10
    assert next_turn(state, config, history) == Turn("stop")


def test_preempt_chain_is_force_closed():
    config = ScheduleConfig(("User1", "User2"), cap_factor=1)  # 3 events per round
    state = SchedulerState(started=True, polling_index=1)
    turn = Turn("mention", "User1", mentioned=True, source_index=0)
    for _ in range(2):
        state = advance(state, config, turn)
    assert (state.rounds, state.events_in_round) == (0, 2)
    state = advance(state, config, turn)
    assert (state.rounds, state.events_in_round, state.polling_index) == (1, 0, 0)


def test_polled_runaway_cap_and_extra_summary():
    config = ScheduleConfig(("User1", "User2"), cap_factor=1)
    state = SchedulerState(started=True, polling_index=1, events_in_round=2)
    state = advance(state, config, Turn("poll", "User2"))
    assert (state.rounds, state.polling_index) == (1, 0)  # cap reached before the lap ended
    state = SchedulerState(started=True, polling_index=2)
    state = advance(state, config, Turn("poll", "Agent"), extra_summary=True)
    assert (state.events, state.rounds, state.polling_index) == (2, 1, 0)
    state = advance(state, config, Turn("mention", "Agent", True, 3), extra_summary=True)
    assert (state.events, state.rounds, state.events_in_round) == (4, 1, 1)


def test_user_to_user_mentions_do_not_preempt():
    config = ScheduleConfig(("User1", "User2"))
    history = [message("User1", "@User2 你说呢")]
    assert next_turn(SchedulerState(started=True), config, history) == Turn("skip", "User1")
