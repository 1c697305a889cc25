"""JudgePool: judge workers that consume finished trajectories, during a sweep or afterwards.

`submit()` enqueues an EpisodeRecord without blocking; `settings.concurrency` workers judge
records concurrently and append Judgements to RUN_DIR/judgements.jsonl through the run
directory's single-writer discipline (`evaluator.run.results.ResultWriter`: append, fsync, torn
tail repaired). Judgements are keyed by (trajectory hash, judge model, prompt version, kind);
a key already on disk is skipped unless `rerun`. Which judgements a unit gets is its
benchmark's (`Benchmark.judge_kinds` and `Benchmark.judges`, looked up in the registry): rule
checks are written at once; model judges are claimed per key, so identical trajectories are
judged once; an audit judge (one that `audits` another kind) runs after a successful audited
judgement, and always after a freshly written one. A record whose benchmark is not registered,
or that no judge applies to, is counted as skipped with the reason.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from backends.errors import InfrastructureError
from backends.fdlimit import is_fd_exhaustion
from bench_data.types import Task
from evaluator.benchmarks.base import BenchmarkOptions
from evaluator.records import EpisodeRecord, Judgement
from evaluator.run.results import (
    EPISODES_FILE,
    UNDECODABLE,
    ResultWriter,
    corrupt_line,
    decode_line,
    iter_records,
    scan_lines,
)

from .call import JudgeClient
from .settings import JudgeSettings
from .transcript import trajectory_hash

JUDGEMENTS_FILE = "judgements.jsonl"
RULE_JUDGE_MODEL = "rule"
"""The judge model of rule checks (no LLM)."""
JudgementKey = tuple[str, str, str, str]
_decoder = msgspec.json.Decoder(Judgement)


def judgement_key(j: Judgement) -> JudgementKey:
    return (j.trajectory_hash, j.judge_model, j.prompt_version, j.kind)


def read_judgements(run_dir: str | Path) -> list[Judgement]:
    """Every complete Judgement of RUN_DIR/judgements.jsonl in file order (torn tail ignored)."""
    path = Path(run_dir) / JUDGEMENTS_FILE
    out: list[Judgement] = []
    for n, line in scan_lines(path):
        try:
            out.append(decode_line(_decoder, line))
        except UNDECODABLE as exc:
            raise corrupt_line(path, n, "judgement", exc) from None
    return out


def latest_records(run_dir: str | Path) -> list[EpisodeRecord]:
    """One EpisodeRecord per unit key (the last one written), in first-seen order."""
    by_key: dict[str, EpisodeRecord] = {}
    for rec in iter_records(run_dir):
        by_key[rec.unit.key] = rec
    return list(by_key.values())


class PoolStats(msgspec.Struct):
    submitted: int = 0
    judged: int = 0            # judgements written (errors included)
    judge_errors: int = 0      # judgements written with `error`
    context_errors: int = 0    # of those: the judge server refused a prompt too long for it
    skipped_done: int = 0      # keys already judged
    skipped_unjudgeable: int = 0
    infra_failed: int = 0      # units left unjudged after infrastructure errors
    unjudgeable: dict[str, int] = msgspec.field(default_factory=dict)


_CONTEXT_REFUSALS = ("maximum context length", "cannot be greater than max_model_len")


def is_context_refusal(error: str) -> bool:
    """A judge error that is the server refusing a prompt (and answer) its context cannot take
    (vLLM's wordings)."""
    return any(words in error for words in _CONTEXT_REFUSALS)


def context_hint(stats: PoolStats, settings: JudgeSettings, run_dir: Path | str) -> str:
    """What to do when judge prompts did not fit the judge's context ("" when none failed so):
    the context guard, or a judge with a longer context."""
    if not stats.context_errors:
        return ""
    guard = ("" if settings.context_tokens else
             "set the judge's context to turn the context guard on, e.g. `agentsweep judge "
             f"{run_dir} --retry-errors --set judge.context_tokens=8192 --set "
             "judge.sampling.max_tokens=1024` (recorded as deviations), or ")
    return (f"hint: {stats.context_errors} judge error(s) are prompts too long for the judge's "
            f"context: {guard}judge with a longer-context model (--judge-url); docs/judges.md")


class JudgePool:
    def __init__(
        self,
        run_dir: Path,
        settings: JudgeSettings,
        *,
        client: JudgeClient | Sequence[JudgeClient],
        tasks: dict[str, Task] | None = None,
        tool_schemas: dict[str, list[dict[str, Any]]] | None = None,
        prompts: Any = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        """client: one judge client, or one per endpoint (used round-robin).
        tasks: Task.key -> Task (judges that need the task fall back to the record or skip).
        tool_schemas: benchmark -> the OpenAI tool list the agent had (shown to judges).
        prompts: the run's `evaluator.prompt_sets.PromptSet` (None = the built-in prompts).
        options: the run config's `[options]` table (None = each benchmark's defaults), read
        by each record's benchmark (`Benchmark.read_options`) into `JudgeInput.options`."""
        self.run_dir = Path(run_dir)
        self.settings = settings
        self.clients = [client] if not isinstance(client, Sequence) else list(client)
        if not self.clients:
            raise ValueError("JudgePool needs at least one client")
        self._rr = itertools.cycle(self.clients)
        self.tasks = tasks or {}
        self.tool_schemas = tool_schemas or {}
        self.prompts = prompts
        self.options = BenchmarkOptions(options)
        self.stats = PoolStats()
        self.model = settings.judge_model
        self._done: set[JudgementKey] = set()
        self._judged_now: set[JudgementKey] = set()   # written by this pool (even with rerun)
        self._inflight: dict[JudgementKey, asyncio.Event] = {}
        self._kept: dict[JudgementKey, Judgement] = {}  # successful audited judgements
        self._audited: set[str] = set()  # kinds some judge audits
        self._queue: asyncio.Queue[EpisodeRecord] = asyncio.Queue()
        self._workers: list[asyncio.Task[None]] = []
        self._writer: ResultWriter | None = None
        self._crash: BaseException | None = None

    async def start(self) -> None:
        if self._writer is not None:
            return
        if not self.model:
            self.model = await self.clients[0].resolve_model()
        self._writer = ResultWriter(self.run_dir / JUDGEMENTS_FILE).start()
        from evaluator import benchmarks

        self._audited = {spec.audits for b in benchmarks.all_benchmarks()
                         for spec in b.judges.values() if spec.audits}
        latest = {judgement_key(j): j for j in read_judgements(self.run_dir)}  # later wins
        for key, j in latest.items():
            if j.error is not None and self.settings.retry_errors:
                continue  # judged again; the new judgement supersedes it (scoring takes the last)
            self._done.add(key)
            if j.kind in self._audited and j.score is not None:
                self._kept[key] = j
        self._workers = [
            asyncio.create_task(self._work(), name=f"judge-{i}")
            for i in range(self.settings.concurrency)
        ]

    async def submit(self, record: EpisodeRecord) -> None:
        """Enqueue one finished episode (never blocks on judging)."""
        if self._writer is None:
            raise RuntimeError("JudgePool.submit before start()")
        self.stats.submitted += 1
        self._queue.put_nowait(record)

    async def close(self) -> None:
        """Judge everything submitted, write it, stop the workers."""
        if self._writer is None:
            return
        await self._queue.join()
        for w in self._workers:
            w.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []
        await self._writer.close()
        self._writer = None
        if self._crash is not None:
            raise RuntimeError(f"a judge worker failed: {self._crash!r}") from self._crash

    async def drain(self, stop: asyncio.Event) -> bool:
        """`close()`, unless `stop` is set before everything submitted is judged: then
        `abort()`. True when everything submitted was judged and written."""
        if self._writer is None:
            return True
        joined = asyncio.ensure_future(self._queue.join())
        stopped = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({joined, stopped}, return_when=asyncio.FIRST_COMPLETED)
            finished = joined.done()
        finally:
            stopped.cancel()
            joined.cancel()
        if not finished:
            await self.abort()
            return False
        await self.close()
        return True

    async def abort(self) -> None:
        """Stop at once: cancel the workers (judgements in flight are dropped, so a later run
        judges them), write what is already judged. Safe after `close()`."""
        for w in self._workers:
            w.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []
        if self._writer is not None:
            await self._writer.close()
            self._writer = None

    async def judge_run(self, rerun: bool = False) -> PoolStats:
        """The separate stage: judge every episode of RUN_DIR/episodes.jsonl not judged yet."""
        if not (self.run_dir / EPISODES_FILE).exists():
            raise FileNotFoundError(f"{self.run_dir / EPISODES_FILE}: no episodes to judge")
        if rerun:
            self.settings = msgspec.structs.replace(self.settings, rerun=True)
        await self.start()
        for rec in latest_records(self.run_dir):
            await self.submit(rec)
        await self.close()
        return self.stats

    # ------------------------------------------------------------------ workers

    async def _work(self) -> None:
        while True:
            record = await self._queue.get()
            try:
                await self._judge(record)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - kept and re-raised by close()
                if isinstance(exc, InfrastructureError) or is_fd_exhaustion(exc):
                    self.stats.infra_failed += 1
                elif self._crash is None:
                    self._crash = exc
            finally:
                self._queue.task_done()

    def _skip(self, key: JudgementKey) -> bool:
        if key in self._judged_now or (key in self._done and not self.settings.rerun):
            self.stats.skipped_done += 1
            return True
        return False

    async def _claim(self, key: JudgementKey) -> bool:
        """True when this worker is to judge `key` (then `_release` it). Identical trajectories
        (same hash, e.g. trials at temperature 0) share a key: a worker that meets a key another
        worker is judging waits for it and then skips it, so each key is judged once."""
        while (event := self._inflight.get(key)) is not None:
            await event.wait()
        if self._skip(key):
            return False
        self._inflight[key] = asyncio.Event()
        return True

    def _release(self, key: JudgementKey) -> None:
        event = self._inflight.pop(key, None)
        if event is not None:
            event.set()

    def _write(self, j: Judgement) -> None:
        assert self._writer is not None
        self._writer.put(j)
        self._done.add(judgement_key(j))
        self._judged_now.add(judgement_key(j))
        self.stats.judged += 1
        if j.error is not None:
            self.stats.judge_errors += 1
            if is_context_refusal(j.error):
                self.stats.context_errors += 1

    def _unjudgeable(self, why: str) -> None:
        self.stats.skipped_unjudgeable += 1
        self.stats.unjudgeable[why] = self.stats.unjudgeable.get(why, 0) + 1

    async def _judge(self, record: EpisodeRecord) -> None:
        from evaluator import benchmarks
        from evaluator.benchmarks.base import JudgeInput, Unjudgeable

        bench = benchmarks.find(record.benchmark)
        if bench is None:
            self._unjudgeable(f"no judge for {record.benchmark}/{record.subset}")
            return
        task = self.tasks.get(record.unit.task)
        try:
            kinds = bench.judge_kinds(record, task, self.settings)
        except Unjudgeable as exc:
            self._unjudgeable(str(exc))
            return
        thash = trajectory_hash(record)
        done: dict[str, Judgement | None] = {}   # kind -> its judgement (this record)
        fresh: set[str] = set()                  # kinds written by this call
        for kind in kinds:
            spec = bench.judges[kind]
            inp = JudgeInput(record=record, task=task, thash=thash, settings=self.settings,
                             prompts=self.prompts, tools=self.tool_schemas.get(record.benchmark),
                             options=self.options.of(bench))
            version = spec.key_version(self.settings, self.prompts, inp.options)
            if spec.rule:
                key = (thash, RULE_JUDGE_MODEL, version, kind)
                if not self._skip(key):  # no await before the write: cannot race
                    out = spec.run(inp)
                    self._write(await out if inspect.isawaitable(out) else out)
                continue
            key = (thash, self.model, version, kind)
            if spec.audits:
                inp.audited = done.get(spec.audits)
                if inp.audited is None or inp.audited.score is None:
                    continue
                if spec.audits in fresh:  # a fresh judgement is always audited (key may exist)
                    if key in self._judged_now or key in self._inflight:
                        continue
                    self._inflight[key] = asyncio.Event()
                elif not await self._claim(key):
                    continue
            elif not await self._claim(key):
                done[kind] = self._kept.get(key)
                continue
            try:
                inp.client, inp.model = next(self._rr), self.model
                out = spec.run(inp)
                j = await out if inspect.isawaitable(out) else out
                self._write(j)
                done[kind] = j
                fresh.add(kind)
                if j.score is not None and kind in self._audited:
                    self._kept[key] = j
            finally:
                self._release(key)
