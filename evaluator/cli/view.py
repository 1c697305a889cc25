"""`agentsweep view RUN_DIR [RUN_DIR ...]`: browse episodes and conversations in a browser.

Starts a local aiohttp server (127.0.0.1, a free port unless --port) serving the single-page
viewer over the given run directories, prints its URL and runs until Ctrl-C. A directory that
holds run directories (a sweep's, or `runs/`) opens every run in it. `--export DIR` writes a
static, self-contained copy instead. See docs/view.md.

With AGENTSWEEP_VIEW_TIMINGS=1 the opening's steps are printed to stderr as one line
`timings: step=wall-clock time ...` (perf.viewer reads it to break the first page down).
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "view",
        help="browse episodes, conversations and judge verdicts in a local web viewer",
        description="Serve a single-page viewer over one or more run directories (episode list "
        "with sort, filter, search and paging; conversations, tool calls, judge ratings; "
        "side-by-side trials; live updates while a run is going). Bound to 127.0.0.1 on a "
        "free port; Ctrl-C stops it.",
    )
    p.add_argument("run_dirs", nargs="+", type=Path, metavar="RUN_DIR",
                   help="a run directory, or a directory of them (a sweep's, runs/)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (127.0.0.1); anything else exposes the trajectories "
                   "to the network without authentication")
    p.add_argument("--port", type=int, default=0, help="port (0 = a free one)")
    p.add_argument("--export", type=Path, default=None, metavar="DIR",
                   help="write a static, self-contained viewer into DIR instead of serving")
    p.add_argument("--success-threshold", type=float, default=None,
                   help="verdict pass when score >= this (default: the run's [judge] setting)")
    p.add_argument("--no-index-file", action="store_true",
                   help="keep the episode index in memory (do not write RUN_DIR/.view/)")
    p.set_defaults(func=run_view)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_run(d: Path) -> bool:
    return d.is_dir() and ((d / "episodes.jsonl").is_file() or (d / "manifest.json").is_file())


def expand_run_dirs(paths: list[Path]) -> tuple[list[Path], str]:
    """Run directories as given, a directory of runs replaced by its runs (sorted by name);
    ([], the problem) when a path is neither."""
    out: list[Path] = []
    for d in paths:
        if _is_run(d):
            out.append(d)
            continue
        inner = sorted(c for c in d.iterdir() if _is_run(c)) if d.is_dir() else []
        if not inner:
            what = "no run directory in it either" if d.is_dir() else "not a directory"
            return [], (f"{d}: not a run directory (no episodes.jsonl or manifest.json; "
                        f"{what})")
        out += inner
    return out, ""


class _Marks:
    """Wall-clock times of the opening's steps (AGENTSWEEP_VIEW_TIMINGS=1)."""

    def __init__(self) -> None:
        self.on = os.environ.get("AGENTSWEEP_VIEW_TIMINGS") == "1"
        self.marks: list[tuple[str, float]] = []

    def __call__(self, name: str) -> None:
        if self.on:
            self.marks.append((name, time.time()))

    def line(self, extra: dict[str, float]) -> str:
        parts = [f"{k}={t:.4f}" for k, t in self.marks]
        parts += [f"{k}_s={v:.4f}" for k, v in extra.items()]
        return "timings: " + " ".join(parts)


def run_view(args: argparse.Namespace) -> int:
    marks = _Marks()
    marks("command")
    from evaluator.view.server import Viewer, open_runs

    marks("imports")
    run_dirs, problem = expand_run_dirs(args.run_dirs)
    if problem:
        print(f"view: {problem}", file=sys.stderr)
        return 2
    args.run_dirs = run_dirs
    if args.success_threshold is not None and not 0.0 <= args.success_threshold <= 1.0:
        print(f"view: --success-threshold must be in [0, 1], got {args.success_threshold}",
              file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"view: --port must be in 0..65535, got {args.port}", file=sys.stderr)
        return 2
    if args.export is not None:
        from evaluator.view.export import export_problem

        problem = export_problem(args.export, args.run_dirs)
        if problem:
            print(f"view: {problem}", file=sys.stderr)
            return 2
    t0 = time.monotonic()
    viewer = Viewer(open_runs(args.run_dirs, success_threshold=args.success_threshold,
                              persist=not args.no_index_file))
    marks("opened")
    for v in viewer.views:
        how = "index loaded" if v.index.loaded_from_disk else "indexed"
        print(f"{v.label}: {len(v.v['key'])} episodes ({how}; {v.run_dir})", file=sys.stderr)
        if v.index.bad:
            print(f"  {v.index.bad} undecodable lines skipped", file=sys.stderr)
    print(f"opened in {time.monotonic() - t0:.2f}s", file=sys.stderr)
    if args.export is not None:
        from evaluator.view.export import export_static

        print(export_static(viewer, args.export))
        return 0
    if not _is_loopback(args.host):
        print(f"WARNING: serving on {args.host}: anyone who can reach this address can read "
              "every trajectory; there is no authentication", file=sys.stderr)
    steps: dict[str, float] = {}
    for v in viewer.views:
        for k, x in v.timings.items():
            steps[k] = steps.get(k, 0.0) + x

    def listening() -> None:
        marks("listen")
        if marks.on:
            print(marks.line(steps), file=sys.stderr, flush=True)

    try:
        asyncio.run(serve(viewer, args.host, args.port, on_listen=listening))
    except KeyboardInterrupt:
        pass
    print("viewer stopped", file=sys.stderr)
    return 0


async def serve(viewer, host: str, port: int, *, stop: asyncio.Event | None = None,
                on_listen: Callable[[], None] | None = None) -> None:
    """Serve until `stop` is set (or SIGINT / SIGTERM); print the URL once listening; then
    check the saved tables' rules against the registry's (`Viewer.check_rules`)."""
    from aiohttp import web

    from evaluator.view.server import make_app

    allowed: set[str] = set()
    runner = web.AppRunner(make_app(viewer, allowed_hosts=allowed), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        bound = runner.addresses[0][1]
        if _is_loopback(host):  # refuse other Host headers (DNS rebinding)
            allowed.update({f"127.0.0.1:{bound}", f"localhost:{bound}", f"[::1]:{bound}"})
        shown = f"[{host}]" if ":" in host else host
        if on_listen is not None:
            on_listen()
        print(f"agentsweep view: http://{shown}:{bound}/  (Ctrl-C to stop)", flush=True)
        checking = asyncio.create_task(viewer.check_rules())
        stop = stop or asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            checking.cancel()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
    finally:
        await runner.cleanup()
