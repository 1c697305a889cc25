"""The tool sandbox: validate -> exact hit -> (overlay | persisted simulation | live) -> simulate.

One `Sandbox` serves every episode of a process (it holds no per-episode state). The imported
store is read-only; simulated answers, live answers and the miss log live in separate files.
Which calls are tool errors (source "error") is the benchmark's: its environment gives the
sandbox a `Validator` and the texts the agent sees (`SandboxTexts`; TravelBench: exactly its
reference's rules and texts). A failed simulation is an answer, as in the TravelBench
reference (source "simulated", category "simulation_failed", not a tool error).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import inspect
import json
import random
import re
import time
from pathlib import Path
from typing import Any, Literal

import msgspec

from backends.types import AtLeastOne
from cache_store import keys
from cache_store.persist import AnswerStore, MissLog, MissRecord, content_address
from cache_store.simulator import PROMPT_DIR, build_messages, simulate
from cache_store.store import CacheStore
from cache_store.types import SandboxStyle, SandboxTexts, ToolOutcome, Validator

NO_SIMULATOR = json.dumps({"error": SandboxTexts().no_simulator})


class SandboxSettings(msgspec.Struct, kw_only=True, frozen=True):
    """How the sandbox answers tool calls. Every field has a default.

    store: path of the imported store file (`agentsweep cache import`); "" = no cache at all.
    simulator: answer misses with the ICL simulator (False: the reference's no-simulator error).
    top_k: retrieved examples per simulated call (reference: 8).
    embedder: embedder spec for `backends.embedder.make_embedder` (query side of retrieval);
        must match the one the index was built with. "" = the index's recorded embedder.
    prompt_version: simulator prompt file `prompts/tool_simulator_<version>.txt`; part of the
        content address of simulated answers.
    live_hook: "module:function" answering misses for cache warming, called as
        fn(tool, arguments: dict, task_time: str) -> str (sync or async); answers go to the
        overlay store, never into the imported one. "" = off.
    miss_log: append-only JSON-lines miss log; "" = `<store>.misses.jsonl`.
    simulated_store: directory of content-addressed simulated answers; "" = `<store>.simulated`.
    overlay_store: directory of live-mode answers; "" = `<store>.overlay`.
    validation: the benchmark's argument validation mode, read by its validator: "reference"
        (exactly the calls the benchmark's reference counts as tool errors) or "strict"
        (JSON-schema types, nulls and enums too, then every reference rule).
    adcode_table: read by TravelBench's validator: the administrative-division table (name,
        adcode, citycode) that place names of travel_search_trains / map_search_places are
        resolved against. "" = `adcode.txt` next to the run's task files (the built-in sample:
        a small table of its English city names); "off" = skip that one check.
    simulator_max_tokens: output cap of one simulated answer.
    index_backend: "auto" / "faiss" (FAISS over the memory-mapped index files, on CPU; the torch
        kernel where FAISS is missing) or "torch" (the torch kernel streaming the mapped matrix).
    """

    store: str = ""
    simulator: bool = True
    top_k: int = 8
    embedder: str = ""
    prompt_version: str = "v1"
    live_hook: str = ""
    miss_log: str = ""
    simulated_store: str = ""
    overlay_store: str = ""
    validation: Literal["reference", "strict"] = "reference"
    adcode_table: str = ""
    simulator_max_tokens: AtLeastOne = 2048
    index_backend: Literal["auto", "faiss", "torch"] = "auto"

    def __post_init__(self) -> None:
        if self.top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {self.top_k}")
        if not _VERSION.match(self.prompt_version):
            raise ValueError("prompt_version must be a version name (letters, digits, '.', '_', "
                             f"'-'; it names a file under {PROMPT_DIR}), got "
                             f"{self.prompt_version!r}")
        if not (PROMPT_DIR / f"tool_simulator_{self.prompt_version}.txt").is_file():
            known = sorted(p.stem.removeprefix("tool_simulator_")
                           for p in PROMPT_DIR.glob("tool_simulator_*.txt"))
            raise ValueError(f"prompt_version: no simulator prompt {self.prompt_version!r} "
                             f"(known: {', '.join(known)})")
        module, sep, fn = self.live_hook.partition(":")
        if self.live_hook and (not sep or not module.strip() or not fn.strip()):
            raise ValueError(f"live_hook: expected 'module:function', got {self.live_hook!r}")


_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def _load_hook(spec: str) -> Any:
    module, _, func = spec.partition(":")
    if not module or not func:
        raise ValueError(f"live_hook {spec!r}: expected 'module:function'")
    return getattr(importlib.import_module(module), func)


class Sandbox:
    """Answers tool calls for all episodes of one process (see module doc for the order)."""

    def __init__(self, settings: SandboxSettings, *, tool_schemas: list[dict[str, Any]],
                 store: CacheStore | None, simulator_client: Any | None, simulator_model: str,
                 embedder: Any | None = None, index: Any | None = None,
                 validator: Validator | None = None,
                 validator_info: dict[str, Any] | None = None,
                 texts: SandboxTexts | None = None,
                 prompts: Any = None, style: SandboxStyle | None = None) -> None:
        self.settings = settings
        self.style = style or SandboxStyle()
        # the simulator prompt: the run's prompt set (evaluator.prompt_sets, which names
        # the content address's version), else the file of `settings.prompt_version`
        self.sim_version = (prompts.simulator_version(settings.prompt_version)
                            if prompts is not None else settings.prompt_version)
        self._sim_sections = (prompts.simulator_sections
                              if prompts is not None and not prompts.builtin else None)
        self.validator = validator  # None: every well-formed call of a known tool is valid
        self._validator_info = (validator_info if validator_info is not None
                                else {"validation": "none"})
        self.texts = texts or SandboxTexts()
        self._no_simulator = self.texts.text("no_simulator")
        self._tools = tool_schemas
        self._fn = {t["function"]["name"]: t["function"] for t in tool_schemas}
        sim_tools = self.style.simulator_tools
        # the function objects the simulator prompt describes (None: the agent's)
        self._sim_fn = None if sim_tools is None else {
            t["function"]["name"]: t["function"] for t in sim_tools
            if isinstance(t.get("function"), dict) and t.get("type") == "function"}
        self._file_version = self.sim_version  # the built-in prompt file's version
        self.sim_version += _style_version(self.style)
        self.store = store
        self.client = simulator_client
        self.model = simulator_model
        self.embedder = embedder
        self.index = index
        base = settings.store or "sandbox"
        self.miss_log = MissLog(settings.miss_log or f"{base}.misses.jsonl")
        self.simulated = AnswerStore(settings.simulated_store or f"{base}.simulated")
        self.overlay = AnswerStore(settings.overlay_store or f"{base}.overlay") \
            if settings.live_hook else None
        self._hook = _load_hook(settings.live_hook) if settings.live_hook else None
        self._inflight: dict[str, asyncio.Future[ToolOutcome]] = {}

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self._tools

    async def call(self, name: str, arguments: str, *, task_time: str) -> ToolOutcome:
        t0 = time.perf_counter()
        out = await self._call(name, arguments, task_time)
        out.latency_s = time.perf_counter() - t0
        return out

    async def _call(self, name: str, arguments: str, task_time: str) -> ToolOutcome:
        fn = self._fn.get(name)
        texts = self.texts
        if fn is None:
            return _error("unknown_tool", texts.text("unknown_tool", name=name))
        unparsed = False
        try:
            args = json.loads(arguments) if arguments.strip() or self.style.raw_arguments else {}
        except (ValueError, RecursionError) as exc:
            if not self.style.raw_arguments:
                return _error("malformed_json", texts.text("malformed_json", error=exc))
            args, unparsed = {"raw_arguments": arguments}, True
        if not isinstance(args, dict):
            return _error("malformed_json", texts.text("not_object", type=type(args).__name__))
        if self.validator is not None:
            bad = self.validator(name, args, fn.get("parameters", {}), task_time)
            if bad is not None:
                return ToolOutcome(content=bad[1], source="error",
                                   error_category="malformed_json" if unparsed else bad[0])
        key = keys.normalize_call(args, task_time)
        if self.store is not None:
            hit = self.store.get(name, key)
            if hit is not None:
                return ToolOutcome(content=hit, source="hit", cache_key=key)
        if self.overlay is not None:
            ans = self.overlay.get(content_address(name, key))
            if ans is not None:
                return ToolOutcome(content=ans, source="overlay", cache_key=key)
        if self._hook is not None:
            return await self._live(name, args, task_time, key)
        if not self.settings.simulator or self.client is None:
            self._log(name, args, task_time, self._no_simulator, "miss")
            return ToolOutcome(content=self._no_simulator, source="miss", cache_key=key)
        params = keys.params_json(args)
        addr = content_address(name, params, self.model, self.sim_version)
        ans = self.simulated.get(addr)
        if ans is not None:
            return ToolOutcome(content=ans, source="simulated", cache_key=key)
        fut = self._inflight.get(addr)
        if fut is not None:  # the same miss is being simulated for another episode
            return msgspec.structs.replace(await asyncio.shield(fut), cache_key=key)
        fut = asyncio.get_running_loop().create_future()
        self._inflight[addr] = fut
        try:
            out = await self._simulate(name, fn, args, task_time, key, params, addr)
            fut.set_result(out)
            return out
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            del self._inflight[addr]

    async def _simulate(self, name: str, fn: dict, args: dict, task_time: str, key: str,
                        params: str, addr: str) -> ToolOutcome:
        from backends.errors import InfrastructureError

        examples = await self.retrieve(name, params, addr)
        shown = fn if self._sim_fn is None else self._sim_fn.get(
            name, {"name": name, "description": "", "parameters": {}})
        messages = build_messages(shown, args, examples, self._file_version, self._sim_sections,
                                  parameters=self.style.parameters)
        try:
            text = await simulate(self.client, self.model, messages,
                                  max_tokens=self.settings.simulator_max_tokens,
                                  empty_result=self.texts.empty_result)
        except InfrastructureError:
            raise  # the scheduler retries the episode
        except Exception as exc:  # noqa: BLE001 - reference: the error text is the answer
            # not persisted (a rerun simulates again); not a tool error: has_error=False there
            msg = self.texts.text("simulation_failed", name=name, error=exc)
            self._log(name, args, task_time, msg, "error")
            return ToolOutcome(content=msg, source="simulated",
                               error_category="simulation_failed", cache_key=key)
        text = self.simulated.put(addr, text)  # first writer wins across processes
        self._log(name, args, task_time, text, "simulated")
        return ToolOutcome(content=text, source="simulated", cache_key=key,
                           n_examples=len(examples))

    async def retrieve(self, name: str, params: str, addr: str) -> list[tuple[str, str]]:
        """Top-k (params, result) examples: embedding search, else a seeded sample."""
        if self.store is None or self.store.n_entries(name) == 0:
            return []
        k = min(self.settings.top_k, self.store.n_entries(name))
        ids: list[int] = []
        rows = self.index.rows(name) if self.index is not None and self.embedder else None
        if rows is not None and rows == self.store.n_entries(name):
            vec = await self.index.embed_query(self.embedder, keys.embedding_text(params))
            ids = await self.index.search(name, vec, k)  # a heavy one off the event loop
        if not ids:  # reference: random sample; here seeded by the call, so reruns agree
            ids = random.Random(addr).sample(range(self.store.n_entries(name)), k)
        out = []
        for i in ids:
            key, result = self.store.entry(name, i)
            out.append((keys.params_from_key(key), result))
        return out

    async def _live(self, name: str, args: dict, task_time: str, key: str) -> ToolOutcome:
        from backends.errors import InfrastructureError

        try:
            res = self._hook(name, args, task_time)
            if inspect.isawaitable(res):
                res = await res
            text = res if isinstance(res, str) else json.dumps(res, ensure_ascii=False)
        except InfrastructureError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of the user hook
            msg = self.texts.text("live_failed", error=exc)
            return ToolOutcome(content=msg, source="error", error_category="execution_error")
        assert self.overlay is not None
        text = self.overlay.put(content_address(name, key), text)
        self._log(name, args, task_time, text, "live")
        return ToolOutcome(content=text, source="live", cache_key=key)

    def _log(self, name: str, args: dict, task_time: str, result: str, source: str) -> None:
        self.miss_log.append(MissRecord(tool=name, params=keys.intermediate_key(args, task_time),
                                        simulated_result=result, timestamp=time.time(),
                                        source=source))

    def describe(self) -> dict[str, Any]:
        """What decides tool errors and misses, for the run manifest."""
        s = self.settings
        return {**self._validator_info,
                "simulator": bool(s.simulator and self.client is not None),
                "simulator_model": self.model, "prompt_version": self.sim_version,
                "top_k": s.top_k, "retrieval": "embedding" if self.index is not None
                and self.embedder is not None else "seeded sample",
                "live_hook": s.live_hook or None,
                **({"index": self.index.describe()} if self.index is not None
                   and hasattr(self.index, "describe") else {})}

    def close(self) -> None:
        """Flush and close the miss-log writer and the answer stores (call once, at process
        shutdown)."""
        self.miss_log.close()
        self.simulated.close()
        if self.overlay is not None:
            self.overlay.close()
        if self.index is not None:
            self.index.close()


def _style_version(style: SandboxStyle) -> str:
    """What a style changes in the simulator's prompt, for the content address of its answers:
    "" for this project's way."""
    out = "+py-schema" if style.parameters == "python" else ""
    if style.simulator_tools is not None:
        digest = hashlib.sha256(json.dumps(style.simulator_tools, ensure_ascii=False,
                                           sort_keys=True).encode()).hexdigest()[:8]
        out += f"+tools-{digest}"
    return out


def _error(category: str, text: str) -> ToolOutcome:
    return ToolOutcome(content=text, source="error", error_category=category)


async def open_sandbox(settings: SandboxSettings, *, tool_schemas: list[dict[str, Any]],
                       simulator_client: Any | None, simulator_model: str,
                       embedder: Any | None = None, validator: Validator | None = None,
                       validator_info: dict[str, Any] | None = None,
                       texts: SandboxTexts | None = None, prompts: Any = None,
                       style: SandboxStyle | None = None) -> Sandbox:
    """Open the store (and its index, if built) and return the process-wide Sandbox.

    validator / validator_info / texts / style: the benchmark's argument rules, their
    description for the manifest, its error texts and its reference's way with calls (None: no
    argument rules, generic English texts, this project's way).
    """
    store = CacheStore(settings.store) if settings.store else None
    index = None
    if store is not None and settings.simulator and Path(settings.store + ".index").exists():
        from cache_store.index import EmbeddingIndex

        index = EmbeddingIndex(settings.store, backend=settings.index_backend)
        if embedder is None:
            from backends.embedder import make_embedder

            embedder = make_embedder(settings.embedder or index.meta.embedder)
        index.check_embedder(embedder)  # the model the index was built with, or an error
    return Sandbox(settings, tool_schemas=tool_schemas, store=store,
                   simulator_client=simulator_client, simulator_model=simulator_model,
                   embedder=embedder, index=index, validator=validator,
                   validator_info=validator_info, texts=texts, prompts=prompts, style=style)
