"""The CLI's outermost handler: an exception a command left unhandled becomes one line naming
the command (engine start failure exit 2, infrastructure error 1, anything else 1), and
--debug shows the traceback instead."""

from __future__ import annotations

import argparse

import pytest

from backends.errors import InfrastructureError, ServerStartError
from evaluator import cli


def _parser_raising(exc: Exception):
    def build(argv: list[str] | None = None) -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="agentsweep")
        parser.add_argument("--debug", action="store_true")
        sub = parser.add_subparsers(dest="command")
        boom = sub.add_parser("boom")

        def func(args):
            raise exc

        boom.set_defaults(func=func)
        return parser
    return build


@pytest.mark.parametrize("exc, code, words", [
    (ServerStartError("vLLM server was not ready after 900s\n--- last lines ---\nx"), 2,
     "the engine did not start: vLLM server was not ready after 900s"),
    (InfrastructureError("connection refused"), 1, "infrastructure error: connection refused"),
    (RuntimeError("odd\nsecond line"), 1, "unexpected error: RuntimeError: odd (run again"),
])
def test_an_unhandled_error_is_one_line_naming_the_command(monkeypatch, capsys, exc, code,
                                                           words):
    monkeypatch.setattr(cli, "build_parser", _parser_raising(exc))
    monkeypatch.delenv("AGENTSWEEP_DEBUG", raising=False)
    assert cli.main(["boom"]) == code
    err = capsys.readouterr().err
    assert err.startswith("agentsweep boom: ") and words in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_debug_shows_the_traceback(monkeypatch):
    monkeypatch.setattr(cli, "build_parser", _parser_raising(RuntimeError("odd")))
    with pytest.raises(RuntimeError, match="odd"):
        cli.main(["--debug", "boom"])


def test_a_command_line_builds_only_its_command() -> None:
    """`agentsweep run ...` imports the run command's module, not the other commands' nor
    every benchmark (the data commands'): start-up is part of every run's cost."""
    import subprocess
    import sys

    code = ("import sys; from evaluator.cli import build_parser; "
            "a = build_parser(['run', '--limit', '2']).parse_args(['run', '--limit', '2']); "
            "print(a.command, a.limit, sorted(m for m in sys.modules if m.startswith("
            "('evaluator.cli.', 'evaluator.benchmarks.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith("run 2 ")
    assert "evaluator.cli.run" in out
    for other in ("evaluator.cli.data", "evaluator.cli.chat", "evaluator.cli.judge",
                  "evaluator.benchmarks.tripbench"):
        assert f"'{other}'" not in out


def test_loading_the_benchmarks_imports_no_numpy() -> None:
    """A run's config load registers every benchmark (profiles, aliases); that must not pull in
    numpy or the report: TRIP-Bench's column searches and every report load on first use."""
    import subprocess
    import sys

    code = ("import sys; from evaluator import benchmarks; benchmarks.load_plugins([]); "
            "print(len(benchmarks.all_benchmarks()), 'numpy' in sys.modules, "
            "'evaluator.benchmarks.tripbench.report' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert int(out[0]) >= 4 and out[1:] == ["False", "False"]


@pytest.mark.parametrize("command", ["run", "bench"])
def test_benchmark_flags_are_there_when_a_line_uses_them(command, capsys) -> None:
    """A benchmark's own run flag (GroupTravelBench's --poi-table) parses into its config key
    whether the parser was built for that line, for another line or whole; `--help` lists it;
    a line of generic flags carries no benchmark flag; a mistyped flag is still named."""
    from evaluator.cli.run import collect_overrides

    line = [command, "--limit", "1", "--poi-table", "/x/poi.json"]
    for built_for in (line, None):
        args = cli.build_parser(built_for).parse_args(line)
        assert ("options.poi_table", "/x/poi.json", "--poi-table") in collect_overrides(args)
    args = cli.build_parser([command, "--limit", "1"]).parse_args([command, "--limit", "1"])
    assert args.bench_flags == {} and collect_overrides(args) == [("data.limit", 1, "--limit")]
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    assert "--poi-table" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main([command, "--poi-tabel", "x"])
    assert "--poi-tabel" in capsys.readouterr().err


def test_help_and_unknown_commands_still_see_every_command(capsys) -> None:
    assert "judge" in cli.build_parser(["--help"]).format_help()
    with pytest.raises(SystemExit):
        cli.main(["no-such-command"])
    assert "invalid choice" in capsys.readouterr().err
