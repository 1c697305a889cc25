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
from cache_store.types import SandboxTexts

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
                   sections: dict[str, str] | None = None) -> list[ChatMessage]:
    """The two simulator messages for one call (schema = the OpenAI `function` object).
    `sections`: a prompt set's simulator prompt (`parse_prompt`) instead of `version`'s file."""
    p = sections if sections is not None else load_prompt(version)
    name = schema.get("name", "")
    if examples:
        blocks = [p["examples_header"].replace("{num_examples}", str(len(examples)))]
        for i, (params, result) in enumerate(examples, 1):
            blocks.append(p["example"].replace("{index}", str(i)).replace("{params}", params)
                          .replace("{result}", result))
        ex_text = p.get("example_separator", "\n").join(blocks)
    else:
        ex_text = p["no_examples"].replace("{tool_name}", name)
    system = (p["system"].replace("{tool_name}", name)
              .replace("{tool_description}", schema.get("description", ""))
              .replace("{tool_parameters}", json.dumps(schema.get("parameters", {}),
                                                       ensure_ascii=False, sort_keys=True))
              .replace("{examples}", ex_text))
    user = (p["user"].replace("{tool_name}", name)
            .replace("{params_json}", json.dumps(arguments, ensure_ascii=False, indent=2,
                                                 sort_keys=True)))
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


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
