"""The episode list of one run: a table over the index (one row per unit), filtered, sorted
and paged with numpy, plus text search in the conversations (figures: `stats.py`).

Rows: the last record of each unit in `episodes.jsonl`, then units that only have a
`failures.jsonl` entry (termination `unfinished: infrastructure|error`), then units with
responses in the run's response journal and neither (termination `running` while the run is
live, `interrupted` when it stopped: `--resume` runs them again).

Judgements are stored per trajectory (identical trials share them), so a row's judgements are
those with its trajectory hash, else those naming its unit. Its score follows the benchmarks'
judges (`JudgeSpec`, from the registry) from the latest judgement that is not an audit: a kind
marked `view_weighted` (TravelBench's rubric judge) shows score x its audit's score (the
meta-judge's rating / 5, when there is one) x (1 - tool errors / tool calls), as its scoring
does; any other kind's score as written. Verdict: pass when score >= the kind's
`pass_threshold`, else the run's success threshold; `judge error`; or `-` (not judged).
"failed" = not passed: verdict fail or judge error, termination agent_error /
context_overflow / unfinished, or an unjudged episode that did not end normally (a termination
no benchmark lists in `ok_terminations`); running and interrupted units are not.

The table is saved next to the index (`RunIndex.save_extra("table")`) with the rules it was
built with, so a run opened again shows its first page without building it or importing the
benchmarks; `check_rules()` compares those rules with the registry's afterwards and rebuilds
when they differ (the viewer calls it once its server is up).
"""

from __future__ import annotations

import math
import re
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from evaluator.view.index import FILES, RunIndex, key_hash
from evaluator.view.rules import ViewRules
from evaluator.view.table import build_table

LIVE_S = 60.0   # a run whose files changed this recently (and is not complete) is live
TABLE = "table"
VERDICTS = ("-", "pass", "fail", "judge error")
# list column -> view column; string columns hold codes into the index's string pool
STRING_COLUMNS = {"benchmark": "bench", "subset": "subset", "task": "task",
                  "termination": "term"}
NUMBER_COLUMNS = {"trial": "trial", "score": "score", "judgements": "njudg", "tokens": "tokens",
                  "tools": "tools", "tool_errors": "terr", "duration": "dur",
                  "retries": "retries", "finished": "fin"}
COLUMNS = ("#", *STRING_COLUMNS, "verdict", *NUMBER_COLUMNS)
SEARCH_CHUNK = 16 << 20
_NUM = re.compile(r"^\s*(>=|<=|!=|>|<|=)?\s*(-?[\d.eE+-]+|none|nan|-)\s*$")


class QueryError(ValueError):
    """A filter or sort the list cannot apply (answered with 400)."""


class RunView:
    """One run as the viewer shows it: `refresh()`, `query()`, `rows()`, `progress()`."""

    def __init__(self, rid: str, run_dir: Path, label: str, *, threshold: float = 0.75,
                 total: int | None = None, persist: bool = True,
                 rules: ViewRules | None = None) -> None:
        self.rid, self.run_dir, self.label = rid, Path(run_dir), label
        self.threshold, self.total = threshold, total
        self.rules = rules
        t0 = time.perf_counter()
        self.index = RunIndex(self.run_dir, persist=persist)
        self.v: dict[str, np.ndarray] = {}
        self._gen = -1
        self._builds = 0             # bumped by every new table (the page's generation)
        self._live = False
        self._checked = 0.0
        self._searches: OrderedDict[str, tuple[int, int, np.ndarray]] = OrderedDict()
        self._ranks: dict[str, np.ndarray] = {}
        self._sorted: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self.timings: dict[str, float] = {}   # seconds of the opening's steps (perf.viewer)
        self.index.refresh()
        t1 = time.perf_counter()
        self.timings["index"] = t1 - t0
        if not self._load_table():
            self._live = self.is_live()
            self.refresh(force=True)
        self.timings["table"] = time.perf_counter() - t1

    # ---- the table ---------------------------------------------------------------------
    def refresh(self, *, force: bool = False, min_interval: float = 0.5) -> None:
        now = time.monotonic()
        if not force and now - self._checked < min_interval:
            return
        self._checked = now
        self.index.refresh()
        live = self.is_live()
        if not self.v or self.index.generation != self._gen or live != self._live:
            self._live = live
            self._build()
            self._gen = self.index.generation
            self._save_table()

    @property
    def generation(self) -> int:
        return self._builds

    def is_live(self) -> bool:
        """The run's files changed in the last LIVE_S seconds and it is not complete."""
        now = time.time()
        for name in (FILES["episodes"], FILES["journal"], FILES["failures"]):
            try:
                if now - (self.run_dir / name).stat().st_mtime < LIVE_S:
                    break
            except OSError:
                continue
        else:
            return False
        if self.total is None:
            return True
        if self.v:
            done = int(np.count_nonzero(self.v["src"] == 0))
        else:  # before the table is built: the units the episodes file has
            done = len(np.unique(self.index.cols["episodes"]["key"]))
        return done < self.total

    def _rules(self) -> ViewRules:
        if self.rules is None:
            self.rules = ViewRules.from_registry()
        return self.rules

    def check_rules(self, fresh: ViewRules | None = None) -> bool:
        """Rebuild the table when the registry's rules differ from those it was built with
        (a saved table from before a benchmark changed); True when it did."""
        fresh = fresh or ViewRules.from_registry()
        if fresh == self.rules:
            return False
        self.rules = fresh
        self._build()
        self._save_table()
        return True

    def _table_key(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "live": self._live}

    def _save_table(self) -> None:
        self.index.save_extra(TABLE, {**self._table_key(), "rules": self._rules().as_dict()},
                              self.v)

    def _load_table(self) -> bool:
        """The saved table of exactly these files, threshold and liveness (its rules taken
        on trust until `check_rules`); False when there is none."""
        saved = self.index.load_extra(TABLE)
        if saved is None:
            return False
        info, arrays = saved
        rules = ViewRules.from_dict(info.get("rules"))
        if rules is None or (self.rules is not None and rules != self.rules):
            return False
        self.v = arrays  # liveness counts the table's episodes
        self._live = self.is_live()
        if {k: info.get(k) for k in self._table_key()} != self._table_key():
            self.v = {}
            return False
        self.rules = rules
        self._gen = self.index.generation
        self._builds += 1
        self._ranks, self._sorted = {}, {}
        return True

    def _build(self) -> None:
        self.v = build_table(self.index, self._rules(), self.threshold, self._live)
        self._builds += 1
        self._ranks, self._sorted = {}, {}

    # ---- filter / sort / page ----------------------------------------------------------
    def _string_mask(self, col: str, expr: str) -> np.ndarray:
        values = self.v[col]
        uniq = np.unique(values)
        expr = expr.strip()
        neg = expr.startswith("!")
        expr = expr[1:] if neg else expr
        exact = expr.startswith("=")
        needle = (expr[1:] if exact else expr).lower()
        names = [self.index.strings[c].lower() for c in uniq]
        keep = [c for c, t in zip(uniq, names, strict=True)
                if (t == needle if exact else needle in t)]
        mask = np.isin(values, np.asarray(keep, values.dtype))
        return ~mask if neg else mask

    def _number_mask(self, col: str, expr: str) -> np.ndarray:
        values = self.v[col].astype(np.float64)
        if ".." in expr:
            lo, _, hi = expr.partition("..")
            try:
                return (values >= float(lo or "-inf")) & (values <= float(hi or "inf"))
            except ValueError:
                raise QueryError(f"bad range for {col}: {expr!r}") from None
        m = _NUM.match(expr)
        if not m:
            raise QueryError(f"bad filter for {col}: {expr!r} (try >0.5, <=3, =2, 1..5, none)")
        op, num = m.group(1) or "=", m.group(2)
        if num in ("none", "nan", "-"):
            return np.isnan(values) if op == "=" else ~np.isnan(values)
        try:
            x = float(num)
        except ValueError:
            raise QueryError(f"bad number for {col}: {num!r}") from None
        return {">": values > x, ">=": values >= x, "<": values < x, "<=": values <= x,
                "=": values == x, "!=": values != x}[op]

    def mask(self, filters: dict[str, str], *, failed: bool = False, q: str = "") -> np.ndarray:
        n = len(self.v["key"])
        mask = np.ones(n, bool)
        if failed:
            mask &= self.v["failed"]
        for name, expr in filters.items():
            if not expr.strip():
                continue
            if name in STRING_COLUMNS:
                mask &= self._string_mask(STRING_COLUMNS[name], expr)
            elif name in NUMBER_COLUMNS:
                mask &= self._number_mask(NUMBER_COLUMNS[name], expr)
            elif name == "verdict":
                want = expr.strip().lstrip("=").lower()
                codes = [i for i, t in enumerate(VERDICTS) if want in t or (want in ("none", "")
                         and i == 0)]
                mask &= np.isin(self.v["verdict"], codes)
            else:
                raise QueryError(f"unknown column {name!r}; columns: {', '.join(COLUMNS)}")
        if q.strip():
            hits = self.search(q)
            mask &= (self.v["src"] == 0) & np.isin(self.v["idx"], hits)
        return mask

    def _rank(self, col: str) -> np.ndarray:
        if col not in self._ranks:
            values = self.v[col]
            uniq = np.unique(values)
            order = sorted(range(len(uniq)), key=lambda i: self.index.strings[uniq[i]].lower())
            rank_u = np.empty(len(uniq), np.int64)
            rank_u[order] = np.arange(len(uniq))
            self._ranks[col] = rank_u[np.searchsorted(uniq, values)] if len(uniq) else values
        return self._ranks[col]

    def query(self, *, filters: dict[str, str] | None = None, failed: bool = False, q: str = "",
              sort: str = "#", desc: bool = False) -> np.ndarray:
        """View positions of the matching rows in display order."""
        rows = np.nonzero(self.mask(filters or {}, failed=failed, q=q))[0]
        if sort in ("#", ""):
            return rows[::-1] if desc else rows
        if sort in STRING_COLUMNS:
            keys = self._rank(STRING_COLUMNS[sort])[rows]
        elif sort in NUMBER_COLUMNS:
            keys = self.v[NUMBER_COLUMNS[sort]][rows].astype(np.float64)
        elif sort == "verdict":
            keys = self.v["verdict"][rows].astype(np.float64)
        else:
            raise QueryError(f"cannot sort by {sort!r}; columns: {', '.join(COLUMNS)}")
        order = np.argsort(-keys if desc else keys, kind="stable")  # NaN (no score) last
        return rows[order]

    def unit_key(self, i: int) -> str:
        return f"{self.index.strings[self.v['utask'][i]]}#{int(self.v['trial'][i])}"

    def row(self, i: int) -> dict[str, Any]:
        v, s = self.v, self.index.strings
        score = float(v["score"][i])
        return {
            "#": int(i) + 1, "run": self.rid, "key": self.unit_key(i),
            "benchmark": s[v["bench"][i]], "subset": s[v["subset"][i]], "task": s[v["task"][i]],
            "trial": int(v["trial"][i]), "termination": s[v["term"][i]],
            "score": None if math.isnan(score) else round(score, 4),
            "verdict": VERDICTS[v["verdict"][i]], "judgements": int(v["njudg"][i]),
            "tokens": int(v["tokens"][i]), "tools": int(v["tools"][i]),
            "tool_errors": int(v["terr"][i]), "duration": round(float(v["dur"][i]), 3),
            "retries": int(v["retries"][i]), "finished": float(v["fin"][i]),
            "failed": bool(v["failed"][i]), "unfinished": bool(v["src"][i] == 1),
            "running": bool(v["src"][i] == 2),
        }

    def rows(self, positions: np.ndarray) -> list[dict[str, Any]]:
        return [self.row(int(i)) for i in positions]

    def find(self, key: str) -> int | None:
        hits = np.nonzero(self.v["key"] == key_hash(key))[0]
        return int(hits[-1]) if len(hits) else None

    def where(self, source: str, col: str, value: int) -> np.ndarray:
        """Rows of `source` ("view" or an index source) whose `col` equals `value`, in order;
        by binary search over a sorted copy made once per generation."""
        if (source, col) not in self._sorted:
            values = self.v[col] if source == "view" else self.index.cols[source][col]
            order = np.argsort(values, kind="stable")
            self._sorted[(source, col)] = (order, values[order])
        order, values = self._sorted[(source, col)]
        lo, hi = np.searchsorted(values, value, "left"), np.searchsorted(values, value, "right")
        return np.sort(order[lo:hi])

    def trials_of(self, i: int, limit: int = 500) -> list[int]:
        same = self.where("view", "utask", self.v["utask"][i])
        return [int(j) for j in same[np.argsort(self.v["trial"][same], kind="stable")][:limit]]

    def positions_of_task(self, task: str) -> list[int]:
        code = self.index.lookup(task)
        if code is None:
            return []
        same = self.where("view", "utask", code)
        return [int(j) for j in same[np.argsort(self.v["trial"][same], kind="stable")]]

    # ---- text search -------------------------------------------------------------------
    def search(self, q: str) -> np.ndarray:
        """Episode-file rows whose JSON line contains `q` (ASCII case-insensitive): the
        conversation, tool calls and results, final answer. Incremental for a growing file."""
        ep = self.index.cols["episodes"]
        offs, lens = ep["off"], ep["len"]
        rebuilds, start, found = self._searches.pop(q, (self.index.rebuilds, 0, np.zeros(0, int)))
        if rebuilds != self.index.rebuilds:
            start, found = 0, np.zeros(0, int)
        needle = msgspec.json.encode(q.strip())[1:-1].lower()
        hits: list[int] = []
        path = self.run_dir / FILES["episodes"]
        n = len(offs)
        if start < n:
            with path.open("rb") as fh:
                i = start
                while i < n:
                    j = max(i + 1, int(np.searchsorted(offs, offs[i] + SEARCH_CHUNK)))
                    base = int(offs[i])
                    fh.seek(base)
                    block = fh.read(int(offs[j - 1] + lens[j - 1]) - base).lower()
                    pos = block.find(needle)
                    while pos >= 0:
                        r = int(np.searchsorted(offs, base + pos, side="right")) - 1
                        hits.append(r)
                        if r + 1 >= j:
                            break
                        pos = block.find(needle, int(offs[r + 1]) - base)
                    i = j
        found = np.concatenate([found, np.asarray(hits, int)])
        self._searches[q] = (self.index.rebuilds, n, found)
        while len(self._searches) > 16:
            self._searches.popitem(last=False)
        return found

    # ---- records and progress ----------------------------------------------------------
    def read(self, source: str, row: int) -> bytes:
        cols = self.index.cols[source]
        with (self.run_dir / FILES[source]).open("rb") as fh:
            fh.seek(int(cols["off"][row]))
            return fh.read(int(cols["len"][row]))

    def progress(self) -> dict[str, Any]:
        from evaluator.view.stats import progress

        return progress(self)
