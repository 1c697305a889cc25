"""A byte-offset index of a run directory's JSON-lines files, kept next to the run.

One pass over `episodes.jsonl`, `judgements.jsonl`, `failures.jsonl` and the response journal
`journal.jsonl` records, per line, its byte offset and length plus the few small fields the
episode list shows and sorts on (unit, termination, token and tool-call counts, duration, the
trajectory hash judgements are keyed by; judge kind, score and error; a journaled response's
unit, role and tokens: the episodes still running). The columns are numpy arrays, strings are
codes into one string pool, and the whole index is saved as `RUN_DIR/.view/index.npz` (about
200 bytes per episode). Opening a run loads that file instead of decoding the records;
`refresh()` indexes only the bytes appended since (a live run; saved at most every
SAVE_EVERY_S), and indexes a file again from its start when it shrank or its head changed
(replaced: the journal is rewritten when a session starts and removed when a run ends).
Records themselves are read one at a time, by offset, when shown. `save_extra` / `load_extra`
keep derived tables next to the index, valid while the indexed files are unchanged.

A torn last line (no newline yet, or a killed writer) is not indexed until it is complete; an
undecodable complete line is skipped and counted in `bad`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from evaluator.view.lines import Failure, Journaled, JudgementLine

if TYPE_CHECKING:
    from evaluator.records import EpisodeRecord

INDEX_DIR = ".view"
INDEX_FILE = "index.npz"
FORMAT = 3
HEAD = 4096            # bytes of each file fingerprinted to notice a replaced file
CHUNK = 16 << 20       # read size while indexing: memory stays flat for any file size
SAVE_EVERY_S = 30.0
SOURCES = ("episodes", "judgements", "failures", "journal")
FILES = {"episodes": "episodes.jsonl", "judgements": "judgements.jsonl",
         "failures": "failures.jsonl", "journal": "journal.jsonl"}


I8, I4, F8 = np.int64, np.int32, np.float64
COLUMNS: dict[str, dict[str, Any]] = {
    "episodes": {"off": I8, "len": I8, "key": I8, "thash": I8, "utask": I4, "task": I4,
                 "bench": I4, "subset": I4, "term": I4, "trial": I4, "ptok": I8, "ctok": I8,
                 "cached": I8, "tools": I4, "terr": I4, "serr": I4, "hits": I4, "dur": F8,
                 "retries": I4, "fin": F8, "start": F8},
    "judgements": {"off": I8, "len": I8, "key": I8, "thash": I8, "kind": I4, "model": I4,
                   "score": F8, "err": np.int8, "created": F8},
    "failures": {"off": I8, "len": I8, "key": I8, "utask": I4, "task": I4, "bench": I4,
                 "subset": I4, "trial": I4, "kind": I4, "at": F8},
    "journal": {"off": I8, "len": I8, "key": I8, "utask": I4, "task": I4, "bench": I4,
                "subset": I4, "trial": I4, "call": I4, "role": I4, "ptok": I8, "ctok": I8},
}


def key_hash(key: str) -> int:
    """A stable 64-bit id of a unit key ("benchmark/subset/task_id#trial")."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little",
                          signed=True)


def hash_id(trajectory: str) -> int:
    """A 64-bit id of a trajectory hash (its first 16 hex digits; any other text hashed)."""
    try:
        return int.from_bytes(bytes.fromhex(trajectory[:16]), "little", signed=True)
    except ValueError:
        return key_hash("trajectory:" + trajectory)


def split_task(task: str) -> tuple[str, str, str]:
    bench, _, rest = task.partition("/")
    subset, _, task_id = rest.partition("/")
    return bench, subset, task_id or task


def scan(path: Path, start: int) -> Iterator[tuple[int, bytes]]:
    """(offset, line) of each complete line from byte `start`, read in CHUNK-sized pieces."""
    with path.open("rb") as fh:
        fh.seek(start)
        pos, carry = start, b""
        while True:
            block = fh.read(CHUNK)
            if not block:
                return
            data = carry + block
            begin = 0
            while (nl := data.find(b"\n", begin)) >= 0:
                yield pos + begin, data[begin:nl]
                begin = nl + 1
            pos += begin
            carry = data[begin:]


def _fingerprint(path: Path, size: int) -> str:
    with path.open("rb") as fh:
        return hashlib.sha1(fh.read(min(size, HEAD))).hexdigest()


class RunIndex:
    """The columns of one run directory; `refresh()` keeps them in step with the files."""

    def __init__(self, run_dir: Path, *, persist: bool = True) -> None:
        self.run_dir = Path(run_dir)
        self.persist = persist
        self.strings: list[str] = []
        self._code_map: dict[str, int] | None = {}   # built on first use after a load
        self.cols: dict[str, dict[str, np.ndarray]] = {}
        self.meta: dict[str, dict[str, Any]] = {}
        self.bad_by: dict[str, int] = {}
        self.generation = 0          # bumped whenever the indexed content changes
        self.rebuilds = 0            # bumped when episode rows were dropped and indexed again
        self.persist_error = ""
        self.loaded_from_disk = False
        self._on_disk = ""           # the file state the saved index describes
        self._disk_strings = 0       # strings in the saved index (later ones: derived tables')
        self._saved_at = -SAVE_EVERY_S
        self._reset()
        self._load()

    # ---- strings -----------------------------------------------------------------------
    @property
    def _codes(self) -> dict[str, int]:
        if self._code_map is None:  # a loaded index: most openings never need the map
            self._code_map = {t: i for i, t in enumerate(self.strings)}
        return self._code_map

    def code(self, text: str) -> int:
        c = self._codes.get(text)
        if c is None:
            c = self._codes[text] = len(self.strings)
            self.strings.append(text)
        return c

    def lookup(self, text: str) -> int | None:
        return self._codes.get(text)

    @property
    def bad(self) -> int:
        """Undecodable complete lines skipped, all files."""
        return sum(self.bad_by.values())

    # ---- building ----------------------------------------------------------------------
    def _reset(self) -> None:
        self.strings, self._code_map = [], {}
        self.cols, self.meta, self.bad_by = {}, {}, {}
        for s in SOURCES:
            self._reset_source(s)

    def _reset_source(self, source: str) -> None:
        """Drop one file's rows (the string pool keeps its strings: codes stay valid)."""
        self.cols[source] = {c: np.zeros(0, t) for c, t in COLUMNS[source].items()}
        self.meta[source] = {"size": 0, "head": ""}
        self.bad_by[source] = 0

    def _row_episode(self, off: int, line: bytes, r: EpisodeRecord,
                     trajectory_hash: Callable[[EpisodeRecord], str]) -> tuple:
        u = r.unit
        p = c = k = 0
        for usage in r.usage.values():
            p += usage.prompt_tokens
            c += usage.completion_tokens
            k += usage.cached_tokens
        terr = sum(1 for t in r.tool_calls if t.source == "error" or not t.valid)
        serr = sum(1 for t in r.tool_calls if t.source == "error")
        hits = sum(1 for t in r.tool_calls if t.source == "hit")
        dur = float(r.timings.get("total", r.finished_at - r.started_at) or 0.0)
        return (off, len(line), key_hash(u.key), hash_id(trajectory_hash(r)), self.code(u.task),
                self.code(r.task_id), self.code(r.benchmark), self.code(r.subset),
                self.code(r.termination), u.trial, p, c, k, len(r.tool_calls), terr, serr, hits,
                dur, r.infra_retries, r.finished_at, r.started_at)

    def _row_judgement(self, off: int, line: bytes, r: JudgementLine) -> tuple:
        score = float("nan") if r.score is None else float(r.score)
        err = 1 if (r.error or r.score is None) else 0
        return (off, len(line), key_hash(r.unit.key), hash_id(r.trajectory_hash),
                self.code(r.kind), self.code(r.judge_model), score, err, r.created_at)

    def _row_failure(self, off: int, line: bytes, r: Failure) -> tuple:
        bench, subset, task_id = split_task(r.unit.task)
        return (off, len(line), key_hash(r.unit.key), self.code(r.unit.task), self.code(task_id),
                self.code(bench), self.code(subset), r.unit.trial, self.code(r.kind), r.at)

    def _row_journal(self, off: int, line: bytes, r: Journaled) -> tuple:
        task, _, trial = r.u.rpartition("#")
        bench, subset, task_id = split_task(task)
        u = r.resp.usage
        return (off, len(line), key_hash(r.u), self.code(task), self.code(task_id),
                self.code(bench), self.code(subset), int(trial or 0), r.i, self.code(r.r),
                u.prompt_tokens, u.completion_tokens)

    def _parsers(self) -> dict[str, tuple[msgspec.json.Decoder, Callable[..., tuple]]]:
        from functools import partial

        from evaluator.judges.transcript import trajectory_hash
        from evaluator.records import EpisodeRecord

        return {"episodes": (msgspec.json.Decoder(EpisodeRecord),
                             partial(self._row_episode, trajectory_hash=trajectory_hash)),
                "judgements": (msgspec.json.Decoder(JudgementLine), self._row_judgement),
                "failures": (msgspec.json.Decoder(Failure), self._row_failure),
                "journal": (msgspec.json.Decoder(Journaled), self._row_journal)}

    def _extend(self, source: str, path: Path, start: int) -> int:
        """Index complete lines from byte `start`; return the offset after the last one."""
        from evaluator.run.results import UNDECODABLE

        decoder, row = self._parsers()[source]
        rows: list[tuple] = []
        end = start
        for off, line in scan(path, start):
            end = off + len(line) + 1
            if not line.strip():
                continue
            try:
                rows.append(row(off, line, decoder.decode(line)))
            except (*UNDECODABLE, ValueError):  # ValueError: a journal key without "#trial"
                self.bad_by[source] += 1
            if len(rows) >= 65536:
                self._append(source, rows)
                rows = []
        self._append(source, rows)
        return end

    def _append(self, source: str, rows: list[tuple]) -> None:
        if not rows:
            return
        cols = self.cols[source]
        for name, values in zip(COLUMNS[source], zip(*rows, strict=True), strict=True):
            cols[name] = np.concatenate([cols[name], np.asarray(values, cols[name].dtype)])

    def refresh(self) -> bool:
        """Bring the index up to date with the files; True when anything changed."""
        stats = {}
        for s in SOURCES:
            path = self.run_dir / FILES[s]
            stats[s] = path.stat().st_size if path.exists() else 0
        rebuild = False
        for s in SOURCES:
            m = self.meta[s]
            if stats[s] < m["size"] or (
                m["size"] and _fingerprint(self.run_dir / FILES[s], m["size"]) != m["head"]
            ):
                rebuild = True  # this file was replaced: index it again from its start
                self._reset_source(s)
                if s == "episodes":
                    self.rebuilds += 1
        changed = rebuild
        for s in SOURCES:
            m, path = self.meta[s], self.run_dir / FILES[s]
            if stats[s] <= m["size"]:
                continue
            end = self._extend(s, path, m["size"])
            if end != m["size"]:
                changed = True
                m["size"] = end
                m["head"] = _fingerprint(path, end)
        if changed:
            self.generation += 1
            # a live run grows the files every few seconds: save at most every SAVE_EVERY_S
            # (whatever is not saved is indexed again, incrementally, by the next opening)
            if rebuild or time.monotonic() - self._saved_at >= SAVE_EVERY_S:
                self._save()
        return changed

    # ---- persistence -------------------------------------------------------------------
    @property
    def index_path(self) -> Path:
        return self.run_dir / INDEX_DIR / INDEX_FILE

    def _save(self) -> None:
        if not self.persist:
            return
        self._saved_at = time.monotonic()
        meta = {"format": FORMAT, "sources": self.meta, "strings": self.strings,
                "bad": self.bad_by, "saved_at": time.time()}
        arrays = {f"{s}.{c}": a for s in SOURCES for c, a in self.cols[s].items()}
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
        path = self.index_path
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(exist_ok=True)
            with tmp.open("wb") as fh:
                np.savez(fh, **arrays)
            os.replace(tmp, path)
            self.persist_error = ""
            self._on_disk = json.dumps(self.meta, sort_keys=True)
            self._disk_strings = len(self.strings)
        except OSError as exc:  # a read-only run directory: keep the index in memory only
            self.persist_error = str(exc)
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)

    def _load(self) -> None:
        path = self.index_path
        if not self.persist or not path.exists():
            return
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(bytes(z["meta"]).decode())
                if meta.get("format") != FORMAT:
                    return
                cols = {s: {c: np.asarray(z[f"{s}.{c}"], t) for c, t in COLUMNS[s].items()}
                        for s in SOURCES}
        except (OSError, ValueError, KeyError, json.JSONDecodeError):
            return  # unreadable or from another version: rebuilt by refresh()
        self.cols, self.meta = cols, meta["sources"]
        self.strings = meta["strings"]
        self._code_map = None
        self.bad_by = {s: int(meta.get("bad", {}).get(s, 0)) for s in SOURCES}
        self._on_disk = json.dumps(self.meta, sort_keys=True)
        self._disk_strings = len(self.strings)
        self.loaded_from_disk = True
        self.generation += 1

    @property
    def in_sync(self) -> bool:
        """The saved index describes the files as indexed now (a live run saves it at most
        every SAVE_EVERY_S)."""
        return self.persist and self._on_disk == json.dumps(self.meta, sort_keys=True)

    # ---- derived tables ----------------------------------------------------------------
    def _extra_path(self, name: str) -> Path:
        return self.run_dir / INDEX_DIR / f"{name}.npz"

    def save_extra(self, name: str, info: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        """Keep `arrays` (with `info`) for this state of the files; quietly nothing when the
        run directory is read-only or the index is not persisted."""
        if not self.in_sync:  # not persisted, or a live run between two saves of the index
            return
        base = self._disk_strings  # strings added since the index was saved go with the table
        meta = {"format": FORMAT, "sources": self.meta, "strings": base,
                "more_strings": self.strings[base:], "info": info}
        path = self._extra_path(name)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(exist_ok=True)
            with tmp.open("wb") as fh:
                np.savez(fh, __meta__=np.frombuffer(json.dumps(meta).encode(), np.uint8),
                         **arrays)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)

    def load_extra(self, name: str) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
        """What `save_extra` kept, when it was saved for exactly the files indexed now."""
        path = self._extra_path(name)
        if not self.persist or not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(bytes(z["__meta__"]).decode())
                more = meta.get("more_strings") or []
                base = meta.get("strings")
                if (meta.get("format") != FORMAT or meta.get("sources") != self.meta
                        or not isinstance(base, int) or len(self.strings) < base
                        or self.strings[base:] != more[:len(self.strings) - base]):
                    return None
                arrays = {k: z[k] for k in z.files if k != "__meta__"}
        except (OSError, ValueError, KeyError, json.JSONDecodeError):
            return None
        for text in more[len(self.strings) - base:]:  # the table's own strings, same codes
            if self._code_map is not None:
                self._code_map[text] = len(self.strings)
            self.strings.append(text)
        return meta.get("info") or {}, arrays
