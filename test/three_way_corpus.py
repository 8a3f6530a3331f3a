#!/usr/bin/python3
"""The malformed-input corpus (test/corpus/) through the three-way
comparison: every file of the manifest's `compare` rows is given as the
BASELINE and as the ACTUAL side of `decomposed compare --baseline`, against
compare_reference.bin on the other sides (`--inputs`, as the corpus runs
compare). Each run must exit 2 with the row's frame and fragment in the
message (the sides are read by the same readers as compare's), print no
crash or sanitizer text, and end within 120 s; outside sanitizer builds
also under a 256 MiB address-space limit.

usage: three_way_corpus.py --cli build/bin/decomposed [--memory-limit-mib 256]
"""
import argparse
import csv
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "corpus"))
import run_corpus  # noqa: E402  (BAD_OUTPUT, limit_memory)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--memory-limit-mib", type=int, default=0)
    a = ap.parse_args()
    files = os.path.join(HERE, "corpus", "files")
    with open(os.path.join(HERE, "corpus", "manifest.tsv")) as f:
        rows = [r for r in csv.DictReader((l for l in f if not l.startswith("#")),
                                          delimiter="\t") if r["command"] == "compare"]
    if len(rows) < 40:
        print("three_way_corpus: only %d compare rows" % len(rows))
        return 1
    ref = os.path.join(files, "compare_reference.bin")
    failures = 0
    limits = [0] + ([a.memory_limit_mib] if a.memory_limit_mib else [])
    for r in rows:
        path = os.path.join(files, r["file"])
        form = run_corpus.form_of(path)
        for role, sides in (("baseline", [ref, ref, "--baseline", path]),
                            ("actual", [ref, path, "--baseline", ref])):
            for mem in limits:
                argv = [a.cli, "compare", "--inputs", "--snapshot-type=" + form] + sides
                try:
                    p = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                                       preexec_fn=run_corpus.limit_memory(mem) if mem else None)
                except subprocess.TimeoutExpired:
                    print("FAIL %s as %s: hang" % (r["file"], role))
                    failures += 1
                    continue
                text = p.stderr + p.stdout
                problems = []
                if p.returncode != int(r["exit"]):
                    problems.append("exit %d, expected %s" % (p.returncode, r["exit"]))
                if run_corpus.BAD_OUTPUT.search(p.stderr):
                    problems.append("crash/sanitizer text in stderr")
                if r["state"] == "checked":
                    for key in ("frame", "fragment"):
                        if r[key] and r[key] not in text:
                            problems.append("%s %r not in message" % (key, r[key]))
                tag = " [RLIMIT_AS %d MiB]" % mem if mem else ""
                if problems:
                    failures += 1
                    print("FAIL %s as %s%s: %s\n     message: %s" % (
                        r["file"], role, tag, "; ".join(problems), text.strip()[:300]))
    print("three_way_corpus: %d files x 2 roles x %d runs, %d failures" %
          (len(rows), len(limits), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
