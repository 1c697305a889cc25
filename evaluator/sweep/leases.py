"""The lease table of a sweep on Ray: which cell runs where, and the cells' last exit codes.

The body of the `CellQueue` actor (plain Python, so it is tested without Ray). Cells are leased
to runners one at a time; a runner renews its lease with heartbeats and reports the cell's exit
code. A lease goes back to the front of the queue when its runner died (`release`), went silent
for `lease_timeout_s` (`expire`), or stopped the cell before it finished (exit 130, the runner
was signalled): the next runner resumes the cell. `stop` (the driver was stopped) tells every
runner to stop its cell now and leases nothing more.

A runner starved past `lease_timeout_s` (a loaded machine) is late, not gone: while no other
runner has taken its cell, its next heartbeat takes the lease back and its report counts (the
cell's flock keeps one writer either way). Once the sweep stops, every heartbeat answers STOP
and a lease that lapses is recorded as interrupted, never left waiting.
"""

from __future__ import annotations

import time
from typing import Any

EXIT_INTERRUPTED = 130

OK, LOST, STOP = "ok", "lost", "stop"
"""What a heartbeat answers: keep going; the lease was taken back (another runner resumes the
cell); the sweep is stopping."""


class CellQueue:
    def __init__(self, cells: list[str], lease_timeout_s: float) -> None:
        self.pending = list(cells)
        self.leases: dict[str, tuple[str, float]] = {}   # cell -> (runner, last heartbeat)
        self.codes: dict[str, int] = {}    # cell -> its last exit code
        self.owed: dict[str, int] = {}     # cell -> episodes still lacking judgements
        self.timeout = lease_timeout_s
        self.stopping = False
        self.log: list[str] = []

    def lease(self, runner: str) -> str | None:
        self.expire()
        if self.stopping or not self.pending:
            return None
        cell = self.pending.pop(0)
        self.leases[cell] = (runner, time.monotonic())
        return cell

    def heartbeat(self, runner: str, cell: str) -> str:
        """OK, LOST (the runner must stop that cell) or STOP (the sweep is stopping)."""
        if self.stopping:
            return STOP
        held = self.leases.get(cell)
        if held is None and cell in self.pending:  # lapsed, not taken: the late runner keeps it
            self.pending.remove(cell)
            self.log.append(f"cell {cell}: {runner} was late, not gone; it keeps the cell")
        elif held is None or held[0] != runner:
            return LOST
        self.leases[cell] = (runner, time.monotonic())
        return OK

    def _reporter(self, runner: str, cell: str) -> bool:
        """Whether `runner`'s report of `cell` counts: it holds the lease, or its lease lapsed
        and no other runner took the cell since (it waits in line, or the sweep stopped)."""
        held = self.leases.get(cell)
        if held is not None:
            return held[0] == runner
        return cell in self.pending or (self.stopping and cell in self.codes)

    def done(self, runner: str, cell: str, code: int, owed: int = 0) -> None:
        """The exit code of a leased cell (and the episodes it still owes its judges). An
        interrupted cell (130) is recorded as such and, unless the sweep is stopping, waits
        for the next runner, which resumes it."""
        if not self._reporter(runner, cell):
            return  # no longer this runner's: its new holder reports
        self.leases.pop(cell, None)
        if cell in self.pending:
            self.pending.remove(cell)
        self.codes[cell] = code
        self.owed[cell] = owed
        if code == EXIT_INTERRUPTED and not self.stopping:
            self.pending.insert(0, cell)
            self.log.append(f"cell {cell}: {runner} was stopped (exit 130); the cell is "
                            "resumed by the next runner")

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
        if not self.stopping:
            self.pending[:0] = back
        else:  # stopping: nobody resumes it now; it was interrupted
            self.codes.update({c: EXIT_INTERRUPTED for c in back})
        return back

    def expire(self) -> list[str]:
        now = time.monotonic()
        late = [c for c, (_, t) in self.leases.items() if now - t > self.timeout]
        for c in late:
            runner = self.leases.pop(c)[0]
            self.log.append(f"cell {c}: no heartbeat from {runner} for {self.timeout:g}s; "
                            + ("interrupted" if self.stopping else "leased again"))
        if self.stopping:  # nobody resumes it now: it was interrupted
            self.codes.update({c: EXIT_INTERRUPTED for c in late})
        else:
            self.pending[:0] = late
        return late

    def stop(self) -> None:
        """The sweep is stopping: heartbeats answer STOP, nothing more is leased."""
        self.stopping = True

    def stopped(self) -> list[str]:
        """After a stop: the cells still leased (their runners did not report) count as
        interrupted; returns them."""
        left = list(self.leases)
        self.leases.clear()
        self.codes.update({c: EXIT_INTERRUPTED for c in left})
        return left

    def status(self) -> dict[str, Any]:
        return {"pending": list(self.pending), "leased": {c: r for c, (r, _) in
                                                          self.leases.items()},
                "codes": dict(self.codes), "owed": dict(self.owed), "log": list(self.log)}
