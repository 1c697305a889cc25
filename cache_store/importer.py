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
    src = Path(src_dir)
    if not src.is_dir():
        raise CacheImportError(f"{src}: not a directory")
    files = sorted(p for p in src.iterdir() if p.name.endswith(CACHE_SUFFIX) and p.is_file())
    if not files:
        raise CacheImportError(f"{src}: no *{CACHE_SUFFIX} files (expected the release layout)")
    return files


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
