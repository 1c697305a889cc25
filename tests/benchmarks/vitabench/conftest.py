"""Fixtures for the VitaBench environment tests (real task files read where they lie)."""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import load_tasks


@pytest.fixture
def delivery_tasks() -> list[dict[str, Any]]:
    return load_tasks("delivery")


@pytest.fixture
def instore_tasks() -> list[dict[str, Any]]:
    return load_tasks("instore")
