#!/usr/bin/env bash
# Before/after figures of framing_bench, unpack_bench and pack_bench: the
# benches of two builds run alternately in one sitting, so that both
# columns see the same machine state. Reported, never asserted.
# Usage: scripts/bench-before-after.sh BEFORE_BIN AFTER_BIN [ROUNDS]
#   BEFORE_BIN, AFTER_BIN  build/bin folders holding the three benches, e.g.
#     git worktree add ../before <commit> && (cd ../before && scripts/build.sh)
#     scripts/bench-before-after.sh ../before/build/bin build/bin 2
# Writes CSVs to $BENCH_OUT (default build/before_after) and prints medians.
set -euo pipefail
BEFORE=$1 AFTER=$2 ROUNDS=${3:-2}
OUT=${BENCH_OUT:-build/before_after}
mkdir -p "$OUT"
for r in $(seq "$ROUNDS"); do
  for side in before after; do
    bin=$BEFORE; [ "$side" = after ] && bin=$AFTER
    for i in 1 2 3; do
      "$bin/framing_bench" --benchmark_min_time=0.5 --benchmark_format=csv \
        2>/dev/null > "$OUT/framing_${side}_${r}_$i.csv"
    done
    "$bin/unpack_bench" --benchmark_filter='BM_Unpack/type:./(kernel|copy):.(/buf_mib:1)?/iter|BM_Cp' \
      --benchmark_format=csv 2>/dev/null > "$OUT/unpack_${side}_$r.csv"
    "$bin/pack_bench" --benchmark_filter=BM_PackVsCp \
      --benchmark_format=csv 2>/dev/null > "$OUT/pack_${side}_$r.csv"
  done
done
python3 - "$OUT" <<'PY'
import csv, glob, statistics, sys
out = sys.argv[1]
def rows(f):
    # buf_mib:1 is the default buffer, the only one older benches had;
    # older benches named the copy argument "kernel" (0 buffer, 1 kernel).
    return {r["name"].split("/iter")[0].replace("/buf_mib:1", "")
            .replace("/kernel:", "/copy:"): r
            for r in csv.DictReader(open(f))}
def med(xs):
    return statistics.median(xs) if xs else float("nan")
print(f"{'figure':48} {'before':>10} {'after':>10}")
fr = {s: [rows(f) for f in sorted(glob.glob(f"{out}/framing_{s}_*.csv"))]
      for s in ("before", "after")}
names = [n for n in fr["after"][0] if n in fr["before"][0]] + ["BM_RepeatedIterate|BM_BlockIterate"]
for n in names:
    vals = {}
    for s in fr:
        v = []
        for r in fr[s]:
            for k in n.split("|"):
                if k in r:
                    v.append(float(r[k]["items_per_second"]) / 1e6)
        vals[s] = med(v)
    print(f"{n + ' (M items/s)':48} {vals['before']:10.1f} {vals['after']:10.1f}")
ratio = {s: med([float(r["BM_BoxDecodeReference"]["cpu_time"]) /
                 float(r["BM_BoxDecode"]["cpu_time"]) for r in fr[s]])
         for s in fr}
print(f"{'box decode vs reference (x)':48} {ratio['before']:10.1f} {ratio['after']:10.1f}")
for kind in ("unpack", "pack"):
    rs = {s: [rows(f) for f in sorted(glob.glob(f"{out}/{kind}_{s}_*.csv"))]
          for s in ("before", "after")}
    for n in [n for n in rs["after"][0] if n in rs["before"][0]]:
        col = "ratio_vs_cp" if kind == "pack" else "real_time"
        unit = "x cp" if kind == "pack" else "ms"
        vals = {s: med([float(r[n][col]) for r in rs[s] if n in r]) for s in rs}
        print(f"{n + ' (' + unit + ')':48} {vals['before']:10.2f} {vals['after']:10.2f}")
PY
