"""Optional: the same scripted calls against the reference implementation, answer for answer.

Runs only when VITABENCH_REFERENCE_SRC names the reference's `src/` directory (a checkout of
meituan-longcat/vitabench) and its dependencies import (pydantic, thefuzz, holidays, loguru,
…; VITABENCH_REFERENCE_DEPS may name an extra directory to import them from). Nothing of the
reference is copied here: it is imported from that path at test time.

Answers are compared after replacing new record ids (random in the reference) by their order
of creation, and after dropping the answer-leaking keys the reference prints from task-file
order products (this environment never shows them). Both sides treat each episode as fresh:
the reference's thread-wide registries are cleared before each one (its runner leaves the
address registry uncleared across tasks; see docs/vitabench.md).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from typing import Any

import pytest

from evaluator.benchmarks.vitabench.env import VitaEnvironment

from .helpers import load_tasks
from .ota_fixture import ota_calls, ota_environment
from .scripts import CREATES, normalise, note_ids, resolve, script

REF_SRC = os.environ.get("VITABENCH_REFERENCE_SRC", "")
pytestmark = pytest.mark.skipif(
    not REF_SRC, reason="VITABENCH_REFERENCE_SRC is not set (path to the reference's src/)")
_HIDDEN = re.compile(r", '(?:product_type|shop_type|category|target_reason)': '[^']*'")


class Reference:
    """Builds the reference's environments (English) and answers calls through them."""

    def __init__(self) -> None:
        for path in (os.environ.get("VITABENCH_REFERENCE_DEPS", ""), REF_SRC):
            if path and path not in sys.path:
                sys.path.insert(0, path)
        pytest.importorskip("thefuzz")
        pytest.importorskip("holidays")
        loguru = pytest.importorskip("loguru")
        loguru.logger.remove()
        with contextlib.redirect_stdout(io.StringIO()):
            schema_utils = pytest.importorskip("vita.utils.schema_utils")
            schema_utils.set_global_language("english")
            from vita.data_model import tasks
            from vita.data_model.message import ToolCall
            from vita.domains.delivery.environment import get_environment as delivery
            from vita.domains.instore.environment import get_environment as instore
            from vita.domains.ota.environment import get_environment as ota
            from vita.environment.environment import get_cross_environment
        self._tasks, self._call = tasks, ToolCall
        self._single = {"delivery": delivery, "instore": instore, "ota": ota}
        self._cross = get_cross_environment

    def environment(self, raw: dict[str, Any], domains: list[str]) -> Any:
        for cls in (self._tasks.StoreBaseModel, self._tasks.ProductBaseModel,
                    self._tasks.Location):
            cls.clear_thread_data()
        if len(domains) == 1:
            return self._single[domains[0]](raw, "english")
        return self._cross(",".join(domains), raw, "english")

    def answer(self, env: Any, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            msg = env.get_response(self._call(id="c", name=name, arguments=args,
                                              requestor="assistant"))
        return msg.content or "", msg.error


@pytest.fixture(scope="module")
def reference() -> Reference:
    return Reference()


def _differences(ref: Reference, raw: dict[str, Any], domains: list[str],
                 calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[Any, ...]]:
    theirs = ref.environment(raw, domains)
    ours = VitaEnvironment.from_environment(raw, domains)
    ids_r: list[str] = []
    ids_o: list[str] = []
    out = []
    for name, args in calls:
        content_r, error_r = ref.answer(theirs, name, resolve(args, ids_r))
        result = ours.execute(name, json.dumps(resolve(args, ids_o)))
        if name in CREATES:
            note_ids(content_r, ids_r)
            note_ids(result.content, ids_o)
        want = _HIDDEN.sub("", normalise(content_r, ids_r))
        got = normalise(result.content, ids_o)
        if (want, error_r) != (got, result.error):
            out.append((name, args, want[:400], error_r, got[:400], result.error))
    return out


@pytest.mark.parametrize("domain", ["delivery", "instore"])
def test_task_files(reference: Reference, domain: str) -> None:
    bad = {}
    for task in load_tasks(domain):
        raw = task["environment"]
        diffs = _differences(reference, raw, [domain], script(raw, (domain,)))
        if diffs:
            bad[task["id"]] = diffs[:2]
    assert not bad, bad


@pytest.mark.parametrize("domains", [["ota"], ["delivery", "instore", "ota"]])
def test_constructed_ota(reference: Reference, domains: list[str]) -> None:
    assert _differences(reference, ota_environment(), domains, ota_calls()) == []


def test_merged_databases(reference: Reference) -> None:
    deliveries, instores = load_tasks("delivery"), load_tasks("instore")
    ota = ota_environment()
    for i in range(0, 100, 10):
        raw = dict(instores[i]["environment"])
        other = deliveries[i]["environment"]
        raw["stores"] = other["stores"]
        raw["orders"] = {**other["orders"], **raw["orders"]}
        raw["location"] = [*(raw.get("location") or []), *other["location"]]
        raw.update({k: ota[k] for k in ("hotels", "attractions", "flights", "trains")})
        for domains in (["delivery", "instore", "ota"], ["ota", "instore", "delivery"]):
            assert _differences(reference, raw, domains, script(raw, tuple(domains))) == [], i
