#!/usr/bin/env bash
# Pack of F32 and BF16 .npy inputs vs `cp` of the same bytes, measured in the
# same benchmark process (bench/pack_bench.cc). Prints, per input size and
# type: pack time, cp time, their ratio (summed, median and fastest runs;
# aim <= 1.05) and the process's peak RSS (which must not grow with the
# input).
#
# usage: scripts/bench-pack.sh [SIZE_MIB...]     (default: 256 1024)
# env:   PACK_BENCH_DIR (default /tmp; needs ~3x the largest size free)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j2 pack_bench >/dev/null
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(256 1024)
printf "%-6s %9s %10s %10s %8s %8s %8s %12s\n" type size_mib pack_ms cp_ms ratio median fastest peak_rss_mb
for mib in "${sizes[@]}"; do
  json=$(PACK_BENCH_BYTES=$((mib << 20)) ./build/bin/pack_bench \
           --benchmark_filter=BM_PackVsCp --benchmark_format=json 2>/dev/null)
  /usr/bin/python3 - "$mib" "$json" <<'PY'
import json, sys
mib, doc = sys.argv[1], json.loads(sys.argv[2])
for b in doc["benchmarks"]:
    kind = "F32" if "/F32/" in b["name"] else "BF16"
    print("%-6s %9s %10.0f %10.0f %8.2f %8.2f %8.2f %12.1f" % (
        kind, mib, b["real_time"], b["cp_s"] * 1000, b["ratio_vs_cp"],
        b["median_ratio"], b["best_ratio"], b["peak_rss_mb"]))
PY
done
