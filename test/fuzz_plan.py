#!/usr/bin/env python3
"""Checks test/fuzz/plan.tsv against the fuzz targets (test/fuzz_plan.cmake).

    fuzz_plan.py SOURCE_DIR

Every plan row names a target test/fuzz/<name>_fuzz.cc and gives it a
positive whole number of seconds; no target is listed twice; every target
has a seed folder test/fuzz/corpus/<name>/ holding at least one file.
"""
import os
import sys


def main():
    root = sys.argv[1]
    fuzz = os.path.join(root, "test", "fuzz")
    targets = sorted(f[:-len("_fuzz.cc")] for f in os.listdir(fuzz)
                     if f.endswith("_fuzz.cc"))
    problems = []
    seen = set()
    with open(os.path.join(fuzz, "plan.tsv"), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 2:
                problems.append(f"plan.tsv:{n}: expected target<TAB>seconds, found {line!r}")
                continue
            name, seconds = cols[0], cols[1]
            if name not in targets:
                problems.append(f"plan.tsv:{n}: {name!r} is no fuzz target "
                                f"(test/fuzz/{name}_fuzz.cc does not exist)")
            if name in seen:
                problems.append(f"plan.tsv:{n}: {name!r} is listed twice")
            seen.add(name)
            if not seconds.isdigit() or int(seconds) <= 0:
                problems.append(f"plan.tsv:{n}: {name!r}: seconds {seconds!r} "
                                "is not a positive whole number")
    for name in targets:
        seeds = os.path.join(fuzz, "corpus", name)
        if not os.path.isdir(seeds) or not os.listdir(seeds):
            problems.append(f"{name}_fuzz has no seeds in test/fuzz/corpus/{name}/ "
                            "(test/fuzz/make_seeds.py writes them)")
    for p in problems:
        print("FAIL", p)
    print(f"fuzz_plan: {len(targets)} targets, {len(seen)} plan rows, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
