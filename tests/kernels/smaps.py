"""Reading a process's memory maps (Linux /proc/PID/smaps) for the memory tests."""

from __future__ import annotations

from pathlib import Path


def mapping_kb(pid: int | str, path: Path) -> dict[str, int]:
    """Rss and Pss (kB) of every mapping of `path` in process `pid` (/proc/PID/smaps)."""
    out = {"Rss": 0, "Pss": 0, "Anonymous": 0}
    inside = False
    with open(f"/proc/{pid}/smaps", encoding="utf-8") as f:
        for line in f:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                inside = line.rstrip().endswith(str(path))
            elif inside and head and head[0].rstrip(":") in out:
                out[head[0].rstrip(":")] += int(head[1])
    return out


def anonymous_kb(pid: int | str = "self") -> int:
    with open(f"/proc/{pid}/smaps_rollup", encoding="utf-8") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("Anonymous:"))
