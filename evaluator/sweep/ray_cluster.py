"""The sweep driver's Ray session: a private local cluster (`--ray local`) or a running one.

- `--ray local` starts a new single-node cluster of its own, bound to 127.0.0.1, whose session
  files live in a new temporary directory: it never joins a cluster that happens to run on the
  machine, never reads `RAY_ADDRESS` or a stale `/tmp/ray/ray_current_cluster`, and is removed
  with its directory when the sweep ends.
- `--ray auto` or an address joins a running cluster. Before Ray is asked, the address (for
  `auto`: `RAY_ADDRESS`, else the one `ray start` recorded) must accept a TCP connection, so a
  stopped cluster's address is one clear error at once instead of minutes of retries.
- Off a terminal, worker output forwarded to the driver carries no colour codes and is not
  deduplicated (`RAY_COLOR_PREFIX=0`, `RAY_DEDUP_LOGS=0`; set before Ray is imported, unless
  the environment sets them).
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

from evaluator.sweep.grid import SweepError

CONNECT_TIMEOUT_S = 5.0


def import_ray() -> Any:
    if not sys.stderr.isatty():
        os.environ.setdefault("RAY_COLOR_PREFIX", "0")
        os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    try:
        import ray
    except ImportError:
        raise SweepError("--ray needs the ray package: pip install 'agentsweep[cluster]' "
                         "(or pip install ray)") from None
    return ray


def recorded_address(address: str) -> tuple[str, str] | None:
    """(host:port, where it came from) that `ray.init(address)` would connect to over TCP, or
    None when it is not a plain address (a `ray://` client address, or nothing recorded)."""
    if address != "auto":
        return (address, "--ray") if "://" not in address else None
    env = os.environ.get("RAY_ADDRESS", "")
    if env:
        return (env, "RAY_ADDRESS") if "://" not in env else None
    try:
        from ray._private.utils import read_ray_address
    except ImportError:  # pragma: no cover - a Ray without it: let ray.init look
        return None
    found = read_ray_address()
    return (found, "the address `ray start` recorded in /tmp/ray") if found else None


def check_reachable(address: str) -> None:
    """A SweepError when the cluster address that `address` names does not answer."""
    target = recorded_address(address)
    if target is None:
        return
    addr, origin = target
    host, _, port = addr.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)),
                                      CONNECT_TIMEOUT_S):
            pass
    except ValueError:
        raise SweepError(f"--ray {address}: {addr!r} ({origin}) is not HOST:PORT") from None
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        stale = (" (a cluster that has stopped? `ray stop` clears the record)"
                 if address == "auto" else "")
        raise SweepError(f"--ray {address}: no Ray cluster answers at {addr} ({origin}): "
                         f"{why}{stale}; start one with `ray start --head`, or use --ray "
                         "local") from None


class RaySession:
    """`ray.init` for the sweep's driver; `close()` shuts it down (and removes a private
    cluster's directory)."""

    def __init__(self, ray: Any, address: str) -> None:
        self.ray = ray
        self.address = address
        self.private_dir: Path | None = None

    def open(self) -> RaySession:
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # a local cluster of our own
        kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True,
                              "logging_level": "warning"}
        if self.address == "local":
            # short: Ray's socket paths under it must stay within the OS limit (107 bytes)
            self.private_dir = Path(tempfile.mkdtemp(prefix="agsw-ray-", dir="/tmp"))
            try:
                self.ray.init(address="local", _node_ip_address="127.0.0.1",
                              _temp_dir=str(self.private_dir), **kw)
            except BaseException:
                self.close()
                raise
            return self
        check_reachable(self.address)
        try:
            self.ray.init(address=self.address, **kw)
        except ConnectionError as exc:
            raise SweepError(f"--ray {self.address}: no Ray cluster there ({exc}); start one "
                             "with `ray start --head` or use --ray local") from None
        return self

    def close(self) -> None:
        try:
            if self.ray.is_initialized():
                self.ray.shutdown()
        finally:
            if self.private_dir is not None:
                shutil.rmtree(self.private_dir, ignore_errors=True)
                self.private_dir = None


def alive_nodes(ray: Any) -> list[dict[str, Any]]:
    return [n for n in ray.nodes() if n.get("Alive")]
