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

- Stopping: SIGTERM or Ctrl-C on the driver stops the sweep: the queue answers every
  heartbeat with "stop", each runner stops its cell at its next heartbeat (every 2 s; running
  episodes cancelled, their responses kept by the journal; judging stopped, what is judged
  kept) and reports exit 130 (a cell that finished before then is recorded 0),
  the driver records `sweep.json` and shuts Ray down. A runner that is itself signalled stops
  its cell the same way, reports 130 and leases nothing more; the cell waits for the next
  runner.

`--ray local` starts a private single-node cluster bound to 127.0.0.1; `--ray auto` or an
address joins a running cluster (`ray start --head`, a SLURM allocation, KubeRay); see
`evaluator.sweep.ray_cluster`.
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
from evaluator.sweep.leases import OK, CellQueue
from evaluator.sweep.local import (
    CellRun,
    SweepOutcome,
    cell_configs,
    cell_line,
    overall,
    record_state,
    start_state,
)
from evaluator.sweep.ray_cluster import RaySession, alive_nodes, import_ray

__all__ = ["CellQueue", "CellRunner", "RaySettings", "run_on_ray"]

HEARTBEAT_S = 2.0
STOP_WAIT_S = 60.0   # after a stop, how long the driver waits for its runners to report


@dataclass
class RaySettings:
    address: str                 # "local", "auto" or a cluster address
    lease_timeout_s: float = 60.0
    runners_per_node: int = 1
    engine_url: str | None = None   # a running server for every "embedded" endpoint
    progress_every_s: float = 30.0


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
            ran = await _run_cell(runner, queue, executor, runner.cells[name])
            if ran is None:
                await queue.give_back.remote(name, runner.id)
                await asyncio.sleep(HEARTBEAT_S)  # its old writer is still stopping
                continue
            code, owed, signalled = ran
            await queue.done.remote(runner.id, name, code, owed)
            done.append((name, code))
            if signalled:  # this runner was signalled (whatever the queue said since): it stops
                print(f"[sweep] {runner.id}: stopped by a signal; cell {name} exit "
                      f"{code}, left for the next runner", file=sys.stderr)
                return done
    finally:
        await executor.aclose()


async def _run_cell(runner: CellRunner, queue: Any, executor: Any, cell: Cell
                    ) -> CellRun | None:
    """Run one leased cell under its run directory's flock, renewing the lease meanwhile:
    (exit code, episodes still owing judgements, whether this process was signalled), or None
    when another writer still holds the cell. A stop from the queue (lease lost, sweep
    stopping) is not a signal: a runner starved past its lease that is then signalled still
    stops, and one the queue stopped goes on leasing."""
    import asyncio

    run_dir = runner.sweep.directory / cell.name
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = os.open(run_dir / ".sweep.lock", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None  # a live writer elsewhere still holds this cell
        stop = asyncio.Event()

        async def beat() -> None:
            while True:
                await asyncio.sleep(HEARTBEAT_S)
                answer = await queue.heartbeat.remote(runner.id, cell.name)
                if answer != OK:  # the lease was taken back, or the sweep stops: stop now
                    stop.set()
                    return

        task = asyncio.create_task(beat())
        try:
            return await executor.run(cell, stop=stop)
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
    ray = import_ray()
    configs = cell_configs(sweep, cells)   # a bad cell fails before the cluster is touched
    session = RaySession(ray, settings.address).open()  # no cluster: nothing written, the
    outcome = SweepOutcome(directory=sweep.directory, exit_code=0)  # same command works later
    codes: dict[str, int] = {}
    owed: dict[str, int] = {}

    def record(status: dict[str, Any]) -> None:
        codes.update(status["codes"])
        owed.update(status["owed"])
        record_state(sweep, cells, codes, owed)

    previous = _sigterm_interrupts()
    try:
        kept_codes, kept_owed = start_state(sweep, cells, resume)
        codes.update(kept_codes)
        owed.update(kept_owed)
        # cells not finished, or finished with judgements still owed (a judge was down)
        todo = [c for c in cells if codes.get(c.name) != 0 or owed.get(c.name)]
        queue = _queue_actor(ray).remote([c.name for c in todo], settings.lease_timeout_s)
        runners = _Runners(ray, sweep, todo, configs, settings, progress, queue)
        try:
            status = runners.drive(_Meter(sweep, cells), record)
        except KeyboardInterrupt:
            status = runners.stop()
        record(status)
        outcome.lines = [cell_line(c.name, codes[c.name], owed.get(c.name, 0))
                         for c in cells if c.name in codes] + status["log"]
    except KeyboardInterrupt:  # before the runners started: nothing of theirs to record
        pass
    finally:
        try:
            session.close()
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
    outcome.cells = codes
    outcome.exit_code = overall(codes, cells)
    return outcome


def _queue_actor(ray: Any) -> Any:
    """The CellQueue actor class, pinned to the driver's node: the lease table lives as long
    as the driver, whichever other node is lost."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(),
                                          soft=False)
    return ray.remote(num_cpus=0)(CellQueue).options(scheduling_strategy=here)


class _Runners:
    """The driver's side: one runner actor per node slot, replaced when one dies, until the
    queue is empty; `stop()` stops them all."""

    def __init__(self, ray: Any, sweep: Sweep, todo: list[Cell], configs: dict[str, Any],
                 settings: RaySettings, progress: str | None, queue: Any) -> None:
        self.ray, self.queue, self.settings = ray, queue, settings
        self.args = (sweep, todo, configs, progress, os.getcwd(), settings.engine_url)
        gpus = max((configs[c.name].engine.tensor_parallel_size for c in todo), default=0)
        has_gpus = any(n.get("Resources", {}).get("GPU") for n in alive_nodes(ray))
        self.gpus = gpus if has_gpus else 0
        self.actor = ray.remote(CellRunner)
        self.refs: dict[Any, tuple[str, str]] = {}     # runner call -> (runner id, node id)
        self.serial = 0
        self.failures: list[str] = []
        self.max_failures = 3 + 2 * len(todo)

    def spawn(self, node: dict[str, Any]) -> None:
        self.serial += 1
        rid = f"runner-{self.serial}"
        sweep, todo, configs, progress, cwd, url = self.args
        actor = _start_runner(self.ray, self.actor, node, self.gpus,
                              (sweep, todo, configs, rid, progress, cwd, url))
        self.refs[actor.run.remote(self.queue)] = (rid, node["NodeID"])

    def top_up(self) -> None:
        """A runner per node slot while cells wait (replacing runners that died)."""
        per_node: dict[str, int] = {}
        for _, nid in self.refs.values():
            per_node[nid] = per_node.get(nid, 0) + 1
        for node in alive_nodes(self.ray):
            for _ in range(self.settings.runners_per_node - per_node.get(node["NodeID"], 0)):
                self.spawn(node)

    def reap(self, timeout_s: float) -> None:
        """Wait up to `timeout_s` for a runner to end; a failed one's cells go back."""
        ray = self.ray
        ready, _ = ray.wait(list(self.refs), num_returns=1, timeout=timeout_s)
        for ref in ready:
            rid, _nid = self.refs.pop(ref)
            try:
                ray.get(ref)
            except (ray.exceptions.RayActorError, ray.exceptions.RayTaskError) as exc:
                back = ray.get(self.queue.release.remote(rid))
                why = str(exc).strip().splitlines()[-1][:300] if str(exc).strip() else ""
                self.failures.append(f"{rid}: {type(exc).__name__}: {why}")
                print(f"[sweep] {rid} failed ({type(exc).__name__}: {why}); cells back in the "
                      f"queue: {', '.join(back) or 'none'}", file=sys.stderr)
                if len(self.failures) > self.max_failures:
                    raise SweepError(f"{len(self.failures)} cell runners failed; the last: "
                                     f"{self.failures[-1]}") from None

    def drive(self, meter: _Meter, record: Any) -> dict[str, Any]:
        """Until every cell has an exit code; the queue's last status."""
        ray = self.ray
        self.top_up()
        print(f"[sweep] {len(self.args[1])} cells on {len(self.refs)} runners "
              f"({len(alive_nodes(ray))} nodes)", file=sys.stderr)
        while True:
            if self.refs:
                self.reap(HEARTBEAT_S)
            ray.get(self.queue.expire.remote())
            status = ray.get(self.queue.status.remote())
            record(status)
            meter.maybe_print(status, self.settings.progress_every_s)
            if not status["pending"] and not status["leased"]:
                return status
            if status["pending"]:
                self.top_up()
            if not self.refs:
                raise SweepError("no Ray node can run a cell runner; cells left: "
                                 f"{', '.join(status['pending'])}")

    def stop(self) -> dict[str, Any]:
        """Stop the sweep: every runner stops its cell now and reports it (exit 130); the
        queue's status once they have, or after STOP_WAIT_S (cells whose runner did not report
        by then count as interrupted). Ctrl-C again stops waiting."""
        ray = self.ray
        print("[sweep] stopping: each runner stops its cell now (running episodes cancelled, "
              "their responses kept by the journal) ...", file=sys.stderr)
        try:
            ray.get(self.queue.stop.remote())
            deadline = time.monotonic() + STOP_WAIT_S
            while self.refs and time.monotonic() < deadline:
                self.reap(min(HEARTBEAT_S, max(0.0, deadline - time.monotonic())))
        except (KeyboardInterrupt, SweepError):
            pass
        except Exception as exc:  # noqa: BLE001 - the cluster is going away; record what we have
            print(f"[sweep] while stopping: {type(exc).__name__}: {exc}", file=sys.stderr)
        try:
            ray.get(self.queue.stopped.remote())
            return ray.get(self.queue.status.remote())
        except Exception:  # noqa: BLE001 - the queue is gone: no codes beyond the recorded
            return {"codes": {}, "owed": {}, "log": []}
