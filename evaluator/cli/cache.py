"""`agentsweep cache import | index | misses | synth`: build and inspect tool-cache stores."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def default_schemas() -> str:
    """The tool schemas of the built-in sample (a benchmark's real ones: pass --schemas)."""
    from bench_data.registry import sample_format

    fmt = sample_format()
    assert fmt.sample is not None
    path = fmt.tool_schemas(fmt.sample)
    return str(path) if path else ""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("cache", help="tool-cache stores: import, index, misses, synth")
    sub = p.add_subparsers(dest="cache_command", metavar="ACTION", required=True)

    imp = sub.add_parser("import", help="release-layout JSON directory -> memory-mapped store")
    imp.add_argument("src", help="directory of <tool>_cache.json files")
    imp.add_argument("--out", required=True, help="store file to write")
    imp.add_argument("--force", action="store_true", help="re-import even if unchanged")
    imp.add_argument("--verify", action="store_true", help="full checksum pass after import")
    imp.set_defaults(func=_import)

    idx = sub.add_parser("index", help="build the per-tool embedding index of a store")
    idx.add_argument("store")
    idx.add_argument("--embedder", default="local",
                     help="embedder spec for backends.embedder.make_embedder (default: local "
                          "MiniLM; the paper's: openai:http://127.0.0.1:8001/v1#"
                          "Qwen/Qwen3-Embedding-8B served by vLLM); queries must use the same")
    idx.add_argument("--batch", type=int, default=256)
    idx.add_argument("--min-recall", type=float, default=0.99,
                     help="approximate (IVF) search only where its recall@8 against exact "
                          "search reaches this (default 0.99); else exact")
    idx.add_argument("--recall-sample", type=int, default=1000,
                     help="store rows used as queries to measure recall (default 1000)")
    idx.add_argument("--ivf-threshold", type=int, default=50_000,
                     help="tools with at most this many rows are searched exactly (default 50000)")
    idx.set_defaults(func=_index)

    mis = sub.add_parser("misses", help="export a miss log as <tool>_missed.json files")
    mis.add_argument("log", help="miss log (JSON lines), e.g. STORE.misses.jsonl")
    mis.add_argument("--out", required=True, help="directory for <tool>_missed.json")
    mis.add_argument("--dedupe", action="store_true", help="one record per (tool, call)")
    mis.set_defaults(func=_misses)

    syn = sub.add_parser("synth", help="write a SYNTHETIC release-layout cache (benchmarks)")
    syn.add_argument("out", help="directory to write")
    syn.add_argument("--entries", type=int, default=250_000)
    syn.add_argument("--schemas", default=None,
                     help="tool schemas (OpenAI format; default: the built-in sample's)")
    syn.add_argument("--seed", type=int, default=0)
    syn.set_defaults(func=_synth)


def _import(args: argparse.Namespace) -> int:
    from cache_store.importer import CacheImportError, import_cache
    from cache_store.store import CacheStore, CorruptStoreError

    try:
        header = import_cache(args.src, args.out, force=args.force)
        if args.verify:
            with CacheStore(args.out) as store:
                store.verify()
    except (CacheImportError, CorruptStoreError) as exc:
        print(f"agentsweep cache import: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # cannot write the store (permissions, disk full, ...)
        print(f"agentsweep cache import: --out {args.out}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    tag = " (SYNTHETIC)" if header.synthetic else ""
    print(f"{args.out}: {header.n_entries} entries over {len(header.tools)} tools{tag}")
    for t in header.tools:
        print(f"  {t.name}: {t.n_entries}")
    return 0


def _index(args: argparse.Namespace) -> int:
    import asyncio

    from backends.embedder import make_embedder
    from backends.errors import BackendError
    from cache_store.index import build_index, summary_lines

    async def build() -> object:
        async with make_embedder(args.embedder) as embedder:
            return await build_index(args.store, embedder, embedder_name=args.embedder,
                                     batch=args.batch, min_recall=args.min_recall,
                                     recall_sample=args.recall_sample,
                                     ivf_threshold=args.ivf_threshold)

    from cache_store.store import CorruptStoreError, read_header

    problem = _index_arg_problem(args)
    if problem:
        print(f"agentsweep cache index: {problem}", file=sys.stderr)
        return 2
    try:
        read_header(args.store)  # a missing or damaged store fails before the embedder loads
    except (CorruptStoreError, OSError) as exc:
        print(f"agentsweep cache index: {args.store}: {getattr(exc, 'strerror', None) or exc}",
              file=sys.stderr)
        return 2
    try:
        meta = asyncio.run(build())
    except (BackendError, ValueError, OSError, CorruptStoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("\n".join(summary_lines(meta)))
    return 0


def _index_arg_problem(args: argparse.Namespace) -> str:
    if args.batch < 1:
        return f"--batch must be >= 1, got {args.batch}"
    if not 0.0 <= args.min_recall <= 1.0:
        return f"--min-recall must be in [0, 1], got {args.min_recall}"
    if args.recall_sample < 1:
        return f"--recall-sample must be >= 1, got {args.recall_sample}"
    if args.ivf_threshold < 0:
        return f"--ivf-threshold must be >= 0, got {args.ivf_threshold}"
    return ""


def _misses(args: argparse.Namespace) -> int:
    from cache_store.persist import export_misses

    if not Path(args.log).is_file():
        print(f"agentsweep cache misses: {args.log}: no such miss log", file=sys.stderr)
        return 2
    skipped: list[int] = []
    try:
        counts = export_misses(args.log, args.out, dedupe=args.dedupe, skipped=skipped)
    except (OSError, ValueError) as exc:
        print(f"agentsweep cache misses: {exc}", file=sys.stderr)
        return 2
    if skipped:
        print(f"agentsweep cache misses: {args.log}: {len(skipped)} undecodable line(s) "
              f"skipped (first: line {skipped[0]})", file=sys.stderr)
    print(json.dumps(counts, ensure_ascii=False))
    return 0


def _synth(args: argparse.Namespace) -> int:
    from cache_store.synth import generate

    path = Path(args.schemas or default_schemas())
    try:
        try:
            schemas = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not JSON: {exc}") from None
        if not isinstance(schemas, list) or not all(
                isinstance(t, dict) and isinstance(t.get("function"), dict)
                and isinstance(t["function"].get("name"), str) for t in schemas):
            raise ValueError(f"{path}: not a list of OpenAI function tools")
        counts = generate(args.out, schemas, args.entries, args.seed)
    except (OSError, ValueError, RecursionError) as exc:
        print(f"agentsweep cache synth: {exc}", file=sys.stderr)
        return 2
    print(f"SYNTHETIC cache: {sum(counts.values())} entries in {args.out}")
    return 0
