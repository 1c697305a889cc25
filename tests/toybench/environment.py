"""Toybench's environment: one `calculator` tool, answered in-process.

An environment factory has two steps: `check` (before any model engine starts: fail fast on
a missing resource) and `open` (once per run). The environment hands each episode a sandbox:
here one shared object, since the calculator keeps no state.
"""

from __future__ import annotations

import ast
import json
import operator
from typing import Any

from bench_data.types import Task
from cache_store.types import ToolOutcome
from evaluator.benchmarks.base import EnvironmentRequest

CALCULATOR = {"type": "function", "function": {
    "name": "calculator", "description": "Evaluate an arithmetic expression (+ - * /).",
    "parameters": {"type": "object", "required": ["expression"],
                   "properties": {"expression": {"type": "string"}}}}}
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.USub: operator.neg}


def evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](evaluate(node.left), evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](evaluate(node.operand))
    raise ValueError("only numbers and + - * / are allowed")


def _error(category: str, message: str) -> ToolOutcome:
    return ToolOutcome(content=json.dumps({"error": message}), source="error",
                       error_category=category)


class Calculator:
    """The sandbox of every episode (it satisfies `evaluator.protocols.ToolSandbox`)."""

    @property
    def tools(self) -> list[dict[str, Any]]:
        return [CALCULATOR]

    async def call(self, name: str, arguments: str, *, task_time: str) -> ToolOutcome:
        if name != "calculator":
            return _error("unknown_tool", f"no tool named {name}")
        try:
            args = json.loads(arguments or "{}")
            value = evaluate(ast.parse(str(args["expression"]), mode="eval"))
        except (ValueError, KeyError, TypeError, SyntaxError, ZeroDivisionError) as exc:
            return _error("wrong_type", f"cannot evaluate: {exc}")
        return ToolOutcome(content=json.dumps({"result": value}), source="live")

    # the Environment protocol
    def episode(self, task: Task) -> Calculator:
        return self

    def describe(self) -> dict[str, Any]:
        return {"tools": "calculator (in-process)"}

    def close(self) -> None:
        pass


class CalculatorFactory:
    def check(self, request: EnvironmentRequest) -> None:
        pass  # nothing to find before the engine starts

    async def open(self, request: EnvironmentRequest, simulator: Any,
                   simulator_model: str) -> Calculator:
        return Calculator()
