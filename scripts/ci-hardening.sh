#!/usr/bin/env bash
# The hardening job for CI (.ci/run calls it): the whole test suite under
# ASan + UBSan + LeakSanitizer, then every libFuzzer target for the seconds
# test/fuzz/plan.tsv gives it (FUZZ_SECONDS for a target it does not list).
# (sanitize.sh --fuzzers can build both in one clang tree; CI keeps the
# g++ sanitizer tree and fuzz.sh's own clang tree until that single tree has
# passed the whole suite.)
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
echo "== sanitizers (ASan + UBSan + LSan): scripts/sanitize.sh"
scripts/sanitize.sh -j 2 || status=1
t1=$(date +%s)
echo "== fuzzing: FUZZ_PLAN=test/fuzz/plan.tsv scripts/fuzz.sh $FUZZ_SECONDS"
# Two targets at a time on the 2 cores: each still runs its seconds.
FUZZ_PLAN=test/fuzz/plan.tsv FUZZ_JOBS="${FUZZ_JOBS:-2}" \
  scripts/fuzz.sh "$FUZZ_SECONDS" || status=1
t2=$(date +%s)
echo "== ci-hardening: sanitizers $((t1 - start)) s, fuzzing $((t2 - t1)) s," \
     "total $((t2 - start)) s; status $status"
exit $status
