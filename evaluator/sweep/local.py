"""Run a sweep's cells on this machine, one after another, with the ordinary run engine.

Each cell is `run_sweep` on its own run directory under the sweep directory, so a cell's
units, seeds, records and resume behave exactly as `agentsweep run`. When cells need the
embedded engine, the sweep starts it once per engine setting and hands its URL to every cell
(`engine.url`), instead of each cell starting its own.

The sweep directory holds `sweep.toml` (the sweep file as given; `--resume` reads it back and
refuses a changed file) and `sweep.json` (the cells and each cell's last exit code), both
written through a temporary file and rename.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from evaluator.sweep.grid import Cell, Sweep, SweepError, expand, load_sweep

SWEEP_FILE = "sweep.toml"
STATE_FILE = "sweep.json"
EXIT_OK, EXIT_FAILED_UNITS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 3, 2, 130


class CellState(msgspec.Struct):
    model: str
    bench: str
    name: str
    exit_code: int | None = None


class SweepState(msgspec.Struct):
    name: str
    cells: list[CellState]


@dataclass
class SweepOutcome:
    directory: Path
    exit_code: int
    cells: dict[str, int] = field(default_factory=dict)   # cell name -> exit code
    lines: list[str] = field(default_factory=list)


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def prepare(sweep_path: str | None, resume: str | None) -> tuple[Sweep, list[Cell]]:
    """The sweep and its cells, for a new sweep (a file) or a resumed one (a directory)."""
    if resume:
        d = Path(resume)
        if not (d / SWEEP_FILE).is_file():
            raise SweepError(f"{d}: not a sweep directory (no {SWEEP_FILE})")
        kept = load_sweep(d / SWEEP_FILE)
        if sweep_path is not None:
            given = load_sweep(sweep_path)
            if given.text != kept.text:
                raise SweepError(f"{sweep_path}: differs from the sweep in {d}; a resumed sweep "
                                 f"runs the file it started with ({d / SWEEP_FILE})")
        # relative paths in the kept copy resolve as they did in the original file's folder
        origin = _origin(d)
        sweep = Sweep(path=origin, spec=kept.spec, text=kept.text) if origin else kept
        return sweep, expand(sweep)
    if sweep_path is None:
        raise SweepError("give a SWEEP.toml or --resume SWEEP_DIR")
    sweep = load_sweep(sweep_path)
    d = sweep.directory
    if (d / SWEEP_FILE).exists():
        raise SweepError(f"{d} already holds a sweep; continue it with "
                         f"`agentsweep sweep --resume {d}`")
    return sweep, expand(sweep)


def _origin(d: Path) -> Path | None:
    try:
        state = msgspec.json.decode((d / ".origin").read_bytes())
        return Path(state["path"])
    except (OSError, msgspec.DecodeError, KeyError, TypeError):
        return None


def _record(sweep: Sweep, cells: list[Cell], codes: dict[str, int]) -> None:
    d = sweep.directory
    d.mkdir(parents=True, exist_ok=True)
    if not (d / SWEEP_FILE).exists():
        _write_atomic(d / SWEEP_FILE, sweep.text.encode("utf-8"))
        _write_atomic(d / ".origin", msgspec.json.encode({"path": str(sweep.path.resolve())}))
    state = SweepState(name=sweep.spec.name, cells=[
        CellState(model=c.model, bench=c.bench, name=c.name, exit_code=codes.get(c.name))
        for c in cells])
    _write_atomic(d / STATE_FILE, msgspec.json.format(msgspec.json.encode(state), indent=1))


def read_state(directory: Path) -> SweepState:
    try:
        return msgspec.json.decode((directory / STATE_FILE).read_bytes(), type=SweepState)
    except FileNotFoundError:
        raise SweepError(f"{directory}: not a sweep directory (no {STATE_FILE})") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SweepError(f"{directory / STATE_FILE}: {exc}") from None


def _engine_key(config: Any) -> tuple | None:
    """The embedded-engine settings a cell needs, or None when it needs no embedded engine."""
    roles = [config.agent, config.user, config.tool_simulator]
    eps = [rc.endpoint for rc in roles if not rc.replicas] + list(config.judge.endpoints)
    if config.engine.url or not any(ep.base_url == "embedded" for ep in eps):
        return None
    e = config.engine
    return (e.model, e.device, e.max_model_len, e.cpu_kv_cache_gb, e.tensor_parallel_size,
            tuple(e.extra_args), e.startup_timeout_s)


def cell_configs(sweep: Sweep, cells: list[Cell]) -> dict[str, Any]:
    """Each cell's run config (checked now, so a bad cell fails before any cell runs)."""
    from evaluator.config import ConfigError, load_config

    out = {}
    for c in cells:
        try:
            out[c.name], _ = load_config(sweep.base, list(c.overrides))
        except (ConfigError, FileNotFoundError, ValueError) as exc:
            raise SweepError(f"cell {c.name}: {exc}") from None
    return out


async def run_local(sweep: Sweep, cells: list[Cell], *, resume: bool,
                    progress: str | None = None) -> SweepOutcome:
    from backends.errors import ServerStartError
    from backends.server import VLLMServer
    from evaluator.run.manifest import MANIFEST_FILE
    from evaluator.run.sweep import RunRequest, run_sweep
    from evaluator.run.sweep import SweepError as RunError

    configs = cell_configs(sweep, cells)
    codes: dict[str, int] = {}
    if resume:
        codes = {c.name: c.exit_code for c in read_state(sweep.directory).cells
                 if c.exit_code is not None}
    _record(sweep, cells, codes)
    outcome = SweepOutcome(directory=sweep.directory, exit_code=EXIT_OK)
    # cells that share an engine setting run back to back on one engine
    order = sorted(cells, key=lambda c: (_engine_key(configs[c.name]) is not None,
                                         repr(_engine_key(configs[c.name]))))
    server: VLLMServer | None = None
    server_key: tuple | None = None
    try:
        for cell in order:
            config = configs[cell.name]
            key = _engine_key(config)
            extra: list[tuple[str, Any, str]] = []
            if key is not None:
                if server is None or key != server_key:
                    if server is not None:
                        await server.astop()
                    e = config.engine
                    log = sweep.directory / "engine.log"
                    print(f"[sweep] starting the embedded engine (log: {log}) ...",
                          file=sys.stderr)
                    server = VLLMServer(
                        e.model or None, device=e.device, max_model_len=e.max_model_len,
                        cpu_kv_cache_gb=e.cpu_kv_cache_gb,
                        tensor_parallel_size=e.tensor_parallel_size, extra_args=e.extra_args,
                        log_path=log, startup_timeout_s=e.startup_timeout_s)
                    server_key = key
                    try:
                        await server.astart()
                    except ServerStartError as exc:
                        raise SweepError(f"engine for cell {cell.name}: {exc}") from None
                extra.append(("engine.url", server.base_url, "sweep's embedded engine"))
            run_dir = sweep.directory / cell.name
            print(f"[sweep] cell {cell.name} ({cell.model} x {cell.bench})", file=sys.stderr)
            if (run_dir / MANIFEST_FILE).exists():
                request = RunRequest(resume=str(run_dir), overrides=extra,
                                     judge=sweep.spec.judge, progress=progress)
            else:
                base = str(sweep.base) if sweep.base else None
                request = RunRequest(config_path=base, overrides=list(cell.overrides) + extra,
                                     judge=sweep.spec.judge, progress=progress)
            try:
                result = await run_sweep(request)
            except RunError as exc:
                raise SweepError(f"cell {cell.name}: {exc}") from None
            codes[cell.name] = result.exit_code
            outcome.lines.append(f"{cell.name}: exit {result.exit_code}")
            _record(sweep, cells, codes)
            if result.exit_code == EXIT_INTERRUPTED:
                outcome.exit_code = EXIT_INTERRUPTED
                break
            if result.exit_code != EXIT_OK:
                outcome.exit_code = EXIT_FAILED_UNITS
    finally:
        if server is not None:
            await server.astop()
    outcome.cells = codes
    return outcome
