"""Default-model conversion cache: marker, lock, interrupt safety, permissions."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from backends import model as model_mod
from backends.model import FORMAT_VERSION, MARKER, ensure_default_model, is_converted


class FakeConverter:
    def __init__(self, fail: bool = False, delay_s: float = 0.0) -> None:
        self.calls = 0
        self.fail = fail
        self.delay_s = delay_s
        self.lock = threading.Lock()

    def __call__(self, out: Path) -> None:
        with self.lock:
            self.calls += 1
        assert out.is_dir() and not any(out.iterdir())
        (out / "config.json").write_text('{"model_type": "llama"}')
        weights = out / "model.safetensors"
        weights.write_bytes(b"w" * 16)
        os.chmod(weights, 0o600)  # like writers that create private files
        time.sleep(self.delay_s)
        if self.fail:
            raise KeyboardInterrupt  # interrupted half way


def test_converts_once_then_reuses(tmp_path: Path) -> None:
    target = tmp_path / "models" / "smol-v9"
    conv = FakeConverter()
    assert ensure_default_model(target, converter=conv) == target
    assert ensure_default_model(target, converter=conv) == target
    assert conv.calls == 1
    assert is_converted(target)
    assert json.loads((target / MARKER).read_text()) == {"format_version": FORMAT_VERSION}
    assert (target / "config.json").is_file()


def test_result_is_readable_by_others(tmp_path: Path) -> None:
    target = ensure_default_model(tmp_path / "m", converter=FakeConverter())
    old = os.umask(0o022)
    os.umask(old)
    if old & 0o044:
        pytest.skip("umask hides group/other read bits anyway")
    assert stat.S_IMODE(target.stat().st_mode) & 0o055 == 0o055
    assert stat.S_IMODE((target / "model.safetensors").stat().st_mode) & 0o044 == 0o044


def test_interrupted_conversion_leaves_nothing_and_retries(tmp_path: Path) -> None:
    target = tmp_path / "m"
    with pytest.raises(KeyboardInterrupt):
        ensure_default_model(target, converter=FakeConverter(fail=True))
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir()] == [".m.lock"]
    conv = FakeConverter()
    ensure_default_model(target, converter=conv)
    assert conv.calls == 1 and is_converted(target)


def test_stale_temp_dir_from_killed_run_is_removed(tmp_path: Path) -> None:
    stale = tmp_path / ".m.tmp-abc123"
    stale.mkdir()
    (stale / "model.safetensors").write_bytes(b"half")
    ensure_default_model(tmp_path / "m", converter=FakeConverter())
    assert not stale.exists()


def test_old_format_is_reconverted(tmp_path: Path) -> None:
    target = tmp_path / "m"
    target.mkdir()
    (target / MARKER).write_text(json.dumps({"format_version": FORMAT_VERSION - 1}))
    (target / "leftover").write_text("old")
    conv = FakeConverter()
    ensure_default_model(target, converter=conv)
    assert conv.calls == 1 and not (target / "leftover").exists()
    (target / MARKER).write_text("not json")
    assert not is_converted(target)


def test_concurrent_callers_convert_once(tmp_path: Path) -> None:
    target = tmp_path / "m"
    conv = FakeConverter(delay_s=0.3)
    results: list[Path] = []
    threads = [
        threading.Thread(target=lambda: results.append(ensure_default_model(target,
                                                                             converter=conv)))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert conv.calls == 1 and results == [target] * 4


def test_default_dir_follows_agentsweep_home(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AGENTSWEEP_HOME", str(tmp_path))
    assert model_mod.default_model_dir() == (
        tmp_path / "models" / f"SmolLM2-135M-Instruct-v{FORMAT_VERSION}"
    )


def test_chat_template_is_packaged() -> None:
    text = model_mod.chat_template_path().read_text()
    assert "<tool_call>" in text and "<tool_response>" in text


def test_real_converted_model_is_loadable_layout() -> None:
    """The shared cache (converted once by ensure_default_model: `$AGENTSWEEP_HOME`, else
    ~/.cache/agentsweep, where setup.sh puts it) has what vLLM needs."""
    target = model_mod.default_model_dir()
    if not is_converted(target):
        pytest.skip(f"no converted default model at {target}")
    config = json.loads((target / "config.json").read_text())
    assert config["model_type"] == "llama" and config.get("dtype") == "bfloat16"
    assert "quantization_config" not in config
    assert (target / "model.safetensors").stat().st_size < 400_000_000  # bf16, not fp32
    tok = json.loads((target / "tokenizer_config.json").read_text())
    assert "<tool_call>" in tok.get("chat_template", (target / "chat_template.jinja").read_text())
