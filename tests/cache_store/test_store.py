"""Import, lookup, idempotence and corruption detection of the memory-mapped store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cache_store.importer import CacheImportError, import_cache
from cache_store.keys import normalize_call
from cache_store.store import CacheStore, CorruptStoreError, read_header

from .conftest import TIME


def test_import_and_lookup(release_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.store"
    header = import_cache(release_dir, out)
    assert header.n_entries == 6 and not header.synthetic
    with CacheStore(out) as store:
        assert store.get("weather_current_conditions",
                         normalize_call({"location": "上海市"}, TIME)) == "上海市: 晴, 20度"
        assert store.get("weather_current_conditions",
                         normalize_call({"location": "上海市"}, "2025-10-24 11:00")) is None
        # same key, other tool: no cross-tool hit
        assert store.get("travel_search_flights", normalize_call({"location": "上海市"}, TIME)) is None
        assert store.n_entries("weather_current_conditions") == 5
        keys = [k for k, _ in store.iter_entries("weather_current_conditions")]
        assert keys[0] == normalize_call({"location": "北京市"}, TIME)
        store.verify()


def test_reimport_is_idempotent_and_detects_change(release_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.store"
    import_cache(release_dir, out)
    mtime = out.stat().st_mtime_ns
    import_cache(release_dir, out)
    assert out.stat().st_mtime_ns == mtime  # nothing rewritten
    f = release_dir / "weather_current_conditions_cache.json"
    data = json.loads(f.read_text())
    data[normalize_call({"location": "南京市"}, TIME)] = "雨"
    f.write_text(json.dumps(data, ensure_ascii=False))
    assert import_cache(release_dir, out).n_entries == 7


def test_object_form_keys_are_normalised(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    inter = json.dumps({"time": TIME, "params": '{"location": "x"}'})
    (src / "web_search_cache.json").write_text(json.dumps({inter: "r"}))
    import_cache(src, tmp_path / "s")
    with CacheStore(tmp_path / "s") as store:
        assert store.get("web_search", normalize_call({"location": "x"}, TIME)) == "r"


def test_malformed_json_names_file_and_position(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "web_search_cache.json").write_text('{\n  "a": "b",\n  "c": oops\n}')
    with pytest.raises(CacheImportError, match=r"web_search_cache.json: line 3 column 8"):
        import_cache(src, tmp_path / "s")
    (src / "web_search_cache.json").write_text('{"a": {"not": "a string"}}')
    with pytest.raises(CacheImportError, match="expected a string"):
        import_cache(src, tmp_path / "s")
    assert not (tmp_path / "s").exists()


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def test_truncated_store_detected(release_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.store"
    import_cache(release_dir, out)
    out.write_bytes(out.read_bytes()[:-10])
    with pytest.raises(CorruptStoreError, match="truncated"):
        CacheStore(out)
    out.write_bytes(b"garbage")
    with pytest.raises(CorruptStoreError):
        CacheStore(out)


def test_corrupt_table_and_record_detected(release_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "c.store"
    import_cache(release_dir, out)
    raw = out.read_bytes()
    pristine = raw
    # a byte inside the hash table region (just before the header JSON)
    hdr_pos = raw.rindex(b'{"tools"')
    _flip(out, hdr_pos - 3)
    with pytest.raises(CorruptStoreError, match="table checksum"):
        CacheStore(out)
    # a byte inside a response value: detected on hit and by verify()
    out.write_bytes(pristine)
    pos = pristine.index("上海市: 晴".encode())
    _flip(out, pos + 2)
    with CacheStore(out) as store:
        with pytest.raises(CorruptStoreError, match="checksum"):
            store.get("weather_current_conditions", normalize_call({"location": "上海市"}, TIME))
        with pytest.raises(CorruptStoreError):
            store.verify()
    # the header itself
    out.write_bytes(pristine)
    _flip(out, hdr_pos + 5)
    with pytest.raises(CorruptStoreError, match="header"):
        read_header(out)
