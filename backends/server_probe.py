"""Looking at a starting vLLM server from outside: does it answer (`/health`, and `/v1/models`
lists the served model), and is its process tree working (CPU seconds used so far)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

PROBE_TIMEOUT_S = 3.0


def get_json(url: str, timeout_s: float) -> object:
    with urllib.request.urlopen(url, timeout=timeout_s) as resp:
        return json.loads(resp.read())


def model_ids(base_url: str, timeout_s: float) -> list[str]:
    """The model ids `base_url/models` lists; ValueError when it is no OpenAI model list."""
    body = get_json(base_url + "/models", timeout_s)
    data = body.get("data") if isinstance(body, dict) else None
    if isinstance(data, list):
        return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]
    raise ValueError(f"{base_url}/models did not answer an OpenAI model list: {body!r:.200}")


def answers(root_url: str, base_url: str, served: str) -> bool:
    """True once `/health` answers 200 and `/v1/models` lists `served`."""
    try:
        with urllib.request.urlopen(root_url + "/health", timeout=PROBE_TIMEOUT_S) as resp:
            if resp.status != 200:
                return False
        return served in model_ids(base_url, PROBE_TIMEOUT_S)
    except (OSError, ValueError, urllib.error.URLError):
        return False


def tree_cpu_s(pid: int) -> float | None:
    """CPU seconds used so far by the process `pid` and its descendants (reaped children
    included); None when it cannot be read."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return None
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
        except psutil.Error:  # a process that just ended: its parent accounts for it
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total
