"""Shared helpers for the judge tests: records and a scripted fake judge client."""

from __future__ import annotations

from collections.abc import Callable

from backends.types import ChatMessage, ChatResponse, Choice, FunctionCall, ToolCall
from evaluator.records import EpisodeRecord, ToolCallRecord, UnitId


def make_record(subset: str, task_id: str = "t1", trial: int = 0, *, benchmark="travelbench",
                messages: list[ChatMessage] | None = None, calls: int = 0,
                errors: int = 0) -> EpisodeRecord:
    msgs = messages if messages is not None else [
        ChatMessage(role="system", content="sys"),
        ChatMessage(role="user", content=f"question {task_id}"),
        ChatMessage(role="assistant", content=f"answer {task_id} {trial}"),
    ]
    tool_calls = [
        ToolCallRecord(call_id=f"c{i}", name="web_search", arguments="{}", valid=i >= errors,
                       source="error" if i < errors else "hit", content="x")
        for i in range(calls)
    ]
    return EpisodeRecord(
        unit=UnitId(run="r", task=f"{benchmark}/{subset}/{task_id}", trial=trial, seed=1),
        benchmark=benchmark, subset=subset, task_id=task_id, messages=msgs,
        tool_calls=tool_calls,
    )


def tool_call_msg() -> ChatMessage:
    return ChatMessage(role="assistant", content=None, tool_calls=[
        ToolCall(id="c0", function=FunctionCall(name="web_search", arguments="{}"))])


class ScriptedClient:
    """Answers chat() from a function of (prompt text, call index); records every call."""

    def __init__(self, answer: Callable[[str, int], str | Exception], model: str = "judge-m"):
        self.answer = answer
        self.model = model
        self.calls: list[dict] = []

    async def resolve_model(self) -> str:
        return self.model

    async def chat(self, messages, *, model=None, response_format=None, sampling=None):
        prompt = messages[-1].content
        self.calls.append({"prompt": prompt, "model": model, "response_format": response_format,
                           "sampling": sampling})
        out = self.answer(prompt, len(self.calls) - 1)
        if isinstance(out, Exception):
            raise out
        return ChatResponse(id="x", model=self.model, choices=[
            Choice(index=0, message=ChatMessage(role="assistant", content=out))])
