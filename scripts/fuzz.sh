#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined)
# into build-fuzz/ and runs every target for SECONDS seconds each, starting
# from its committed seed corpus test/fuzz/corpus/<target>/.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      (default 60 s, all targets)
#
# Exit status: 0 when no target found anything; 1 when any target crashed,
# failed a check, leaked, hung (> 10 s on one input), or allocated more than
# 128 MiB at once / 1 GiB in total (declared sizes must never be allocated).
# Reproducers go to build-fuzz/findings/<target>/; the table of executions
# per target goes to build-fuzz/fuzz-report.tsv (and stdout).
# New inputs the fuzzer finds go to build-fuzz/corpus/<target>/, not into
# the committed seeds. CXX defaults to clang++-14, then clang++.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-60}"
shift || true
CXX="${FUZZ_CXX:-$(command -v clang++-14 || command -v clang++ || true)}"
if [ -z "$CXX" ]; then
  echo "fuzz.sh: clang++ not found (scripts/setup-debian.sh --fuzz installs it)" >&2
  exit 1
fi
BUILD=build-fuzz
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER="$CXX" -DDECOMPOSED_BUILD_FUZZERS=ON \
  -DDECOMPOSED_BUILD_TESTS=OFF -DDECOMPOSED_BUILD_BENCH=OFF \
  -DDECOMPOSED_INSTALL=OFF >/dev/null
cmake --build "$BUILD" -j 2 --target fuzzers

if [ $# -gt 0 ]; then
  TARGETS=("$@")
else
  TARGETS=()
  for f in test/fuzz/*_fuzz.cc; do TARGETS+=("$(basename "$f" .cc)"); done
fi
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
REPORT="$BUILD/fuzz-report.tsv"
printf "target\tseconds\texecutions\texec_per_s\tcorpus\tresult\n" > "$REPORT"
failed=0
for t in "${TARGETS[@]}"; do
  name="${t%_fuzz}"
  if [ ! -x "$BUILD/bin/${name}_fuzz" ]; then
    # A target for an API that has not landed yet (its "fuzz-requires:"
    # header is missing): listed, not silently dropped.
    need=$(sed -n '1s|^// fuzz-requires: ||p' "test/fuzz/${name}_fuzz.cc")
    printf "%s\t-\t-\t-\t-\tNOT BUILT (needs %s)\n" "$name" "${need:-?}" >> "$REPORT"
    continue
  fi
  seeds="test/fuzz/corpus/$name"
  work="$BUILD/corpus/$name"
  findings="$BUILD/findings/$name"
  mkdir -p "$work" "$findings"
  log="$BUILD/fuzz-$name.log"
  set +e
  "$BUILD/bin/${name}_fuzz" -max_total_time="$SECONDS_EACH" \
    -print_final_stats=1 -timeout=10 -rss_limit_mb=1024 \
    -malloc_limit_mb=128 -artifact_prefix="$findings/" \
    "$work" "$seeds" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -m1 '^stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
  rate=$(grep -m1 '^stat::average_exec_per_sec' "$log" | awk '{print $2}' || true)
  corpus=$(ls "$work" | wc -l)
  if [ $rc -eq 0 ]; then result=ok; else result="FINDING (rc=$rc)"; failed=1; fi
  printf "%s\t%s\t%s\t%s\t%s\t%s\n" "$name" "$SECONDS_EACH" "${execs:-?}" \
    "${rate:-?}" "$corpus" "$result" >> "$REPORT"
  if [ $rc -ne 0 ]; then
    echo "fuzz.sh: $name found a problem; log $log, reproducer in $findings/" >&2
    grep -E 'ERROR|FUZZ_CHECK|runtime error|SUMMARY' "$log" | head -5 >&2 || true
  fi
done
column -t -s $'\t' "$REPORT" 2>/dev/null || cat "$REPORT"
exit $failed
