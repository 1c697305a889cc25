"""`agentsweep` command line: a thin dispatcher over subcommand modules.

Each subcommand lives in its own module exposing `register(subparsers)`, which adds a parser
whose `func` attribute is `(args) -> int`. Modules are imported lazily by name so that
`agentsweep --help` and light commands never import torch or vllm.

The outermost handler turns what a command left unhandled into one line naming the command:
an engine that would not start (exit 2), an infrastructure error (exit 1), anything else
(exit 1, "--debug" or AGENTSWEEP_DEBUG=1 shows the traceback); Ctrl-C exits 130.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NoReturn

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
    "evaluator.cli.repair",   # repair (quarantine undecodable result lines)
)


class OneLineParser(argparse.ArgumentParser):
    """A usage error is one line on stderr naming the flag or value (exit 2); `--help` still
    prints the whole usage. Subcommand parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        first = (message.strip().splitlines() or [""])[0]
        self.exit(2, f"{self.prog}: error: {first} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="agentsweep",
        description="Run interactive tool-using LLM agent benchmarks on served models.",
    )
    parser.add_argument("--debug", action="store_true",
                        help="show the Python traceback of an unexpected error")
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
    from backends.fdlimit import raise_nofile_limit

    raise_nofile_limit()  # thousands of connections need more than a shell's 1,024
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug or os.environ.get("AGENTSWEEP_DEBUG") == "1":
            raise
        return _one_line(args.command, exc)


def _one_line(command: str, exc: Exception) -> int:
    from backends.errors import InfrastructureError, ServerStartError

    first = (str(exc).strip().splitlines() or [""])[0]
    if isinstance(exc, ServerStartError):
        print(f"agentsweep {command}: the engine did not start: {first} (its log has the "
              "rest)", file=sys.stderr)
        return 2
    if isinstance(exc, InfrastructureError):
        print(f"agentsweep {command}: infrastructure error: {first}", file=sys.stderr)
        return 1
    print(f"agentsweep {command}: unexpected error: {type(exc).__name__}: {first} "
          "(run again with --debug for the traceback)", file=sys.stderr)
    return 1
