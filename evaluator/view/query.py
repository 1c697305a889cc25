"""The episode list of one run: a table over the index (one row per unit), filtered, sorted
and paged with numpy, plus text search in the conversations and the progress figures.

Rows: the last record of each unit in `episodes.jsonl`, then units that only have a
`failures.jsonl` entry (termination `unfinished: infrastructure|error`).

Judgements are stored per trajectory (identical trials share them), so a row's judgements are
those with its trajectory hash, else those naming its unit. Its score follows the benchmarks'
judges (`JudgeSpec`, from the registry) from the latest judgement that is not an audit: a kind
marked `view_weighted` (TravelBench's rubric judge) shows score x its audit's score (the
meta-judge's rating / 5, when there is one) x (1 - tool errors / tool calls), as its scoring
does; any other kind's score as written. Verdict: pass when score >= the kind's
`pass_threshold`, else the run's success threshold; `judge error`; or `-` (not judged).
"failed" = not passed: verdict fail or judge error, termination agent_error /
context_overflow / unfinished, or an unjudged episode that did not end normally (a termination
no benchmark lists in `ok_terminations`).
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

HARD_FAIL_TERMS = ("agent_error", "context_overflow")
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


def _last_per_key(keys: np.ndarray) -> np.ndarray:
    """Indices of the last occurrence of each key, in file order."""
    if not len(keys):
        return np.zeros(0, np.int64)
    _, first_rev = np.unique(keys[::-1], return_index=True)
    return np.sort(len(keys) - 1 - first_rev)


def _count(keys: np.ndarray, want: np.ndarray) -> np.ndarray:
    uniq, counts = np.unique(keys, return_counts=True)
    pos = np.minimum(np.searchsorted(uniq, want), len(uniq) - 1)
    return np.where(uniq[pos] == want, counts[pos], 0)


def _latest(ju: dict[str, np.ndarray], sel: np.ndarray, by: str) -> tuple[np.ndarray, np.ndarray]:
    """(sorted group values, row of the latest judgement per group) among rows `sel`."""
    jr = np.nonzero(sel)[0]
    jr = jr[np.lexsort((jr, ju["created"][jr], ju[by][jr]))]
    keys = ju[by][jr]
    last = jr[np.r_[keys[1:] != keys[:-1], True]] if len(jr) else jr
    return ju[by][last], last


def _match(groups: np.ndarray, rows: np.ndarray, want: np.ndarray) -> np.ndarray:
    if not len(groups):
        return np.full(len(want), -1, np.int64)
    pos = np.minimum(np.searchsorted(groups, want), len(groups) - 1)
    return np.where(groups[pos] == want, rows[pos], -1)


def _pick(ju: dict[str, np.ndarray], sel: np.ndarray, thash: np.ndarray,
          key: np.ndarray) -> np.ndarray:
    """Per row, the latest selected judgement of its trajectory, else of its unit; or -1."""
    by_hash = _match(*_latest(ju, sel, "thash"), thash)
    return np.where(by_hash >= 0, by_hash, _match(*_latest(ju, sel, "key"), key))


class RunView:
    """One run as the viewer shows it: `refresh()`, `query()`, `rows()`, `progress()`."""

    def __init__(self, rid: str, run_dir: Path, label: str, *, threshold: float = 0.75,
                 total: int | None = None, persist: bool = True) -> None:
        self.rid, self.run_dir, self.label = rid, Path(run_dir), label
        self.threshold, self.total = threshold, total
        self.rules = ViewRules.from_registry()
        self.index = RunIndex(self.run_dir, persist=persist)
        self.v: dict[str, np.ndarray] = {}
        self._gen = -1
        self._checked = 0.0
        self._searches: OrderedDict[str, tuple[int, int, np.ndarray]] = OrderedDict()
        self._ranks: dict[str, np.ndarray] = {}
        self._sorted: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self.refresh(force=True)

    # ---- the table ---------------------------------------------------------------------
    def refresh(self, *, force: bool = False, min_interval: float = 0.5) -> None:
        now = time.monotonic()
        if not force and now - self._checked < min_interval:
            return
        self._checked = now
        self.index.refresh()
        if self.index.generation != self._gen:
            self._build()
            self._gen = self.index.generation

    @property
    def generation(self) -> int:
        return self._gen

    def _codes(self, names: tuple[str, ...]) -> list[int]:
        return [c for n in names if (c := self.index.lookup(n)) is not None]

    def _build(self) -> None:
        ix = self.index
        ep, fa = ix.cols["episodes"], ix.cols["failures"]
        er = _last_per_key(ep["key"])
        fr = _last_per_key(fa["key"])
        fr = fr[~np.isin(fa["key"][fr], ep["key"][er])]
        zf = np.zeros(len(fr))

        def cat(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return np.concatenate([a, b.astype(a.dtype)])

        v = {"src": cat(np.zeros(len(er), np.int8), np.ones(len(fr))), "idx": cat(er, fr)}
        for c in ("key", "utask", "task", "bench", "subset", "trial"):
            v[c] = cat(ep[c][er], fa[c][fr])
        unfinished = np.array([ix.code("unfinished: " + ix.strings[k]) for k in fa["kind"][fr]])
        v["term"] = cat(ep["term"][er], unfinished)
        v["tokens"] = cat(ep["ptok"][er] + ep["ctok"][er], zf)
        for c in ("ptok", "ctok", "cached", "tools", "terr", "hits", "dur", "retries"):
            v[c] = cat(ep[c][er], zf)
        v["fin"] = cat(ep["fin"][er], fa["at"][fr])
        v["thash"] = cat(ep["thash"][er], fa["key"][fr])
        v["serr"] = cat(ep["serr"][er], zf)
        self._judge(v)
        ok = np.isin(v["term"], self._codes(self.rules.ok_terminations))
        hard = np.isin(v["term"], self._codes(HARD_FAIL_TERMS)) | (v["src"] == 1)
        v["failed"] = hard | (v["verdict"] >= 2) | ((v["verdict"] == 0) & ~ok)
        self.v = v
        self._ranks, self._sorted = {}, {}

    def _judge(self, v: dict[str, np.ndarray]) -> None:
        ju = self.index.cols["judgements"]
        n = len(v["key"])
        v["score"], v["verdict"] = np.full(n, np.nan), np.zeros(n, np.int8)
        v["njudg"], v["judgement"] = np.zeros(n, np.int32), np.full(n, -1, np.int64)
        if not len(ju["key"]) or not n:
            return
        by_hash = _count(ju["thash"], v["thash"])
        v["njudg"] = np.where(by_hash > 0, by_hash, _count(ju["key"], v["key"])).astype(np.int32)
        rules = self.rules
        is_meta = np.isin(ju["kind"], self._codes(rules.audits))
        main = _pick(ju, ~is_meta, v["thash"], v["key"])
        meta = _pick(ju, is_meta, v["thash"], v["key"])
        has, m = main >= 0, np.maximum(main, 0)
        score, err, kind = ju["score"][m], ju["err"][m] == 1, ju["kind"][m]
        meta_score = ju["score"][np.maximum(meta, 0)]
        w_meta = np.where((meta >= 0) & ~np.isnan(meta_score), meta_score, 1.0)
        w_tool = np.where(v["tools"] > 0, 1.0 - v["serr"] / np.maximum(v["tools"], 1), 1.0)
        weighted = np.isin(kind, self._codes(rules.weighted))
        score = np.where(weighted, score * w_meta * w_tool, score)
        threshold = np.full(len(kind), self.threshold)
        for k, line in rules.thresholds.items():
            threshold = np.where(np.isin(kind, self._codes((k,))), line, threshold)
        verdict = np.where(err, 3, np.where(score >= threshold - 1e-12, 1, 2))
        v["score"] = np.where(has & ~err, score, np.nan)
        v["verdict"] = np.where(has, verdict, 0).astype(np.int8)
        v["judgement"] = main

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
        """The progress line's figures, from the files (rates over the last minute)."""
        v = self.v
        ep = v["src"] == 0
        done = int(ep.sum())
        now = time.time()
        recent = ep & (v["fin"] > now - 60)
        path = self.run_dir / FILES["episodes"]
        mtime = path.stat().st_mtime if path.exists() else 0.0
        p, c = int(v["ptok"].sum()), int(v["cached"].sum())
        calls, hits = int(v["tools"].sum()), int(v["hits"].sum())
        fig = {
            "done": done, "total": self.total, "unfinished": int((v["src"] == 1).sum()),
            "ep_per_s": round(float(recent.sum()) / 60, 2),
            "tok_per_s": round(float(v["ctok"][recent].sum()) / 60, 1),
            "prompt_cached": c / p if p else None, "tool_hits": hits / calls if calls else None,
            "infra_retries": int(v["retries"].sum()), "failed": int(v["failed"].sum()),
            "judged": int((v["verdict"] > 0).sum()), "bad_lines": self.index.bad,
            "updated_s_ago": round(now - mtime, 1) if mtime else None,
        }
        fig["live"] = bool(mtime and now - mtime < 60 and (self.total is None or done < self.total))

        def pct(x: float | None) -> str:
            return "-" if x is None else f"{x:.0%}"

        total = "?" if self.total is None else str(self.total)
        fig["line"] = " | ".join([
            f"{done}/{total} episodes", f"{fig['ep_per_s']:.1f} ep/s",
            f"{fig['tok_per_s']:.0f} tok/s", f"prompt cached {pct(fig['prompt_cached'])}",
            f"tool cache hits {pct(fig['tool_hits'])}",
            f"errors {fig['unfinished']} (infra retries {fig['infra_retries']})",
        ])
        return fig
