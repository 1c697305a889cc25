"""The ICL simulator against the real embedded engine (integration)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cache_store.importer import import_cache
from cache_store.sandbox import SandboxSettings, open_sandbox

from .conftest import TIME, mini_schemas


@pytest.mark.integration
async def test_simulated_miss_on_real_engine(engine, release_dir: Path, tmp_path: Path) -> None:
    from backends.client import ChatClient

    store = tmp_path / "c.store"
    import_cache(release_dir, store)
    client = ChatClient(engine.endpoint())
    try:
        settings = SandboxSettings(store=str(store), simulator_max_tokens=64)
        sb = await open_sandbox(settings, tool_schemas=mini_schemas(), simulator_client=client,
                                simulator_model=engine.model)
        first = await sb.call("weather_current_conditions", '{"location": "南京市"}', task_time=TIME)
        second = await sb.call("weather_current_conditions", '{"location": "南京市"}', task_time=TIME)
        sb.close()
    finally:
        await client.close()
    assert first.source == "simulated" and first.content
    assert second.content == first.content
