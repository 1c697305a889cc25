#!/usr/bin/env bash
# The test suite, after setup (scripts/test.sh runs this). With arguments: one pytest session
# over them. Without: every test in two pytest sessions side by side, so that the one embedded
# vLLM engine (one core; minutes to start on a CPU) starts and serves while the other core runs
# the rest. Session 1 (background, log printed at the end): the `integration` tests, which share
# that engine and so stay in one process. Session 2 (foreground): all other tests (unit,
# fault-injection, slow, browser) in their usual order in one process. Each session prints its
# 25 slowest tests; the exit status is the first failing session's.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${AGENTSWEEP_TEST_PYTHON:-.venv/bin/python}
if [ "$#" -gt 0 ]; then
  exec "$PY" -m pytest -q -rs --durations=25 "$@"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/agentsweep-tests.XXXXXX")
# its own --basetemp and no cache writes: nothing the two sessions write is shared
"$PY" -m pytest -q -rs --durations=25 -p no:cacheprovider --basetemp "$work/tmp" -m integration \
  >"$work/integration.log" 2>&1 &
engine_pid=$!
# a stopped script stops the engine session too (its SIGTERM hook stops the engine)
trap 'kill -TERM "$engine_pid" 2>/dev/null || true' INT TERM HUP
rest=0
"$PY" -m pytest -q -rs --durations=25 -m "not integration" || rest=$?
integ=0
wait "$engine_pid" || integ=$?
trap - INT TERM HUP
echo
echo "==================== integration tests (run alongside; exit $integ) ===================="
cat "$work/integration.log"
rm -rf "$work"
echo "[test] other tests: exit $rest; integration tests: exit $integ" >&2
if [ "$rest" != 0 ]; then exit "$rest"; fi
exit "$integ"
