"""scripts/setup.sh with pip and with uv, side by side, from nothing cached.

    python -m perf.setup_install [--extra test] [--keep DIR]

For each installer (`AGENTSWEEP_INSTALLER=pip`, then `uv`): a fresh clone of this repository's
HEAD, no pip cache (`PIP_NO_CACHE_DIR=1`), an empty uv cache and an empty `$AGENTSWEEP_HOME`
(so the model is converted too), then `bash scripts/setup.sh [EXTRA]`, its `[setup]` lines
timed as they come. Prints per installer the seconds installing, byte-compiling with the
model's conversion, in all, and the ratio pip / uv of each. Downloads every package twice
(several GB) and takes ~7 minutes on a 2-core machine; the clones (~4 GB each) are removed
unless `--keep` names where to leave them. Needs git and the package registries.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
INSTALLERS = ("pip", "uv")
PHASES = ("installing", "compiling and model", "in all")
COMPILING = "[setup] byte-compiling"


def phases(marks: list[tuple[float, str]], end: float) -> dict[str, float]:
    """Seconds per phase from (seconds since the start, stderr line) marks and the end time:
    installing runs from the start to the byte-compiling line, the rest to the end."""
    at = next((t for t, line in marks if line.startswith(COMPILING)), None)
    if at is None:
        raise ValueError(f"setup.sh printed no {COMPILING!r} line")
    return {"installing": at, "compiling and model": end - at, "in all": end}


def run_setup(installer: str, root: Path, extras: list[str]) -> dict[str, float]:
    work = root / installer
    subprocess.run(["git", "clone", "-q", str(REPO), str(work / "repo")], check=True)
    env = dict(os.environ, PIP_NO_CACHE_DIR="1", AGENTSWEEP_INSTALLER=installer,
               UV_CACHE_DIR=str(work / "uv-cache"), AGENTSWEEP_HOME=str(work / "home"))
    env.pop("VIRTUAL_ENV", None)
    start = time.monotonic()
    proc = subprocess.Popen(["bash", "scripts/setup.sh", *extras], cwd=work / "repo", env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    marks = []
    assert proc.stderr is not None
    for line in proc.stderr:
        marks.append((time.monotonic() - start, line.strip()))
    if proc.wait() != 0:
        tail = "\n".join(line for _, line in marks[-5:])
        raise SystemExit(f"perf.setup_install: setup.sh with {installer} failed:\n{tail}")
    return phases(marks, time.monotonic() - start)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.setup_install", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--extra", action="append", default=[], choices=("test", "cluster"),
                   help="an extra setup.sh installs too (repeatable)")
    p.add_argument("--keep", type=Path, help="leave the clones here instead of removing them")
    args = p.parse_args(argv)
    if args.keep and args.keep.exists() and any(args.keep.iterdir()):
        print(f"perf.setup_install: --keep {args.keep}: not an empty folder", file=sys.stderr)
        return 2
    root = args.keep or Path(tempfile.mkdtemp(prefix="agsw-setup-"))
    rows = {}
    try:
        for installer in INSTALLERS:  # one after the other: each has the machine to itself
            rows[installer] = run_setup(installer, root, args.extra)
            print(f"{installer}: {rows[installer]['in all']:.0f} s", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"{'installer':<10}" + "".join(f"{name:>22}" for name in PHASES))
    for installer, row in rows.items():
        print(f"{installer:<10}" + "".join(f"{row[name]:>21.0f}s" for name in PHASES))
    print(f"{'pip / uv':<10}" + "".join(f"{rows['pip'][n] / rows['uv'][n]:>21.2f}x"
                                       for n in PHASES))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
