"""Fixtures for cache_store tests: a tiny release-layout cache, fake simulator and embedder."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from backends.types import ChatMessage, ChatResponse, Choice
from cache_store.importer import import_cache
from cache_store.keys import normalize_call

SCHEMAS_PATH = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "travelbench" / "tool_schemas.json"
TIME = "2025-10-24 10:00"


def mini_schemas() -> list[dict]:
    if SCHEMAS_PATH.exists():
        return json.loads(SCHEMAS_PATH.read_text(encoding="utf-8"))
    return [{"type": "function", "function": {
        "name": "weather_current_conditions", "description": "weather",
        "parameters": {"type": "object", "required": ["location"],
                       "properties": {"location": {"type": "string"}}}}}]


@pytest.fixture
def schemas() -> list[dict]:
    return mini_schemas()


@pytest.fixture
def release_dir(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    weather = {normalize_call({"location": c}, TIME): f"{c}: 晴, 20度" for c in
               ("北京市", "上海市", "杭州市", "成都市", "西安市")}
    (src / "weather_current_conditions_cache.json").write_text(
        json.dumps(weather, ensure_ascii=False), encoding="utf-8")
    flights = {normalize_call({"origin": "北京市", "destination": "上海市", "date": "2025-10-25"},
                              TIME): "CA1501 08:00-10:10 ¥800"}
    (src / "travel_search_flights_cache.json").write_text(
        json.dumps(flights, ensure_ascii=False), encoding="utf-8")
    return src


class FakeClient:
    """Stands in for backends.client.ChatClient: echoes a deterministic answer, counts calls."""

    def __init__(self, tag: str = "") -> None:
        self.calls: list[list[ChatMessage]] = []
        self.tag = tag

    async def chat(self, messages, *, model=None, sampling=None, session_id=None, **_):
        self.calls.append(list(messages))
        assert sampling is not None and sampling.temperature == 0
        digest = hashlib.sha256(messages[-1].content.encode()).hexdigest()[:12]
        msg = ChatMessage(role="assistant", content=f"  simulated {digest}{self.tag}\n")
        return ChatResponse(id="x", model=model or "m", choices=[Choice(index=0, message=msg)])


class FakeEmbedder:
    """Deterministic bag-of-characters embedding (normalised float32)."""

    dim = 64

    async def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            for ch in t:
                out[i, ord(ch) % self.dim] += 1.0
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)
        return out


@pytest.fixture(name="big_store")
def big_store_fixture(tmp_path: Path) -> Path:
    """A 3000-row web_search tool beside a 3-row weather tool (the embedding-index tests)."""
    src = tmp_path / "big"
    src.mkdir()
    many = {normalize_call({"query": f"q{i}", "page": i % 7}, TIME): f"r{i}" for i in range(3000)}
    (src / "web_search_cache.json").write_text(json.dumps(many), encoding="utf-8")
    few = {normalize_call({"location": c}, TIME): c for c in ("北京市", "上海市", "杭州市")}
    (src / "weather_current_conditions_cache.json").write_text(
        json.dumps(few, ensure_ascii=False), encoding="utf-8")
    store = tmp_path / "big.store"
    import_cache(src, store)
    return store
