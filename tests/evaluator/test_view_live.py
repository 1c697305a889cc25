"""`agentsweep view`: running units (from the response journal), the header of a live and of a
finished run, the list's score summary, how a unit's score comes about, the saved table and
its rules, and a directory of runs."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import msgspec
import pytest

from evaluator.cli import main
from evaluator.cli.view import expand_run_dirs
from evaluator.view.query import RunView
from evaluator.view.rules import ViewRules
from evaluator.view.server import Viewer, open_runs
from evaluator.view.stats import summary
from tests.evaluator.report_fixtures import write_run_dir
from tests.evaluator.test_view import episode, lines, run  # noqa: F401  (the fixture)

RUNNING = "travelbench/single_turn/t7#0"


def journal_line(unit: str, i: int, role: str, prompt: int, completion: int) -> bytes:
    resp = {"id": f"r{i}", "model": "m", "choices": [{"index": 0, "message": {
        "role": "assistant", "content": f"step {i} of {unit}"}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}
    return json.dumps({"u": unit, "i": i, "r": role, "h": "x", "resp": resp}).encode() + b"\n"


def age(run_dir: Path, seconds: float) -> None:
    """Every file of the run last written `seconds` ago (a run that stopped)."""
    t = time.time() - seconds
    for p in run_dir.iterdir():
        if p.is_file():
            os.utime(p, (t, t))


def test_running_units_come_from_the_journal(run: Path) -> None:  # noqa: F811
    (run / "journal.jsonl").write_bytes(
        journal_line(RUNNING, 0, "agent", 100, 10) + journal_line(RUNNING, 1, "user", 50, 5)
        + journal_line("travelbench/single_turn/t0#0", 0, "agent", 1, 1))  # finished unit
    view = open_runs([run])[0]
    rows = {r["key"]: r for r in view.rows(view.query())}
    assert len(rows) == 14  # 12 episodes + 1 failure + 1 running
    r = rows[RUNNING]
    assert r["termination"] == "running" and r["running"] and not r["failed"]
    assert r["tokens"] == 165 and r["verdict"] == "-"
    p = view.progress()
    assert p["running"] == 1 and "1 running" in p["line"] and p["live"]
    doc = Viewer([view]).episode(None, RUNNING)
    assert doc["record"] is None and len(doc["journal"]) == 2
    assert json.loads(bytes(doc["journal"][1]))["r"] == "user"
    # the run stopped: the unit was in flight when it did
    age(run, 3600)
    view.refresh(force=True)
    rows = {r["key"]: r for r in view.rows(view.query())}
    assert rows[RUNNING]["termination"] == "interrupted"
    assert "1 interrupted (run again with --resume)" in view.progress()["line"]
    # the unit finishes: its record replaces the running row; the journal goes at the end
    with (run / "episodes.jsonl").open("ab") as fh:
        fh.write(b"\n" + lines([episode("travelbench/single_turn/t7", 0, answer="done late")]))
    (run / "journal.jsonl").unlink()
    view.refresh(force=True)
    rows = {r["key"]: r for r in view.rows(view.query())}
    assert rows[RUNNING]["termination"] == "answer" and not rows[RUNNING]["running"]
    assert view.index.rebuilds == 0  # only the journal was indexed again, not the episodes


def test_header_of_a_finished_run_reads_its_averages(run: Path) -> None:  # noqa: F811
    age(run, 3600)
    view = RunView("r", run, "r", threshold=0.5, total=13)
    p = view.progress()
    assert not p["live"] and p["ep_per_s"] != 0.0
    assert p["line"].startswith("12/13 episodes | in ")
    assert "ep/min" in p["line"] and "last minute" not in p["line"]
    assert "infra failures 1 (retries 6)" in p["line"] and "errors" not in p["line"]
    # verdicts apart from infrastructure: what "not passed" is made of
    vc = p["verdicts"]
    assert vc["not_passed"] == vc["fail"] + vc["judge_error"] + vc["bad_ending"]
    assert p["verdict_line"].startswith(f"passed {vc['passed']} | not passed "
                                        f"{vc['not_passed']} (")
    assert "1 judge error" in p["verdict_line"]


def test_list_summary_and_score_detail(run: Path) -> None:  # noqa: F811
    view = RunView("r", run, "r", threshold=0.5)
    rows = view.rows(view.query())
    groups = {g["subset"]: g for g in summary(view, view.query())}
    assert set(groups) == {"travelbench/multi_turn", "travelbench/single_turn", "all"}
    assert groups["all"]["units"] == len(rows)
    assert groups["all"]["passed"] == sum(r["verdict"] == "pass" for r in rows)
    assert groups["all"]["not_passed"] == sum(r["failed"] for r in rows)
    scores = [r["score"] for r in rows if r["score"] is not None]
    assert groups["all"]["mean_score"] == pytest.approx(sum(scores) / len(scores), abs=1e-4)
    one = summary(view, view.query(filters={"subset": "=multi_turn"}))
    assert [g["subset"] for g in one] == ["travelbench/multi_turn"]
    viewer = Viewer([view])
    # rubric 0.25, no meta-judgement, 1 of 2 tool calls with source error
    d = viewer.episode(None, "travelbench/multi_turn/t1#0")["score_detail"]
    assert d["kind"] == "travel_rubric" and d["weighted"] and d["audit"] is None
    assert (d["judge_score"], d["audit_weight"], d["tool_weight"], d["score"]) == (
        0.25, 1.0, 0.5, 0.125)
    assert (d["tool_errors"], d["tool_calls"], d["verdict"], d["threshold"]) == (1, 2, "fail",
                                                                                   0.5)
    # rubric 1.0 audited by the meta-judge's 0.6
    d = viewer.episode(None, "travelbench/single_turn/t0#0")["score_detail"]
    assert d["audit"] == {"kind": "meta", "score": 0.6} and d["score"] == pytest.approx(0.6)
    assert viewer.episode(None, "travelbench/multi_turn/t5#1")["score_detail"] is None
    page = viewer.listing({"run": "r", "per": "2"})
    assert len(page["rows"]) == 2 and page["summary"][-1]["units"] == len(rows)


def test_saved_table_opens_without_the_registry(run: Path, monkeypatch) -> None:  # noqa: F811
    first = RunView("r", run, "r", threshold=0.5)
    assert (run / ".view" / "table.npz").exists()

    def no_registry() -> ViewRules:
        raise AssertionError("the saved table's rules should have been used")

    monkeypatch.setattr(ViewRules, "from_registry", staticmethod(no_registry))
    again = RunView("r", run, "r", threshold=0.5)
    assert again.rows(again.query()) == first.rows(first.query())
    # another success threshold is another table: built, with the registry
    monkeypatch.undo()
    strict = RunView("r", run, "r", threshold=0.99)
    assert strict.rows(strict.query()) != first.rows(first.query())
    # the registry's rules changed since the table was saved: checked, then rebuilt
    changed = ViewRules(again.rules.ok_terminations, again.rules.audits, (), {})
    assert again.check_rules(changed)
    assert again.row(again.find("travelbench/multi_turn/t1#0"))["score"] == 0.25  # unweighted
    assert not again.check_rules(changed)


def test_a_directory_of_runs_opens_every_run(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "sweep"
    write_run_dir(root / "b-cell", "b", 2, 1)
    write_run_dir(root / "a-cell", "a", 2, 1)
    (root / "notes").mkdir()
    dirs, problem = expand_run_dirs([root])
    assert problem == "" and [d.name for d in dirs] == ["a-cell", "b-cell"]
    assert main(["view", "--export", str(tmp_path / "out"), str(root)]) == 0
    data = (tmp_path / "out" / "data" / "runs.js").read_bytes()
    runs = msgspec.json.decode(data[data.index(b"=") + 1:].rstrip(b";\n"))["runs"]
    assert [r["label"] for r in runs] == ["a", "b"]
    assert main(["view", "--export", str(tmp_path / "out2"), str(root / "notes")]) == 2
    assert "no run directory in it either" in capsys.readouterr().err


def test_a_complete_run_just_written_reuses_its_table(run: Path, monkeypatch) -> None:  # noqa: F811
    """Files written seconds ago, every unit done: not live, before the table exists too (its
    first table was built as live and never matched again, so every opening imported every
    benchmark)."""
    (run / "manifest.json").write_text(json.dumps({"run": "r", "n_tasks": 6, "trials": 2}))
    first = open_runs([run])[0]
    assert not first._live and not first.progress()["live"]

    def no_registry() -> ViewRules:
        raise AssertionError("the saved table should have been used")

    monkeypatch.setattr(ViewRules, "from_registry", staticmethod(no_registry))
    again = open_runs([run])[0]
    assert again.rows(again.query()) == first.rows(first.query())
