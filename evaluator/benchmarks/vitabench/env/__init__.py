"""VitaBench's tool environments (delivery, in-store, OTA, and their cross-domain merge).

Data + pure functions: `TaskDatabase` (one task's database, loaded once and shared read-only),
`VitaEnvironment` (one episode: tool schemas, `call`/`execute`, the final state over its own
copy-on-write view). See docs/vitabench.md.
"""

from .database import (
    DOMAINS,
    DatabaseCache,
    TaskDatabase,
    TaskDataError,
    domains_for,
    load_database,
    parse_domains,
)
from .environment import ToolResult, VitaEnvironment, encode
from .spec import ALL_TOOLS, ToolSpec, tool_schemas, tools_for
from .state import EpisodeState

__all__ = [
    "ALL_TOOLS", "DOMAINS", "DatabaseCache", "EpisodeState", "TaskDataError", "TaskDatabase",
    "ToolResult", "ToolSpec", "VitaEnvironment", "domains_for", "encode", "load_database",
    "parse_domains", "tool_schemas", "tools_for",
]
