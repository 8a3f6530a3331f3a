#!/usr/bin/env bash
# The hardening job for CI (.ci/run calls it): the whole test suite under
# ASan + UBSan + LeakSanitizer, then every libFuzzer target for the seconds
# test/fuzz/plan.tsv gives it (FUZZ_SECONDS for a target it does not list).
# One instrumented tree serves both (docs/testing-and-hardening.md §7):
# sanitize.sh --fuzzers builds the suite and the fuzz targets with clang-14
# in build-asan/, and fuzz.sh runs the targets from there (FUZZ_BUILD), so
# no layer of the library is compiled twice.
# Fails on any test failure, sanitizer report or fuzzer finding.
#
#   scripts/ci-hardening.sh [FUZZ_SECONDS]     (default 60)
#
# Time on 2 cores (measured, builds from scratch included): see
# docs/testing-and-hardening.md §7. Installs clang-14 first if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS="${1:-60}"
start=$(date +%s)
# clang with its libFuzzer runtime: try to link an empty fuzz target.
probe_dir="$(mktemp -d)"
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' \
  > "$probe_dir/p.cc"
if ! { CXX_PROBE="$(command -v clang++-14 || command -v clang++)" &&
       "$CXX_PROBE" -fsanitize=fuzzer "$probe_dir/p.cc" -o "$probe_dir/p"; } \
     >/dev/null 2>&1; then
  scripts/setup-debian.sh --fuzz
fi
rm -rf "$probe_dir"
status=0
CLANG="$(command -v clang++-14 || command -v clang++)"
echo "== sanitizers (ASan + UBSan + LSan) and fuzz targets, one tree:" \
     "CXX=$CLANG scripts/sanitize.sh -j 2 --fuzzers"
CXX="$CLANG" scripts/sanitize.sh -j 2 --fuzzers || status=1
t1=$(date +%s)
echo "== fuzzing: FUZZ_BUILD=build-asan FUZZ_PLAN=test/fuzz/plan.tsv" \
     "scripts/fuzz.sh $FUZZ_SECONDS"
# Two targets at a time on the 2 cores: each still runs its seconds.
FUZZ_BUILD=build-asan FUZZ_CXX="$CLANG" FUZZ_PLAN=test/fuzz/plan.tsv \
  FUZZ_JOBS="${FUZZ_JOBS:-2}" scripts/fuzz.sh "$FUZZ_SECONDS" || status=1
t2=$(date +%s)
echo "== ci-hardening: sanitizers $((t1 - start)) s, fuzzing $((t2 - t1)) s," \
     "total $((t2 - start)) s; status $status"
exit $status
