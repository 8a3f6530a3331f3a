#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined)
# into build-fuzz/ and runs every target for SECONDS seconds each, starting
# from its committed seed corpus test/fuzz/corpus/<target>/.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      (default 60 s, all targets)
#   FUZZ_JOBS=2 scripts/fuzz.sh 60               (two targets at a time)
#   FUZZ_PLAN=test/fuzz/plan.tsv scripts/fuzz.sh 45
#                                                (each target's seconds from
#                                                the plan; 45 for the rest)
#
# Exit status: 0 when no target found anything; 1 when any target crashed,
# failed a check, leaked, hung (> 10 s on one input), or allocated more than
# 128 MiB at once / 1 GiB in total (declared sizes must never be allocated).
# Reproducers go to build-fuzz/findings/<target>/; the table of executions
# per target goes to build-fuzz/fuzz-report.tsv (and stdout).
# New inputs the fuzzer finds go to build-fuzz/corpus/<target>/, not into
# the committed seeds. CXX defaults to clang++-14, then clang++.
# FUZZ_BUILD=DIR uses an existing build tree configured with
# DECOMPOSED_BUILD_FUZZERS=ON (scripts/sanitize.sh --fuzzers makes one)
# instead of configuring build-fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${1:-60}"
shift || true
CXX="${FUZZ_CXX:-$(command -v clang++-14 || command -v clang++ || true)}"
if [ -z "$CXX" ]; then
  echo "fuzz.sh: clang++ not found (scripts/setup-debian.sh --fuzz installs it)" >&2
  exit 1
fi
BUILD="${FUZZ_BUILD:-build-fuzz}"
if [ -z "${FUZZ_BUILD:-}" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="$CXX" -DDECOMPOSED_BUILD_FUZZERS=ON \
    -DDECOMPOSED_BUILD_TESTS=OFF -DDECOMPOSED_BUILD_BENCH=OFF \
    -DDECOMPOSED_INSTALL=OFF >/dev/null
fi
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
# FUZZ_JOBS targets run at once (each still gets SECONDS of wall time);
# scripts/ci-hardening.sh uses 2 on its 2 cores.
JOBS="${FUZZ_JOBS:-1}"

# Seconds for one target: its row in $FUZZ_PLAN (target<TAB>seconds), or
# SECONDS_EACH.
seconds_for() {
  local s=""
  if [ -n "${FUZZ_PLAN:-}" ]; then
    s=$(awk -F'\t' -v t="$1" '$1 == t && $1 !~ /^#/ {print $2; exit}' "$FUZZ_PLAN")
  fi
  echo "${s:-$SECONDS_EACH}"
}

run_one() {  # name -> writes $BUILD/fuzz-row-<name>.tsv; returns 1 on a finding
  local name="$1"
  local seconds
  seconds=$(seconds_for "$name")
  local row="$BUILD/fuzz-row-$name.tsv"
  if [ ! -x "$BUILD/bin/${name}_fuzz" ]; then
    printf "%s\t-\t-\t-\t-\tNOT BUILT\n" "$name" > "$row"
    echo "fuzz.sh: $BUILD/bin/${name}_fuzz was not built" >&2
    return 1
  fi
  local seeds="test/fuzz/corpus/$name"
  local work="$BUILD/corpus/$name"
  local findings="$BUILD/findings/$name"
  mkdir -p "$work" "$findings"
  local log="$BUILD/fuzz-$name.log"
  local rc=0
  # libFuzzer exits 1 on a corpus folder that does not exist, which would
  # read as a finding: a target without committed seeds starts from its
  # working corpus alone.
  local dirs=("$work")
  if [ -d "$seeds" ]; then dirs+=("$seeds"); else
    echo "fuzz.sh: $name has no seed corpus ($seeds); starting from none" >&2
  fi
  "$BUILD/bin/${name}_fuzz" -max_total_time="$seconds" \
    -print_final_stats=1 -timeout=10 -rss_limit_mb=1024 \
    -malloc_limit_mb=128 -artifact_prefix="$findings/" \
    "${dirs[@]}" >"$log" 2>&1 || rc=$?
  local execs rate corpus result
  execs=$(grep -m1 '^stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
  rate=$(grep -m1 '^stat::average_exec_per_sec' "$log" | awk '{print $2}' || true)
  corpus=$(ls "$work" | wc -l)
  if [ $rc -eq 0 ]; then result=ok; else result="FINDING (rc=$rc)"; fi
  printf "%s\t%s\t%s\t%s\t%s\t%s\n" "$name" "$seconds" "${execs:-?}" \
    "${rate:-?}" "$corpus" "$result" > "$row"
  if [ $rc -ne 0 ]; then
    echo "fuzz.sh: $name found a problem; log $log, reproducer in $findings/" >&2
    grep -E 'ERROR|FUZZ_CHECK|runtime error|SUMMARY' "$log" | head -5 >&2 || true
    return 1
  fi
  return 0
}

names=()
for t in "${TARGETS[@]}"; do names+=("${t%_fuzz}"); done
# Longest first, so that FUZZ_JOBS parallel runs end together.
mapfile -t names < <(for n in "${names[@]}"; do
                       printf "%s\t%s\n" "$(seconds_for "$n")" "$n"; done |
                     sort -t$'\t' -k1,1nr -k2,2 | cut -f2)
rm -f "$BUILD"/fuzz-row-*.tsv
failed=0
running=0
for name in "${names[@]}"; do
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  run_one "$name" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
printf "target\tseconds\texecutions\texec_per_s\tcorpus\tresult\n" > "$REPORT"
for name in "${names[@]}"; do
  if [ -f "$BUILD/fuzz-row-$name.tsv" ]; then
    cat "$BUILD/fuzz-row-$name.tsv" >> "$REPORT"
  else
    printf "%s\t-\t-\t-\t-\tNO RESULT\n" "$name" >> "$REPORT"
    failed=1
  fi
  grep -q "FINDING" "$BUILD/fuzz-row-$name.tsv" 2>/dev/null && failed=1
done
rm -f "$BUILD"/fuzz-row-*.tsv
column -t -s $'\t' "$REPORT" 2>/dev/null || cat "$REPORT"
exit $failed
