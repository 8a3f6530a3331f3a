#!/usr/bin/env bash
# Unpack performance, reported (never asserted): decomposed files holding one
# literal of MiB megabytes (default 1024) of F32, BF16 and S32-varint data.
#   1. bench/unpack_bench.cc in one process: Unpack (splice, the default;
#      copy_file_range; the read/write buffer),
#      `cp` of the same file, and the protobuf-materialising reference, so
#      the ratios come from one run;
#   2. peak RSS of each in its own process (/usr/bin/time -v);
#   3. a summary table.
# Usage: scripts/bench-unpack.sh [MiB]
# Big files go to $UNPACK_BENCH_DIR (default build/unpack_bench_data) and are
# removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
MIB=${1:-1024}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build -j2 unpack_bench snapshot_unpack >/dev/null
export UNPACK_BENCH_MIB=$MIB
export UNPACK_BENCH_DIR=${UNPACK_BENCH_DIR:-$PWD/build/unpack_bench_data}
export UNPACK_BENCH_KEEP=1
D=$UNPACK_BENCH_DIR
trap 'rm -rf "$D"' EXIT
mkdir -p "$D"

echo "== throughput (one process, $MIB MiB payload per literal)"
build/bin/unpack_bench --benchmark_out="$D/bench.json" --benchmark_out_format=json

echo "== peak RSS (one process each)"
rss() {  # prints max RSS in MiB of the command
  /usr/bin/time -v "$@" 2>&1 >/dev/null | awk '/Maximum resident/ {printf "%.1f", $6/1024}'
}
: > "$D/rss.txt"
for t in 0:F32 1:BF16 2:S32; do
  i=${t%%:*}; n=${t#*:}
  in="$D/$n.decomposed_hlo_snapshot"
  u=$(rss build/bin/snapshot-unpack --snapshot-type=decomposed --output-prefix="$D/rss_" "$in")
  r=$(rss build/bin/unpack_bench --benchmark_filter="BM_Reference/type:$i/")
  c=$(rss /bin/cp "$in" "$D/rss_cp")
  echo "$n $u $r $c" >> "$D/rss.txt"
done

/usr/bin/python3 - "$D/bench.json" "$D/rss.txt" "$MIB" <<'PY'
import json, sys
b = {x["name"].split("/iterations")[0]: x for x in json.load(open(sys.argv[1]))["benchmarks"]}
rss = {l.split()[0]: l.split()[1:] for l in open(sys.argv[2])}
names = ["F32", "BF16", "S32"]
print("\n== summary (%s MiB payload; wall time per unpack; ratios from the same run)" % sys.argv[3])
print("%-5s %10s %10s %10s %10s %10s %12s %10s %14s %14s %10s" % (
    "type", "unpack ms", "kernel ms", "buffer ms", "cp ms", "ref ms", "unpack/cp",
    "ref/unpack", "out GB/s wall", "out GB/s cpu", "RSS MiB u/ref/cp"))
for i, n in enumerate(names):
    # S32 varints are decoded, not copied: only copy:0 exists for them.
    u = b.get("BM_Unpack/type:%d/copy:2/buf_mib:1" % i) or \
        b["BM_Unpack/type:%d/copy:0/buf_mib:1" % i]
    k = b.get("BM_Unpack/type:%d/copy:1/buf_mib:1" % i)
    f = b.get("BM_Unpack/type:%d/copy:0/buf_mib:1" % i)
    c = b["BM_Cp/type:%d" % i]
    r = b["BM_Reference/type:%d" % i]
    out = int(sys.argv[3]) << 20
    print("%-5s %10.0f %10s %10s %10.0f %10.0f %12.2f %10.2f %14.2f %14.2f   %s" % (
        n, u["real_time"], "%.0f" % k["real_time"] if k else "-",
        "%.0f" % f["real_time"] if f else "-", c["real_time"], r["real_time"],
        u["real_time"] / c["real_time"], r["real_time"] / u["real_time"],
        out / u["real_time"] / 1e6, out / u["cpu_time"] / 1e6, "/".join(rss[n])))
PY
