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
from typing import Any, NamedTuple

import msgspec

from evaluator.run.results import UNDECODABLE
from evaluator.sweep.grid import Cell, Sweep, SweepError, expand, load_sweep

SWEEP_FILE = "sweep.toml"
STATE_FILE = "sweep.json"
EXIT_OK, EXIT_FAILED_UNITS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 3, 2, 130


class CellRun(NamedTuple):
    """What running a cell gave: its exit code, the recorded episodes still lacking
    judgements, and whether this process was sent SIGINT/SIGTERM while it ran."""
    code: int
    owed: int
    signalled: bool = False


class CellState(msgspec.Struct):
    model: str
    bench: str
    name: str
    exit_code: int | None = None
    owed: int = 0   # with judging: its recorded episodes still lacking judgements (last run)


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


def prepare(sweep_path: str | None, resume: str | None, out: str | None = None
            ) -> tuple[Sweep, list[Cell]]:
    """The sweep and its cells, for a new sweep (a file; `out` replaces its `out`) or a
    resumed one (a directory: the sweep stays there, from whatever directory it is resumed)."""
    if resume:
        if out is not None:
            raise SweepError(f"--out: a resumed sweep stays in its directory ({resume})")
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
        sweep = Sweep(path=origin or kept.path, spec=kept.spec, text=kept.text, root=d)
        return sweep, expand(sweep)
    if sweep_path is None:
        raise SweepError("give a SWEEP.toml or --resume SWEEP_DIR")
    sweep = load_sweep(sweep_path)
    if out is not None:
        if not out.strip():
            raise SweepError(f"--out: a directory is needed, got {out!r} (an unset shell "
                             "variable?)")
        sweep = Sweep(path=sweep.path, spec=msgspec.structs.replace(sweep.spec, out=out),
                      text=sweep.text)
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


def record_state(sweep: Sweep, cells: list[Cell], codes: dict[str, int],
                 owed: dict[str, int] | None = None) -> None:
    d = sweep.directory
    d.mkdir(parents=True, exist_ok=True)
    if not (d / SWEEP_FILE).exists():
        _write_atomic(d / SWEEP_FILE, sweep.text.encode("utf-8"))
        _write_atomic(d / ".origin", msgspec.json.encode({"path": str(sweep.path.resolve())}))
    state = SweepState(name=sweep.spec.name, cells=[
        CellState(model=c.model, bench=c.bench, name=c.name, exit_code=codes.get(c.name),
                  owed=(owed or {}).get(c.name, 0))
        for c in cells])
    _write_atomic(d / STATE_FILE, msgspec.json.format(msgspec.json.encode(state), indent=1))


def read_state(directory: Path) -> SweepState:
    try:
        return msgspec.json.decode((directory / STATE_FILE).read_bytes(), type=SweepState)
    except FileNotFoundError:
        raise SweepError(f"{directory}: not a sweep directory (no {STATE_FILE})") from None
    except UNDECODABLE as exc:
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


class CellExecutor:
    """Runs cells one at a time in this process, as `agentsweep run` would, and holds the
    embedded engine that cells with the same engine settings share (started on first need,
    replaced when a cell needs other settings, stopped by `aclose`)."""

    def __init__(self, sweep: Sweep, configs: dict[str, Any], *, progress: str | None,
                 engine_log: Path, engine_url: str | None = None) -> None:
        self.sweep = sweep
        self.engine_url = engine_url   # a running server for every "embedded" endpoint
        self.configs = configs
        self.progress = progress
        self.engine_log = engine_log
        self._server: Any = None
        self._server_key: tuple | None = None

    def order(self, cells: list[Cell]) -> list[Cell]:
        """Cells that share an engine setting back to back (cells without one first)."""
        return sorted(cells, key=lambda c: (_engine_key(self.configs[c.name]) is not None,
                                            repr(_engine_key(self.configs[c.name]))))

    async def _engine_url(self, cell: Cell) -> str | None:
        from backends.errors import ServerStartError
        from backends.server import VLLMServer

        config = self.configs[cell.name]
        key = _engine_key(config)
        if key is None:
            return None
        if self.engine_url:
            return self.engine_url
        if self._server is None or key != self._server_key:
            await self.aclose()
            e = config.engine
            print(f"[sweep] starting the embedded engine (log: {self.engine_log}) ...",
                  file=sys.stderr)
            self._server = VLLMServer(
                e.model or None, device=e.device, max_model_len=e.max_model_len,
                cpu_kv_cache_gb=e.cpu_kv_cache_gb, tensor_parallel_size=e.tensor_parallel_size,
                extra_args=e.extra_args, log_path=self.engine_log,
                startup_timeout_s=e.startup_timeout_s)
            self._server_key = key
            try:
                await self._server.astart()
            except ServerStartError as exc:
                self._server = None
                raise SweepError(f"engine for cell {cell.name}: {exc}") from None
        return self._server.base_url

    async def run(self, cell: Cell, stop: Any = None) -> CellRun:
        """Run (or resume) one cell into its run directory: its exit code, with judging the
        recorded episodes that still lack judgements (counted from its files), and whether a
        signal stopped it. `stop`: an asyncio.Event that stops the cell now
        (`RunRequest.stop`)."""
        from evaluator.run.manifest import MANIFEST_FILE
        from evaluator.run.resources import slow_engine_timeout
        from evaluator.run.sweep import RunRequest, run_sweep
        from evaluator.run.sweep import SweepError as RunError

        url = await self._engine_url(cell)
        extra = [("engine.url", url, "sweep's embedded engine")] if url else []
        # the engine this sweep started on CPU: its cells wait as long as a run's own would
        slow = slow_engine_timeout(self._server) if url and not self.engine_url else 0.0
        run_dir = self.sweep.directory / cell.name
        print(f"[sweep] cell {cell.name} ({cell.model} x {cell.bench})", file=sys.stderr)
        judge = self.sweep.spec.judge
        if (run_dir / MANIFEST_FILE).exists():
            request = RunRequest(resume=str(run_dir), overrides=extra, judge=judge,
                                 progress=self.progress, min_request_timeout_s=slow, stop=stop)
        else:
            base = str(self.sweep.base) if self.sweep.base else None
            request = RunRequest(config_path=base, overrides=list(cell.overrides) + extra,
                                 judge=judge, progress=self.progress, min_request_timeout_s=slow,
                                 stop=stop)
        try:
            result = await run_sweep(request)
        except RunError as exc:
            raise SweepError(f"cell {cell.name}: {exc}") from None
        return CellRun(result.exit_code, result.owed, result.signalled)

    async def aclose(self) -> None:
        if self._server is not None:
            server, self._server = self._server, None
            await server.astop()


def start_state(sweep: Sweep, cells: list[Cell], resume: bool
                ) -> tuple[dict[str, int], dict[str, int]]:
    """Write the sweep directory's files; the exit codes and judgements owed recorded so far
    (on resume)."""
    codes: dict[str, int] = {}
    owed: dict[str, int] = {}
    if resume:
        kept = read_state(sweep.directory).cells
        codes = {c.name: c.exit_code for c in kept if c.exit_code is not None}
        owed = {c.name: c.owed for c in kept if c.owed}
    record_state(sweep, cells, codes, owed)
    return codes, owed


def cell_line(name: str, code: int, owed: int) -> str:
    """A cell's line of the sweep's summary."""
    return f"{name}: exit {code}" + (f" ({owed} episodes still lack judgements; "
                                     "`--resume` judges them)" if owed else "")


def overall(codes: dict[str, int], cells: list[Cell]) -> int:
    """The sweep's exit code from its cells' (a cell not finished counts as interrupted)."""
    got = [codes.get(c.name) for c in cells]
    if any(code is None or code == EXIT_INTERRUPTED for code in got):
        return EXIT_INTERRUPTED
    return EXIT_OK if all(code == EXIT_OK for code in got) else EXIT_FAILED_UNITS


async def run_local(sweep: Sweep, cells: list[Cell], *, resume: bool,
                    progress: str | None = None, engine_url: str | None = None
                    ) -> SweepOutcome:
    configs = cell_configs(sweep, cells)
    codes, owed = start_state(sweep, cells, resume)
    outcome = SweepOutcome(directory=sweep.directory, exit_code=EXIT_OK)
    executor = CellExecutor(sweep, configs, progress=progress,
                            engine_log=sweep.directory / "engine.log", engine_url=engine_url)
    try:
        for cell in executor.order(cells):
            code, owed[cell.name], _ = await executor.run(cell)
            codes[cell.name] = code
            outcome.lines.append(cell_line(cell.name, code, owed[cell.name]))
            record_state(sweep, cells, codes, owed)
            if code == EXIT_INTERRUPTED:
                break
    finally:
        await executor.aclose()
    outcome.cells = codes
    outcome.exit_code = overall(codes, cells)
    return outcome
