#!/usr/bin/env python3
"""The counts the README quotes are the tree's.

  * "(N tests, ...)": the number of tests ctest knows in BUILD_DIR
    (`ctest -N`: every gtest case, every script test);
  * "`test/corpus/`, N files, M file × command rows": the files
    test/corpus/manifest.tsv names and its rows;
  * "for S s (`scripts/fuzz.sh S`)": the seconds .ci/run gives each fuzz
    target (`scripts/ci-hardening.sh S`).

    readme_counts.py SOURCE_DIR BUILD_DIR [CTEST]
Prints each figure with the tree's and exits 1 when one differs (or is not
found in the README).
"""
import os
import re
import subprocess
import sys


def main(argv):
    src, build = argv[1], argv[2]
    ctest = argv[3] if len(argv) > 3 else "ctest"
    with open(os.path.join(src, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    problems = []

    def quoted(pattern, what):
        m = re.search(pattern, readme, re.S)
        if not m:
            problems.append(f"README: no {what} found (pattern {pattern!r})")
            return None
        return m

    m = quoted(r"\((\d+) tests,", "test count")
    if m:
        r = subprocess.run([ctest, "--test-dir", build, "-N"],
                           capture_output=True, text=True)
        total = re.search(r"Total Tests: (\d+)", r.stdout)
        if not total:
            problems.append(f"ctest -N printed no total: {r.stdout[-300:]!r}")
        elif int(m.group(1)) != int(total.group(1)):
            problems.append(f"README says {m.group(1)} tests; ctest -N counts "
                            f"{total.group(1)}")
        else:
            print(f"tests: {total.group(1)}")

    m = quoted(r"`test/corpus/`,\s+(\d+)\s+files,\s+(\d+)\s+file\s+×\s+command\s+rows",
               "corpus count")
    if m:
        rows = []
        with open(os.path.join(src, "test", "corpus", "manifest.tsv"),
                  encoding="utf-8") as f:
            for line in f:
                if line.startswith("#") or line.startswith("file\t"):
                    continue
                if line.strip():
                    rows.append(line.split("\t")[0])
        files = len(set(rows))
        if (int(m.group(1)), int(m.group(2))) != (files, len(rows)):
            problems.append(f"README says {m.group(1)} corpus files and "
                            f"{m.group(2)} rows; manifest.tsv has {files} and "
                            f"{len(rows)}")
        else:
            print(f"corpus: {files} files, {len(rows)} rows")

    m = quoted(r"for\s+(\d+)\s+s\s+\(`scripts/fuzz\.sh (\d+)`\)", "fuzz seconds")
    if m:
        with open(os.path.join(src, ".ci", "run"), encoding="utf-8") as f:
            ci = re.search(r"ci-hardening\.sh (\d+)", f.read())
        if not ci:
            problems.append(".ci/run: no `ci-hardening.sh S`")
        elif not (m.group(1) == m.group(2) == ci.group(1)):
            problems.append(f"README says fuzz targets run {m.group(1)} s "
                            f"(`fuzz.sh {m.group(2)}`); .ci/run gives "
                            f"{ci.group(1)} s")
        else:
            print(f"fuzz: {ci.group(1)} s per target")

    for p in problems:
        print("FAIL:", p)
    print("readme_counts:", "FAILED" if problems else "ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
