"""A simulated serving engine behind `perf.stub_server` (measurements only; off by default).

    python -m perf.stub_server --kv-tokens 60000 --max-running 16 --prefill-us 40 \
        --decode-ms 2 --completion-tokens 16 --slowdown 3

What it models, per replica (one stub process):
* tokens: a request's prompt is its `messages`, each message one block of
  len(message JSON) / 4 tokens; a block's identity is the hash of all messages up to it, so two
  requests share a cached prefix exactly when their first k messages are byte-identical.
* prefix cache (vLLM's automatic prefix caching at message granularity): at admission the
  leading blocks already in the cache are hits (`cached_tokens` in the answer's usage,
  `vllm:prefix_cache_hits_total`); the others are computed and stay cached after the request,
  evicted least-recently-used when KV room is needed. Generated tokens are not cached.
* KV capacity (`--kv-tokens`, 0 = unlimited): blocks in use by running requests plus their
  generated tokens must fit; cached blocks not in use are evicted to make room. Requests are
  admitted first-come first-served (a request that does not fit blocks the queue).
* preemption: when a running request reaches decode and its generated tokens do not fit, the
  most recently admitted other running request is preempted (its blocks freed, counted in
  `vllm:num_preemptions_total`) and starts again from the queue's head.
* time: prefill `--prefill-us` per uncached prompt token, decode `--decode-ms` per generated
  token, both times `--slowdown`; `--max-running` batch slots (0 = unlimited).
`/metrics` reports running, waiting, KV usage (blocks in use / capacity), prefix queries and
hits (tokens), preemptions and `vllm:cache_config_info` (block_size 16, num_gpu_blocks).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import hashlib

import msgspec

BLOCK = 16


class EngineConfig(msgspec.Struct, frozen=True):
    kv_tokens: int = 0
    max_running: int = 0
    prefill_us: float = 0.0
    decode_ms: float = 0.0
    completion_tokens: int = 16
    slowdown: float = 1.0
    chars_per_token: float = 4.0

    @property
    def active(self) -> bool:
        return bool(self.kv_tokens or self.max_running or self.prefill_us or self.decode_ms
                    or self.slowdown != 1.0)


class _Messages(msgspec.Struct):
    messages: list[msgspec.Raw] = []


_DECODER = msgspec.json.Decoder(_Messages)


class _Seq:
    __slots__ = ("blocks", "grown", "hit", "pinned", "preempt", "prompt", "wake")

    def __init__(self, blocks: list[tuple[bytes, int]]) -> None:
        self.blocks = blocks
        self.prompt = sum(t for _, t in blocks)
        self.hit = 0
        self.grown = False
        self.pinned: list[bytes] = []
        self.wake: asyncio.Future[None] | None = None
        self.preempt: asyncio.Future[None] | None = None


class SimEngine:
    def __init__(self, cfg: EngineConfig) -> None:
        self.cfg = cfg
        self.blocks: dict[bytes, list[int]] = {}  # hash -> [tokens, refs]
        self.lru: collections.OrderedDict[bytes, None] = collections.OrderedDict()  # refs == 0
        self.stored = 0  # tokens in self.blocks
        self.in_use = 0  # tokens of blocks with refs > 0
        self.generated = 0  # decode tokens held by running requests
        self.running: list[_Seq] = []
        self.waiting: collections.deque[_Seq] = collections.deque()
        self.requests = 0
        self.prefix_queries = 0
        self.prefix_hits = 0
        self.preemptions = 0

    def split(self, raw: bytes) -> list[tuple[bytes, int]]:
        out, h = [], b""
        cpt = self.cfg.chars_per_token
        for m in _DECODER.decode(raw).messages:
            h = hashlib.blake2b(h + bytes(m), digest_size=16).digest()
            out.append((h, 1 + int(len(m) / cpt)))
        return out

    async def serve(self, raw: bytes) -> tuple[int, int, int]:
        """Run one request through the simulation: (prompt, cached, completion) tokens."""
        cfg = self.cfg
        seq = _Seq(self.split(raw))
        self.requests += 1
        self._enqueue(seq, front=False)
        try:
            while True:
                assert seq.wake is not None
                await seq.wake
                prefill = (seq.prompt - seq.hit) * cfg.prefill_us / 1e6 * cfg.slowdown
                if await self._run(seq, prefill):
                    continue  # preempted: back in the queue
                self._grow(seq)
                decode = cfg.completion_tokens * cfg.decode_ms / 1e3 * cfg.slowdown
                if await self._run(seq, decode):
                    continue
                return seq.prompt, seq.hit, cfg.completion_tokens
        finally:
            if seq in self.running:
                self.running.remove(seq)
                self._release(seq)
            elif seq in self.waiting:
                self.waiting.remove(seq)
            self._schedule()

    # -- scheduling ----------------------------------------------------------------------
    def _enqueue(self, seq: _Seq, *, front: bool) -> None:
        seq.wake = asyncio.get_running_loop().create_future()
        if front:
            self.waiting.appendleft(seq)
        else:
            self.waiting.append(seq)
            self._schedule()

    def _schedule(self) -> None:
        cap = self.cfg.max_running
        while self.waiting and not (cap and len(self.running) >= cap):
            seq = self.waiting[0]
            if not self._admit(seq):
                break
            self.waiting.popleft()
            self.running.append(seq)
            seq.preempt = asyncio.get_running_loop().create_future()
            assert seq.wake is not None
            if not seq.wake.done():
                seq.wake.set_result(None)

    async def _run(self, seq: _Seq, seconds: float) -> bool:
        """Spend `seconds` running; True if preempted meanwhile."""
        assert seq.preempt is not None
        if seconds > 0:
            await asyncio.wait((seq.preempt,), timeout=seconds)
        else:
            await asyncio.sleep(0)
        return seq.preempt.done()

    def _admit(self, seq: _Seq) -> bool:
        hit, prefix, need = 0, True, 0
        for h, t in seq.blocks:
            if h in self.blocks:
                if prefix:
                    hit += t
                self._pin(h)
                seq.pinned.append(h)
            else:
                prefix = False
                need += t
        if not self._room(need) and self.running:
            for h in seq.pinned:
                self._unpin(h)
            seq.pinned = []
            return False
        for h, t in seq.blocks:
            if h not in self.blocks:
                self.blocks[h] = [t, 0]
                self.stored += t
                self._pin(h)
                seq.pinned.append(h)
        seq.hit = hit
        self.prefix_queries += seq.prompt
        self.prefix_hits += hit
        return True

    def _grow(self, seq: _Seq) -> None:
        n = self.cfg.completion_tokens
        while not self._room(n):
            victims = [s for s in self.running if s is not seq]
            if not victims:
                break
            self._preempt(victims[-1])
        self.generated += n
        seq.grown = True

    def _preempt(self, victim: _Seq) -> None:
        self.running.remove(victim)
        self._release(victim)
        self.preemptions += 1
        assert victim.preempt is not None
        victim.preempt.set_result(None)
        self._enqueue(victim, front=True)

    def _release(self, seq: _Seq) -> None:
        for h in seq.pinned:
            self._unpin(h)
        seq.pinned = []
        if seq.grown:
            self.generated -= self.cfg.completion_tokens
            seq.grown = False

    # -- KV blocks -----------------------------------------------------------------------
    def _room(self, n: int) -> bool:
        cap = self.cfg.kv_tokens
        if not cap:
            return True
        while self.stored + self.generated + n > cap and self.lru:
            h, _ = self.lru.popitem(last=False)
            self.stored -= self.blocks.pop(h)[0]
        return self.stored + self.generated + n <= cap

    def _pin(self, h: bytes) -> None:
        b = self.blocks[h]
        b[1] += 1
        if b[1] == 1:
            self.lru.pop(h, None)
            self.in_use += b[0]

    def _unpin(self, h: bytes) -> None:
        b = self.blocks.get(h)
        if b is None:
            return
        b[1] -= 1
        if b[1] == 0:
            self.lru[h] = None
            self.in_use -= b[0]

    def reset_prefix_cache(self) -> bool:
        """vLLM's POST /reset_prefix_cache: drop the cached blocks no running request uses
        (vLLM refuses while requests run; here those blocks just stay)."""
        while self.lru:
            h, _ = self.lru.popitem(last=False)
            self.stored -= self.blocks.pop(h)[0]
        return True

    # -- /metrics ------------------------------------------------------------------------
    def metrics_text(self, model: str) -> str:
        cap = self.cfg.kv_tokens
        usage = (self.in_use + self.generated) / cap if cap else 0.0
        lab = f'engine="0",model_name="{model}"'
        blocks = cap // BLOCK if cap else 0
        return (
            f"vllm:num_requests_running{{{lab}}} {len(self.running)}.0\n"
            f"vllm:num_requests_waiting{{{lab}}} {len(self.waiting)}.0\n"
            f"vllm:kv_cache_usage_perc{{{lab}}} {min(1.0, usage):.6f}\n"
            f"vllm:prefix_cache_queries_total{{{lab}}} {self.prefix_queries}.0\n"
            f"vllm:prefix_cache_hits_total{{{lab}}} {self.prefix_hits}.0\n"
            f"vllm:num_preemptions_total{{{lab}}} {self.preemptions}.0\n"
            f"vllm:request_success_total{{{lab}}} {self.requests}.0\n"
            f'vllm:cache_config_info{{block_size="{BLOCK}",enable_prefix_caching="True",'
            f'num_gpu_blocks="{blocks}"}} 1.0\n'
        )


def add_engine_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("simulated engine (perf.stub_engine; all off by default)")
    g.add_argument("--kv-tokens", type=int, default=0, help="KV capacity in tokens (0: none)")
    g.add_argument("--max-running", type=int, default=0, help="batch slots (0: unlimited)")
    g.add_argument("--prefill-us", type=float, default=0.0, help="us per uncached prompt token")
    g.add_argument("--decode-ms", type=float, default=0.0, help="ms per generated token")
    g.add_argument("--completion-tokens", type=int, default=16)
    g.add_argument("--slowdown", type=float, default=1.0, help="multiplies prefill and decode")


def engine_from_args(a: argparse.Namespace) -> SimEngine | None:
    cfg = EngineConfig(a.kv_tokens, a.max_running, a.prefill_us, a.decode_ms,
                       a.completion_tokens, a.slowdown)
    return SimEngine(cfg) if cfg.active else None


_USAGE = msgspec.json.Decoder(dict)


def with_usage(body: bytes, prompt: int, cached: int, completion: int) -> bytes:
    """A completion body with the simulated usage in place of the canned one."""
    obj = _USAGE.decode(body)
    obj["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                    "prompt_tokens_details": {"cached_tokens": cached}}
    return msgspec.json.encode(obj)
