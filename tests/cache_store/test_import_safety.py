"""`agentsweep cache import` never overwrites an input, writes through a temporary file and a
rename, and refuses garbage keys, a file named `_cache.json` and special files with one line
naming the file."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from cache_store.importer import CacheImportError, import_cache
from cache_store.keys import normalize_call
from cache_store.store import CacheStore
from evaluator.cli import main

TIME = "2025-10-24 10:00"


def _digest(root: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def src(tmp_path: Path) -> Path:
    d = tmp_path / "src"
    d.mkdir()
    entries = {normalize_call({"query": q}, TIME): f"answer {q}" for q in ("a", "b", "c")}
    (d / "web_search_cache.json").write_text(json.dumps(entries), encoding="utf-8")
    return d


@pytest.mark.parametrize("where", ["source file", "source dir", "new cache file in source"])
def test_out_never_clobbers_the_source(src: Path, where: str) -> None:
    out = {"source file": src / "web_search_cache.json", "source dir": src,
           "new cache file in source": src / "store_cache.json"}[where]
    before = _digest(src)
    with pytest.raises(CacheImportError, match="--out"):
        import_cache(src, out)
    assert _digest(src) == before
    assert sorted(p.name for p in src.iterdir()) == ["web_search_cache.json"]  # no temp left


def test_an_existing_file_that_is_not_a_store_is_not_overwritten(src: Path,
                                                                  tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("precious\n")
    with pytest.raises(CacheImportError, match="not an agentsweep store"):
        import_cache(src, notes)
    assert notes.read_text() == "precious\n"


def test_a_store_is_replaced_by_rename_and_a_failed_import_leaves_the_old_one(
        src: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.store"
    import_cache(src, out)
    old_inode, old_bytes = out.stat().st_ino, out.read_bytes()
    (src / "web_search_cache.json").write_text(
        json.dumps({normalize_call({"query": "z"}, TIME): "new"}), encoding="utf-8")
    import_cache(src, out)
    assert out.stat().st_ino != old_inode  # a new file renamed over the old one
    with CacheStore(out) as store:
        assert store.get("web_search", normalize_call({"query": "z"}, TIME)) == "new"
    kept = out.read_bytes()
    (src / "zz_cache.json").write_text('{"a": ')  # the second tool file is malformed
    with pytest.raises(CacheImportError, match="zz_cache.json: line 1"):
        import_cache(src, out, force=True)
    assert out.read_bytes() == kept != old_bytes
    assert [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []


@pytest.mark.parametrize("key", ["not json", "", "123", '"text"', "null", "[1,", "\x00"])
def test_a_garbage_key_names_file_entry_and_key(src: Path, tmp_path: Path, key: str) -> None:
    good = json.loads((src / "web_search_cache.json").read_text())
    (src / "web_search_cache.json").write_text(json.dumps({**good, key: "v"}))
    with pytest.raises(CacheImportError, match=r"web_search_cache.json: entry 3 \(key .*not a "
                       r"normalised call"):
        import_cache(src, tmp_path / "s.store")
    assert not (tmp_path / "s.store").exists()


def test_a_file_named_only_cache_json_is_refused(src: Path, tmp_path: Path) -> None:
    (src / "_cache.json").write_text("{}")
    with pytest.raises(CacheImportError, match=r"_cache.json: no tool name"):
        import_cache(src, tmp_path / "s.store")


def test_a_fifo_or_directory_with_the_cache_suffix_is_refused(src: Path, tmp_path: Path) -> None:
    os.mkfifo(src / "x_cache.json")  # reading it would block forever
    with pytest.raises(CacheImportError, match=r"x_cache.json: not a regular file"):
        import_cache(src, tmp_path / "s.store")
    (src / "x_cache.json").unlink()
    (src / "y_cache.json").mkdir()
    with pytest.raises(CacheImportError, match=r"y_cache.json: a directory"):
        import_cache(src, tmp_path / "s.store")


def test_the_cli_says_one_line_and_exits_2(src: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = src / "web_search_cache.json"
    before = target.read_bytes()
    assert main(["cache", "import", str(src), "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agentsweep cache import: --out ") and err.count("\n") == 1
    assert "would overwrite its own input" in err and target.read_bytes() == before


def test_synth_never_writes_over_a_real_cache(src: Path, tmp_path: Path) -> None:
    from cache_store.synth import generate

    schemas = [{"type": "function", "function": {"name": "web_search", "parameters": {
        "type": "object", "properties": {"query": {"type": "string"}}}}}]
    before = _digest(src)
    with pytest.raises(ValueError, match="no SYNTHETIC marker"):
        generate(src, schemas, 5)
    assert _digest(src) == before
    fresh = tmp_path / "synthetic"
    assert generate(fresh, schemas, 5) == {"web_search": 5}
    assert generate(fresh, schemas, 5, seed=1) == {"web_search": 5}  # its own output: fine
    assert sorted(p.name for p in fresh.iterdir()) == ["SYNTHETIC", "web_search_cache.json"]
