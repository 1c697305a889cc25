"""The contract between protocol code and the operations layer around it.

A protocol is a pure episode function: `async def run(ctx: EpisodeContext) -> EpisodeRecord`.
It never retries infrastructure errors, writes files, logs or renders: it lets
`backends.errors.InfrastructureError` propagate, and the scheduler retries the whole episode.
The scheduler builds the context: role clients wrap a `ChatClient` with the role's model,
sampling settings, admission control and the episode's session header.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from backends.types import ChatMessage, ChatResponse
from bench_data.types import Task
from cache_store.types import ToolOutcome
from evaluator.records import UnitId

if TYPE_CHECKING:
    from evaluator.prompt_sets import PromptSet


class RoleClient(Protocol):
    """A model in one role (agent, user simulator). Appends-only conversations keep prefixes."""

    role: str
    model: str

    async def complete(
        self,
        messages: list[ChatMessage],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> ChatResponse: ...


class ToolSandbox(Protocol):
    """The tool environment of one episode (cache_store.Sandbox satisfies it)."""

    @property
    def tools(self) -> list[dict[str, Any]]: ...

    async def call(self, name: str, arguments: str, *, task_time: str) -> ToolOutcome: ...


LAYOUTS = ("reference", "prefix")
"""Where the task's situation goes: "reference" = in the agent's system prompt, as the
TravelBench reference does; "prefix" = in the first user message, so the system prompt and
tool schemas are one prefix shared by every task (docs/protocols.md)."""


@dataclass(frozen=True)
class ProtocolSettings:
    max_steps: int = 12                 # agent calls per user turn (tool loop bound)
    max_turns: int = 8                  # multi-turn rounds (agent reply + simulator reply)
    finish_marker: str = "##FINISH##"   # the user simulator ends the dialogue with it
    abstain_tags: tuple[str, ...] = ("[Unsolvable]", "[Unsolved]")  # "cannot be done" tags
    language: str = "auto"              # prompts: "auto" follows the task text
    layout: str = "reference"           # one of LAYOUTS
    stop_at_abstain_tag: bool = False   # end an abstention episode at the first tagged reply
    retry_empty_replies: bool = False   # retry an empty reply once instead of keeping it
    prompts: PromptSet | None = None    # the run's prompt set; None = the built-in prompts
    options: Any = None                 # the benchmark's options Struct (Benchmark.read_options)

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {self.layout!r}")


@dataclass
class EpisodeContext:
    unit: UnitId
    task: Task
    agent: RoleClient
    sandbox: ToolSandbox
    user: RoleClient | None = None
    settings: ProtocolSettings = field(default_factory=ProtocolSettings)
    session_id: str = ""
