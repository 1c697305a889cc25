"""The `Benchmark` interface: everything the generic layers know about a benchmark.

A benchmark is one package, `evaluator/benchmarks/<name>/` (or any importable module for a
plugin), whose module exposes `BENCHMARK = Benchmark(...)`. The scheduler, sweep, judge pool,
scoring, result store, report, viewer and CLI look benchmarks up by name in the registry
(`evaluator.benchmarks`) and call only what is declared here; docs/adding_a_benchmark.md walks
through a complete one.

The pieces, in the order an episode meets them:
- `data`: the benchmark's `bench_data.formats.DataFormat` (subsets, files, loader; the loader and
  the typed task payload live in the benchmark's package, `data.py`);
- `environment`: what tools an episode sees and how calls are answered (`EnvironmentFactory`);
- `protocols`: subset (or mode) -> pure episode function `(EpisodeContext) -> EpisodeRecord`;
- `judges` + `judge_kinds`: which judgements a finished episode needs (`JudgeSpec`: kind,
  prompt files, prompt version, how to judge);
- `score` and `subset_score`: episode + judgements -> `UnitScore`; one subset's units -> its
  score, as the benchmark's paper aggregates them;
- `report`: the benchmark's own report section (`ReportSection`);
- `profiles`, `config_aliases`, `prompts`: its settings profiles, old config keys it still
  accepts, and its prompt roles (for prompt sets);
- `options`: its own settings, the run config's `[options]` table (a msgspec Struct type whose
  defaults are the project's behaviour; its `paper` profile sets the reference's), handed to
  its protocols (`ProtocolSettings.options`), judges (`JudgeInput.options`) and scoring
  (`ScoreContext.options`) as one Struct.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from bench_data.formats import DataFormat
from bench_data.types import Task
from evaluator.benchmarks.lazy import DeferredEnvironment, deferred  # noqa: F401 (re-exported)
from evaluator.records import EpisodeRecord, Judgement, UnitScore

if TYPE_CHECKING:
    from bench_data.registry import TaskSet
    from evaluator.config import RunConfig
    from evaluator.judges.settings import JudgeSettings
    from evaluator.prompt_sets import PromptRoles, PromptSet
    from evaluator.protocols.base import EpisodeContext, ToolSandbox
    from evaluator.table import Table


class BenchmarkError(Exception):
    """A benchmark cannot run as configured (the message says why, in one line)."""


# ------------------------------------------------------------------ environment


@dataclass
class EnvironmentRequest:
    """What an environment factory gets: the run's config, directory, tasks and prompt set."""

    config: RunConfig
    run_dir: Path
    taskset: TaskSet
    prompts: PromptSet | None = None


class Environment(Protocol):
    """The tools of a run: one per process, asked for each episode's sandbox."""

    def episode(self, task: Task) -> ToolSandbox:
        """The sandbox one episode of `task` talks to (shared, or fresh per episode)."""
        ...

    def describe(self) -> dict[str, Any]:
        """What decides tool answers and errors, for the run manifest."""
        ...

    def close(self) -> None: ...


class EnvironmentFactory(Protocol):
    """Opens a benchmark's environment. `check` runs before any model engine starts (a missing
    table or database fails fast, raising BenchmarkError); `open` gets the tool-simulator
    client (None when the benchmark simulates nothing)."""

    def check(self, request: EnvironmentRequest) -> None: ...

    async def open(self, request: EnvironmentRequest, simulator: Any,
                   simulator_model: str) -> Environment: ...


# ------------------------------------------------------------------ judges


@dataclass
class JudgeInput:
    """One judge call's inputs. `client`/`model`: the pool's judge (None/"rule" for rule
    checks); `audited`: the successful judgement an audit judge reviews; `tools`: the tool
    schemas the agent had."""

    record: EpisodeRecord
    task: Task | None
    thash: str
    settings: JudgeSettings
    prompts: PromptSet | None
    tools: list[dict[str, Any]] | None
    client: Any = None
    model: str = ""
    audited: Judgement | None = None
    options: Any = None


class Unjudgeable(Exception):
    """Raised by `judge_kinds` when a record cannot be judged (the message says why)."""


@dataclass(frozen=True)
class JudgeSpec:
    """One kind of judgement a benchmark writes.

    kind: `Judgement.kind` (part of the judgement key; never rename it).
    version: (settings, prompt set) -> `Judgement.prompt_version` (part of the key).
    options_version: (settings, prompt set, the benchmark's options) -> the same, for a judge
        whose verdicts depend on the benchmark's `[options]`; used instead of `version`.
    run: judges one episode (async; for `rule` checks it may be plain) -> the Judgement; judge
        failures become a Judgement with `error`, infrastructure errors propagate.
    prompt_files: the built-in prompt files it uses, relative to the benchmark's package.
    rule: a rule check without a model (judge model "rule").
    audits: the kind whose successful judgement this one reviews (run after it; a freshly
        judged audited judgement is always audited again).
    view_weighted: the viewer shows score x its audit's score x (1 - tool errors / calls).
    pass_threshold: the viewer's pass line for this kind (None = the run's success threshold).
    options_version: (settings, prompt set, the benchmark's options) -> the prompt version,
        for a judge whose prompt or reading depends on the benchmark's options; replaces
        `version` where given (`key_version`).
    """

    kind: str
    version: Callable[[JudgeSettings, PromptSet | None], str]
    run: Callable[[JudgeInput], Awaitable[Judgement] | Judgement]
    prompt_files: tuple[str, ...] = ()
    rule: bool = False
    audits: str = ""
    view_weighted: bool = False
    pass_threshold: float | None = None
    options_version: Callable[[JudgeSettings, PromptSet | None, Any], str] | None = None

    def key_version(self, settings: JudgeSettings, prompts: PromptSet | None,
                    options: Any = None) -> str:
        """The prompt version of this kind's judgements (part of their key)."""
        if self.options_version is not None:
            return self.options_version(settings, prompts, options)
        return self.version(settings, prompts)


class JudgementLookup(Protocol):
    """The latest judgements of a run, by (trajectory hash, kind, prompt version)."""

    def get(self, thash: str, kind: str, version: str) -> Judgement | None: ...

    def current_or_latest(self, thash: str, kind: str, version: str) -> Judgement | None: ...


@dataclass(frozen=True)
class ScoreContext:
    settings: JudgeSettings
    prompts: PromptSet | None = None
    options: Any = None  # the benchmark's options Struct (Benchmark.read_options)


# ------------------------------------------------------------------ report


@dataclass(frozen=True)
class ReportSection:
    """A benchmark's part of the report, rendered by the generic report.

    summarize: the run's unit scores of this benchmark -> a msgspec Struct (report.json's
        `benchmarks.<name>`), or None when there is nothing to show.
    tables: [(run label, summary)] -> tables shown after the summary table (terminal,
        Markdown, HTML).
    plots: the same -> inline SVG plots for the HTML report.
    judge_lines: one run's summary -> lines of `agentsweep judge`'s score summary.
    episodes: the report calls `summarize(units, episodes)` with the benchmark's episode stats
        (`evaluator.report.load.EpisodeStat`: termination, per-tool calls and errors), also
        for episodes not scored yet; `agentsweep judge` still calls `summarize(units)`.
    """

    summarize: Callable[..., Any]
    tables: Callable[[list[tuple[str, Any]]], list[Table]] = lambda runs: []
    plots: Callable[[list[tuple[str, Any]]], list[str]] = lambda runs: []
    judge_lines: Callable[[Any], list[str]] = lambda summary: []
    episodes: bool = False

    @classmethod
    def deferred(cls, module: str, *, tables: str = "tables", plots: str | None = None,
                 episodes: bool = False) -> ReportSection:
        """The section whose functions are `module`'s `summarize`, `tables` (that name),
        `plots` (that name; None: no plots) and `judge_lines`, imported when first called: a
        run needs no report code (numpy, the kernels) at start-up."""
        return cls(summarize=deferred(module, "summarize"), tables=deferred(module, tables),
                   plots=deferred(module, plots) if plots else lambda runs: [],
                   judge_lines=deferred(module, "judge_lines"), episodes=episodes)


class BenchmarkOptions:
    """A run config's `[options]` table, read once per benchmark into its options Struct
    (`Benchmark.read_options`): what judge pools and scoring hand each record's benchmark."""

    def __init__(self, table: Mapping[str, Any] | None) -> None:
        self.table = dict(table or {})
        self._read: dict[str, Any] = {}

    def of(self, bench: Benchmark) -> Any:
        if bench.name not in self._read:
            self._read[bench.name] = bench.read_options(self.table)
        return self._read[bench.name]


# ------------------------------------------------------------------ domains


@dataclass(frozen=True)
class DomainChoice:
    """What `agentsweep run --domain` (config `data.domains`) means for a benchmark.

    subsets: the subsets whose tasks run when the run names none.
    describe: what the domains give the episodes (tools, merged state), for the manifest.
    """

    subsets: tuple[str, ...]
    describe: Mapping[str, Any] = field(default_factory=dict)


DomainsFn = Callable[[tuple[str, ...], tuple[str, ...]], DomainChoice]
"""(the domains given, the subsets the dataset has) -> DomainChoice; ValueError (one line)
for a domain list the benchmark does not accept."""


def mean_unit_score(units: list[UnitScore], subset: str = "") -> float | None:
    """The default subset score: the mean unit score over the scored units."""
    scored = [u.score for u in units if u.score is not None]
    return sum(scored) / len(scored) if scored else None


def no_judges(record: EpisodeRecord, task: Task | None, settings: JudgeSettings) -> list[str]:
    raise Unjudgeable(f"no judge for {record.benchmark}/{record.subset}")


def not_scored(record: EpisodeRecord, judgements: JudgementLookup,
               ctx: ScoreContext) -> UnitScore | None:
    return None


ProtocolFn = Callable[["EpisodeContext"], Awaitable[EpisodeRecord]]


# ------------------------------------------------------------------ the benchmark


@dataclass(frozen=True)
class Benchmark:
    """One benchmark, registered by `name` (see the module doc for each part).

    name: the registry key; also `Task.benchmark`, `EpisodeRecord.benchmark` and the data
        directory's name. title: how people write it ("TravelBench").
    judge_kinds: (record, its task or None, judge settings) -> the kinds of `judges` the
        record needs, in order (an audit after what it audits); raises Unjudgeable.
    ok_terminations: how an episode ends normally (the viewer marks the others).
    profiles: settings profiles, by name ("paper", optionally "smoke"): raw TOML tables of
        score-relevant fields layered under the user's config (evaluator/profiles.py).
    config_aliases: old dotted config keys -> current ones, accepted in TOML files, --set,
        and run directories' config.toml / manifest.json (docs/config.md).
    prompts: the roles of the benchmark's prompt sets (None: no prompt sets).
    prompt_importer: `agentsweep prompts import` for the benchmark's released prompts:
        (checkout, out dir or None, set name, force) -> (out dir, manifest).
    prompt_source: a file every checkout of the benchmark's reference has (relative path):
        `prompts import` without `--bench` picks the benchmark whose file the checkout has.
    domains: what `--domain` means (None: the benchmark has no domains; the flag is refused).
    data_commands: adds the benchmark's own data actions, `agentsweep data <name> ACTION`
        (e.g. generating a task set), to the argparse sub-parsers action it is given; each
        action's parser sets `func` ((args) -> exit code).
    reruns: (run directory, the benchmark's options) -> unit keys whose last record the run
        plays again on `--resume` (a benchmark whose reference reruns a trial after a failure
        its judge finds; None: never).
    options: the type of its `[options]` table (a msgspec Struct with
        `forbid_unknown_fields=True`, every field defaulted and documented in its docstring as
        `name: what it does`); None = the benchmark takes no options. The defaults are what a
        run gets without a profile (old run directories too); profiles set other values
        (`options.NAME` keys), and a run that differs from its profile lists each as a
        deviation.
    deviations: (the run config) -> deviations its options alone do not show, as
        {key: {"profile", "used", "note"}} (e.g. a table the paper needs, run without).
    run_flags: extra `agentsweep run` flags: flag -> (dotted config key, help), e.g.
        {"--poi-table": ("options.poi_table", "...")}.
    """

    name: str
    title: str
    data: DataFormat
    protocols: Mapping[str, ProtocolFn]
    environment: EnvironmentFactory | None = None
    judges: Mapping[str, JudgeSpec] = field(default_factory=dict)
    judge_kinds: Callable[[EpisodeRecord, Task | None, JudgeSettings], list[str]] = no_judges
    score: Callable[[EpisodeRecord, JudgementLookup, ScoreContext], UnitScore | None] = \
        not_scored
    subset_score: Callable[[list[UnitScore], str], float | None] = mean_unit_score
    report: ReportSection | None = None
    ok_terminations: tuple[str, ...] = ("answer",)
    profiles: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    config_aliases: Mapping[str, str] = field(default_factory=dict)
    prompts: PromptRoles | None = None
    prompt_importer: Callable[..., tuple[Path, dict[str, Any]]] | None = None
    prompt_source: str = ""
    data_commands: Callable[[Any], None] | None = None
    description: str = ""
    domains: DomainsFn | None = None
    options: type | None = None
    reruns: Callable[[Path, Any], set[str]] | None = None
    deviations: Callable[[Any], dict[str, dict[str, Any]]] | None = None
    run_flags: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.name != self.data.benchmark:
            raise ValueError(f"benchmark {self.name!r}: its data format is "
                             f"{self.data.benchmark!r}'s")
        for kind, spec in self.judges.items():
            if kind != spec.kind:
                raise ValueError(f"benchmark {self.name!r}: judges[{kind!r}] is {spec.kind!r}")
            if spec.audits and spec.audits not in self.judges:
                raise ValueError(f"benchmark {self.name!r}: judge {kind!r} audits unknown "
                                 f"kind {spec.audits!r}")

    def read_options(self, table: Mapping[str, Any] | None) -> Any:
        """The benchmark's options Struct from a run config's `[options]` table (None or {}:
        the defaults; None when the benchmark has no options). Raises BenchmarkError naming
        the field for a value its type refuses."""
        if self.options is None:
            if table:
                raise BenchmarkError(f"options: {self.title} takes no options, got "
                                     f"{', '.join(sorted(table))}")
            return None
        import msgspec

        try:
            return msgspec.convert(dict(table or {}), self.options, strict=True)
        except msgspec.ValidationError as exc:
            raise BenchmarkError(f"options of {self.title}: {exc}") from None

    @property
    def subsets(self) -> tuple[str, ...]:
        return self.data.subsets or tuple(self.protocols)

    def protocol(self, subset: str) -> ProtocolFn:
        """The episode protocol of `subset`; BenchmarkError naming the known ones."""
        try:
            return self.protocols[subset]
        except KeyError:
            known = ", ".join(sorted(self.protocols)) or "none yet"
            raise BenchmarkError(f"no episode protocol for subset {subset!r} of {self.name}; "
                                 f"known subsets: {known}") from None
