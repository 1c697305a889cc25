"""GroupTravelBench's `options.judge_layout`: in the prefix layout the built-in judge and meta
prompts keep every line but move the sections that hold the task's fields after those that hold
none, so two tasks' judge calls share everything up to the task's material; the judgements get
`+prefix` versions, scoring reads them, and an imported set keeps its own order."""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from os.path import commonprefix
from pathlib import Path
from string import Template

import msgspec
import pytest

from evaluator.benchmarks import get
from evaluator.benchmarks.base import ScoreContext
from evaluator.benchmarks.grouptravelbench.judges import (
    JUDGE_KIND,
    JUDGE_VERSION,
    META_KIND,
    META_VERSION,
    judge_prompt,
    judge_version,
    meta_prompt,
    meta_version,
    run_judge,
    run_meta,
)
from evaluator.benchmarks.grouptravelbench.options import GroupOptions
from evaluator.benchmarks.grouptravelbench.prompting import (
    builtin_set,
    prefix_layout,
    prefix_template,
)
from evaluator.benchmarks.grouptravelbench.scoring import METRICS, METRICS_VERSION
from evaluator.judges.settings import JudgeSettings
from evaluator.judges.transcript import trajectory_hash

from .scripted import task
from .test_judges import CHAT, RATINGS, RULES, Judge, Lookup, _inp, _j, _record, review

PREFIX = GroupOptions(judge_layout="prefix")
BUILTIN = builtin_set()
ELSEWHERE = Path("/nonexistent/prompt-set")


def _lines(text: str) -> Counter:
    return Counter(line for line in text.split("\n") if line.strip() not in ("", "---"))


def test_the_layout_moves_the_sections_with_fields_last_in_their_order():
    text = ("intro\n# A\nfixed a\n\n# B\n$x here\n\n---\n\n# C\nfixed c\n# D\n${y} too\n"
            "# E\n$$5 is no field\n")
    out = prefix_layout(text)
    assert out == ("intro\n# A\nfixed a\n\n# C\nfixed c\n# E\n$$5 is no field\n\n---\n\n"
                   "# B\n$x here\n\n# D\n${y} too\n")
    assert Template(out).substitute(x="1", y="2").endswith("# B\n1 here\n\n# D\n2 too\n")
    with pytest.raises(ValueError, match=r"^judge\.txt: no `# ` section holds a field$"):
        prefix_layout("# A\nno fields\n", "judge.txt")


@pytest.mark.parametrize("role", ["judge", "meta"])
def test_the_builtin_prompts_keep_every_line_and_hold_no_field_before_the_task(role):
    before, after = BUILTIN.texts[role], prefix_template(role).template
    assert _lines(after) == _lines(before)
    assert set(Template(after).get_identifiers()) == set(Template(before).get_identifiers())
    first_field = after.index("$")
    fixed = [h for h in after.split("\n") if h.startswith("# ")]
    moved = [h for h in fixed if after.index(h + "\n") > first_field]
    assert moved and len(moved) < len(fixed)
    assert after[:first_field].count("\n# ") == len(fixed) - len(moved)
    # the reference's order puts the task's material right after the instructions
    assert before.index("$") < len(before) // 5 < len(before) * 4 // 5 < first_field


def _two_tasks_prompts(options):
    first_task = task()
    other = msgspec.structs.replace(first_task, task_id="t2", payload=msgspec.structs.replace(
        first_task.payload, query="另一个请求", context="另一个背景"))
    first = judge_prompt(_inp(options=options), "CHAT ONE")
    second_inp = _inp(_record(chat=CHAT[:1], task_id="t2"), options=options)
    second_inp.task = other
    return first, judge_prompt(second_inp, "CHAT TWO")


def test_two_tasks_judge_prompts_share_every_fixed_section_only_in_the_prefix_layout():
    first, second = _two_tasks_prompts(PREFIX)
    shared = commonprefix([first, second])
    template = prefix_template("judge").template
    assert len(shared) >= template.index("$") - len("# Background\n\n## The request\n'''\n")
    assert "# Output" in shared and "# Example answer" in shared and "西安" not in shared
    first_ref, second_ref = _two_tasks_prompts(None)
    assert len(commonprefix([first_ref, second_ref])) < 300
    assert len(shared) > 15 * len(commonprefix([first_ref, second_ref]))
    assert _lines(first) == _lines(first_ref)          # same prompt, other order


def test_prefix_judgements_carry_their_version_and_are_what_scoring_reads():
    assert judge_version(None, PREFIX) == JUDGE_VERSION + "+prefix"
    assert meta_version(None, PREFIX) == META_VERSION + "+prefix"
    crash = GroupOptions(judge_layout="prefix", crash_rule="no_agent_message")
    assert judge_version(None, crash) == JUDGE_VERSION + "+crash=no_agent_message+prefix"
    judge = Judge(review())
    judged = asyncio.run(run_judge(_inp(client=judge, options=PREFIX)))
    assert judged.prompt_version == JUDGE_VERSION + "+prefix"
    assert judge.sent[0][0][1].content == judge_prompt(_inp(options=PREFIX),
                                                       _transcript_of(judge))
    meta_answer = "<meta_evaluation><reasoning>ok</reasoning><rating>Good</rating>" \
                  "</meta_evaluation>"
    metajudge = Judge(meta_answer)
    meta = asyncio.run(run_meta(_inp(client=metajudge, audited=judged, options=PREFIX)))
    assert meta.prompt_version == META_VERSION + "+prefix"
    sent = metajudge.sent[0][0][1].content
    assert sent.index("# What to review") < sent.index("# The original chat")
    assert sent == meta_prompt(_inp(options=PREFIX), judged, _transcript_of(judge))
    # scoring under the prefix layout reads the +prefix judgements, not the reference's
    rec = _record()
    h = trajectory_hash(rec)
    judgements = Lookup(_j(METRICS, METRICS_VERSION, 1.0, RULES, h),
                        _j(JUDGE_KIND, JUDGE_VERSION + "+prefix", 0.5, RATINGS, h),
                        _j(META_KIND, META_VERSION + "+prefix", 0.8, {"meta": 4.0}, h))
    bench = get("grouptravelbench")
    prefix_unit = bench.score(rec, judgements, ScoreContext(settings=JudgeSettings(),
                                                            options=PREFIX))
    assert prefix_unit.dims["lj"] == pytest.approx(0.4)
    reference_unit = bench.score(rec, judgements, ScoreContext(settings=JudgeSettings()))
    assert "lj" not in reference_unit.dims


def _transcript_of(judge: Judge) -> str:
    """The conversation part of the first prompt the stub judge was sent."""
    sent = judge.sent[0][0][1].content
    return sent[sent.index("# The chat\n'''\n") + len("# The chat\n'''\n"):-len("\n'''\n")]


def test_an_imported_set_keeps_its_order_and_version_under_the_prefix_layout():
    imported = dataclasses.replace(BUILTIN, name="mine", path=ELSEWHERE, digest="0" * 12)
    assert judge_version(imported, PREFIX) == judge_version(imported, None) == \
        JUDGE_VERSION + "+mine@" + "0" * 12
    inp = _inp(options=PREFIX)
    inp.prompts = imported
    assert judge_prompt(inp, "CHAT") == judge_prompt(_inp(), "CHAT")


def test_an_unknown_layout_is_refused():
    with pytest.raises(ValueError, match="judge_layout must be one of reference, prefix"):
        GroupOptions(judge_layout="first")
