"""`agentsweep run --domain`: the generic flag, VitaBench's meaning of it (which subsets, one
merged tool set and database for several domains), the manifest record, one-line errors.

Tool counts by hand (docs/vitabench.md, Tools): 8 general tools, delivery 12, in-store 16,
OTA 30; one domain = its tools + the general ones, several = general + each domain's."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench_data.types import Task
from evaluator.benchmarks import get
from evaluator.benchmarks.vitabench.environment import (
    VitaEpisodes,
    parse_run_domains,
    select_domains,
)
from evaluator.cli.run import collect_overrides, register
from evaluator.config import ConfigError, load_config
from evaluator.run.domains import resolve_domains, split_domains
from evaluator.run.resources import SweepError

from .helpers import VITA_DATA, load_tasks

REPO = Path(__file__).resolve().parents[3]
HAVE_DATA = (VITA_DATA / "delivery" / "tasks_en.json").is_file() and \
    (VITA_DATA / "instore" / "tasks_en.json").is_file()
needs_data = pytest.mark.skipif(not HAVE_DATA, reason=f"VitaBench data not at {VITA_DATA}")


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return parser.parse_args(["run", *argv])


def test_flag_is_a_list_of_domains_recorded_as_data_domains():
    args = _parse("--domain", "delivery,instore", "--domain", "ota, delivery")
    assert ("data.domains", ["delivery", "instore", "ota"], "--domain") in \
        collect_overrides(args)
    with pytest.raises(ConfigError, match="^--domain: give at least one domain name$"):
        collect_overrides(_parse("--domain", " , "))
    assert split_domains(["a,,b", "a"]) == ["a", "b"]


def test_vitabench_domain_choices():
    have = ("delivery", "instore")
    one = select_domains(("delivery",), have)
    assert one.subsets == ("delivery",) and one.describe["merged"] is False
    assert len(one.describe["tools"]) == 12 + 8
    two = select_domains(("delivery", "in-store"), have)
    assert two.subsets == ("delivery", "instore") and two.describe["domains"] == \
        ["delivery", "instore"]
    assert two.describe["merged"] is True and len(two.describe["tools"]) == 8 + 12 + 16
    assert two.describe["tools"][:8] == one.describe["tools"][12:]  # general tools first
    # with a cross-domain task file the reference's comma domain string runs it
    assert select_domains(("delivery", "ota"), (*have, "cross_domain")).subsets == \
        ("cross_domain",)
    assert len(select_domains(("delivery", "instore", "ota"), ("cross_domain",))
               .describe["tools"]) == 66
    with pytest.raises(ValueError, match=r"^unknown domain 'flights'; known: delivery, "
                                         r"instore, ota$"):
        select_domains(("delivery", "flights"), have)
    with pytest.raises(ValueError, match="no tasks of domain.s. ota; its subsets: delivery"):
        select_domains(("ota",), have)
    assert parse_run_domains(["instore", "delivery,instore"]) == ("instore", "delivery")


def _config(*overrides: tuple[str, object]):
    cfg, _ = load_config(None, [(k, v, k) for k, v in overrides])
    return cfg


@needs_data
def test_resolve_domains_picks_subsets_and_respects_an_explicit_subset():
    base = (("data.dataset", "vitabench"), ("data.data_dir", str(VITA_DATA.parent)))
    subsets, record = resolve_domains(_config(*base, ("data.domains", ["delivery", "instore"])))
    assert subsets == ["delivery", "instore"]
    assert record["given"] == ["delivery", "instore"] and record["merged"] is True
    subsets, _ = resolve_domains(_config(*base, ("data.domains", ["delivery", "instore"]),
                                         ("data.subsets", ["instore"])))
    assert subsets == ["instore"]
    assert resolve_domains(_config(*base)) == (None, {})
    with pytest.raises(SweepError, match=r"^--domain: unknown domain 'x'"):
        resolve_domains(_config(*base, ("data.domains", ["x"])))


def test_a_benchmark_without_domains_refuses_the_flag():
    cfg = _config(("data.dataset", "sample"), ("data.domains", ["delivery"]))
    bench = get("travelbench")
    assert bench.domains is None
    with pytest.raises(SweepError, match=r"^--domain: benchmark \w+ has no domains"):
        resolve_domains(cfg)


@needs_data
def test_merged_environment_per_episode():
    raw = load_tasks("delivery")[0]
    task = Task(benchmark="vitabench", subset="delivery", task_id=raw["id"],
                extra={"environment": raw["environment"]})
    alone = VitaEpisodes().episode(task)
    merged_eps = VitaEpisodes(("delivery", "instore"))
    merged = merged_eps.episode(task)
    assert len(alone.tools) == 20 and len(merged.tools) == 36
    assert merged.domains == ("delivery", "instore")
    # an in-store tool answers from the (empty) merged shops table instead of "not found"
    res = merged.execute("get_instore_books", json.dumps({"user_id": raw["environment"]
                                                          ["user_id"]}))
    assert not res.error and "has no" in res.content
    assert alone.execute("get_instore_books", "{}").category == "unknown_tool"
    assert merged_eps.describe()["domains"] == ["delivery", "instore"]


def _cli(*argv: str, root: Path) -> subprocess.CompletedProcess:
    environ = dict(os.environ, AGENTSWEEP_HOME=str(root))
    environ.pop("AGENTSWEEP_PLUGINS", None)
    environ["PYTHONPATH"] = str(REPO) + os.pathsep + environ.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "evaluator.cli", "run", *argv], cwd=REPO,
                          env=environ, capture_output=True, text=True, timeout=300, check=False)


@needs_data
def test_cross_domain_run_against_the_stub(tmp_path: Path):
    """--domain delivery,instore --limit 1: one delivery and one in-store task, each served
    the 36 merged tools; the stub agent calls an in-store tool in both, then stops."""
    from perf.stub_server import start_stub

    agent = {"X-Stub-Mode": "tool", "X-Stub-Tool-Turns": "1",
             "X-Stub-Tool-Choices": json.dumps([["instore_shop_search_recommend",
                                                 {"keywords": ["tea"]}]]),
             "X-Stub-Replies": "Done. ###STOP###"}
    headers = "{ " + ", ".join(f"{json.dumps(k)} = {json.dumps(v)}"
                               for k, v in agent.items()) + " }"
    common = ("--data", "vitabench", "--data-dir", str(VITA_DATA.parent), "--limit", "1",
              "--out", str(tmp_path), "--progress", "off", "--set", "trials=1")
    with start_stub("--mode", "text") as stub:
        r = _cli(*common, "--domain", "delivery,instore", "--name", "cross",
                 "--engine-url", stub.url, "--set", f"agent.endpoint.extra_headers={headers}",
                 root=tmp_path)
        assert r.returncode == 0, r.stderr
        bad = _cli(*common, "--domain", "delivery,flights", "--name", "bad",
                   "--engine-url", stub.url, root=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.strip() == ("agentsweep run: --domain: unknown domain 'flights'; "
                                  "known: delivery, instore, ota")
    run_dir = tmp_path / "cross"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["domains"]["given"] == ["delivery", "instore"]
    assert manifest["domains"]["subsets"] == ["delivery", "instore"]
    assert len(manifest["domains"]["tools"]) == 36
    assert manifest["resolved_config"]["data"]["domains"] == ["delivery", "instore"]
    assert manifest["sandbox"]["domains"] == ["delivery", "instore"]
    assert manifest["subsets"] == {"delivery": 1, "instore": 1}
    records = [json.loads(x) for x in (run_dir / "episodes.jsonl").read_text().splitlines()]
    assert sorted(r["subset"] for r in records) == ["delivery", "instore"]
    from evaluator.report.load import load_run

    assert load_run(run_dir).info["domains"] == "delivery,instore (merged)"
    for rec in records:
        assert [(c["name"], c["source"]) for c in rec["tool_calls"]] == \
            [("instore_shop_search_recommend", "live")]
