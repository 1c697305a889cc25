"""`import_cache`: the release layout (one `<tool>_cache.json` per tool) -> one store file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from cache_store.keys import normalize_stored_key
from cache_store.store import CorruptStoreError, StoreHeader, StoreWriter, read_header

CACHE_SUFFIX = "_cache.json"


class CacheImportError(ValueError):
    """Malformed input: names the file and the position (line, column) or key."""


def source_files(src_dir: str | Path) -> list[Path]:
    """The `<tool>_cache.json` files of a release-layout directory. A name without a tool
    (`_cache.json`) or one that is not a regular file (a directory, a FIFO, a device) is a
    CacheImportError naming it: reading a FIFO would block, and skipping it would import a
    cache without that tool silently."""
    src = Path(src_dir)
    if not src.is_dir():
        raise CacheImportError(f"{src}: not a directory")
    files = sorted(p for p in src.iterdir() if p.name.endswith(CACHE_SUFFIX))
    for p in files:
        if p.name == CACHE_SUFFIX:
            raise CacheImportError(f"{p}: no tool name before {CACHE_SUFFIX!r} (expected "
                                   f"<tool>{CACHE_SUFFIX})")
        if not p.is_file():
            kind = "a directory" if p.is_dir() else "not a regular file (a FIFO or device?)"
            raise CacheImportError(f"{p}: {kind}; a tool cache is a JSON file")
    if not files:
        raise CacheImportError(f"{src}: no *{CACHE_SUFFIX} files (expected the release layout)")
    return files


def check_output(files: list[Path], src_dir: str | Path, out_store: str | Path) -> None:
    """Refuse an output path that would clobber an input or something that is not a store: a
    source file or the source directory itself, a new `*_cache.json` inside the source (the
    next import would read it as a tool), a directory, a path under a file, or an existing file
    that is not an agentsweep store."""
    from cache_store.store import MAGIC

    out, src = Path(out_store), Path(src_dir)
    where = f"--out {out}"
    if out.exists() and src.exists() and out.resolve() == src.resolve():
        raise CacheImportError(f"{where}: is the source directory; name a store file")
    for p in files:
        if out.exists() and out.resolve() == p.resolve():
            raise CacheImportError(f"{where}: is a source file; the import would overwrite "
                                   "its own input")
    if out.parent.resolve() == src.resolve() and out.name.endswith(CACHE_SUFFIX):
        raise CacheImportError(f"{where}: a *{CACHE_SUFFIX} name inside the source directory "
                               "would be read as a tool cache by the next import")
    if out.is_dir():
        raise CacheImportError(f"{where}: is a directory; name a store file")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise CacheImportError(f"{where}: {parent} is not a directory")
            break
    if out.exists():
        if not out.is_file():
            raise CacheImportError(f"{where}: exists and is not a regular file")
        with open(out, "rb") as f:
            head = f.read(len(MAGIC))
        if head != MAGIC:
            raise CacheImportError(f"{where}: exists and is not an agentsweep store; refusing to "
                                   "overwrite it (remove it or name another file)")


def _check_key(path: Path, i: int, key: str) -> None:
    """A stored key is a normalised call: a JSON array (the release's list form) or a JSON
    object (the intermediate form, normalised on import). Anything else no lookup can ever
    build, so it is a malformed source, not a cache entry."""
    try:
        parsed = json.loads(key)
    except (ValueError, RecursionError):
        parsed = None
    if not isinstance(parsed, (list, dict)):
        raise CacheImportError(f"{path}: entry {i} (key {key[:80]!r}): the key is not a "
                               "normalised call (a JSON array or object)")


def source_fingerprint(files: list[Path]) -> str:
    """Cheap identity of the source: names, sizes and mtimes (no file contents read)."""
    h = hashlib.sha256()
    for p in files:
        st = p.stat()
        h.update(f"{p.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def _load_tool_file(path: Path) -> tuple[dict, bytes]:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CacheImportError(f"{path}: not UTF-8 at byte {exc.start}: {exc.reason}") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CacheImportError(
            f"{path}: line {exc.lineno} column {exc.colno} (char {exc.pos}): {exc.msg}"
        ) from None
    except RecursionError:
        raise CacheImportError(f"{path}: JSON nested too deeply") from None
    if not isinstance(obj, dict):
        raise CacheImportError(f"{path}: top level is a JSON {type(obj).__name__}, expected an "
                               "object mapping normalised keys to response strings")
    return obj, data


def import_cache(src_dir: str | Path, out_store: str | Path, *, synthetic: bool | None = None,
                 label: str = "", force: bool = False) -> StoreHeader:
    """Import a release-layout cache directory into `out_store`; idempotent.

    If `out_store` exists and was built from a source with the same fingerprint (file names,
    sizes, mtimes), nothing is read and its header is returned. Keys are stored as the reference
    looks them up (a key in intermediate, object form is normalised; list keys are kept verbatim).
    A `SYNTHETIC` marker file in the source marks the store as synthetic.
    """
    files = source_files(src_dir)
    check_output(files, src_dir, out_store)
    fp = source_fingerprint(files)
    out = Path(out_store)
    if out.exists() and not force:
        try:
            header = read_header(out)
        except CorruptStoreError:
            header = None
        if header is not None and header.source_fingerprint == fp:
            return header
    if synthetic is None:
        synthetic = (Path(src_dir) / "SYNTHETIC").exists()
    out.parent.mkdir(parents=True, exist_ok=True)
    writer = StoreWriter(out)
    src_sha = hashlib.sha256()
    try:
        for path in files:
            tool = path.name[: -len(CACHE_SUFFIX)]
            obj, raw = _load_tool_file(path)
            src_sha.update(path.name.encode() + b"\0" + hashlib.sha256(raw).digest())
            del raw
            entries: dict[str, str] = {}
            for i, (key, value) in enumerate(obj.items()):
                if not isinstance(value, str):
                    raise CacheImportError(
                        f"{path}: entry {i} (key {key[:80]!r}): value is a JSON "
                        f"{type(value).__name__}, expected a string")
                _check_key(path, i, key)
                entries[normalize_stored_key(key) if key[:1] == "{" else key] = value
            del obj
            tid = writer.begin_tool(tool)
            for key, value in entries.items():
                writer.add(tid, key, value)
        return _finish(writer, fp, src_sha.hexdigest(), synthetic, label)
    except BaseException:
        writer.abort()
        raise


def _finish(writer: StoreWriter, fp: str, sha: str, synthetic: bool, label: str) -> StoreHeader:
    path = writer.finish(source_fingerprint=fp, source_sha256=sha, synthetic=synthetic, label=label)
    return read_header(path)
