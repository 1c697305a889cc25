"""Validation helpers of TOML configs read into msgspec Structs: unknown keys at any depth,
errors located at file:line and field (or at the CLI flag that set the value), dotted overrides.
"""

from __future__ import annotations

import math
import re
import tomllib
from typing import Any

import msgspec

from evaluator import catalog


class ConfigError(ValueError):
    """A bad configuration: message names the file (or CLI flag), the line and the field."""


def plain(value: Any) -> Any:
    """A Struct tree as plain data with every field, defaults included (omit_defaults ignored)."""
    if isinstance(value, msgspec.Struct):
        return {f: plain(getattr(value, f)) for f in value.__struct_fields__}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def parse_override(item: str) -> tuple[str, Any]:
    """`key.path=value` -> (key.path, value); the value is read as TOML, else as a string."""
    key, sep, value = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"--set {item!r}: expected key.path=value")
    try:
        parsed = tomllib.loads(f"v = {value.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value.strip()
    return key, parsed


def set_dotted(raw: dict[str, Any], key: str, value: Any, origin: str) -> None:
    node = raw
    parts = key.split(".")
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"{origin}: `{key}`: `{part}` is not a table")
        node = child
    node[parts[-1]] = value


def _struct_fields(tp: Any) -> dict[str, Any] | None:
    """name -> field type of a msgspec Struct type, else None."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        info = msgspec.inspect.type_info(tp)
        return {f.encode_name: f for f in info.fields}  # type: ignore[attr-defined]
    return None


def check_unknown_keys(
    raw: Any,
    tp: type,
    source: str,
    text: str,
    origins: dict[str, str] | None = None,
    prefix: str = "",
) -> None:
    """Reject keys no field defines, at any depth (Endpoint/SamplingParams included)."""
    fields = _struct_fields(tp)
    if fields is None or not isinstance(raw, dict):
        return
    for key, value in raw.items():
        path = f"{prefix}{key}"
        field = fields.get(key)
        if field is None:
            known = ", ".join(sorted(fields))
            msg = f"unknown key `{path}` (known keys here: {known})"
            raise located(msg, source, text, origins or {}, path)
        sub = _inner_struct(field.type)
        if sub is not None:
            if isinstance(value, list):
                for i, item in enumerate(value):
                    check_unknown_keys(item, sub, source, text, origins, f"{path}[{i}].")
            else:
                check_unknown_keys(value, sub, source, text, origins, f"{path}.")


def _inner_struct(t: msgspec.inspect.Type) -> type | None:
    if isinstance(t, msgspec.inspect.StructType):
        return t.cls
    if isinstance(t, msgspec.inspect.ListType) and isinstance(t.item_type, msgspec.inspect.StructType):
        return t.item_type.cls
    return None


_PATH_RE = re.compile(r"at `\$\.?([^`]*)`")


def located(
    msg: str, source: str, text: str, origins: dict[str, str], path: str | None = None
) -> ConfigError:
    if path is None:
        m = _PATH_RE.search(msg)
        path = m.group(1) if m else ""
        msg = _PATH_RE.sub("", msg).rstrip(" -")
    first = re.match(r"((?:\w+\.)*\w+)(?:\[\d+\])?(?: must|:)", msg)
    named = ""
    if first:  # a value check names its own field, relative to `path` or from the top
        own = first.group(1)
        head = path.rsplit(".", 1)[-1]
        if path and own.startswith(head + "."):
            own = own[len(head) + 1:]
        named = f"{path}.{own}".strip(".")
    if first and (locate_line(text, named) or named in origins):
        path = named
    elif first and not path:
        path = first.group(1)
    dotted = re.sub(r"\[\d+\]", "", path)
    for key, origin in origins.items():
        if dotted and (dotted == key or dotted.startswith(key + ".")
                       or key.startswith(dotted + ".")):
            return ConfigError(f"{origin} ({key}): {msg}")
    line = locate_line(text, dotted) if dotted else 0
    where = f"{source}:{line}" if line else source
    field = f" field `{path}`:" if path else ""
    return ConfigError(f"{where}:{field} {msg}")


_HEADER_RE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY_RE = re.compile(r"^\s*([A-Za-z0-9_.\"' -]+?)\s*=")


def locate_line(text: str, dotted: str) -> int:
    """1-based line that defines `dotted` in TOML text (best effort; 0 = not found)."""
    table = ""
    best = 0
    for n, line in enumerate(text.splitlines(), 1):
        h = _HEADER_RE.match(line)
        if h:
            table = h.group(1).replace(" ", "").replace('"', "")
            if table == dotted and not best:
                best = n
            continue
        k = _KEY_RE.match(line)
        if not k:
            continue
        key = k.group(1).replace(" ", "").replace('"', "")
        full = f"{table}.{key}" if table else key
        if full == dotted:
            return n
        if dotted.startswith(full + ".") and not best:
            best = n  # an inline table or dotted parent that holds the field
    return best


def rename_aliases(raw: Any, aliases: dict[str, str], prefix: str = "",
                   where: str = "config") -> Any:
    """`raw` with every old key of `aliases` (dotted, old -> current) moved to its current key.
    `prefix`: the dotted path of `raw` itself (e.g. "judge." for the judge table). A table
    that sets both an old key and its current one is a ConfigError naming both."""
    if not isinstance(raw, dict):
        return raw
    for old, new in aliases.items():
        if not old.startswith(prefix) or not new.startswith(prefix):
            continue
        old_parts, new_parts = old[len(prefix):].split("."), new[len(prefix):].split(".")
        node = raw
        for part in old_parts[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict) or old_parts[-1] not in node:
            continue
        value = node.pop(old_parts[-1])
        target = raw
        for part in new_parts[:-1]:
            target = target.setdefault(part, {})
        if new_parts[-1] in target:
            raise ConfigError(f"{where}: both `{old}` (the old name) and `{new}` are set; "
                              f"keep `{new}`")
        target[new_parts[-1]] = value
    return raw


def benchmark_aliases(raw: dict[str, Any], overrides: list[tuple[str, Any, str]],
             source: str) -> dict[str, str]:
    """Every registered benchmark's old config keys, the config's own plugins loaded first."""
    benchmarks = catalog.current()

    plugins = [v for k, v, _ in overrides if k == "plugins"] or [raw.get("plugins", [])]
    try:
        for modules in plugins:
            if isinstance(modules, list):
                benchmarks.load_plugins(str(m) for m in modules)
    except benchmarks.BenchmarkError as exc:
        raise ConfigError(f"{source}: plugins: {exc}") from None
    return benchmarks.config_aliases()


def alias_key(key: str, aliases: dict[str, str]) -> str:
    """The current name of a dotted key (or of the table it is in)."""
    for old, new in aliases.items():
        if key == old or key.startswith(old + "."):
            return new + key[len(old):]
    return key


# ------------------------------------------------------------------ value bounds

_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an HTTP header name (RFC 9110 token)


def url_problem(url: str, *, embedded: bool = True) -> str:
    """"" when `url` is an http(s) URL with a host (or "embedded", where allowed), else what is
    wrong with it, worded to follow the field's name."""
    from urllib.parse import urlsplit

    want = ('must be "embedded" or an http(s) URL such as "http://host:8000/v1"' if embedded
            else 'must be an http(s) URL such as "http://host:8000/v1"')
    if embedded and url == "embedded":
        return ""
    if not url or any(c.isspace() or ord(c) < 32 for c in url):
        return f"{want}, got {url!r}"
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError for a port outside 0..65535
    except ValueError as exc:
        return f"{want}, got {url!r} ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname or port == 0:
        return f"{want}, got {url!r}"
    return ""


def check_base_url(field: str, url: str, *, embedded: bool = True) -> None:
    problem = url_problem(url, embedded=embedded)
    if problem:
        raise ValueError(f"{field} {problem}")


def check_headers(field: str, headers: dict[str, str]) -> None:
    """HTTP header names are tokens; values hold no line breaks or NUL (header injection)."""
    for name, value in headers.items():
        if not _TOKEN.match(name):
            raise ValueError(f"{field}: header name {name!r} is not a valid HTTP header name")
        if any(c in value for c in "\r\n\0"):
            raise ValueError(f"{field}: the value of header {name!r} holds a line break or NUL")


def check_tags(field: str, tags: list[str]) -> None:
    """Refusal tags are substrings searched in replies: an empty one matches every reply."""
    if not tags:
        raise ValueError(f"{field}: at least one tag is needed")
    for tag in tags:
        if not tag.strip():
            raise ValueError(f"{field}: a tag must not be empty or blank (it would match every "
                             f"reply), got {tag!r}")


def check_entry_format(field: str, spec: str) -> None:
    """A "module:function" reference ("" = off)."""
    module, sep, fn = spec.partition(":")
    if spec and (not sep or not module.strip() or not fn.strip() or ":" in fn):
        raise ValueError(f"{field}: expected 'module:function', got {spec!r}")


# `vllm serve` flags agentsweep sets itself and connects by: overriding them breaks the run
OWNED_ENGINE_ARGS = ("--host", "--port", "--model", "--served-model-name")


def check_extra_args(args: list[str]) -> None:
    for arg in args:
        flag = arg.split("=", 1)[0]
        if flag in OWNED_ENGINE_ARGS:
            raise ValueError(f"extra_args: {flag} is set by agentsweep (it connects to the "
                             f"engine by it); remove it (the model: engine.model)")


def check_output_dir(field: str, path: str) -> None:
    """`path` is a directory, or one that can be made: its nearest existing ancestor is a
    directory (a file on the way, e.g. /dev/null/x, is refused before anything starts)."""
    from pathlib import Path

    p = Path(path)
    for parent in (p, *p.parents):
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(f"{field} = {path!r}: {parent} is not a directory")
            return


MAX_INT64 = 2 ** 63 - 1
MAX_REPLICAS = 1024

MAX_TRIALS = 100_000
RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


def check_trials(trials: int) -> None:
    if trials < 1:
        raise ValueError(f"trials must be >= 1, got {trials}")
    if trials > MAX_TRIALS:
        raise ValueError(f"trials must be <= {MAX_TRIALS:,} (every (task, trial) unit is "
                         "planned in memory when the run starts; pass@k needs k <= trials, "
                         f"and k = {MAX_TRIALS:,} is far beyond any study), got {trials}")


def check_run_name(name: str) -> None:
    """A run name names a directory: 1-200 letters, digits, '.', '_', '-', starting with a
    letter or digit ("" = the generated default)."""
    if name and not RUN_NAME.match(name):
        raise ValueError(f"name must be 1-200 letters, digits, '.', '_' or '-', starting "
                         f"with a letter or digit (it names the run directory: no path "
                         f"separators, spaces or control characters), got {name!r}")


def non_finite(value: Any, path: str = "") -> tuple[str, float] | None:
    """(dotted field, value) of the first NaN or infinite float, or integer outside TOML's
    64-bit range, in a config tree, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if -MAX_INT64 - 1 <= value <= MAX_INT64 else (path, value)
    if isinstance(value, float):
        return None if math.isfinite(value) else (path, value)
    if isinstance(value, msgspec.Struct):
        items: Any = ((f"{path}.{f}".lstrip("."), getattr(value, f))
                      for f in value.__struct_fields__)
    elif isinstance(value, dict):
        items = ((f"{path}.{k}".lstrip("."), v) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for sub, item in items:
        found = non_finite(item, sub)
        if found is not None:
            return found
    return None
