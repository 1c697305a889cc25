"""Shared fixtures.

`engine` is session-scoped: the embedded vLLM engine takes minutes to start on CPU, so one
engine serves every integration test of a run. Set AGENTSWEEP_TEST_ENGINE_URL to attach to a
server that is already running instead (e.g. http://127.0.0.1:8765/v1).
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def engine():
    """A running OpenAI-compatible vLLM server: `.base_url`, `.model`, `.endpoint()`."""
    from backends.server import VLLMServer

    url = os.environ.get("AGENTSWEEP_TEST_ENGINE_URL")
    if url:
        server = VLLMServer.attach(url)
        yield server
        return
    server = VLLMServer()  # the embedded default model
    server.start()
    try:
        yield server
    finally:
        server.stop()
