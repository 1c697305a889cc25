"""`agentsweep prompts import | list | show`: prompt sets (docs/prompts.md).

A prompt set belongs to a benchmark (its roles); `--bench` names it, and may be left out when
only one registered benchmark has prompt sets, when the checkout has the layout of one
benchmark's reference (`import`: `Benchmark.prompt_source`), or (for `show` and `list`) when
the set's manifest names its benchmark.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evaluator.prompt_sets import (
    BUILTIN,
    SIMULATOR_ROLE,
    PromptSet,
    PromptSetError,
    list_sets,
    load_prompt_set,
    modified_files,
    read_manifest,
    resolve,
    sets_dir,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "prompts", help="import, list and show prompt sets (e.g. the benchmark's own prompts)")
    sub = parser.add_subparsers(dest="prompts_command", metavar="ACTION")
    bench_help = ("the benchmark whose prompt set it is (default: the only one with prompt "
                  "sets, or the one the set's manifest names)")

    p_imp = sub.add_parser(
        "import", help="a prompt set from a local checkout of a benchmark's reference code")
    p_imp.add_argument("--from", dest="source", required=True, type=Path, metavar="CHECKOUT",
                       help="local checkout of the benchmark's reference (TravelBench: "
                            "github.com/small-xiangcheng/TravelBench)")
    p_imp.add_argument("--bench", default=None, metavar="NAME", help=bench_help)
    p_imp.add_argument("--name", default=None,
                       help="set name, recorded in version strings (default: the benchmark's "
                            "name)")
    p_imp.add_argument("--out", type=Path, default=None, metavar="DIR",
                       help="set directory (default: $AGENTSWEEP_HOME/prompts/NAME)")
    p_imp.add_argument("--force", action="store_true", help="replace an existing set")
    p_imp.set_defaults(func=cmd_import)

    p_list = sub.add_parser("list", help="the built-in sets and the imported ones")
    p_list.add_argument("--dir", type=Path, default=None,
                        help="where imported sets are (default: $AGENTSWEEP_HOME/prompts)")
    p_list.set_defaults(func=cmd_list)

    p_show = sub.add_parser("show", help="one set's files, digests and placeholders")
    p_show.add_argument("set", help="'builtin', a set name or a set directory")
    p_show.add_argument("--bench", default=None, metavar="NAME", help=bench_help)
    p_show.add_argument("--role", default=None, help="print this role's text")
    p_show.set_defaults(func=cmd_show)

    parser.set_defaults(func=lambda args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _with_prompts() -> list[Any]:
    from evaluator import benchmarks

    return [b for b in benchmarks.all_benchmarks() if b.prompts is not None]


def pick_benchmark(name: str | None, set_dir: Path | None = None) -> Any:
    """The benchmark of a prompt set: `name`, else the set manifest's, else the only one with
    prompt sets; PromptSetError when none or several fit."""
    from evaluator import benchmarks

    if name is None and set_dir is not None:
        named = read_manifest(set_dir).get("benchmark")
        name = named if isinstance(named, str) else None
    if name is not None:
        try:
            bench = benchmarks.get(name)
        except benchmarks.BenchmarkError as exc:
            raise PromptSetError(str(exc)) from None
        if bench.prompts is None:
            raise PromptSetError(f"benchmark {name} has no prompt sets")
        return bench
    options = _with_prompts()
    if len(options) != 1:
        raise PromptSetError("name the benchmark with --bench (prompt sets: "
                             f"{', '.join(b.name for b in options) or 'none'})")
    return options[0]


def _roles_of(set_dir: Path) -> Any:
    """A set directory's benchmark's roles (listing): its manifest's benchmark, else the one
    benchmark whose roles load it."""
    try:
        return pick_benchmark(None, set_dir).prompts
    except PromptSetError:
        pass
    for bench in _with_prompts():
        try:
            load_prompt_set(set_dir, bench.prompts)
            return bench.prompts
        except PromptSetError:
            continue
    return None


def _importer_for(source: Path) -> Any:
    """The benchmark to import `source` for, without `--bench`: the one that recognises the
    checkout (its `Benchmark.prompt_source` file is there, or its importer's
    `recognises(checkout)` says so), else the only importer that cannot tell; PromptSetError
    when that is not one."""
    importers = [b for b in _with_prompts() if b.prompt_importer is not None]
    if len(importers) == 1:
        return importers[0]

    def tells(b: Any) -> bool:
        return bool(b.prompt_source) or getattr(b.prompt_importer, "recognises", None) is not None

    def knows(b: Any) -> bool:
        if b.prompt_source:
            return (source.expanduser() / b.prompt_source).is_file()
        return bool(b.prompt_importer.recognises(source))

    known = [b for b in importers if tells(b) and knows(b)]
    unknown = [b for b in importers if not tells(b)]
    if len(known) == 1 or (not known and len(unknown) == 1):
        return (known or unknown)[0]
    raise PromptSetError("name the benchmark with --bench (prompt importers: "
                         f"{', '.join(b.name for b in importers) or 'none'})")


def cmd_import(args: argparse.Namespace) -> int:
    from evaluator.prompt_import import ImportFailed

    try:
        bench = pick_benchmark(args.bench) if args.bench else _importer_for(args.source)
        if bench.prompt_importer is None:
            raise PromptSetError(f"benchmark {bench.name} has no prompt importer")
        out, manifest = bench.prompt_importer(args.source, args.out, args.name or bench.name,
                                              args.force)
    except (ImportFailed, PromptSetError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot write the prompt set: {exc}", file=sys.stderr)
        return 2
    commit = manifest["source"]["commit"] or "unknown commit"
    print(f"imported prompt set {manifest['name']}@{manifest['digest']} "
          f"({len(manifest['files'])} files, {commit}) into {out}")
    print(f"use it with `prompts = \"{out}\"` in the run config")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    for bench in _with_prompts():
        builtin = load_prompt_set(BUILTIN, bench.prompts)
        print(f"{BUILTIN:20s} {builtin.digest}  the project's own prompts for {bench.title}")
    root = args.dir if args.dir is not None else sets_dir()
    sets = list_sets(_roles_of, root)
    for name, path, ps, error in sets:
        if ps is None:
            print(f"{name:20s} {'invalid':12s}  {error}")
            continue
        print(f"{ps.name:20s} {ps.digest}  {_source(ps)}{_edited(ps)}  {path}")
    if not sets:
        print(f"(no imported sets in {root}; see `agentsweep prompts import --help`)")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    try:
        bench = pick_benchmark(args.bench, resolve(args.set))
        ps = load_prompt_set(args.set, bench.prompts)
    except PromptSetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    roles = bench.prompts.roles
    if args.role:
        if args.role not in roles:
            print(f"error: no role {args.role!r}; roles: {', '.join(roles)}", file=sys.stderr)
            return 2
        sys.stdout.write(ps.texts[args.role])
        return 0
    print(f"name:    {ps.name}  ({bench.title})")
    print(f"digest:  {ps.digest}  (version strings carry {ps.version('<base>')!r})")
    print(f"path:    {ps.path or '(built into agentsweep)'}")
    if not ps.builtin:
        print(f"source:  {_source(ps)}{_edited(ps)}")
    files = ps.manifest.get("files") or {}
    for role in roles:
        text = ps.texts[role]
        origin = (files.get(f"{role}.txt") or {}).get("from", "")
        print(f"  {role:26s} {_sha12(text)} {len(text):6d} chars  {_placeholders(ps, role)}"
              + (f"  <- {origin}" if origin else ""))
    return 0


def _source(ps: PromptSet) -> str:
    src = ps.manifest.get("source") or {}
    if not src:
        return "(no manifest)"
    commit = (src.get("commit") or "")[:12] or "unknown commit"
    return f"{src.get('repository', '?')} @ {commit}"


def _edited(ps: PromptSet) -> str:
    changed = modified_files(ps)
    return f"  [edited since import: {', '.join(changed)}]" if changed else ""


def _sha12(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _placeholders(ps: PromptSet, role: str) -> str:
    if role == SIMULATOR_ROLE:
        from evaluator.prompt_sets import _BRACE_FIELD

        names = sorted({n for body in ps.simulator_sections.values()
                        for n in _BRACE_FIELD.findall(body)})
        return " ".join("{" + n + "}" for n in names)
    if role not in ps.templates:
        return "(data)"
    names = sorted(set(ps.templates[role].get_identifiers()))
    return " ".join("$" + n for n in names)
