"""A TRIP-Bench tool worker process: `python -m evaluator.benchmarks.tripbench.tool_worker FD`.

FD is this end of a stream socket pair whose other end the run's event loop reads
(`runner.ProcessRunner`). Each request is one frame, a 4-byte little-endian length and a
msgpack array `[call id, world path, tool name, arguments JSON, output]`; each answer is one
frame `[call id, content, error category, seconds]`, or `[call id, None, message, seconds]`
when the tool itself raised (a bug, reported to the caller). The worker opens each world it is
asked about once, read-only, and answers in order until the socket closes (the run ended or
died), then exits. Ctrl-C in the terminal is the run's to handle: the worker ignores SIGINT.
"""

from __future__ import annotations

import signal
import socket
import sys
import time

import msgspec

from .tools import execute
from .world.db import World, open_world

HEADER = 4


def frame(payload: bytes) -> bytes:
    return len(payload).to_bytes(HEADER, "little") + payload


def serve(sock: socket.socket) -> None:
    """Answer frames from `sock` until it closes."""
    reader = sock.makefile("rb", buffering=1 << 16)
    decode = msgspec.msgpack.Decoder().decode
    encode = msgspec.msgpack.Encoder().encode
    worlds: dict[str, World] = {}
    try:
        while True:
            head = reader.read(HEADER)
            if len(head) < HEADER:
                return
            size = int.from_bytes(head, "little")
            body = reader.read(size)
            if len(body) < size:
                return
            call_id, path, name, arguments, output = decode(body)
            t0 = time.perf_counter()
            try:
                world = worlds.get(path)
                if world is None:
                    world = worlds[path] = open_world(path)
                result = execute(world, name, arguments, output)
                answer = (call_id, result.content, result.category,
                          time.perf_counter() - t0)
            except Exception as exc:  # noqa: BLE001 - a tool's bug: the caller raises it
                answer = (call_id, None, f"{type(exc).__name__}: {exc}",
                          time.perf_counter() - t0)
            sock.sendall(frame(encode(answer)))
    except (BrokenPipeError, ConnectionResetError):
        return
    finally:
        for world in worlds.values():
            world.close()


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if len(argv) != 1 or not argv[0].isdigit():
        print("usage: python -m evaluator.benchmarks.tripbench.tool_worker FD", file=sys.stderr)
        return 2
    serve(socket.socket(fileno=int(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
