"""The response journal of a run: every model response of an unfinished unit, so that a
resumed run replays it instead of asking the model again.

One append-only file per run, `RUN_DIR/journal.jsonl`, written by one `ResultWriter` (no file
per unit). Each line is one model response of one unit, as it arrived:

    {"u": "bench/subset/task_1#0", "i": 3, "r": "user", "h": "<request hash>",
     "resp": {...ChatResponse...}}

`u` the unit key, `i` the call index within the unit's attempt, `r` the role (agent, user,
tool_simulator), `h` a hash of the request (role, model, messages, tools, tool_choice,
response_format, sampling), `resp` the response exactly as it arrived (encoded before the
protocol sees, and may edit, the message).

Reading it back (`read_journal`): a torn last line (kill -9 mid-write) is ignored; a unit's
entries are its lines in file order, where a line whose index `i` is not past the entries
read so far replaces them from `i` on (a new attempt starts again at 0; a replay that
diverged writes from the point where it diverged).

Replay (`UnitJournal`): on `--resume`, the first attempt of an unfinished unit gets its entries;
within a session, an attempt retried after an infrastructure error gets the entries of the
attempt that failed (what a resume would read back for it: the replayed ones it kept, then its
live ones), so a retry asks the model again only from the call that failed. An attempt holds
its live entries in memory until it ends (about the size of its responses' JSON).
A request whose hash matches an unconsumed entry is answered from it (entries of one hash in
order), without admission and without reaching the server. The first agent or user request
that matches none ends the replay: that call and everything after it are live, and the record
says where (`EpisodeRecord.replay.mismatch_at`). A tool-simulator request without an entry is
only a live call (the sandbox's own store may now answer the calls it answered then), and the
replay goes on. Live responses are journaled after the entries already there.

Compaction: `open_journal` rewrites the file when a session starts, keeping only the entries
of the units that will run (finished units' entries are dropped); `finish` removes the file
when a run ends with every unit recorded. Within a session the file grows by every response
of that session (less than the episodes those responses end up in).
"""

from __future__ import annotations

import contextvars
import hashlib
import os
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from backends.types import ChatMessage, ChatResponse
from evaluator.records import ReplayInfo
from evaluator.run.results import ResultWriter, scan_lines

JOURNAL_FILE = "journal.jsonl"
FSYNC_EVERY_S = 1.0  # with `fsync = true`: at most one fsync a second (and one at the end)
SIMULATOR = "tool_simulator"  # its misses do not end a replay (see the module doc)


class JournalEntry(msgspec.Struct):
    u: str                # unit key
    i: int                # call index within the unit's attempt
    r: str                # role
    h: str                # request hash
    resp: msgspec.Raw     # the ChatResponse as it arrived


_encoder = msgspec.json.Encoder()
_entry_decoder = msgspec.json.Decoder(JournalEntry)
_response_decoder = msgspec.json.Decoder(ChatResponse)

CURRENT: contextvars.ContextVar[UnitJournal | None] = contextvars.ContextVar(
    "agentsweep_unit_journal", default=None)
"""The journal of the episode running in this task (set by the run around the protocol), for
the callers that are shared by every episode: the tool simulator's client."""

_tools_digests: dict[int, tuple[Any, bytes]] = {}


def _tools_digest(tools: Any) -> bytes:
    """A digest of a tool list; the same list object is passed on every call of a run, so the
    digest is computed once per object (the object is kept, so its id is not reused)."""
    if tools is None:
        return b""
    if isinstance(tools, msgspec.Raw):
        return hashlib.sha256(bytes(tools)).digest()
    hit = _tools_digests.get(id(tools))
    if hit is not None and hit[0] is tools:
        return hit[1]
    digest = hashlib.sha256(_encoder.encode(tools)).digest()
    if len(_tools_digests) < 256:
        _tools_digests[id(tools)] = (tools, digest)
    return digest


def request_hash(role: str, model: str, messages: Sequence[ChatMessage], *, tools: Any = None,
                 tool_choice: Any = None, response_format: Any = None,
                 sampling: Any = None) -> str:
    """What identifies a request for replay: everything that decides the answer (not the
    session id, priority or headers). sha256: hardware-accelerated on current CPUs, about twice
    as fast as blake2b on a long conversation."""
    h = hashlib.sha256()
    h.update(_encoder.encode((role, model or "", tool_choice, response_format, sampling)))
    h.update(_tools_digest(tools))
    h.update(_encoder.encode(messages))
    return h.hexdigest()[:32]


def read_journal(path: str | Path, *, repair: bool = False) -> dict[str, list[JournalEntry]]:
    """Each unit's entries (module doc). A torn last line is skipped (and, with `repair`, cut
    off); an undecodable line elsewhere is skipped too: the journal only saves work, a lost
    entry costs a live call."""
    units: dict[str, list[JournalEntry]] = {}
    for _, line in scan_lines(path, repair=repair):
        try:
            e = _entry_decoder.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue
        entries = units.setdefault(e.u, [])
        if e.i <= len(entries):
            del entries[e.i:]
            entries.append(e)
    return units


def _write_atomically(path: Path, lines: Iterable[bytes]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.writelines(lines)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    try:
        fd = os.open(path.parent, os.O_RDONLY)
    except OSError:  # pragma: no cover - directories cannot be opened on some systems
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Journal:
    """The run's journal: the entries to replay (by unit) and the single writer of new ones."""

    def __init__(self, path: Path, pending: dict[str, list[JournalEntry]], writer: ResultWriter,
                 size_before: int, size_after: int) -> None:
        self.path = path
        self.pending = pending  # unit key -> entries, handed out once (first attempt)
        self.retries: dict[str, list[JournalEntry]] = {}  # a failed attempt's, for the next
        self.writer = writer
        self.units = len(pending)
        self.entries = sum(len(v) for v in pending.values())
        self.size_before = size_before  # bytes before this session's compaction
        self.size_after = size_after
        self.replayed = 0  # calls answered from the journal in this session
        self.mismatches = 0  # units whose replay ended at a differing request

    def for_unit(self, key: str) -> UnitJournal:
        """The journal of one attempt of a unit: its journaled entries on the first attempt of
        this session; on a retry, those of the attempt that failed (`keep_for_retry`)."""
        entries = self.pending.pop(key, None) or self.retries.pop(key, ())
        return UnitJournal(key, self, entries)

    def keep_for_retry(self, unit: UnitJournal) -> None:
        """A unit's attempt failed: keep its entries for the unit's next attempt."""
        entries = unit.entries_now()
        if entries:
            self.retries[unit.key] = entries

    def describe(self) -> str:
        """One line for the start of a resumed run ("" when there is nothing to replay)."""
        if not self.entries:
            return ""
        return (f"journal: {self.entries} model responses of {self.units} unfinished units "
                f"to replay ({_size(self.size_after)} after compaction, was "
                f"{_size(self.size_before)})")

    async def close(self, *, all_done: bool) -> None:
        """Stop the writer; remove the file when every unit of the run is recorded."""
        await self.writer.close()
        if all_done:
            self.path.unlink(missing_ok=True)


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def open_journal(run_dir: str | Path, keep: set[str], *, fsync: bool = True) -> Journal:
    """Start this session's journal: read RUN_DIR/journal.jsonl, keep the entries of the units
    in `keep` (those that will run), rewrite the file with them, start its writer (call inside
    the event loop)."""
    path = Path(run_dir) / JOURNAL_FILE
    size_before = path.stat().st_size if path.exists() else 0
    pending: dict[str, list[JournalEntry]] = {}
    if size_before:
        units = read_journal(path, repair=True)
        pending = {k: v for k, v in units.items() if k in keep and v}
        _write_atomically(path, (_encoder.encode(e) + b"\n"
                                 for entries in pending.values() for e in entries))
    size_after = path.stat().st_size if path.exists() else 0
    writer = ResultWriter(path, fsync=fsync, fsync_every_s=FSYNC_EVERY_S, repair=False).start()
    return Journal(path, pending, writer, size_before, size_after)


class UnitJournal:
    """The journal of one attempt of one unit: answers replayed requests, writes live ones."""

    __slots__ = ("_entries", "_journal", "_left", "_live_entries", "_pool", "_unused",
                 "_write_at", "by_role", "consumed", "key", "live", "mismatch_at")

    def __init__(self, key: str, journal: Journal, entries: Sequence[JournalEntry] = ()) -> None:
        self.key = key
        self._journal = journal
        self._entries = entries
        self._pool: dict[str, deque[int]] = {}  # request hash -> entry positions, in order
        for n, e in enumerate(entries):
            q = self._pool.get(e.h)
            if q is None:
                q = self._pool[e.h] = deque()
            q.append(n)
        self._unused = len(entries)
        self._left = sum(1 for e in entries if e.r != SIMULATOR)  # agent/user entries unused
        self._write_at = len(entries)  # index of the next live entry
        self._live_entries: list[JournalEntry] = []  # this attempt's, as written
        self.consumed = [False] * len(entries)
        self.by_role: dict[str, int] = {}  # replayed calls by role
        self.live = not entries
        self.mismatch_at: int | None = None

    def replay(self, role: str, request: str) -> ChatResponse | None:
        """The journaled response to this request, or None: ask the model (then `record`)."""
        if self.live:
            return None
        q = self._pool.get(request)
        if q:
            n = q.popleft()
            self.consumed[n] = True
            self._unused -= 1
            if role != SIMULATOR:
                self._left -= 1
            self.by_role[role] = self.by_role.get(role, 0) + 1
            self._journal.replayed += 1
            if not self._unused:
                self.live = True
            resp = _response_decoder.decode(self._entries[n].resp)
            resp.latency_s = 0.0
            resp.attempts = 0  # not sent
            return resp
        if role == SIMULATOR:
            return None
        self.live = True
        self._pool.clear()
        if self._left:
            # the conversation differs from the journaled one: live from here on; the entries
            # from the first agent/user one not replayed on are dropped when the journal is
            # read again (the live ones are written from there)
            self.mismatch_at = next(n for n, used in enumerate(self.consumed)
                                    if not used and self._entries[n].r != SIMULATOR)
            self._write_at = self.mismatch_at
            self._journal.mismatches += 1
        return None

    def record(self, role: str, request: str, response: ChatResponse) -> None:
        """Journal a live response (encoded now, before anyone edits its message)."""
        resp = _encoder.encode(response)
        line = b'{"u":%b,"i":%d,"r":%b,"h":"%b","resp":%b}\n' % (
            _encoder.encode(self.key), self._write_at, _encoder.encode(role),
            request.encode(), resp)
        self._live_entries.append(JournalEntry(self.key, self._write_at, role, request,
                                               msgspec.Raw(resp)))
        self._write_at += 1
        self._journal.writer.put_line(line)

    def entries_now(self) -> list[JournalEntry]:
        """The unit's entries as `read_journal` would read them back now: the journaled ones
        before the first live one, then the live ones."""
        first = self._live_entries[0].i if self._live_entries else len(self._entries)
        return [*self._entries[:first], *self._live_entries]

    def info(self) -> ReplayInfo | None:
        """What the record says about the replay (None: nothing was journaled for the unit)."""
        if not self._entries:
            return None
        return ReplayInfo(calls=sum(self.by_role.values()), journaled=len(self._entries),
                          by_role=dict(self.by_role), mismatch_at=self.mismatch_at)
