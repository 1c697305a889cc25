"""The tool environment of one VitaBench episode (a `ToolSandbox` for the agent loop).

    base = TaskDatabase.load(task.extra["environment"], "delivery")   # once per task
    env = VitaEnvironment(base)                                        # once per episode
    env.tools                      # OpenAI function schemas, in the agent's order
    await env.call(name, arguments_json, task_time=...)   # -> cache_store ToolOutcome
    env.execute(name, arguments)   # the same, synchronously, as a ToolResult
    env.database() / env.changes() / env.states()         # the episode's final state

Answers follow the reference (`Environment.get_response`): strings pass unchanged, other
values are JSON with every number turned into a string; a failed precondition or a refusal
is an ordinary answer (category "refused", not an error); an exception is the error answer
"Error: <message>". Argument binding reproduces Python's messages for missing and unexpected
arguments. Types are not checked unless `strict=True` (the reference never checks them; a
mistyped value fails, or not, where the tool uses it, and such a failure is categorised
"wrong_type").

A call runs to completion without awaiting, so calls of one episode never interleave and
run in the order they were issued, as the reference runs them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import msgspec

from cache_store.types import ToolOutcome

from . import spec as specs
from .common import Declined, Refusal
from .database import TaskDatabase
from .state import EpisodeState

_OWNER = {"general": "ToolKitBase", "delivery": "DeliveryTools", "instore": "InStoreTools",
          "ota": "OTATools"}


class ToolResult(msgspec.Struct, frozen=True):
    """One answer: what the agent reads, the reference's error flag, and a category
    (cache_store.types.ERROR_CATEGORIES for errors, "refused" for answered refusals)."""

    content: str
    error: bool = False
    category: str | None = None


class ToolList(list):
    """The schema list; calling it returns itself, so `env.tools` and `env.tools()` agree."""

    def __call__(self) -> ToolList:
        return self


@lru_cache(maxsize=32)
def _shared_schemas(domains: tuple[str, ...]) -> tuple[dict[str, Any], ...]:
    """The schema dicts of a domain set, decoded once and shared by its episodes (read-only:
    nothing writes to them; the client only encodes them)."""
    return tuple(msgspec.json.decode(msgspec.json.encode(specs.tool_schemas(domains))))


@lru_cache(maxsize=32)
def _shared_specs(domains: tuple[str, ...]) -> dict[str, specs.ToolSpec]:
    return {s.name: s for s in specs.tools_for(domains)}


def encode(value: Any) -> str:
    """The reference's `to_json_str`: strings as they are, anything else as JSON with every
    number (and bool) as a string."""
    if isinstance(value, str):
        return str(value)

    def conv(v: Any) -> Any:
        if isinstance(v, bool | int | float):
            return str(v)
        if isinstance(v, list | tuple):
            return [conv(x) for x in v]
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        return v

    return json.dumps(conv(value), default=str, ensure_ascii=False)


def _python_list(names: list[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return f"{quoted[0]} and {quoted[1]}"
    return ", ".join(quoted[:-1]) + f", and {quoted[-1]}"


def _type_problem(p: specs.Param, value: Any) -> str | None:
    if value is None:
        return None if p.nullable or p.default is None else "null"
    want = p.type
    item = want[5:-1] if want.startswith("list[") else None
    if item is not None:
        if not isinstance(value, list):
            return type(value).__name__
        bad = next((x for x in value if _type_problem(specs.Param("item", item), x)), None)
        return None if bad is None else f"list with {type(bad).__name__}"
    ok = {"str": lambda v: isinstance(v, str),
          "num": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
          "int": lambda v: isinstance(v, int) and not isinstance(v, bool)}[want](value)
    return None if ok else type(value).__name__


class VitaEnvironment:
    """One episode's tools over its own copy-on-write view of a shared task database."""

    __slots__ = ("_attempts", "_id_seed", "_overrides", "_specs", "_tools", "base", "state",
                 "strict")

    def __init__(self, base: TaskDatabase, *, strict: bool = False,
                 overrides: Mapping[str, Mapping[str, Any]] | None = None,
                 id_seed: str = "", attempts: Mapping[str, int] | None = None,
                 schemas: Sequence[dict[str, Any]] | None = None) -> None:
        self.base = base
        self.state = EpisodeState(base, id_seed=id_seed)
        self.strict = strict
        self._overrides = overrides
        self._id_seed = id_seed
        self._attempts = attempts
        self._specs = _shared_specs(base.domains)
        # each episode gets its own list (what it does to the list reaches no other episode)
        # of the domain set's shared, read-only schema dicts (one copy per process, not per
        # live episode); description overrides build their own
        # `schemas`: these overrides' schemas, built once by the caller and shared
        if schemas is None:
            schemas = (_shared_schemas(base.domains) if overrides is None
                       else specs.tool_schemas(base.domains, overrides))
        self._tools = ToolList(schemas)

    @classmethod
    def from_environment(cls, environment: Mapping[str, Any], domains: str | Sequence[str],
                         **kwargs: Any) -> VitaEnvironment:
        return cls(TaskDatabase.load(environment, domains), **kwargs)

    def fresh(self) -> VitaEnvironment:
        """A new episode over the same base database, with the same settings (a rerun)."""
        return VitaEnvironment(self.base, strict=self.strict, overrides=self._overrides,
                               id_seed=self._id_seed, attempts=self._attempts,
                               schemas=list(self._tools))

    def attempts_before(self, unit_key: str) -> int:
        """Attempts of the unit's trial already recorded by the run (its reruns: see
        docs/vitabench.md, "Trial reruns"); 0 for a new trial."""
        return (self._attempts or {}).get(unit_key, 0)

    @property
    def domains(self) -> tuple[str, ...]:
        return self.base.domains

    @property
    def tools(self) -> ToolList:
        return self._tools

    def tool_spec(self, name: str) -> specs.ToolSpec | None:
        return self._specs.get(name)

    # -- calls -------------------------------------------------------------------------------
    async def call(self, name: str, arguments: str, *, task_time: str = "") -> ToolOutcome:
        """The agent loop's entry point; `task_time` is ignored (the task fixes the time)."""
        t0 = time.perf_counter()
        result = self.execute(name, arguments)
        return ToolOutcome(content=result.content, source="error" if result.error else "live",
                           error_category=result.category,
                           latency_s=time.perf_counter() - t0)

    def execute(self, name: str, arguments: str | Mapping[str, Any] | None) -> ToolResult:
        spec = self._specs.get(name)
        if spec is None:
            return ToolResult(f"Error: Tool '{name}' not found.", True, "unknown_tool")
        args, problem = self._parse(arguments)
        if problem is not None:
            return problem
        qual = f"{_OWNER[spec.domain]}.{spec.name}()"
        known = {p.name for p in spec.params}
        extra = next((k for k in args if k not in known), None)
        if extra is not None:
            return ToolResult(f"Error: {qual} got an unexpected keyword argument '{extra}'",
                              True, "unknown_parameter")
        missing = [p.name for p in spec.params if p.required and p.name not in args]
        if missing:
            plural = "argument" if len(missing) == 1 else "arguments"
            return ToolResult(f"Error: {qual} missing {len(missing)} required positional "
                              f"{plural}: {_python_list(missing)}", True, "missing_required")
        mistyped = [(p, why) for p in spec.params if p.name in args
                    and (why := _type_problem(p, args[p.name])) is not None]
        if mistyped and self.strict:
            param, why = mistyped[0]
            want = specs.JSON_TYPES[param.type]["type"]
            return ToolResult(f"Error: argument '{param.name}' must be {want}, got {why}",
                              True, "wrong_type")
        try:
            value = spec.fn(self.state, **args)
        except Refusal as exc:
            return ToolResult(str(exc), False, "refused")
        except Exception as exc:  # noqa: BLE001 - the reference answers every failure
            return ToolResult(f"Error: {exc}", True,
                              "wrong_type" if mistyped else "execution_error")
        if isinstance(value, Declined):
            return ToolResult(str(value), False, "refused")
        return ToolResult(encode(value))

    @staticmethod
    def _parse(arguments: str | Mapping[str, Any] | None
               ) -> tuple[dict[str, Any], ToolResult | None]:
        if arguments is None:
            return {}, None
        if isinstance(arguments, Mapping):
            return dict(arguments), None
        if not arguments.strip():
            return {}, None
        try:
            args = json.loads(arguments)
        except (ValueError, RecursionError) as exc:
            return {}, ToolResult(f"Error: arguments are not valid JSON: {exc}", True,
                                  "malformed_json")
        if not isinstance(args, dict):
            return {}, ToolResult(f"Error: arguments must be a JSON object, got "
                                  f"{type(args).__name__}", True, "malformed_json")
        return args, None

    # -- final state ---------------------------------------------------------------------------
    def database(self) -> dict[str, Any]:
        """The whole database as the episode leaves it (JSON-able)."""
        return self.state.dump()

    def changes(self) -> dict[str, dict[str, Any]]:
        """Only the records this episode created or changed, per table."""
        return self.state.changes()

    def states(self) -> dict[str, list[dict[str, Any]]]:
        """The reference's `SimulationRun.states`: orders, then bookings, then reservations,
        split by update_time before the task time ("old_states") or not ("new_states")."""
        from datetime import datetime

        def when(text: Any) -> datetime | None:
            try:
                return datetime.strptime(text, "%Y-%m-%d %H:%M:%S")
            except (TypeError, ValueError):
                return None

        now = when(self.state.now())
        dump = self.state.dump()
        out: dict[str, list[dict[str, Any]]] = {"old_states": [], "new_states": []}
        for table in ("orders", "books", "reservations"):
            for rec in (dump.get(table) or {}).values():
                t = when(rec.get("update_time"))
                old = t is None or (now is not None and t < now)
                out["old_states" if old else "new_states"].append(rec)
        return out
