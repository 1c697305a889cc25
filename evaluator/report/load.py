"""Reading a run directory into what a report needs: UnitScores + light per-episode stats.

Scores come from `evaluator.scoring.score_run(run_dir, settings)` when that module is present.
Otherwise (or with `use_scoring=False`) a thin adapter builds UnitScores from
judgements.jsonl: per unit, the latest non-"meta" judgement gives the score, and success is
score >= the explicit threshold. Episodes give termination reasons, token usage (prefix-cache
hit rate) and, for units without a score, tool-call counts.

A torn last line (a killed writer) is ignored; any other bad line raises `ReportInputError`
naming the file, the line and msgspec's field path.
"""

from __future__ import annotations

import importlib
import json
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from backends.types import Usage
from evaluator.records import EpisodeRecord, Judgement, UnitScore
from evaluator.run.results import UNDECODABLE, decode_line


class ReportInputError(ValueError):
    """A run directory that cannot be reported on (missing or malformed file)."""


class EpisodeStat(msgspec.Struct, omit_defaults=True):
    """What the report keeps from one EpisodeRecord (not the messages)."""

    key: str
    task: str
    trial: int
    benchmark: str
    subset: str
    termination: str
    usage: dict[str, Usage] = msgspec.field(default_factory=dict)
    tool_calls: int = 0
    tool_errors: int = 0
    error_categories: dict[str, int] = msgspec.field(default_factory=dict)
    n_agent_calls: int = 0
    duration_s: float = 0.0
    tools: dict[str, list[int]] = msgspec.field(default_factory=dict)  # name -> [calls, errors]


class RunInput(msgspec.Struct):
    """One run's inputs to the report."""

    run_dir: str
    label: str
    scores: list[UnitScore]
    episodes: list[EpisodeStat]
    success_threshold: float
    score_source: str          # "evaluator.scoring" | "judgements.jsonl adapter"
    info: dict[str, str] = msgspec.field(default_factory=dict)
    throughput: dict[str, Any] = msgspec.field(default_factory=dict)  # report/throughput.py


def iter_jsonl(path: Path, type_: type) -> Iterator[tuple[int, Any]]:
    """Decode each non-empty line of `path` as `type_`; a torn final line is skipped."""
    decoder = msgspec.json.Decoder(type_)
    with path.open("rb") as fh:
        lines = fh.readlines()
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            yield lineno, decode_line(decoder, raw)
        except UNDECODABLE as exc:
            torn = lineno == len(lines) and not raw.endswith(b"\n")
            if torn and isinstance(exc, (msgspec.DecodeError, UnicodeDecodeError)) and not (
                isinstance(exc, msgspec.ValidationError)
            ):
                return
            raise ReportInputError(f"{path}:{lineno}: {exc}; `agentsweep repair {path.parent}` "
                                   "moves undecodable lines aside") from None


def episode_stat(rec: EpisodeRecord) -> EpisodeStat:
    cats: dict[str, int] = {}
    tools: dict[str, list[int]] = {}
    for call in rec.tool_calls:
        counts = tools.setdefault(call.name, [0, 0])
        counts[0] += 1
        if call.source == "error" or not call.valid:
            name = call.error_category or ("invalid_arguments" if not call.valid else "error")
            cats[name] = cats.get(name, 0) + 1
            counts[1] += 1
    return EpisodeStat(
        key=rec.unit.key,
        task=rec.unit.task,
        trial=rec.unit.trial,
        benchmark=rec.benchmark,
        subset=rec.subset,
        termination=rec.termination,
        usage=rec.usage,
        tool_calls=rec.n_tool_calls,
        tool_errors=sum(cats.values()),
        error_categories=cats,
        n_agent_calls=rec.n_agent_calls,
        duration_s=float(rec.timings.get("total", rec.finished_at - rec.started_at) or 0.0),
        tools=tools,
    )


def load_episodes(run_dir: Path) -> list[EpisodeStat]:
    path = run_dir / "episodes.jsonl"
    if not path.exists():
        return []
    latest: dict[str, EpisodeStat] = {}
    for _, rec in iter_jsonl(path, EpisodeRecord):
        latest[rec.unit.key] = episode_stat(rec)  # a re-run unit: the last record wins
    return list(latest.values())


def scores_from_judgements(
    run_dir: Path, episodes: list[EpisodeStat], threshold: float
) -> list[UnitScore]:
    """Adapter: one UnitScore per judged unit from judgements.jsonl (latest non-meta verdict)."""
    path = run_dir / "judgements.jsonl"
    if not path.exists():
        return []
    by_key: dict[str, Judgement] = {}
    for _, j in iter_jsonl(path, Judgement):
        if j.kind == "meta":
            continue
        prev = by_key.get(j.unit.key)
        if prev is None or j.created_at >= prev.created_at:
            by_key[j.unit.key] = j
    eps = {e.key: e for e in episodes}
    out: list[UnitScore] = []
    for key, j in by_key.items():
        ep = eps.get(key)
        bench, _, rest = j.unit.task.partition("/")
        subset, _, task_id = rest.partition("/")
        score = None if j.score is None else min(1.0, max(0.0, float(j.score)))
        out.append(
            UnitScore(
                unit=j.unit,
                benchmark=ep.benchmark if ep else bench,
                subset=ep.subset if ep else subset,
                task_id=task_id or j.unit.task,
                score=score,
                success=None if score is None else score >= threshold,
                dims=dict(j.scores),
                tool_calls=ep.tool_calls if ep else 0,
                tool_errors=ep.tool_errors if ep else 0,
                error_categories=dict(ep.error_categories) if ep else {},
                judge_error=j.error if score is None else None,
            )
        )
    return out


def read_manifest(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "manifest.json"
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ReportInputError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    return data if isinstance(data, dict) else {}


def read_config(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "config.toml"
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ReportInputError(f"{path}: {exc}") from None


def _run_info(manifest: dict[str, Any], config: dict[str, Any],
              overrides: dict[str, Any] | None = None) -> dict[str, str]:
    """`overrides`: judge settings changed after the run (listed with the deviations)."""
    from evaluator.judges.overrides import describe
    from evaluator.profiles import describe_deviations

    info: dict[str, str] = {}
    later = describe(overrides or {})
    if isinstance(manifest.get("benchmark"), str) and manifest["benchmark"]:
        info["benchmark"] = manifest["benchmark"]
    for key in ("agentsweep_version", "version", "started_at", "start_time"):
        if key in manifest and isinstance(manifest[key], (str, int, float)):
            info[key] = str(manifest[key])
    profile = manifest.get("profile")
    if isinstance(profile, str) and profile:
        info["profile"] = profile
        devs = manifest.get("deviations")
        devs = devs if isinstance(devs, dict) else {}
        lines = describe_deviations(profile, devs)
        info["deviations"] = "; ".join(lines + later) or "none"
    elif manifest:
        info["profile"] = "none (run written before settings profiles)"
        if later:
            info["deviations"] = "; ".join(later)
    prompts = manifest.get("prompt_set")
    if isinstance(prompts, dict) and prompts.get("name"):
        info["prompts"] = f"{prompts['name']} {prompts.get('digest', '')}".strip()
    domains = manifest.get("domains")  # agentsweep run --domain
    if isinstance(domains, dict) and isinstance(domains.get("given"), list):
        info["domains"] = ",".join(map(str, domains["given"])) + (
            " (merged)" if domains.get("merged") else "")
    sandbox = manifest.get("sandbox")
    if isinstance(sandbox, dict) and sandbox.get("validation"):
        info["tool validation"] = str(sandbox["validation"])
    for section in ("agent", "user", "judge"):
        table = config.get(section)
        if isinstance(table, dict):
            model = table.get("model")
            if isinstance(model, str) and model:
                info[f"{section}_model"] = model
    roles = manifest.get("roles")  # the models the role endpoints answered with
    if isinstance(roles, list):
        models = [f"{r['role']} {r['model']}" for r in roles if isinstance(r, dict)
                  and isinstance(r.get("role"), str) and isinstance(r.get("model"), str)
                  and r["model"]]
        if models:
            info["models"] = ", ".join(models)
    return info


def _prompt_set(manifest: dict[str, Any]) -> Any:
    """The run's prompt set (its judgement versions carry the set's digest); None = built-in
    or no longer loadable (scoring then falls back to the latest judgement of any version)."""
    resolved = manifest.get("resolved_config")
    spec = resolved.get("prompts") if isinstance(resolved, dict) else None
    if not isinstance(spec, str) or spec == "builtin":
        return None
    from evaluator import benchmarks
    from evaluator.prompt_sets import PromptSetError, load_prompt_set

    name = manifest.get("benchmark")
    bench = benchmarks.find(name) if isinstance(name, str) else None
    if bench is None or bench.prompts is None:
        return None
    try:
        return load_prompt_set(spec, bench.prompts)
    except PromptSetError:
        return None


def _options(manifest: dict[str, Any]) -> dict[str, Any] | None:
    """The run's `[options]` table (None: a run written before options, or unreadable:
    each benchmark's defaults)."""
    resolved = manifest.get("resolved_config")
    options = resolved.get("options") if isinstance(resolved, dict) else None
    return options if isinstance(options, dict) else None


def _load_plugins(manifest: dict[str, Any]) -> None:
    """The benchmarks the run's config names (`plugins`), so that its records are scored."""
    resolved = manifest.get("resolved_config")
    plugins = resolved.get("plugins") if isinstance(resolved, dict) else None
    if isinstance(plugins, list) and plugins:
        from evaluator import benchmarks

        try:
            benchmarks.load_plugins(str(p) for p in plugins)
        except benchmarks.BenchmarkError as exc:
            raise ReportInputError(str(exc)) from None


def _judge_overrides(run_dir: Path) -> dict[str, Any]:
    from evaluator.judges.overrides import OverrideError, read_overrides

    try:
        return read_overrides(run_dir)
    except OverrideError as exc:
        raise ReportInputError(str(exc)) from None


def _config_threshold(config: dict[str, Any]) -> float | None:
    judge = config.get("judge")
    if isinstance(judge, dict) and isinstance(judge.get("success_threshold"), (int, float)):
        return float(judge["success_threshold"])
    return None


def _judge_settings(config: dict[str, Any]) -> Any:
    from evaluator import benchmarks
    from evaluator.config_check import ConfigError, rename_aliases
    from evaluator.judges.settings import JudgeSettings

    table = config.get("judge") if isinstance(config.get("judge"), dict) else {}
    try:  # a run written before a field was renamed keeps its old key
        table = rename_aliases(dict(table), benchmarks.config_aliases(), "judge.",
                               where="judge settings")
        return msgspec.convert(table, JudgeSettings)
    except ConfigError as exc:
        raise ReportInputError(str(exc)) from None
    except msgspec.ValidationError as exc:
        raise ReportInputError(f"judge settings of the run are not readable: {exc}") from None


def load_run(
    run_dir: Path,
    *,
    success_threshold: float | None = None,
    use_scoring: bool = True,
) -> RunInput:
    """Load one run directory. `success_threshold` overrides the run's `[judge]` setting and
    re-derives `UnitScore.success` from the score (score >= threshold)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ReportInputError(f"{run_dir}: not a run directory")
    if not (run_dir / "episodes.jsonl").is_file() and not (run_dir / "manifest.json").is_file():
        raise ReportInputError(f"{run_dir}: not a run directory (no episodes.jsonl or "
                               "manifest.json)")
    manifest = read_manifest(run_dir)
    _load_plugins(manifest)
    config = read_config(run_dir)
    resolved = manifest.get("resolved_config")
    if isinstance(resolved, dict) and isinstance(resolved.get("judge"), dict):
        # the judge settings the run used (profile included), not only what config.toml says
        config = {**config, "judge": resolved["judge"]}
    overrides = _judge_overrides(run_dir)
    if overrides:  # changed later by `agentsweep judge --set`
        from evaluator.judges.overrides import apply_overrides

        config = {**config, "judge": apply_overrides(config.get("judge") or {}, overrides)}
    threshold = success_threshold
    if threshold is None:
        threshold = _config_threshold(config)
    if threshold is None:
        threshold = 0.75  # JudgeSettings.success_threshold default
    episodes = load_episodes(run_dir)

    scores: list[UnitScore] | None = None
    source = "judgements.jsonl adapter"
    if use_scoring:
        try:
            scoring = importlib.import_module("evaluator.scoring")
        except ModuleNotFoundError as exc:
            if exc.name != "evaluator.scoring":
                raise
            scoring = None
        if scoring is not None and hasattr(scoring, "score_run"):
            scores = list(scoring.score_run(run_dir, _judge_settings(config),
                                            _prompt_set(manifest), _options(manifest)))
            source = "evaluator.scoring"
    if scores is None:
        scores = scores_from_judgements(run_dir, episodes, threshold)
    if success_threshold is not None:
        for s in scores:
            s.success = None if s.score is None else s.score >= success_threshold

    label = str(manifest.get("label") or manifest.get("run_name") or run_dir.resolve().name)
    return RunInput(
        run_dir=str(run_dir),
        label=label,
        scores=scores,
        episodes=episodes,
        success_threshold=threshold,
        score_source=source,
        info={**_run_info(manifest, config, overrides), **_judgement_info(run_dir)},
        throughput=_throughput(run_dir),
    )


def _judgement_info(run_dir: Path) -> dict[str, str]:
    """"judge models": the models of the model judgements (a paired comparison of runs
    judged by different models says so); "context guard": "K of N model judgements" when
    the judges' context guard cut K of the N current model judgements' prompts (the last one
    per key), absent when it cut none."""
    from evaluator.judges.pool import RULE_JUDGE_MODEL, judgement_key, read_judgements
    from evaluator.judges.transcript import CONTEXT_GUARD_NOTE

    if not (run_dir / "judgements.jsonl").is_file():
        return {}
    latest = {judgement_key(j): j for j in read_judgements(run_dir)
              if j.judge_model != RULE_JUDGE_MODEL}
    out = {}
    models = sorted({j.judge_model for j in latest.values() if j.judge_model})
    if models:
        out["judge models"] = ", ".join(models)
    cut = sum(CONTEXT_GUARD_NOTE in j.reasoning for j in latest.values())
    if cut:
        out["context guard"] = (f"{cut} of {len(latest)} model judgements cut to fit the "
                                "judge's context")
    return out


def _throughput(run_dir: Path) -> dict[str, Any]:
    from evaluator.report.throughput import load_throughput

    return load_throughput(run_dir)
