"""The environment as the agent loop's ToolSandbox: the loop's own tool step drives it."""

from __future__ import annotations

from typing import Any

from backends.types import FunctionCall, ToolCall
from bench_data.types import Task
from cache_store.types import ToolOutcome
from evaluator.benchmarks.vitabench.env import VitaEnvironment
from evaluator.protocols.base import EpisodeContext
from evaluator.protocols.loop import Episode
from evaluator.records import UnitId

from .helpers import make_env
from .ota_fixture import USER, ota_environment


class _NoAgent:
    role = "agent"
    model = "none"

    async def complete(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("not called")


def _episode(env: VitaEnvironment) -> Episode:
    ctx = EpisodeContext(unit=UnitId(run="r", task="vitabench/ota/t1", trial=0, seed=0),
                         task=Task(benchmark="vitabench", subset="ota", task_id="t1"),
                         agent=_NoAgent(), sandbox=env)
    return Episode(ctx, "system", "hello", task_time="2025-05-01 09:00:00")


def _call(i: int, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=f"c{i}", function=FunctionCall(name=name, arguments=arguments))


async def test_the_loop_runs_one_message_s_calls_in_order() -> None:
    env = make_env(ota_environment(), "ota")
    episode = _episode(env)
    assert episode._tools is env.tools  # the loop keeps the schema list the env gives
    book = f'{{"hotel_id": "H1", "room_id": "R1", "user_id": "{USER}"}}'  # 2 rooms left
    await episode.run_tools([
        _call(0, "create_hotel_order", book),
        _call(1, "create_hotel_order", book),
        _call(2, "create_hotel_order", book),
        _call(3, "get_ota_hotel_info", '{"hotel_id": '),
        _call(4, "get_ota_hotel_info", '{"hotel": "H1"}'),
    ])
    records = episode.tool_calls
    assert [r.call_id for r in records] == [f"c{i}" for i in range(5)]
    assert records[0].content.startswith("Order(") and records[1].content.startswith("Order(")
    assert records[2].content == "No available rooms at the moment"  # ran after the first two
    assert (records[2].source, records[2].error_category, records[2].valid) == \
        ("live", "refused", True)
    assert (records[3].source, records[3].error_category, records[3].valid) == \
        ("error", "malformed_json", False)
    assert (records[4].source, records[4].error_category) == ("error", "unknown_parameter")
    tool_messages = [m for m in episode.messages if m.role == "tool"]
    assert [m.tool_call_id for m in tool_messages] == [f"c{i}" for i in range(5)]
    assert len(env.changes()["orders"]) == 2


async def test_call_returns_tool_outcomes() -> None:
    env = make_env(ota_environment(), "ota")
    out = await env.call("get_ota_hotel_info", '{"hotel_id": "H1"}', task_time="whatever")
    assert isinstance(out, ToolOutcome) and out.source == "live" and not out.is_error
    assert out.latency_s >= 0 and out.error_category is None
    bad = await env.call("get_ota_hotel_info", "{}", task_time="")
    assert bad.is_error and bad.error_category == "missing_required"
