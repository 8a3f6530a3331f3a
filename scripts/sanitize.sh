#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviorSanitizer into
# build-asan/ and runs the whole ctest suite with LeakSanitizer on.
#
#   scripts/sanitize.sh [-j N] [--fuzzers] [extra ctest args...]
#
# Compiler: $CXX if set, else g++ (clang++-14 works as well:
# CXX=clang++-14 scripts/sanitize.sh). --fuzzers builds the libFuzzer
# targets in the same tree (clang++-14 unless $CXX says otherwise), so that
# scripts/fuzz.sh can run them without a second build of the library
# (FUZZ_BUILD=build-asan scripts/fuzz.sh; scripts/ci-hardening.sh does). Before the suite runs, two canary
# programs prove that this environment really reports leaks and undefined
# behaviour (LeakSanitizer, for one, cannot run under ptrace): a pass below
# therefore means "no finding", not "sanitizer silently off".
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=2
if [ "${1:-}" = "-j" ]; then JOBS="$2"; shift 2; fi
FUZZERS=OFF
if [ "${1:-}" = "--fuzzers" ]; then
  FUZZERS=ON
  shift
  CXX="${CXX:-$(command -v clang++-14 || command -v clang++ || true)}"
fi
CXX="${CXX:-g++}"
BUILD=build-asan

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-}"

# --- canaries --------------------------------------------------------------
canary_dir="$(mktemp -d)"
trap 'rm -rf "$canary_dir"' EXIT
cat > "$canary_dir/leak.cc" <<'CC'
#include <cstdlib>
int main() { volatile void* p = std::malloc(77); p = nullptr; (void)p; return 0; }
CC
cat > "$canary_dir/ub.cc" <<'CC'
#include <climits>
int main(int argc, char**) { int x = INT_MAX; x += argc; return x == 0; }
CC
for c in leak ub; do
  "$CXX" -fsanitize=address,undefined -fno-sanitize-recover=undefined -g \
    "$canary_dir/$c.cc" -o "$canary_dir/$c"
  if "$canary_dir/$c" >"$canary_dir/$c.out" 2>&1; then
    echo "sanitize.sh: the $c canary was NOT reported; the sanitizer is not" \
         "active here, so a clean run would prove nothing" >&2
    cat "$canary_dir/$c.out" >&2
    exit 1
  fi
done
grep -q "LeakSanitizer: detected memory leaks" "$canary_dir/leak.out"
grep -q "runtime error: signed integer overflow" "$canary_dir/ub.out"
echo "sanitize.sh: canaries OK (LeakSanitizer and UBSan report with $CXX)"

# --- build + suite ---------------------------------------------------------
# DECOMPOSED_INSTALL=OFF drops install_downstream: the archives it installs
# are ASan-instrumented, so its plain downstream project cannot link them;
# the packaging is tested by the normal build.
# -O1 -g1 (line tables): enough for sanitizer stack traces, and cheaper to
# compile on 2 cores than RelWithDebInfo's -O2 -g. No NDEBUG: asserts stay
# on under the sanitizers.
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DCMAKE_CXX_COMPILER="$CXX" -DDECOMPOSED_SANITIZE=ON \
  -DDECOMPOSED_BUILD_BENCH=OFF -DDECOMPOSED_BUILD_FUZZERS="$FUZZERS" \
  -DDECOMPOSED_INSTALL=OFF >/dev/null
t0=$(date +%s)
cmake --build "$BUILD" -j "$JOBS"
t1=$(date +%s)
echo "sanitize.sh: build $((t1 - t0)) s"
# Every test binary inherits ASAN_OPTIONS/UBSAN_OPTIONS from here; the corpus
# runner knows (DECOMPOSED_SANITIZED) not to apply its ulimit -v run.
status=0
DECOMPOSED_SANITIZED=1 ctest --test-dir "$BUILD" --output-on-failure \
  -j "$JOBS" "$@" || status=$?
echo "sanitize.sh: suite $(( $(date +%s) - t1 )) s"
exit $status
