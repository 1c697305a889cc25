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
LOCAL_ATTEMPTS = 3   # starts of a private cluster before giving up (see RaySession.open)


def import_ray() -> Any:
    if not sys.stderr.isatty():
        os.environ.setdefault("RAY_COLOR_PREFIX", "0")
        os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    try:
        import ray
    except ImportError:
        raise SweepError("--ray needs the ray package: bash scripts/setup.sh cluster "
                         "(or pip install 'agentsweep[cluster]')") from None
    return ray


def recorded_address(address: str) -> tuple[str, str] | None:
    """(host:port, where it came from) of the cluster that `ray.init(address)` connects to over
    TCP (Ray's own resolution: for `auto`, RAY_ADDRESS or the address `ray start` recorded; a
    local host name as this node's IP), or None when that is not a plain address (a `ray://`
    client address, or nothing recorded: `ray.init` says so itself)."""
    origin = "the address given"
    if address == "auto":
        env = os.environ.get("RAY_ADDRESS", "")
        origin = "RAY_ADDRESS" if env else f"the address `ray start` recorded in {_record()}"
    given = os.environ.get("RAY_ADDRESS", "") if address == "auto" else address
    if "://" in given:
        return None
    try:
        from ray._private.services import canonicalize_bootstrap_address

        found = canonicalize_bootstrap_address(address)
    except (ImportError, AttributeError):  # pragma: no cover - a Ray without it
        found = given or None
    except (ValueError, ConnectionError) as exc:
        raise SweepError(f"--ray {address}: {exc}") from None
    if not found:
        return None
    if given and found != given:
        origin += f" {given}, which Ray connects to as this node's address"
    return found, origin


def _record() -> str:
    """Where `ray start` records the address of the cluster it started."""
    try:
        from ray._common.utils import get_ray_address_file

        return str(get_ray_address_file(None))
    except (ImportError, AttributeError):  # pragma: no cover - another Ray layout
        return "/tmp/ray/ray_current_cluster"


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
            for attempt in range(1, LOCAL_ATTEMPTS + 1):
                # short: Ray's socket paths under it must stay within the OS limit (107 bytes)
                self.private_dir = Path(tempfile.mkdtemp(prefix="agsw-ray-", dir="/tmp"))
                try:
                    self.ray.init(address="local", _node_ip_address="127.0.0.1",
                                  _temp_dir=str(self.private_dir), **kw)
                    return self
                except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception
                    self.close()
                    # Ray gives a new node 30 s to register, fixed; a busy machine can miss it
                    if attempt == LOCAL_ATTEMPTS or "timed out during startup" not in str(exc):
                        raise SweepError(f"--ray local: the private Ray cluster did not start: "
                                         f"{exc}") from None
                    print(f"[sweep] the private Ray cluster was slow to start (a busy "
                          f"machine?); starting it again ({attempt + 1}/{LOCAL_ATTEMPTS})",
                          file=sys.stderr)
                except BaseException:
                    self.close()
                    raise
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
                _stop_processes_of(self.private_dir)  # what a failed start left running
                shutil.rmtree(self.private_dir, ignore_errors=True)
                self.private_dir = None


def _stop_processes_of(private_dir: Path) -> None:
    """Kill the processes of the private cluster whose session files are in `private_dir`
    (their command lines name it): after `ray.shutdown()` none are left, but a start that
    failed half-way leaves its GCS and raylet running."""
    import psutil

    mark = str(private_dir)
    found = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if p.pid != os.getpid() and any(mark in a for a in (p.info["cmdline"] or [])):
                p.kill()
                found.append(p)
        except psutil.Error:
            pass
    psutil.wait_procs(found, timeout=10)


def alive_nodes(ray: Any) -> list[dict[str, Any]]:
    return [n for n in ray.nodes() if n.get("Alive")]
