#!/usr/bin/env bash
# Builds and runs the whole test suite, printing each stage's time.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
scripts/build.sh
t1=$(date +%s)
echo "== test.sh: build $((t1 - t0)) s"
status=0
ctest --test-dir build --output-on-failure -j "$(nproc)" || status=$?
echo "== test.sh: ctest $(( $(date +%s) - t1 )) s"
exit $status
