"""The episode list's table: one row per unit of a run, as numpy columns built from the index
(`query.RunView` filters, sorts and pages it; its module doc says what the rows and the
scores are)."""

from __future__ import annotations

import numpy as np

from evaluator.view.index import RunIndex
from evaluator.view.rules import ViewRules

HARD_FAIL_TERMS = ("agent_error", "context_overflow")


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


def _sum_by(keys: np.ndarray, values: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Per key in `want`, the sum of `values` over the rows with that key."""
    uniq, inv = np.unique(keys, return_inverse=True)
    sums = np.bincount(inv, weights=values.astype(np.float64), minlength=len(uniq))
    pos = np.minimum(np.searchsorted(uniq, want), len(uniq) - 1)
    return np.where(uniq[pos] == want, sums[pos], 0.0)


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


def _codes(ix: RunIndex, names: tuple[str, ...]) -> list[int]:
    return [c for n in names if (c := ix.lookup(n)) is not None]


def build_table(ix: RunIndex, rules: ViewRules, threshold: float, live: bool
            ) -> dict[str, np.ndarray]:
    """The list's columns, one row per unit (module doc of `query.py`); `live`: running
    units are `running` (else `interrupted`)."""
    ep, fa, jo = ix.cols["episodes"], ix.cols["failures"], ix.cols["journal"]
    er = _last_per_key(ep["key"])
    fr = _last_per_key(fa["key"])
    fr = fr[~np.isin(fa["key"][fr], ep["key"][er])]
    jr = _last_per_key(jo["key"])  # units with responses but no record: running
    jr = jr[~np.isin(jo["key"][jr], np.concatenate([ep["key"][er], fa["key"][fr]]))]
    zf, zj = np.zeros(len(fr)), np.zeros(len(jr))

    def cat(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return np.concatenate([a, b.astype(a.dtype), c.astype(a.dtype)])

    v = {"src": cat(np.zeros(len(er), np.int8), np.ones(len(fr)), np.full(len(jr), 2)),
         "idx": cat(er, fr, jr)}
    for c in ("key", "utask", "task", "bench", "subset", "trial"):
        v[c] = cat(ep[c][er], fa[c][fr], jo[c][jr])
    unfinished = np.array([ix.code("unfinished: " + ix.strings[k]) for k in fa["kind"][fr]])
    running = np.full(len(jr), ix.code("running" if live else "interrupted"))
    v["term"] = cat(ep["term"][er], unfinished, running)
    # a running unit: its responses so far (calls, tokens) from the journal
    calls = _count(jo["key"], jo["key"][jr]) if len(jr) else zj
    jtok = _sum_by(jo["key"], jo["ptok"] + jo["ctok"], jo["key"][jr]) if len(jr) else zj
    v["tokens"] = cat(ep["ptok"][er] + ep["ctok"][er], zf, jtok)
    v["ptok"] = cat(ep["ptok"][er], zf, _sum_by(jo["key"], jo["ptok"], jo["key"][jr])
                    if len(jr) else zj)
    v["ctok"] = cat(ep["ctok"][er], zf, _sum_by(jo["key"], jo["ctok"], jo["key"][jr])
                    if len(jr) else zj)
    for c in ("cached", "tools", "terr", "hits", "dur", "retries"):
        v[c] = cat(ep[c][er], zf, zj)
    v["calls"] = cat(np.zeros(len(er), np.int32), zf, calls)
    v["fin"] = cat(ep["fin"][er], fa["at"][fr], zj)
    v["start"] = cat(ep["start"][er], zf, zj)
    v["thash"] = cat(ep["thash"][er], fa["key"][fr], jo["key"][jr])
    v["serr"] = cat(ep["serr"][er], zf, zj)
    _judge(ix, rules, threshold, v)
    ok = np.isin(v["term"], _codes(ix, rules.ok_terminations))
    hard = np.isin(v["term"], _codes(ix, HARD_FAIL_TERMS)) | (v["src"] == 1)
    v["failed"] = (hard | (v["verdict"] >= 2) | ((v["verdict"] == 0) & ~ok)) & (v["src"] != 2)
    return v


def _judge(ix: RunIndex, rules: ViewRules, success_line: float, v: dict[str, np.ndarray]
           ) -> None:
    ju = ix.cols["judgements"]
    n = len(v["key"])
    v["score"], v["verdict"] = np.full(n, np.nan), np.zeros(n, np.int8)
    v["njudg"], v["judgement"] = np.zeros(n, np.int32), np.full(n, -1, np.int64)
    v["meta"] = np.full(n, -1, np.int64)
    if not len(ju["key"]) or not n:
        return
    by_hash = _count(ju["thash"], v["thash"])
    v["njudg"] = np.where(by_hash > 0, by_hash, _count(ju["key"], v["key"])).astype(np.int32)
    is_meta = np.isin(ju["kind"], _codes(ix, rules.audits))
    main = _pick(ju, ~is_meta, v["thash"], v["key"])
    meta = _pick(ju, is_meta, v["thash"], v["key"])
    has, m = main >= 0, np.maximum(main, 0)
    score, err, kind = ju["score"][m], ju["err"][m] == 1, ju["kind"][m]
    meta_score = ju["score"][np.maximum(meta, 0)]
    w_meta = np.where((meta >= 0) & ~np.isnan(meta_score), meta_score, 1.0)
    w_tool = np.where(v["tools"] > 0, 1.0 - v["serr"] / np.maximum(v["tools"], 1), 1.0)
    weighted = np.isin(kind, _codes(ix, rules.weighted))
    score = np.where(weighted, score * w_meta * w_tool, score)
    threshold = np.full(len(kind), success_line)
    for k, line in rules.thresholds.items():
        threshold = np.where(np.isin(kind, _codes(ix, (k,))), line, threshold)
    verdict = np.where(err, 3, np.where(score >= threshold - 1e-12, 1, 2))
    v["score"] = np.where(has & ~err, score, np.nan)
    v["verdict"] = np.where(has, verdict, 0).astype(np.int8)
    v["judgement"], v["meta"] = main, meta

