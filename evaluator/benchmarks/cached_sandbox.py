"""An environment factory over `cache_store`'s cached tool sandbox, for benchmarks whose tools
answer from a recorded cache with an LLM simulating the misses (TravelBench, GroupTravelBench).

The benchmark gives its argument validator (built per run, e.g. from a table next to the data),
its error texts and its reference's way with calls (`SandboxStyle`: both fixed, or built per
run from the run's options and prompt set); this module opens one `cache_store.sandbox.Sandbox` per process, shared by
every episode (it holds no per-episode state), with the run's `[sandbox]` settings. A
release-layout tool cache found next to the data (`TaskSet.cache_dir`) is imported once into
`$AGENTSWEEP_HOME/stores/`; without any store, simulated answers go to RUN_DIR/simulated.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from bench_data.types import Task
from cache_store.sandbox import Sandbox, SandboxSettings, open_sandbox
from cache_store.types import SandboxStyle, SandboxTexts, Validator

from .base import BenchmarkError, Environment, EnvironmentRequest

ValidatorFactory = Callable[[EnvironmentRequest], tuple[Validator | None, dict[str, Any]]]
"""request -> (the validator, its description for the manifest); raises BenchmarkError."""
TextsFactory = Callable[[EnvironmentRequest], SandboxTexts]
StyleFactory = Callable[[EnvironmentRequest], SandboxStyle]
"""request -> the run's texts / style (e.g. from its prompt set and options); BenchmarkError."""


def sandbox_settings(config: Any, run_dir: Path, cache_dir: Path | None) -> SandboxSettings:
    """The run's `[sandbox]` settings with its defaults filled in: the miss log in RUN_DIR, the
    release cache next to the data imported into a store, else simulated answers in RUN_DIR."""
    s: SandboxSettings = config.sandbox
    changes: dict[str, Any] = {}
    if not s.miss_log:
        changes["miss_log"] = str(run_dir / "tool_misses.log")
    if not s.store and cache_dir is not None:
        from backends.model import cache_root
        from cache_store.importer import import_cache

        digest = hashlib.sha256(str(cache_dir.resolve()).encode()).hexdigest()[:16]
        store = cache_root() / "stores" / f"{cache_dir.parent.name}-{digest}.store"
        store.parent.mkdir(parents=True, exist_ok=True)
        import_cache(cache_dir, store)
        changes["store"] = str(store)
    if not s.store and "store" not in changes and not s.simulated_store:
        changes["simulated_store"] = str(run_dir / "simulated")
    return msgspec.structs.replace(s, **changes) if changes else s


class SharedSandbox:
    """The Environment: one Sandbox for every episode."""

    def __init__(self, sandbox: Sandbox, store_path: str) -> None:
        self.sandbox = sandbox
        self.store_path = store_path

    def episode(self, task: Task) -> Sandbox:
        return self.sandbox

    def describe(self) -> dict[str, Any]:
        return self.sandbox.describe()

    def close(self) -> None:
        self.sandbox.close()


def check_sandbox_settings(s: SandboxSettings) -> None:
    """What `[sandbox]` names exists and can be used, before an engine starts (BenchmarkError
    naming the field): the store is a readable store, the live hook imports and is callable,
    the miss log and answer directories can be made."""
    import importlib

    from cache_store.store import CorruptStoreError, read_header
    from evaluator.config_check import check_output_dir

    if s.store:
        try:
            if not Path(s.store).is_file():
                raise BenchmarkError(f"sandbox.store = {s.store!r}: no such store file (make "
                                     "one with `agentsweep cache import DIR --out STORE`)")
            read_header(s.store)
        except (CorruptStoreError, OSError) as exc:
            raise BenchmarkError(f"sandbox.store = {s.store!r}: {exc}") from None
    if s.live_hook:
        module, _, fn = s.live_hook.partition(":")
        try:
            hook = getattr(importlib.import_module(module), fn)
        except Exception as exc:  # noqa: BLE001 - ImportError, AttributeError, or its own failure
            raise BenchmarkError(f"sandbox.live_hook = {s.live_hook!r}: "
                                 f"{type(exc).__name__}: {exc}") from None
        if not callable(hook):
            raise BenchmarkError(f"sandbox.live_hook = {s.live_hook!r}: not a function "
                                 f"(a {type(hook).__name__})")
    try:
        if s.miss_log:
            check_output_dir("sandbox.miss_log", str(Path(s.miss_log).parent))
        for name in ("simulated_store", "overlay_store"):
            if getattr(s, name):
                check_output_dir(f"sandbox.{name}", getattr(s, name))
    except ValueError as exc:
        raise BenchmarkError(str(exc)) from None


def _no_validator(request: EnvironmentRequest) -> tuple[Validator | None, dict[str, Any]]:
    return None, {"validation": "none"}


@dataclass(frozen=True)
class CachedSandbox:
    """EnvironmentFactory of the cached tool sandbox (see the module doc)."""

    validator: ValidatorFactory = _no_validator
    texts: SandboxTexts | TextsFactory = field(default_factory=SandboxTexts)
    style: SandboxStyle | StyleFactory = field(default_factory=SandboxStyle)

    def run_texts(self, request: EnvironmentRequest) -> SandboxTexts:
        return self.texts if isinstance(self.texts, SandboxTexts) else self.texts(request)

    def run_style(self, request: EnvironmentRequest) -> SandboxStyle:
        return self.style if isinstance(self.style, SandboxStyle) else self.style(request)

    def check(self, request: EnvironmentRequest) -> None:
        check_sandbox_settings(request.config.sandbox)
        self.validator(request)  # builds (and caches) what it needs, or fails now
        self.run_texts(request)
        self.run_style(request)

    async def open(self, request: EnvironmentRequest, simulator: Any,
                   simulator_model: str) -> Environment:
        ts = request.taskset
        settings = sandbox_settings(request.config, request.run_dir, ts.cache_dir)
        validator, info = self.validator(request)
        sandbox = await open_sandbox(settings, tool_schemas=ts.tool_schemas,
                                     simulator_client=simulator, simulator_model=simulator_model,
                                     prompts=request.prompts, validator=validator,
                                     validator_info=info, texts=self.run_texts(request),
                                     style=self.run_style(request))
        return SharedSandbox(sandbox, settings.store)
