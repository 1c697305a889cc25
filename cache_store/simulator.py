"""The ICL tool simulator: tool schema + retrieved (input, output) pairs + the call -> output.

The prompt lives in `prompts/tool_simulator_<version>.txt` (sections separated by
`=== name ===` lines). Temperature is 0. The prompt version is part of every simulated answer's
content address, so changing the prompt file requires a new version name.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from backends.types import ChatMessage, SamplingParams
from cache_store.types import SandboxTexts, fill

PROMPT_DIR = Path(__file__).parent / "prompts"


SECTIONS = ("system", "examples_header", "example", "no_examples", "user")
"""Required sections; optional: `example_separator` (between the example blocks, default a
newline)."""


@lru_cache(maxsize=8)
def load_prompt(version: str) -> dict[str, str]:
    path = PROMPT_DIR / f"tool_simulator_{version}.txt"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no simulator prompt of version {version!r}")
    return parse_prompt(path.read_text(encoding="utf-8"), str(path))


def parse_prompt(text: str, origin: str) -> dict[str, str]:
    """The `=== name ===` sections of a simulator prompt file (`origin` names it in errors)."""
    sections: dict[str, str] = {}
    name = None
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("=== ") and line.endswith(" ==="):
            if name is not None:
                sections[name] = "\n".join(lines)
            name, lines = line[4:-4].strip(), []
        else:
            lines.append(line)
    if name is not None:
        sections[name] = "\n".join(lines)
    missing = set(SECTIONS) - set(sections)
    if missing:
        raise ValueError(f"{origin}: missing sections {sorted(missing)}")
    return sections


def build_messages(schema: dict[str, Any], arguments: dict[str, Any],
                   examples: list[tuple[str, str]], version: str,
                   sections: dict[str, str] | None = None,
                   parameters: str = "json") -> list[ChatMessage]:
    """The two simulator messages for one call (schema = the OpenAI `function` object).
    `sections`: a prompt set's simulator prompt (`parse_prompt`) instead of `version`'s file;
    `parameters`: the schema's rendering, "json" (sorted JSON) or "python" (`str()` of the
    dict, as a reference that formats it into its prompt shows it)."""
    p = sections if sections is not None else load_prompt(version)
    name = schema.get("name", "")
    if examples:  # each template filled in one pass: a value's own braces stay as they are
        blocks = [fill(p["examples_header"], {"num_examples": len(examples)})]
        for i, (params, result) in enumerate(examples, 1):
            blocks.append(fill(p["example"], {"index": i, "params": params, "result": result}))
        ex_text = p.get("example_separator", "\n").join(blocks)
    else:
        ex_text = fill(p["no_examples"], {"tool_name": name})
    system = fill(p["system"], {
        "tool_name": name, "tool_description": schema.get("description", ""),
        "tool_parameters": _schema_text(schema.get("parameters", {}), parameters),
        "examples": ex_text})
    user = fill(p["user"], {"tool_name": name, "params_json": json.dumps(
        arguments, ensure_ascii=False, indent=2, sort_keys=True)})
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


def _schema_text(schema: Any, how: str) -> str:
    if how == "python":
        return str(schema)
    return json.dumps(schema, ensure_ascii=False, sort_keys=True)


async def simulate(client: Any, model: str, messages: list[ChatMessage], *,
                   max_tokens: int = 2048, session_id: str | None = None,
                   empty_result: str = SandboxTexts().empty_result) -> str:
    """Ask the simulator model; the stripped text (or `empty_result` when it is empty)."""
    resp = await client.chat(messages, model=model,
                             sampling=SamplingParams(temperature=0.0, max_tokens=max_tokens),
                             session_id=session_id)
    content = resp.message.content
    text = (content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            if content is not None else "").strip()
    return text or empty_result
