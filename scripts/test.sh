#!/usr/bin/env bash
# Set up, then run the whole test suite: unit, fault-injection, integration (one real embedded
# vLLM engine shared by the session) and the headless-browser report check; scripts/run_tests.sh
# runs the engine's tests beside the others.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "[test] installing Debian chromium for the report browser test" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "[test] chromium could not be installed; browser tests will be skipped" >&2
fi
.venv/bin/ruff check --no-cache backends bench_data cache_store evaluator kernels perf tests
.venv/bin/lint-imports --no-cache  # the import layers and cycles of .importlinter
exec bash scripts/run_tests.sh "$@"
