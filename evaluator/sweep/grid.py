"""A sweep file (SWEEP.toml) and its expansion into grid cells.

A sweep is a grid of models x benchmarks (each benchmark entry a dataset with its subsets and
limit) run with the same trials, seed and judge settings on top of one base run config. Each
cell is an ordinary run (its own run directory under the sweep directory), so everything a run
does (resume, judging, reports) holds per cell.

    base = "run.toml"          # optional: the run config every cell starts from
    name = "grid-demo"         # the sweep directory under `out`
    out = "sweeps"
    trials = 3
    seed = 0
    judge = true               # judge as the cells run (as `run --judge`)
    set = { "agent.sampling.max_tokens" = 256 }   # overrides for every cell

    [[models]]
    name = "smol"              # row label (also part of the cell's directory name)
    model = ""                 # agent.endpoint.model ("" = the engine's)
    url = "embedded"           # agent.endpoint.base_url
    set = { "agent.sampling.temperature" = 0.0 }

    [[benchmarks]]
    name = "sample-a"          # column label
    data = "sample"            # data.dataset (name or path)
    subsets = ["a"]
    limit = 2

The expansion is pure: `expand(sweep)` gives the same cells, names and overrides for the same
file, so a resumed sweep finds its cells' run directories again.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MAX_CELLS = 10_000
MAX_TRIALS = 1_000


class SweepError(Exception):
    """A sweep file or sweep directory that cannot be used (one line, names file and field)."""


class ModelEntry(msgspec.Struct, forbid_unknown_fields=True):
    """A grid row: the agent's endpoint and any overrides of its own."""

    name: str
    model: str = ""
    url: str = ""
    set: dict[str, Any] = msgspec.field(default_factory=dict)


class BenchEntry(msgspec.Struct, forbid_unknown_fields=True):
    """A grid column: a dataset (name or path) with its subsets and limit."""

    name: str
    data: str
    bench: str = ""
    data_dir: str = ""
    subsets: list[str] = msgspec.field(default_factory=list)
    limit: int = 0
    set: dict[str, Any] = msgspec.field(default_factory=dict)


class SweepFile(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    models: list[ModelEntry]
    benchmarks: list[BenchEntry]
    base: str = ""
    out: str = "sweeps"
    trials: int = 1
    seed: int = 0
    judge: bool = False
    report: bool = True
    set: dict[str, Any] = msgspec.field(default_factory=dict)


@dataclass(frozen=True)
class Cell:
    """One run of the grid: row `model` x column `bench`."""

    model: str
    bench: str
    name: str                                  # the run's name = its directory name
    overrides: tuple[tuple[str, Any, str], ...]

    def key(self) -> tuple[str, str]:
        return (self.model, self.bench)


@dataclass(frozen=True)
class Sweep:
    path: Path            # the sweep file as read
    spec: SweepFile
    text: str             # its text, kept in the sweep directory for --resume
    root: Path | None = None  # the sweep directory when it is not <out>/<name> (a resume's)

    @property
    def base(self) -> Path | None:
        if not self.spec.base:
            return None
        base = Path(self.spec.base)
        return base if base.is_absolute() else self.path.parent / base

    @property
    def directory(self) -> Path:
        if self.root is not None:
            return self.root
        out = Path(self.spec.out)
        return out / self.spec.name


def _check(path: Path, spec: SweepFile) -> None:
    def bad(field: str, why: str) -> SweepError:
        return SweepError(f"{path}: {field}: {why}")

    for field, value in (("name", spec.name),):
        if not SAFE_NAME.match(value):
            raise bad(field, f"{value!r} must be 1-64 characters of letters, digits, '.', "
                             "'_' or '-' (it names a directory)")
    if not 1 <= spec.trials <= MAX_TRIALS:
        raise bad("trials", f"must be in [1, {MAX_TRIALS}], got {spec.trials}")
    if not spec.models:
        raise bad("models", "at least one [[models]] entry is needed")
    if not spec.benchmarks:
        raise bad("benchmarks", "at least one [[benchmarks]] entry is needed")
    for table, entries in (("models", spec.models), ("benchmarks", spec.benchmarks)):
        seen: set[str] = set()
        for i, e in enumerate(entries):
            where = f"{table}[{i}].name"
            if not SAFE_NAME.match(e.name):
                raise bad(where, f"{e.name!r} must be 1-64 characters of letters, digits, "
                                 "'.', '_' or '-' (it names the cell's directory)")
            if e.name in seen:
                raise bad(where, f"{e.name!r} is used twice")
            seen.add(e.name)
            for key in e.set:
                if not isinstance(key, str) or not key or key.startswith("."):
                    raise bad(f"{table}[{i}].set", f"bad key {key!r}")
    for i, b in enumerate(spec.benchmarks):
        if not b.data:
            raise bad(f"benchmarks[{i}].data", "must name a dataset or a path")
        if b.limit < 0:
            raise bad(f"benchmarks[{i}].limit", f"must be >= 0 (0 = all), got {b.limit}")
    cells = len(spec.models) * len(spec.benchmarks)
    if cells > MAX_CELLS:
        raise bad("models x benchmarks", f"{cells} cells; at most {MAX_CELLS}")


def load_sweep(path: str | Path) -> Sweep:
    """Read and check a sweep file; every error is one line naming the file and field."""
    p = Path(path)
    if not p.is_file():
        raise SweepError(f"{p}: no such sweep file")
    try:
        text = p.read_text(encoding="utf-8")
        raw = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise SweepError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"{p}: {exc}") from None
    except RecursionError:
        raise SweepError(f"{p}: nested too deeply") from None
    try:
        spec = msgspec.convert(raw, SweepFile)
    except msgspec.ValidationError as exc:
        raise SweepError(f"{p}: {exc}") from None
    _check(p, spec)
    return Sweep(path=p, spec=spec, text=text)


def _cell_overrides(sweep: Sweep, m: ModelEntry, b: BenchEntry, name: str
                    ) -> tuple[tuple[str, Any, str], ...]:
    s = sweep.spec
    out: list[tuple[str, Any, str]] = []
    origin = f"{sweep.path}"
    for key, value in s.set.items():
        out.append((key, value, f"{origin}: set.{key}"))
    if m.url:
        out.append(("agent.endpoint.base_url", m.url, f"{origin}: models.{m.name}.url"))
    if m.model:
        out.append(("agent.endpoint.model", m.model, f"{origin}: models.{m.name}.model"))
    for key, value in m.set.items():
        out.append((key, value, f"{origin}: models.{m.name}.set.{key}"))
    out.append(("data.dataset", b.data, f"{origin}: benchmarks.{b.name}.data"))
    if b.bench:
        out.append(("data.benchmark", b.bench, f"{origin}: benchmarks.{b.name}.bench"))
    if b.data_dir:
        data_dir = Path(b.data_dir)
        if not data_dir.is_absolute():
            data_dir = sweep.path.parent / data_dir
        out.append(("data.data_dir", str(data_dir), f"{origin}: benchmarks.{b.name}.data_dir"))
    if b.subsets:
        out.append(("data.subsets", list(b.subsets), f"{origin}: benchmarks.{b.name}.subsets"))
    if b.limit:
        out.append(("data.limit", b.limit, f"{origin}: benchmarks.{b.name}.limit"))
    for key, value in b.set.items():
        out.append((key, value, f"{origin}: benchmarks.{b.name}.set.{key}"))
    # the grid's own fields last: a cell's trials, seed, name and place are the sweep's
    out += [("trials", s.trials, f"{origin}: trials"), ("seed", s.seed, f"{origin}: seed"),
            ("name", name, f"{origin}: cell name"),
            ("out", str(sweep.directory), f"{origin}: out")]
    return tuple(out)


def expand(sweep: Sweep) -> list[Cell]:
    """The grid's cells, row-major (models outer, benchmarks inner)."""
    cells = []
    for m in sweep.spec.models:
        for b in sweep.spec.benchmarks:
            name = f"{m.name}__{b.name}"
            cells.append(Cell(model=m.name, bench=b.name, name=name,
                              overrides=_cell_overrides(sweep, m, b, name)))
    return cells
