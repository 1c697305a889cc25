"""Each TravelBench protocol once against the real engine; asserts a well-formed record."""

from __future__ import annotations

import pytest

from backends.client import ChatClient
from backends.types import SamplingParams
from evaluator.benchmarks.travelbench import BENCHMARK
from evaluator.records import EpisodeRecord
from tests.evaluator.test_protocols import make_ctx

pytest.importorskip("backends.server")

pytestmark = pytest.mark.integration

TERMINATIONS = {"answer", "unsolvable_tag", "user_finished", "max_turns", "max_steps",
                "context_overflow", "agent_error", "user_error"}


class ClientRole:
    """Minimal RoleClient over a ChatClient."""

    def __init__(self, client: ChatClient, role: str, model: str) -> None:
        self.client, self.role, self.model = client, role, model

    async def complete(self, messages, *, tools=None, tool_choice=None, response_format=None):
        return await self.client.chat(
            messages, model=self.model, tools=tools, tool_choice=tool_choice,
            response_format=response_format,
            sampling=SamplingParams(temperature=0.0, max_tokens=96),
        )


@pytest.mark.parametrize("subset", sorted(BENCHMARK.protocols))
async def test_protocol_against_engine(engine, subset: str) -> None:
    async with ChatClient(engine.endpoint()) as client:
        model = await client.resolve_model()
        agent = ClientRole(client, "agent", model)
        user = ClientRole(client, "user", model)
        ctx = make_ctx(subset, agent, user=user, max_steps=3, max_turns=2)
        record = await BENCHMARK.protocol(subset)(ctx)
    assert isinstance(record, EpisodeRecord)
    assert record.termination in TERMINATIONS
    assert record.messages[0].role == "system" and record.messages[1].role == "user"
    assert record.n_agent_calls >= 1
    assert record.usage["agent"].prompt_tokens > 0
    for call in record.tool_calls:
        assert any(m.tool_call_id == call.call_id for m in record.messages if m.role == "tool")
    if subset == "multi_turn":
        assert record.user_messages and record.user_messages[0].role == "system"
