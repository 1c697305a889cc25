"""Print, one per line, the `uv pip install` arguments that give uv pip's package sources.

scripts/setup.sh installs with uv where it can (parallel downloads and unpacking: the
install part of a fresh setup took 2 min 14 s with pip and about 30 s with uv on a 2-core
machine). uv reads no pip configuration, so the sources a machine configured for pip (a
wheel folder in `find-links`, a mirror in `index-url`, extra indexes, a constraints file)
are handed on here, read from `pip config list` (files and PIP_* environment alike).
A `file://` index or local path that does not exist is left out: pip warns and ignores it,
uv would stop. Usage: python scripts/uv_args.py < <(pip config list)
"""

from __future__ import annotations

import ast
import os
import sys
from urllib.parse import urlparse

# pip option -> uv option; a value may hold several whitespace-separated entries.
OPTIONS = {
    "find-links": "--find-links",
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "constraint": "--constraints",
}
# pip's scopes from lowest to highest precedence: a later one replaces an earlier value.
SCOPES = ("global", "install", ":env:")


def parse(lines: list[str]) -> dict[str, list[str]]:
    """pip config list lines ("scope.key='value'") -> {key: entries}, by pip's precedence."""
    found: dict[tuple[int, str], list[str]] = {}
    for line in lines:
        name, sep, raw = line.strip().partition("=")
        if not sep:
            continue
        scope, _, key = name.rpartition(".")
        if scope not in SCOPES or key not in OPTIONS:
            continue
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw.strip("'\"")
        found[(SCOPES.index(scope), key)] = str(value).split()
    out: dict[str, list[str]] = {}
    for (_, key), entries in sorted(found.items()):
        out[key] = entries
    return out


def usable(entry: str) -> bool:
    """A local path or file:// address must exist; other addresses are left to uv."""
    url = urlparse(entry)
    if url.scheme in ("http", "https"):
        return True
    path = url.path if url.scheme == "file" else entry
    return os.path.exists(path)


def uv_args(lines: list[str]) -> list[str]:
    args: list[str] = []
    for key, entries in parse(lines).items():
        for entry in entries:
            if usable(entry):
                args += [OPTIONS[key], entry]
    if "--extra-index-url" in args:
        # pip picks the best version across all its indexes; uv by default takes a package
        # from the first index that has it, which could install an older release than pip.
        args += ["--index-strategy", "unsafe-best-match"]
    return args


def main() -> None:
    for arg in uv_args(sys.stdin.read().splitlines()):
        print(arg)


if __name__ == "__main__":
    main()
