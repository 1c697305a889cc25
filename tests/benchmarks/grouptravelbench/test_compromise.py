"""Compromise markers: syntax, value parsing, path repair, the tracker and the reply gate."""

from __future__ import annotations

import pytest

from evaluator.benchmarks.grouptravelbench.chat import message
from evaluator.benchmarks.grouptravelbench.compromise import (
    CompromiseTracker,
    normalise_path,
    parse_marker_value,
    scan_marker,
    strip_marker,
)

ASK_USER1 = message("Agent", "高铁时间太长了，@User1 你能接受坐飞机吗？")
ASK_USER2 = message("Agent", "@User2 预算能放宽一点吗？")


@pytest.mark.parametrize(("raw", "value"), [
    ("1800", 1800),
    ('["飞机", "高铁"]', ["飞机", "高铁"]),
    ("[]", []),
    ("null", None),
    ("高铁", "高铁"),  # a bare word is a string
    ("1800元", "1800元"),  # not a plain number: a bare word too
    ("12.5.3", "12.5.3"),
    ("[", []),  # a lone bracket is an empty container
    ("{", {}),
    ('["a", "b"', ["a", "b"]),  # an unclosed list is closed
    ('{"k": 1', {"k": 1}),
])
def test_marker_values(raw, value):
    assert parse_marker_value(raw) == value


@pytest.mark.parametrize("raw", ['"abc', "-x", "[1,", "{oops"])
def test_unparseable_marker_values(raw):
    assert scan_marker(f"好吧 [global_constraints.avg_budget : {raw}]").parsed is False


def test_marker_must_end_the_message():
    text = '行吧，那就坐飞机。\n[global_constraints.transport.must : ["飞机"]]  \n'
    scan = scan_marker(text)
    assert (scan.path, scan.value) == ("global_constraints.transport.must", ["飞机"])
    assert strip_marker(text, scan.raw) == "行吧，那就坐飞机。"
    assert not scan_marker('[global_constraints.avg_budget : 1] 然后呢').present
    assert not scan_marker("我说的[pass]").present  # no colon: not a marker
    # the value must be on one line
    assert not scan_marker('好 [global_constraints.transport.must : ["飞机",\n"高铁"]]').present


def test_nested_list_value_keeps_its_brackets():
    scan = scan_marker("可以 [city_specific_preferences.西安市.food.must_eat : [\"羊肉泡馍\"]]")
    assert scan.path == "city_specific_preferences.西安市.food.must_eat"
    assert scan.value == ["羊肉泡馍"]
    # a list that lost its closing bracket to the marker's own bracket is repaired
    assert scan_marker('好 [global_constraints.transport.must : ["飞机"]').value == ["飞机"]


def test_path_repair():
    assert normalise_path("city_specific_preferences_specific_preferences.西安市.food.must_eat") \
        == "city_specific_preferences.西安市.food.must_eat"
    assert normalise_path("global_constraints.hotel_preference.hotel_preference.prefer") \
        == "global_constraints.hotel_preference.prefer"
    # transport is not a repaired name
    assert normalise_path("global_constraints.transport_x.must") == \
        "global_constraints.transport_x.must"


def test_apply_resolves_paths_and_logs(group):
    tracker = CompromiseTracker(group)
    r = tracker.apply("User1", "hotel_preference.prefer", ["经济型"], 4)  # global_ prepended
    assert r.applied and r.field_path == "global_constraints.hotel_preference.prefer"
    pref = tracker.effective["User1"]["preference"]
    assert pref["global_constraints"]["hotel_preference"]["prefer"] == ["经济型"]
    assert tracker.original["User1"]["preference"]["global_constraints"]["hotel_preference"][
        "prefer"] == ["舒适型"]
    r = tracker.apply("User1", "西安市.food.must_eat", [], 5)  # city_specific_ prepended
    assert r.applied and r.rebuild_prompt  # second acceptance: User1 turns non-compromisable
    assert tracker.compromisable["User1"] is False and tracker.is_exhausted("User1")
    assert tracker.apply("User1", "global_constraints.avg_budget", 1, 6).reason == "cap_reached"
    assert tracker.apply("User9", "global_constraints.avg_budget", 1, 6).reason == "unknown_user"
    assert [(e.ordinal, e.applied) for e in tracker.log] == [(4, True), (5, True)]


def test_apply_unknown_intermediate_fails_but_misspelt_leaf_succeeds(group):
    tracker = CompromiseTracker(group)
    bad = tracker.apply("User2", "global_constraints.transports.must", ["飞机"], 1)
    assert not bad.applied and bad.reason == "path_not_found"
    assert tracker.log[-1].applied is False and tracker.counts["User2"] == 0
    odd = tracker.apply("User2", "global_constraints.budget", 2500, 2)  # a new key
    assert odd.applied and tracker.effective["User2"]["preference"]["global_constraints"][
        "budget"] == 2500
    # User2 was not compromisable to begin with: no prompt rebuild even at the cap
    again = tracker.apply("User2", "global_constraints.avg_budget", 2500, 3)
    assert again.applied and not again.rebuild_prompt and tracker.accepted == 2


def test_gate_commits_a_solicited_marker_stripped(group):
    tracker = CompromiseTracker(group)
    gate = tracker.begin_reply("User1", ASK_USER1, ordinal=7)
    step = gate.submit('行吧，那就坐飞机。[global_constraints.transport.must : ["飞机"]]')
    assert (step.action, step.text, step.applied, step.rebuild_prompt) == (
        "commit", "行吧，那就坐飞机。", True, False)
    assert tracker.effective["User1"]["preference"]["global_constraints"]["transport"][
        "must"] == ["飞机"]
    assert gate.done and tracker.log[0].ordinal == 7
    with pytest.raises(RuntimeError):
        gate.submit("again")


def test_gate_pass_and_plain_replies(group):
    tracker = CompromiseTracker(group)
    assert tracker.begin_reply("User1", ASK_USER1, 1).submit("  [pass] ").action == "pass"
    step = tracker.begin_reply("User1", ASK_USER1, 1).submit("不行，我一定要坐高铁。\n[pass]")
    assert (step.action, step.text) == ("commit", "不行，我一定要坐高铁。")


def test_gate_regenerates_unsolicited_markers_then_forces(group):
    tracker = CompromiseTracker(group)
    marker = "好吧我让步 [global_constraints.avg_budget : 2500]"
    gate = tracker.begin_reply("User2", ASK_USER1, ordinal=3)  # the agent asked User1
    first = gate.submit(marker)
    assert (first.action, first.reason, first.text) == ("regenerate", "not_mentioned", "好吧我让步")
    assert gate.submit(marker).action == "regenerate"
    last = gate.submit(marker)  # third attempt: committed, applied without the @ check
    assert (last.action, last.forced, last.applied, last.text) == ("commit", True, True, "好吧我让步")
    assert tracker.effective["User2"]["preference"]["global_constraints"]["avg_budget"] == 2500
    assert gate.attempts == 3


def test_gate_previous_message_must_be_the_agents(group):
    tracker = CompromiseTracker(group)
    step = tracker.begin_reply("User2", message("User1", "@User2 你呢"), 1).submit(
        "行 [global_constraints.avg_budget : 2500]")
    assert (step.action, step.reason) == ("regenerate", "previous_not_agent")
    step = tracker.begin_reply("User2", None, 1).submit("行 [global_constraints.avg_budget : 1]")
    assert step.reason == "previous_not_agent"


def test_gate_regenerates_a_clean_retry(group):
    tracker = CompromiseTracker(group)
    gate = tracker.begin_reply("User2", ASK_USER2, 2)
    assert gate.submit("好 [global_constraints.avg_budget : -x]").reason == "malformed_marker"
    step = gate.submit("好的，预算可以到2500。 [global_constraints.avg_budget : 2500]")
    assert step.action == "commit" and step.applied and gate.attempts == 2


def test_forced_commit_of_an_exhausted_user(group):
    tracker = CompromiseTracker(group)
    tracker.apply("User2", "global_constraints.avg_budget", 2100, 1)
    tracker.apply("User2", "global_constraints.avg_budget", 2200, 2)
    gate = tracker.begin_reply("User2", ASK_USER2, 3)
    steps = [gate.submit("好 [global_constraints.avg_budget : 2300]") for _ in range(3)]
    assert [s.reason for s in steps] == ["cap_reached"] * 3
    assert steps[-1].action == "commit" and steps[-1].forced and not steps[-1].applied
    assert steps[-1].text == "好"
    assert tracker.effective["User2"]["preference"]["global_constraints"]["avg_budget"] == 2200


def test_forced_commit_uses_the_raw_reply(group):
    # the forced commit reads the reply as generated: a trailing [pass] hides the marker
    tracker = CompromiseTracker(group)
    gate = tracker.begin_reply("User2", ASK_USER1, 3)
    raw = "行吧 [global_constraints.avg_budget : 2500]\n[pass]"
    steps = [gate.submit(raw) for _ in range(3)]
    assert [s.action for s in steps] == ["regenerate", "regenerate", "commit"]
    assert steps[-1].text == raw and not steps[-1].applied
