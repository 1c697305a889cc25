"""`agentsweep prompts import | list | show`: prompt sets (docs/prompts.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluator.prompt_sets import (
    BUILTIN,
    ROLES,
    PromptSet,
    PromptSetError,
    list_sets,
    load_prompt_set,
    modified_files,
    sets_dir,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "prompts", help="import, list and show prompt sets (e.g. the benchmark's own prompts)")
    sub = parser.add_subparsers(dest="prompts_command", metavar="ACTION")

    p_imp = sub.add_parser(
        "import", help="a prompt set from a local checkout of the TravelBench reference")
    p_imp.add_argument("--from", dest="source", required=True, type=Path, metavar="CHECKOUT",
                       help="local checkout of github.com/small-xiangcheng/TravelBench")
    p_imp.add_argument("--name", default="travelbench",
                       help="set name, recorded in version strings (default: travelbench)")
    p_imp.add_argument("--out", type=Path, default=None, metavar="DIR",
                       help="set directory (default: $AGENTSWEEP_HOME/prompts/NAME)")
    p_imp.add_argument("--force", action="store_true", help="replace an existing set")
    p_imp.set_defaults(func=cmd_import)

    p_list = sub.add_parser("list", help="the built-in set and the imported ones")
    p_list.add_argument("--dir", type=Path, default=None,
                        help="where imported sets are (default: $AGENTSWEEP_HOME/prompts)")
    p_list.set_defaults(func=cmd_list)

    p_show = sub.add_parser("show", help="one set's files, digests and placeholders")
    p_show.add_argument("set", help="'builtin', a set name or a set directory")
    p_show.add_argument("--role", choices=ROLES, default=None, help="print this role's text")
    p_show.set_defaults(func=cmd_show)

    parser.set_defaults(func=lambda args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def cmd_import(args: argparse.Namespace) -> int:
    from evaluator.prompt_import import ImportFailed, import_reference

    try:
        out, manifest = import_reference(args.source, args.out, args.name, args.force)
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
    builtin = load_prompt_set(BUILTIN)
    print(f"{BUILTIN:20s} {builtin.digest}  the project's own prompts")
    root = args.dir if args.dir is not None else sets_dir()
    sets = list_sets(root)
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
        ps = load_prompt_set(args.set)
    except PromptSetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.role:
        sys.stdout.write(ps.texts[args.role])
        return 0
    print(f"name:    {ps.name}")
    print(f"digest:  {ps.digest}  (version strings carry {ps.version('<base>')!r})")
    print(f"path:    {ps.path or '(built into agentsweep)'}")
    if not ps.builtin:
        print(f"source:  {_source(ps)}{_edited(ps)}")
    files = ps.manifest.get("files") or {}
    for role in ROLES:
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
    if role in ps.protocol_templates:
        names = sorted(set(ps.protocol_templates[role].get_identifiers()))
    elif role in ps.judge_templates:
        names = sorted(set(ps.judge_templates[role].get_identifiers()))
    else:
        from evaluator.prompt_sets import _BRACE_FIELD

        names = sorted({n for body in ps.simulator_sections.values()
                        for n in _BRACE_FIELD.findall(body)})
        return " ".join("{" + n + "}" for n in names)
    return " ".join("$" + n for n in names)
