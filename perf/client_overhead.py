"""Client overhead: `ChatClient` vs `openai.AsyncOpenAI` vs a raw socket baseline, side by side.

    python -m perf.client_overhead [--quick] [--stub-processes N] [--in-flight 1,100,1000]

All clients hit the same zero-latency stub (`perf.stub_server`, separate process(es)) at 1, 100
and 1,000 requests in flight. The raw baseline is a minimal keep-alive HTTP/1.1 client over
asyncio streams sending pre-encoded bytes: its latency is the floor the stub + kernel impose,
so "added" latency = client latency - raw latency at the same percentile and concurrency.
Stub CPU% (psutil, summed over stub processes; 100% = one core) shows whether the stub limits.
The last line printed is the throughput ratio at 1,000 in flight.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import msgspec
import psutil

from backends.client import ChatClient
from backends.types import ChatMessage, Endpoint, SamplingParams
from perf.stub_server import MODEL, start_stub

MESSAGES = [
    ChatMessage(role="system", content="You are a helpful travel agent."),
    ChatMessage(role="user", content="Find me a hotel in Lisbon for two nights."),
]
SAMPLING = SamplingParams(temperature=0.0, max_tokens=16)
FULL_COUNTS = {1: 2000, 100: 8000, 1000: 12000}
QUICK_COUNTS = {1: 100, 100: 500, 1000: 2000}

Call = Callable[[], Awaitable[object]]


class Result(msgspec.Struct):
    client: str
    in_flight: int
    requests: int
    wall_s: float
    rps: float
    p50_ms: float
    p99_ms: float
    client_cpu: float
    stub_cpu: float


class RawHTTP:
    """Baseline: one keep-alive connection per worker, pre-encoded request, Content-Length body."""

    def __init__(self, url: str) -> None:
        u = urlsplit(url)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 80
        body = msgspec.json.encode(
            {"model": MODEL, "messages": MESSAGES, "temperature": 0.0, "max_tokens": 16}
        )
        head = (
            f"POST {u.path}/chat/completions HTTP/1.1\r\nHost: {u.netloc}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        self.request = head.encode() + body
        self.free: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def call(self) -> bytes:
        if self.free:
            reader, writer = self.free.pop()
        else:
            reader, writer = await asyncio.open_connection(self.host, self.port)
        writer.write(self.request)
        head = await reader.readuntil(b"\r\n\r\n")
        i = head.lower().find(b"content-length:")
        n = int(head[i + 15 : head.find(b"\r\n", i)])
        body = await reader.readexactly(n)
        self.free.append((reader, writer))
        return body

    async def close(self) -> None:
        for _, w in self.free:
            w.close()
        self.free.clear()


async def run_load(call: Call, in_flight: int, total: int) -> tuple[list[float], float]:
    latencies: list[float] = []
    left = total

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            t0 = time.perf_counter()
            await call()
            latencies.append(time.perf_counter() - t0)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return latencies, time.perf_counter() - start


def pct(sorted_values: list[float], q: float) -> float:
    idx = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[idx]


async def measure(
    name: str, call: Call, in_flight: int, total: int, stub_procs: list[psutil.Process]
) -> Result:
    await run_load(call, in_flight, min(total, max(in_flight, 50)))  # warm connections
    me = psutil.Process()
    c0 = me.cpu_times()
    s0 = [p.cpu_times() for p in stub_procs]
    lat, wall = await run_load(call, in_flight, total)
    c1 = me.cpu_times()
    s1 = [p.cpu_times() for p in stub_procs]
    stub_cpu = sum((b.user + b.system) - (a.user + a.system) for a, b in zip(s0, s1, strict=True))
    lat.sort()
    return Result(
        client=name,
        in_flight=in_flight,
        requests=total,
        wall_s=wall,
        rps=total / wall,
        p50_ms=pct(lat, 0.50) * 1e3,
        p99_ms=pct(lat, 0.99) * 1e3,
        client_cpu=100 * ((c1.user + c1.system) - (c0.user + c0.system)) / wall,
        stub_cpu=100 * stub_cpu / wall,
    )


async def bench(url: str, counts: dict[int, int], stub_pids: list[int]) -> list[Result]:
    from openai import AsyncOpenAI

    stub_procs = [psutil.Process(pid) for pid in stub_pids]
    results: list[Result] = []
    for in_flight, total in counts.items():
        raw = RawHTTP(url)
        chat = ChatClient(Endpoint(base_url=url, model=MODEL, max_retries=0))
        # the openai package as users run it: its default httpx pool (1000 connections, 100
        # kept alive). A 4096-connection httpx pool measured slower (httpcore's pool scales badly).
        oai = AsyncOpenAI(base_url=url, api_key="unused", max_retries=0)

        async def call_chat(chat: ChatClient = chat) -> object:
            return await chat.chat(MESSAGES, sampling=SAMPLING)

        async def call_oai(oai: AsyncOpenAI = oai) -> object:
            return await oai.chat.completions.create(
                model=MODEL,
                messages=[{"role": m.role, "content": m.content or ""} for m in MESSAGES],  # type: ignore[misc]
                temperature=0.0,
                max_tokens=16,
            )

        try:
            for name, call in (
                ("raw", raw.call),
                ("ChatClient", call_chat),
                ("AsyncOpenAI", call_oai),
            ):
                results.append(await measure(name, call, in_flight, total, stub_procs))
        finally:
            await raw.close()
            await chat.close()
            await oai.close()
    return results


def print_table(results: list[Result]) -> None:
    base = {r.in_flight: r for r in results if r.client == "raw"}
    cols = "in_flight  client        requests    req/s   p50 ms   p99 ms  +p50 ms  +p99 ms  cpu%  stub cpu%"
    print(cols)
    print("-" * len(cols))
    for r in results:
        b = base[r.in_flight]
        print(
            f"{r.in_flight:>9}  {r.client:<12}  {r.requests:>8}  {r.rps:>7.0f}  {r.p50_ms:>7.2f}  "
            f"{r.p99_ms:>7.2f}  {r.p50_ms - b.p50_ms:>7.2f}  {r.p99_ms - b.p99_ms:>7.2f}  "
            f"{r.client_cpu:>4.0f}  {r.stub_cpu:>9.0f}"
        )
    print("(+p50/+p99: client-added latency = client latency - raw baseline at the same load;")
    print(" cpu% 100 = one core; the client process runs one event loop, so ~100% = client-bound)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m perf.client_overhead", description=__doc__)
    p.add_argument("--quick", action="store_true", help="small request counts (CI smoke)")
    p.add_argument("--stub-processes", type=int, default=1, help="stub processes (SO_REUSEPORT)")
    p.add_argument("--in-flight", default="1,100,1000", help="comma-separated concurrency levels")
    a = p.parse_args(argv)
    table = QUICK_COUNTS if a.quick else FULL_COUNTS
    levels = [int(x) for x in a.in_flight.split(",")]
    counts = {c: table.get(c, max(10 * c, 200 if a.quick else 2000)) for c in levels}
    import uvloop

    with start_stub(processes=a.stub_processes) as stub:
        print(
            f"stub: {stub.url} ({a.stub_processes} process(es)); client pid {os.getpid()}; "
            f"{psutil.cpu_count()} CPUs"
        )
        results = uvloop.run(bench(stub.url, counts, stub.pids))
    print_table(results)
    by = {(r.client, r.in_flight): r for r in results}
    top = max(levels)
    ratio = by[("ChatClient", top)].rps / by[("AsyncOpenAI", top)].rps
    if len(levels) > 1:
        ratios = ", ".join(
            f"{c}: {by[('ChatClient', c)].rps / by[('AsyncOpenAI', c)].rps:.2f}x" for c in levels
        )
        print(f"throughput ratio per in-flight level: {ratios}")
    print(f"throughput ratio at {top} in flight (ChatClient / AsyncOpenAI): {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
