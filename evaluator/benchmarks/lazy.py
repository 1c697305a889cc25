"""What a benchmark names lazily, so that registering it imports none of its heavy parts:
`DeferredEnvironment` (its tool environment, imported when a run first checks or opens it) and
`deferred` (any function: protocols, judges, reports, column searches), both safe when several
threads make the first call at once. `evaluator.benchmarks.base` exports them (the request and
environment types are base's `EnvironmentRequest` and `Environment`; this module imports
nothing of base, which imports it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["DeferredEnvironment", "deferred"]


def _imported(module: str) -> Any:
    """`module`, imported on first use; when another thread is importing it now, once that
    import has finished (the half-built module in sys.modules may lack names yet)."""
    import importlib
    import sys

    found = sys.modules.get(module)
    if found is None or getattr(getattr(found, "__spec__", None), "_initializing", False):
        found = importlib.import_module(module)     # waits for another thread's import
    return found


def _lookup(module: str, name: str) -> Any:
    """`module.name`, the module imported on first use."""
    return getattr(_imported(module), name)


class DeferredEnvironment:
    """`module.name` (an EnvironmentFactory), imported when a run first checks or opens it:
    registering a benchmark does not import its tools, so a run of another benchmark does not
    pay for them at start-up."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def check(self, request: Any) -> None:
        _lookup(self.module, self.name).check(request)

    async def open(self, request: Any, simulator: Any,
                   simulator_model: str) -> Any:
        factory = _lookup(self.module, self.name)
        return await factory.open(request, simulator, simulator_model)


def deferred(module: str, name: str) -> Callable[..., Any]:
    """`module.name`, imported on its first call: what a run never calls (a benchmark's report,
    which needs numpy and the kernels; searches over columns; the protocols, judges and tools
    of the benchmarks a run does not use) stays out of its start-up. `name` is looked up at
    every call (an attribute of the module, held once imported), so a test that replaces
    `module.name` is heard."""
    held: list[Any] = []            # the module, once wholly imported

    def call(*args: Any, **kwargs: Any) -> Any:
        if not held:
            held.append(_imported(module))
        return getattr(held[0], name)(*args, **kwargs)
    call.__name__ = name
    call.__qualname__ = f"deferred({module}.{name})"
    return call
