"""What a judge sees of a trajectory, and the trajectory's identity.

`trajectory_hash` is the key judgements are stored under: a SHA-256 over the canonical
msgspec encoding of the record's messages and tool-call records without timings, so that the
same trajectory always gets the same key and any change to what the agent said or saw gets a
new one.

`fit_to_context` is the judges' context guard: nothing is cut by default, and only a prompt
that would not fit the configured judge context has its longest tool outputs shortened.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Awaitable, Callable, Generator
from typing import Any

import msgspec

from backends.types import ChatMessage
from evaluator.records import EpisodeRecord

_ENCODER = msgspec.json.Encoder(order="deterministic")


def trajectory_hash(record: EpisodeRecord) -> str:
    """Stable hash of messages + tool calls (not timings, usage or wall-clock fields)."""
    calls = [
        (c.call_id, c.name, c.arguments, c.valid, c.source, c.content, c.error_category, c.step)
        for c in record.tool_calls
    ]
    payload = _ENCODER.encode({"messages": record.messages, "tool_calls": calls})
    return hashlib.sha256(payload).hexdigest()[:32]


def _cut(text: str, limit: int) -> str:
    if limit and len(text) > limit:
        return text[:limit] + f" ...[{len(text) - limit} more characters cut]"
    return text


def render_message(msg: ChatMessage, limit: int = 0) -> str:
    """One message as judge-readable text."""
    parts: list[str] = []
    if msg.role == "tool":
        head = f"[tool result{' ' + msg.name if msg.name else ''}"
        head += f" for call {msg.tool_call_id}]" if msg.tool_call_id else "]"
        parts.append(f"{head}\n{_cut(msg.content or '', limit)}")
        return "\n".join(parts)
    if msg.content:
        parts.append(f"[{msg.role}]\n{_cut(msg.content, limit)}")
    for call in msg.tool_calls or ():
        parts.append(
            f"[{msg.role} tool call {call.id}] {call.function.name}"
            f"({_cut(call.function.arguments, limit)})"
        )
    if not parts:
        parts.append(f"[{msg.role}]\n(empty)")
    return "\n".join(parts)


def conversation_turns(record: EpisodeRecord) -> list[ChatMessage]:
    """The turns a judge looks at: every message except system prompts."""
    return [m for m in record.messages if m.role != "system"]


def render_conversation(messages: list[ChatMessage], limit: int = 0, start: int = 0) -> str:
    """Numbered transcript; `start` is the number of the first message (windows keep the
    trajectory-wide numbering)."""
    return "\n\n".join(
        f"--- turn {i} ---\n{render_message(m, limit)}" for i, m in enumerate(messages, start)
    )


def render_tools(tools: list[dict[str, Any]] | None) -> str:
    """Tool list for the prompt: name, description and parameter schema per tool."""
    if not tools:
        return "(not provided; judge from the calls made and their results)"
    lines = []
    for t in tools:
        fn = t.get("function", t)
        params = json.dumps(fn.get("parameters", {}), ensure_ascii=False, sort_keys=True)
        lines.append(f"- {fn.get('name', '?')}: {fn.get('description', '')}\n  parameters: {params}")
    return "\n".join(lines)


def first_user_text(record: EpisodeRecord) -> str:
    for m in record.messages:
        if m.role == "user" and m.content:
            return m.content
    return ""


# ---------------------------------------------------------------- context guard

def estimate_tokens(text: str) -> int:
    """A deliberately high token count for budgeting without the judge's tokenizer: one token
    per non-ASCII character (Chinese text is about one per character or less) plus one per
    three ASCII characters (English and JSON average three to four)."""
    n_ascii = len(text.encode("ascii", "ignore"))
    return (n_ascii + 2) // 3 + len(text) - n_ascii


def _prefix_within(text: str, tokens: int) -> int:
    """The longest prefix length whose estimate is <= tokens."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) <= tokens:
            lo = mid
        else:
            hi = mid - 1
    return lo


class Shortened(msgspec.Struct):
    """What `shorten_tool_outputs` did: outputs cut, their cap in estimated tokens, characters
    removed."""

    n_cut: int = 0
    cap_tokens: int = 0
    chars_removed: int = 0


def shorten_texts(texts: list[str], reduce_by: int) -> tuple[list[str], Shortened]:
    """Copies of `texts` in which the longest are cut to one common cap (in estimated tokens),
    the highest cap that removes at least `reduce_by` estimated tokens (cap 0 when even that is
    not enough). Each cut text keeps its head and says how much was cut."""
    sizes = {i: estimate_tokens(t) for i, t in enumerate(texts) if t}
    if reduce_by <= 0 or not sizes:
        return list(texts), Shortened()

    def removed(cap: int) -> int:
        return sum(max(0, t - cap) for t in sizes.values())

    lo, hi = 0, max(sizes.values())  # largest cap with removed(cap) >= reduce_by
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if removed(mid) >= reduce_by:
            lo = mid
        else:
            hi = mid - 1
    out = list(texts)
    info = Shortened(cap_tokens=lo)
    for i, t in sizes.items():
        if t <= lo:
            continue
        text = texts[i]
        keep = _prefix_within(text, lo)
        cut = len(text) - keep
        out[i] = f"{text[:keep]}\n...[{cut} characters cut to fit the judge's context]"
        info.n_cut += 1
        info.chars_removed += cut
    return out, info


TokenCounter = Callable[[str], Awaitable["int | None"]]
"""The judge server's exact token count of a prompt (None: the server cannot count, e.g. no
/tokenize route)."""

CONTEXT_GUARD_NOTE = "_context_guard"
"""The key of `Judgement.reasoning` under which a judgement says what the guard cut."""

GUARD_ROUNDS = 6
"""The context guard's cut-and-count rounds at most (two or three in practice)."""

Parts = tuple[Callable[[list[str]], str], list[str]]
"""What the guard may cut: (render, texts), `render(texts)` being the whole prompt."""


def tool_output_parts(render: Callable[[list[ChatMessage]], str],
                      turns: list[ChatMessage]) -> Parts:
    """A conversation's `Parts` whose texts are its tool outputs (other messages are kept)."""
    where = [i for i, m in enumerate(turns) if m.role == "tool"]

    def render_texts(texts: list[str]) -> str:
        out = list(turns)
        for i, text in zip(where, texts, strict=True):
            if text != (turns[i].content or ""):
                out[i] = msgspec.structs.replace(turns[i], content=text)
        return render(out)

    return render_texts, [turns[i].content or "" for i in where]


def _guard(parts: Parts, context_tokens: int, max_tokens: int,
           what: str) -> Generator[str, int | None, tuple[str, str]]:
    """The context guard's steps, for a sync or an async token count: yields each prompt to be
    counted and receives its count (None: use `estimate_tokens` from then on); returns
    (prompt, note). The longest texts are cut (`shorten_texts`) when the prompt's tokens plus
    `max_tokens` would exceed `context_tokens` (0 = no guard). Cuts are planned in estimated
    tokens, converted at the counted-per-estimated rate (first of the whole prompt, then of
    what the last cut removed), within the bracket of cuts known too small and known enough;
    the least cut prompt that fits is kept, and a prompt within 2% of the budget ends the
    search (at most GUARD_ROUNDS counts after the first)."""
    render, texts = parts
    prompt = render(texts)
    if context_tokens <= 0:
        return prompt, ""
    budget = context_tokens - max_tokens
    counted = yield prompt
    exact = counted is not None
    n = counted if counted is not None else estimate_tokens(prompt)
    full = n
    if n <= budget:
        return prompt, ""
    full_est = estimate_tokens(prompt)
    ratio = n / max(full_est, 1)  # counted tokens per estimated one
    lo, hi = 0, None  # cuts (estimated tokens to remove) known too small / known enough
    best: tuple[str, int, Shortened] | None = None  # the least cut prompt that fits
    reduce_by = max(1, math.ceil((n - budget) / ratio))
    info = Shortened()
    for _ in range(GUARD_ROUNDS):
        cut, info = shorten_texts(texts, reduce_by)
        prompt = render(cut)
        counted = (yield prompt) if exact else None
        n = counted if counted is not None else estimate_tokens(prompt)
        if n <= budget:
            hi = reduce_by
            if best is None or n > best[1]:
                best = (prompt, n, info)
            if n >= budget - max(16, budget // 50):
                break  # within 2% of the budget: close enough
        elif info.cap_tokens == 0:
            break  # every text is cut to nothing and it still does not fit
        else:
            lo = reduce_by
        est_drop = full_est - estimate_tokens(prompt)
        if est_drop > 0 and full > n:
            ratio = (full - n) / est_drop  # the rate of what was cut
        guess = math.ceil((full - budget) / ratio)
        if hi is not None and not lo < guess < hi:
            guess = (lo + hi) // 2
        elif hi is None and guess <= lo:
            guess = lo + max(1, lo // 10)
        if guess == reduce_by or (hi is not None and hi - lo <= 1):
            break
        reduce_by = guess
    if best is not None:
        prompt, n, info = best
    tokens = "tokens" if exact else "estimated tokens"
    mark = "" if exact else "~"
    note = (f"context guard: prompt {mark}{full} {tokens} > budget {budget} (context_tokens "
            f"{context_tokens} - max_tokens {max_tokens}); {info.n_cut} {what} cut to <= "
            f"{info.cap_tokens} estimated tokens each ({info.chars_removed} characters "
            f"removed), now {mark}{n}")
    if n > budget:
        note += "; still over budget"
    return prompt, note


def fit_parts(parts: Parts, context_tokens: int, max_tokens: int,
              what: str = "texts") -> tuple[str, str]:
    """The context guard on estimated tokens: (prompt, note; "" when nothing was cut)."""
    steps = _guard(parts, context_tokens, max_tokens, what)
    try:
        next(steps)
        while True:
            steps.send(None)
    except StopIteration as done:
        return done.value


async def fit_texts(parts: Parts, context_tokens: int, max_tokens: int,
                    count: TokenCounter | None = None, what: str = "texts") -> tuple[str, str]:
    """The context guard counting with `count` (the judge server) when it can, else on
    estimated tokens: (prompt, note; "" when nothing was cut)."""
    steps = _guard(parts, context_tokens, max_tokens, what)
    try:
        prompt = next(steps)
        while True:
            prompt = steps.send(await count(prompt) if count is not None else None)
    except StopIteration as done:
        return done.value


def fit_to_context(
    render: Callable[[list[ChatMessage]], str],
    turns: list[ChatMessage],
    context_tokens: int,
    max_tokens: int,
) -> tuple[str, str]:
    """`render(turns)`, with the longest tool outputs shortened when the prompt's estimated
    tokens plus `max_tokens` (the answer) would exceed `context_tokens` (0 = no guard).
    Returns (prompt, note); the note says what was cut and is "" when nothing was."""
    return fit_parts(tool_output_parts(render, turns), context_tokens, max_tokens,
                     "tool outputs")
