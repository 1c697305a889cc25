"""`agentsweep report RUN_DIR [RUN_DIR ...]`: compare runs; write report.md/.html/.json."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report",
        help="summarise scored runs: terminal table + report.md/.html/.json",
        description="Compare one or more run directories side by side (pass@k, pass^k, avg@k "
        "with bootstrap CIs, rubric dimensions, tool errors, tokens); with two or more, each "
        "run after the first is compared with the first on their shared tasks (difference, "
        "paired bootstrap CI, paired permutation p-value). Files go into the first RUN_DIR "
        "unless --out is given.",
    )
    p.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR")
    p.add_argument("--out", type=Path, default=None, help="directory for the report files")
    p.add_argument("--success-threshold", type=float, default=None,
                   help="count a unit as a success when score >= this (overrides [judge] "
                   "success_threshold and the scorer's success flags)")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (0)")
    p.add_argument("--backend", choices=("auto", "numpy", "torch"), default="auto",
                   help="bootstrap backend: auto = torch on a GPU when present, else numpy")
    p.add_argument("--permutations", type=int, default=10000,
                   help="random sign flips of the paired permutation test (10000; up to 16 "
                   "shared tasks every sign vector is enumerated)")
    p.add_argument("--no-compare", action="store_true",
                   help="no paired comparison of the runs with the first")
    p.add_argument("--no-scoring", action="store_true",
                   help="skip evaluator.scoring; read scores straight from judgements.jsonl")
    p.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    from evaluator.report import ReportInputError, build_report, load_run, write_report
    from evaluator.run.results import ResultsCorrupt

    if args.success_threshold is not None and not 0.0 <= args.success_threshold <= 1.0:
        print(f"--success-threshold must be in [0, 1], got {args.success_threshold}",
              file=sys.stderr)
        return 2
    if args.bootstrap < 1:
        print(f"--bootstrap must be >= 1 (resamples of the confidence intervals), got "
              f"{args.bootstrap}", file=sys.stderr)
        return 2
    permutations = getattr(args, "permutations", 10000)  # `run --report` passes its own args
    if permutations < 1:
        print(f"--permutations must be >= 1, got {permutations}", file=sys.stderr)
        return 2
    if args.out is not None:
        from evaluator.config_check import check_output_dir

        try:
            check_output_dir("--out", str(args.out))
        except ValueError as exc:
            print(f"report: {exc}", file=sys.stderr)
            return 2
    try:
        runs = [load_run(d, success_threshold=args.success_threshold,
                         use_scoring=not args.no_scoring) for d in args.run_dirs]
    except (ReportInputError, ResultsCorrupt) as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 1
    report = build_report(runs, n_boot=args.bootstrap, seed=args.seed, backend=args.backend,
                          compare=not getattr(args, "no_compare", False), n_perm=permutations)
    try:
        paths = write_report(report, args.out or args.run_dirs[0])
    except OSError as exc:
        print(f"report: cannot write the report into {args.out or args.run_dirs[0]}: "
              f"{exc.strerror or exc}", file=sys.stderr)
        return 1
    print(report.terminal())
    print()
    for kind, path in paths.items():
        print(f"{kind:>4}: {path}")
    return 0
