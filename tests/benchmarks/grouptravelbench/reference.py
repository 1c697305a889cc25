"""The GroupTravelBench reference code, loaded from a local checkout for the optional parity
tests (`GROUPTRAVELBENCH_REFERENCE=/path/to/GroupTravelbench`), with its model clients and tool
registry replaced by scripted ones: what it would send to each model is recorded.

Nothing of the reference is part of this repository; the tests that use this module are
skipped without a checkout. Stubbed: `core/openai_client.py` (the model client: the scripted
replies), `core/tools.py` and `tools/` (the tool registry: every call answers
`{"ok": "<tool name>"}`), and the `evaluation` package's `__init__` (its metric modules are not
needed here).
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

ENV = "GROUPTRAVELBENCH_REFERENCE"


def checkout() -> Path:
    path = os.environ.get(ENV, "")
    if not path or not (Path(path) / "group_travelbench").is_dir():
        pytest.skip(f"set {ENV} to a checkout of small-xiangcheng/GroupTravelbench")
    return Path(path)


Reply = Callable[[str, list[dict[str, Any]], bool], tuple[str, list[tuple[str, str, str]]]]
"""(who, the request's messages, tools offered) -> (text, [(call id, tool, arguments)])."""


@contextmanager
def reference(reply: Reply) -> Iterator[dict[str, Any]]:
    """The reference's modules with scripted clients; `sent` collects (who, messages, tools)
    of every model call in order. `who`: "agent" or the user's config model name."""
    root = checkout()
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "group_travelbench"}
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, str(root))
    sent: list[tuple[str, list[dict[str, Any]], bool]] = []
    try:
        pkg = importlib.import_module("group_travelbench")
        msgs = importlib.import_module("group_travelbench.core.messages")
        wire_format = msgs.to_openai_messages

        class OpenAIClient:
            def __init__(self, config: Any) -> None:
                self.config = config
                self.enable_thinking = config.enable_thinking

            def generate_response(self, messages: list[Any], tools: Any = None, **kw: Any):
                wire = wire_format(messages)
                who = self.config.model_name
                sent.append((who, wire, bool(tools)))
                text, calls = reply(who, wire, bool(tools))
                msg = msgs.AssistantMessage(content=text)
                if calls:
                    import json

                    msg.tool_calls = [msgs.ToolCall(id=i, name=n, arguments=_args(a, json))
                                      for i, n, a in calls]
                return msg, {}

        class Registry:
            def get_tools(self) -> list[Any]:
                return [object()]  # tools are offered; their schemas are not compared

            def execute_tool(self, name: str, **kwargs: Any) -> dict[str, Any]:
                return {"result": f'{{"ok": "{name}"}}', "cache_hit": True, "has_error": False}

        _stub("group_travelbench.core.openai_client", OpenAIClient=OpenAIClient,
              OpenAIClientError=RuntimeError)
        _stub("group_travelbench.core.tools", Tool=object, sandbox_tool_registry=Registry())
        tools = _stub("group_travelbench.tools", __all__=[])
        tools.__path__ = []
        _stub("group_travelbench.tools.tool_list", TOOL_NAMES=[])
        evaluation = _stub("group_travelbench.evaluation")
        evaluation.__path__ = [str(root / "group_travelbench" / "evaluation")]
        out = {"package": pkg, "sent": sent}
        for name in ("core.multi_interaction", "core.config", "utils.multi_util",
                     "evaluation.llm_judge", "evaluation.report_generator", "utils.eval_util"):
            out[name] = importlib.import_module(f"group_travelbench.{name}")
        yield out
    finally:
        sys.path.remove(str(root))
        for k in [k for k in sys.modules if k.split(".")[0] == "group_travelbench"]:
            del sys.modules[k]
        sys.modules.update(saved)


def _args(raw: str, json: Any) -> dict[str, Any]:
    """Arguments as the reference's client reads a model's text."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return {"raw_arguments": raw}


def _stub(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module
    return module
