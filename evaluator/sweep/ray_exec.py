"""Run a sweep's cells on a Ray cluster: one cell runner actor per node, cells leased from
one queue actor, the driver watching both.

- `CellQueue` (an actor owned by the driver) hands out cells as leases. A runner renews its
  lease with heartbeats; a lease whose runner died (its actor call failed) or went silent for
  `lease_timeout_s` goes back to the queue, and the next runner *resumes* that cell: finished
  units are in the cell's episodes file and are skipped, so nothing is lost or repeated.
- `CellRunner` (one actor per alive node, pinned with a node-affinity strategy; with GPUs it
  reserves `engine.tensor_parallel_size` of them in a STRICT_PACK placement group so the engine
  it starts sees exactly those) runs leased cells one at a time in its own uvloop loop with the
  ordinary run machinery (`CellExecutor`): the cell's run directory, on the shared filesystem,
  has exactly one writer, the runner holding its lease (also guarded by an flock).
- The driver writes the sweep directory's state (`sweep.json`) as cells finish, replaces a
  runner that died while its node is alive, and ends when every cell has an exit code.

`--ray local` starts a private single-node cluster bound to 127.0.0.1; `--ray auto` or an
address joins a running cluster (`ray start --head`, a SLURM allocation, KubeRay).
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from evaluator.sweep.grid import Cell, Sweep, SweepError
from evaluator.sweep.local import (
    EXIT_INTERRUPTED,
    SweepOutcome,
    cell_configs,
    overall,
    record_state,
    start_state,
)

HEARTBEAT_S = 2.0


@dataclass
class RaySettings:
    address: str                 # "local", "auto" or a cluster address
    lease_timeout_s: float = 60.0
    runners_per_node: int = 1
    engine_url: str | None = None   # a running server for every "embedded" endpoint
    progress_every_s: float = 30.0


class CellQueue:
    """The lease table (the body of the CellQueue actor; plain Python so it is testable)."""

    def __init__(self, cells: list[str], lease_timeout_s: float) -> None:
        self.pending = list(cells)
        self.leases: dict[str, tuple[str, float]] = {}   # cell -> (runner, last heartbeat)
        self.codes: dict[str, int] = {}
        self.timeout = lease_timeout_s
        self.log: list[str] = []

    def lease(self, runner: str) -> str | None:
        self.expire()
        if not self.pending:
            return None
        cell = self.pending.pop(0)
        self.leases[cell] = (runner, time.monotonic())
        return cell

    def heartbeat(self, runner: str, cell: str) -> bool:
        """False when the lease was taken back: the runner must stop that cell."""
        held = self.leases.get(cell)
        if held is None or held[0] != runner:
            return False
        self.leases[cell] = (runner, time.monotonic())
        return True

    def done(self, runner: str, cell: str, code: int) -> None:
        held = self.leases.get(cell)
        if held is not None and held[0] == runner:
            del self.leases[cell]
            if code == EXIT_INTERRUPTED:  # stopped, not finished: someone resumes it
                self.pending.insert(0, cell)
            else:
                self.codes[cell] = code

    def give_back(self, cell: str, runner: str) -> None:
        held = self.leases.get(cell)
        if held is not None and held[0] == runner:
            del self.leases[cell]
            self.pending.insert(0, cell)

    def release(self, runner: str) -> list[str]:
        """Every lease of a runner that died goes back to the front of the queue."""
        back = [c for c, (r, _) in self.leases.items() if r == runner]
        for c in back:
            del self.leases[c]
            self.log.append(f"cell {c}: runner {runner} died; the cell is resumed elsewhere")
        self.pending[:0] = back
        return back

    def expire(self) -> list[str]:
        now = time.monotonic()
        late = [c for c, (_, t) in self.leases.items() if now - t > self.timeout]
        for c in late:
            runner = self.leases.pop(c)[0]
            self.log.append(f"cell {c}: no heartbeat from {runner} for {self.timeout:g}s; "
                            "leased again")
        self.pending[:0] = late
        return late

    def status(self) -> dict[str, Any]:
        return {"pending": list(self.pending), "leased": {c: r for c, (r, _) in
                                                          self.leases.items()},
                "codes": dict(self.codes), "log": list(self.log)}


class CellRunner:
    """The body of the CellRunner actor: lease a cell, run it, report, repeat."""

    def __init__(self, sweep: Sweep, cells: list[Cell], configs: dict[str, Any],
                 runner_id: str, progress: str | None, cwd: str,
                 engine_url: str | None = None) -> None:
        # relative paths of the sweep (out, data, base) mean what they meant to the driver:
        # its working directory is on the shared filesystem, at the same path on every node
        os.chdir(cwd)
        self.sweep = sweep
        self.cells = {c.name: c for c in cells}
        self.configs = configs
        self.id = runner_id
        self.progress = progress
        self.engine_url = engine_url

    def run(self, queue: Any) -> list[tuple[str, int]]:
        """Lease and run cells until the queue is empty; (cell, exit code) of each run here.
        (A sync actor method: the run's own event loop and signal handlers need the worker's
        main thread, so the coroutines live outside the class, which keeps it a sync actor.)"""
        try:
            import uvloop

            return uvloop.run(_runner_loop(self, queue))
        except ImportError:  # pragma: no cover - uvloop is a dependency
            import asyncio

            return asyncio.run(_runner_loop(self, queue))


async def _runner_loop(runner: CellRunner, queue: Any) -> list[tuple[str, int]]:
    import asyncio

    from evaluator.sweep.local import CellExecutor

    node = os.uname().nodename
    executor = CellExecutor(runner.sweep, runner.configs, progress=runner.progress,
                            engine_log=runner.sweep.directory / f"engine-{node}-{runner.id}.log",
                            engine_url=runner.engine_url)
    done: list[tuple[str, int]] = []
    try:
        while True:
            name = await queue.lease.remote(runner.id)
            if name is None:
                return done
            code = await _run_cell(runner, queue, executor, runner.cells[name])
            if code is None:
                await queue.give_back.remote(name, runner.id)
                await asyncio.sleep(HEARTBEAT_S)  # its old writer is still stopping
                continue
            await queue.done.remote(runner.id, name, code)
            done.append((name, code))
    finally:
        await executor.aclose()


async def _run_cell(runner: CellRunner, queue: Any, executor: Any, cell: Cell) -> int | None:
    """Run one leased cell under its run directory's flock, renewing the lease meanwhile."""
    import asyncio

    run_dir = runner.sweep.directory / cell.name
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = os.open(run_dir / ".sweep.lock", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None  # a live writer elsewhere still holds this cell

        async def beat() -> None:
            while True:
                await asyncio.sleep(HEARTBEAT_S)
                if not await queue.heartbeat.remote(runner.id, cell.name):
                    os.kill(os.getpid(), 2)  # lease lost: stop like Ctrl-C (resumable)
                    return

        task = asyncio.create_task(beat())
        try:
            return await executor.run(cell)
        finally:
            task.cancel()
    finally:
        os.close(lock)  # releases the flock


class _Meter:
    """The head node's view of the whole sweep: cells by state and episodes finished (the
    cells' episode files, counted off the runners' path), every `every_s` seconds."""

    def __init__(self, sweep: Sweep, cells: list[Cell]) -> None:
        self.files = [sweep.directory / c.name / "episodes.jsonl" for c in cells]
        self.start = time.monotonic()
        self.first = self._episodes()
        self.last = 0.0

    def _episodes(self) -> int:
        n = 0
        for f in self.files:
            try:
                with open(f, "rb") as fh:
                    n += sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
            except FileNotFoundError:
                pass
        return n

    def maybe_print(self, status: dict[str, Any], every_s: float) -> None:
        now = time.monotonic()
        if now - self.last < every_s:
            return
        self.last = now
        n = self._episodes()
        rate = (n - self.first) / max(now - self.start, 1e-9) * 60
        running = ", ".join(f"{c} ({r})" for c, r in status["leased"].items()) or "none"
        print(f"[sweep] cells done {len(status['codes'])}, waiting {len(status['pending'])}, "
              f"running {running}; episodes {n} ({rate:.1f}/min)", file=sys.stderr)


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise SweepError("--ray needs the ray package: pip install 'agentsweep[cluster]' "
                         "(or pip install ray)") from None
    return ray


def _connect(ray: Any, address: str) -> None:
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a local cluster of our own
    kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True,
                          "logging_level": "warning"}
    try:
        if address == "local":
            ray.init(_node_ip_address="127.0.0.1", **kw)
        else:
            ray.init(address=address, **kw)
    except ConnectionError as exc:
        raise SweepError(f"--ray {address}: no Ray cluster there ({exc}); start one with "
                         "`ray start --head` or use --ray local") from None


def _alive_nodes(ray: Any) -> list[dict[str, Any]]:
    return [n for n in ray.nodes() if n.get("Alive")]


def _start_runner(ray: Any, actor: Any, node: dict[str, Any], gpus: int, args: tuple) -> Any:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    if gpus and node.get("Resources", {}).get("GPU", 0) >= gpus:
        from ray.util import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        pg = placement_group([{"CPU": 1, "GPU": gpus}], strategy="STRICT_PACK",
                             _soft_target_node_id=node["NodeID"])
        ray.get(pg.ready())
        strategy: Any = PlacementGroupSchedulingStrategy(placement_group=pg)
        return actor.options(num_cpus=1, num_gpus=gpus, scheduling_strategy=strategy
                             ).remote(*args)
    strategy = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
    return actor.options(num_cpus=0, scheduling_strategy=strategy).remote(*args)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _sigterm_interrupts() -> Any:
    """After ray.init: SIGTERM unwinds the driver as Ctrl-C does (state recorded, Ray shut
    down, exit 130 with the resume hint) instead of Ray's handler exiting with code 15.
    Returns the handler to restore, or None off the main thread (signals cannot be set)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _raise_interrupt)


def run_on_ray(sweep: Sweep, cells: list[Cell], settings: RaySettings, *, resume: bool,
               progress: str | None = None) -> SweepOutcome:
    ray = _ray()
    configs = cell_configs(sweep, cells)   # a bad cell fails before the cluster is touched
    _connect(ray, settings.address)        # no cluster: nothing written, the same command works
    codes = start_state(sweep, cells, resume)   # once one is started
    todo = [c for c in cells if codes.get(c.name) not in (0,)]
    queue_actor = ray.remote(num_cpus=0)(CellQueue)
    runner_actor = ray.remote(CellRunner)
    outcome = SweepOutcome(directory=sweep.directory, exit_code=0)
    previous = _sigterm_interrupts()
    try:
        queue = queue_actor.remote([c.name for c in todo], settings.lease_timeout_s)
        gpus = max((configs[c.name].engine.tensor_parallel_size for c in todo), default=0)
        gpus = gpus if any(n.get("Resources", {}).get("GPU") for n in _alive_nodes(ray)) else 0
        refs: dict[Any, tuple[str, str]] = {}     # runner call -> (runner id, node id)
        serial = 0
        failures: list[str] = []
        max_failures = 3 + 2 * len(todo)

        def spawn(node: dict[str, Any]) -> None:
            nonlocal serial
            serial += 1
            rid = f"runner-{serial}"
            actor = _start_runner(ray, runner_actor, node, gpus,
                                  (sweep, todo, configs, rid, progress, os.getcwd(),
                                   settings.engine_url))
            refs[actor.run.remote(queue)] = (rid, node["NodeID"])

        def top_up() -> None:
            """A runner per node slot while cells wait (replacing runners that died)."""
            per_node: dict[str, int] = {}
            for _, nid in refs.values():
                per_node[nid] = per_node.get(nid, 0) + 1
            for node in _alive_nodes(ray):
                for _ in range(settings.runners_per_node - per_node.get(node["NodeID"], 0)):
                    spawn(node)

        top_up()
        print(f"[sweep] {len(todo)} cells on {len(refs)} runners "
              f"({len(_alive_nodes(ray))} nodes)", file=sys.stderr)
        meter = _Meter(sweep, cells)
        while True:
            ready, _ = ray.wait(list(refs), num_returns=1, timeout=HEARTBEAT_S) if refs else \
                ([], [])
            for ref in ready:
                rid, _nid = refs.pop(ref)
                try:
                    ray.get(ref)
                except (ray.exceptions.RayActorError, ray.exceptions.RayTaskError) as exc:
                    back = ray.get(queue.release.remote(rid))
                    why = str(exc).strip().splitlines()[-1][:300] if str(exc).strip() else ""
                    failures.append(f"{rid}: {type(exc).__name__}: {why}")
                    print(f"[sweep] {rid} failed ({type(exc).__name__}: {why}); cells back in "
                          f"the queue: {', '.join(back) or 'none'}", file=sys.stderr)
                    if len(failures) > max_failures:
                        raise SweepError(f"{len(failures)} cell runners failed; the last: "
                                         f"{failures[-1]}")
            ray.get(queue.expire.remote())
            status = ray.get(queue.status.remote())
            codes.update(status["codes"])
            record_state(sweep, cells, codes)
            meter.maybe_print(status, settings.progress_every_s)
            if not status["pending"] and not status["leased"]:
                break
            if status["pending"]:
                top_up()
            if not refs:
                raise SweepError("no Ray node can run a cell runner; cells left: "
                                 f"{', '.join(status['pending'])}")
        outcome.lines = [f"{c.name}: exit {codes[c.name]}" for c in cells if c.name in codes]
        outcome.lines += status["log"]
    except KeyboardInterrupt:
        record_state(sweep, cells, codes)
    finally:
        ray.shutdown()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    outcome.cells = codes
    outcome.exit_code = overall(codes, cells)
    return outcome
