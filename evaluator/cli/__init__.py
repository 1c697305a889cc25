"""`agentsweep` command line: a thin dispatcher over subcommand modules.

Each subcommand lives in its own module exposing `register(subparsers)`, which adds a parser
whose `func` attribute is `(args) -> int`. Modules are imported lazily by name so that
`agentsweep --help` and light commands never import torch or vllm.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# module path -> subcommands it registers (for the help text; modules register themselves)
SUBCOMMAND_MODULES = (
    "evaluator.cli.serve",    # serve
    "evaluator.cli.chat",     # chat
    "evaluator.cli.run",      # run
    "evaluator.cli.bench",    # bench
    "evaluator.cli.judge",    # judge
    "evaluator.cli.report",   # report
    "evaluator.cli.view",     # view
    "evaluator.cli.data",     # data list
    "evaluator.cli.cache",    # cache import | index | misses | synth
    "evaluator.cli.prompts",  # prompts import | list | show
    "evaluator.cli.sweep",    # sweep (a grid of runs)
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentsweep",
        description="Run interactive tool-using LLM agent benchmarks on served models.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # subcommand not built into this install
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
