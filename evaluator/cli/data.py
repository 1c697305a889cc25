"""`agentsweep data list`, `agentsweep data check PATH`, and each benchmark's own data actions,
`agentsweep data <benchmark> ACTION ...` (`Benchmark.data_commands`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench_data import registry
from bench_data.tools import check_tool_schemas
from bench_data.types import LoadIssue


def register(subparsers: argparse._SubParsersAction, argv: list[str] | None = None) -> None:
    """`data` and its actions; the benchmarks' own actions only when `argv` (the command
    line, when given) may name one: `data list` and `data check` import no benchmark."""
    parser = subparsers.add_parser("data", help="list and check benchmark data")
    data_sub = parser.add_subparsers(dest="data_command", metavar="ACTION")

    p_list = data_sub.add_parser(
        "list", help="benchmarks with their subsets and whether their data is found; task "
        "counts, paths, licenses")
    p_list.add_argument("--data-dir", type=Path, default=None,
                        help=f"benchmark data directory (default: ${registry.DATA_DIR_ENV}, "
                             "then ../shared/data)")
    p_list.set_defaults(func=cmd_list)

    p_check = data_sub.add_parser(
        "check", help="validate a task file, tool-schema file, directory or dataset name")
    p_check.add_argument("path", help="file, directory, or dataset name (sample, or a benchmark's name)")
    p_check.add_argument("--data-dir", type=Path, default=None,
                         help="data directory for dataset names")
    p_check.set_defaults(func=cmd_check)

    for bench in _with_data_commands(argv):
        if bench.name in ("list", "check"):
            continue
        p_bench = data_sub.add_parser(bench.name, help=f"{bench.title}'s data actions")
        bench_sub = p_bench.add_subparsers(dest="bench_data_command", metavar="ACTION")
        assert bench.data_commands is not None
        bench.data_commands(bench_sub)
        p_bench.set_defaults(func=lambda args, p=p_bench: _usage(p))

    parser.set_defaults(func=lambda args: _usage(parser))


def _with_data_commands(argv: list[str] | None = None) -> list:
    """The registered benchmarks that bring data actions (none when the registry cannot load:
    the other data commands still work and report the problem; none when `argv` names
    `data list` or `data check`)."""
    from evaluator import benchmarks
    from evaluator.benchmarks.base import BenchmarkError

    words = [w for w in argv or () if not w.startswith("-")]
    if len(words) >= 2 and words[0] == "data" and words[1] in ("list", "check"):
        return []
    try:
        return [b for b in benchmarks.all_benchmarks() if b.data_commands is not None]
    except BenchmarkError:
        return []


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def cmd_list(args: argparse.Namespace) -> int:
    """Each registered benchmark: its subsets, its protocols, and whether its data is found;
    then the built-in sample and data of formats no benchmark package runs yet."""
    from evaluator import benchmarks

    try:
        infos = {i.name: i for i in registry.list_datasets(args.data_dir)}
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    found = any(i.available and not i.builtin for i in infos.values())
    sample = infos.pop(registry.SAMPLE)
    for bench in benchmarks.all_benchmarks():
        info = infos.pop(bench.name, None) or registry.dataset_info(bench.name, args.data_dir)
        runs = ", ".join(bench.protocols) or "none yet"
        print(f"{bench.name}  [{bench.title}; data {_found(info)}]")
        print(f"  subsets: {', '.join(bench.subsets) or '(from the data)'}; protocols: {runs}")
        _print_data(info)
    for info in infos.values():
        print(f"{info.name}  [data {_found(info)}; no benchmark package registered: its tasks "
              "load, nothing runs them yet]")
        _print_data(info)
    print(f"{sample.name}  [built-in sample of {sample.benchmark}]")
    _print_data(sample)
    if not found:
        print(f"\nno benchmark data found: pass --data-dir or set ${registry.DATA_DIR_ENV}")
    return 0


def _found(info: registry.DatasetInfo) -> str:
    return "found" if info.available else "not found"


def _print_data(info: registry.DatasetInfo) -> None:
    print(f"  path:    {info.path or '(no data directory)'}")
    if info.available:
        subsets = ", ".join(f"{name} {count}" for name, count in info.subsets.items())
        print(f"  tasks:   {info.task_count} ({subsets})")
        print(f"  license: {info.license}")
        if info.issues:
            print(f"  issues:  {info.issues} bad records (run `agentsweep data check "
                  f"{info.path}`)")


def check_path(target: str, data_dir: Path | None = None) -> tuple[str, list[LoadIssue]]:
    """(what loaded, in words; every issue) for a file, directory or dataset name. Nothing
    at all (an empty or blank file) is a ValueError: it is never good data."""
    path = Path(target)
    if path.is_file():
        for fmt in registry.formats():
            aux = fmt.aux_check(path)
            if aux is not None:
                return aux
    if path.is_file() and any(fmt.tool_schemas(path.parent) == path
                              for fmt in registry.formats()):
        tools, issues = check_tool_schemas(path)
        if not tools and not issues:
            raise ValueError(f"{path}: no tools (an empty tool list)")
        return f"{len(tools)} good tools", issues
    task_set = registry.load_tasks(target, data_dir=data_dir, skip_bad=True)
    if not task_set.tasks and not task_set.issues:
        raise ValueError(f"{target}: no tasks (an empty or blank file?)")
    loaded = f"{len(task_set.tasks)} good tasks"
    if task_set.tool_schemas:
        loaded += f", {len(task_set.tool_schemas)} tools"
    issues = list(task_set.issues)
    fmt = next((f for f in registry.formats() if f.benchmark == task_set.benchmark), None)
    for directory in sorted({f.parent for f in task_set.files}) if fmt else ():
        aux = fmt.aux_check(directory)
        if aux is not None:
            loaded += f", {aux[0]}"
            issues.extend(aux[1])
    return loaded, issues


def cmd_check(args: argparse.Namespace) -> int:
    try:
        good, issues = check_path(args.path, args.data_dir)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for issue in issues:
        print(str(issue))
    summary = f"{args.path}: {good}, {len(issues)} issue(s)"
    print(summary, file=sys.stderr if issues else sys.stdout)
    return 1 if issues else 0
