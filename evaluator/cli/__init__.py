"""`agentsweep` command line: a thin dispatcher over subcommand modules.

Each subcommand lives in its own module exposing `register(subparsers)`, which adds a parser
whose `func` attribute is `(args) -> int`; the module's last name is the command's. Modules are
imported lazily by name: a command line that names a command imports that command's module
alone (start-up is part of every run's cost), `agentsweep --help` imports them all, and none
imports torch or vllm. A `register` that takes `argv` is given the command line, to build
only the part of its parser that the line needs (`data`: one benchmark's data actions).

The outermost handler turns what a command left unhandled into one line naming the command:
an engine that would not start (exit 2), an infrastructure error (exit 1), anything else
(exit 1, "--debug" or AGENTSWEEP_DEBUG=1 shows the traceback); Ctrl-C exits 130.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
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


def _command(argv: list[str] | None) -> str | None:
    """The subcommand an argument list names (its first word that is not an option)."""
    for word in argv or ():
        if not word.startswith("-"):
            return word
        if word in ("-h", "--help"):
            return None
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with `argv`, only the subcommand it names (all when it names none)."""
    parser = OneLineParser(
        prog="agentsweep",
        description="Run interactive tool-using LLM agent benchmarks on served models.",
    )
    parser.add_argument("--debug", action="store_true",
                        help="show the Python traceback of an unexpected error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    command = _command(argv)
    wanted = [m for m in SUBCOMMAND_MODULES if m.rsplit(".", 1)[1] == command]
    for name in wanted or SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # subcommand not built into this install
                continue
            raise
        if "argv" in inspect.signature(module.register).parameters:
            module.register(sub, argv=argv if wanted else None)
        else:
            module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(argv)
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
