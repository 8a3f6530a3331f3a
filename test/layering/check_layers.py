#!/usr/bin/env python3
"""Fails when a header or source includes a higher layer (docs/architecture.md).

Each folder under include/decomposed/ (and src/) is a layer. A file may
include its own layer and the layers below it, never one above or beside it.
The header-only codec layers (base, io, wire, xla, container) may include
only the C++ standard library and Abseil: no nlohmann, no protobuf.

Usage: check_layers.py SOURCE_DIR   (exit 0: clean; 1: violations listed)
"""
import os
import re
import sys

# layer -> the layers it may include (its own layer is always allowed).
BELOW = {
    "base": [],
    "io": ["base"],
    "testing": ["io", "base"],
    "wire": ["io", "base"],
    "xla": ["wire", "io", "base"],
    "container": ["xla", "wire", "io", "base"],
    "npy": ["xla", "wire", "io", "base"],
    "hlo": ["xla", "wire", "io", "base"],
    "eval": ["hlo", "xla", "wire", "io", "base"],
    "snapshot": ["container", "npy", "hlo", "xla", "wire", "io", "base"],
    "capture": ["snapshot", "eval", "container", "npy", "hlo", "xla", "wire", "io", "base"],
    "analysis": ["capture", "snapshot", "eval", "container", "npy", "hlo", "xla", "wire", "io", "base"],
    "run": ["analysis", "capture", "snapshot", "eval", "container", "npy", "hlo", "xla", "wire", "io", "base"],
}
CODEC = {"base", "io", "wire", "xla", "container"}
FOREIGN = re.compile(r"^(nlohmann/|google/protobuf/|decomposed/proto/|zlib\.h|pybind11/)")
# Known violations: none left (issue 9's literal codec split removed the
# last). Never add one.
KNOWN = set()
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def layer_of_header(rel):
    """rel: path under include/ or src/, e.g. decomposed/xla/shape.h."""
    parts = rel.split("/")
    if parts[0] == "decomposed":
        parts = parts[1:]
    if len(parts) == 1:
        return "base"
    return parts[0] if parts[0] in BELOW else None


def main(root):
    problems = []
    for top in ("include", "src"):
        base = os.path.join(root, top)
        for dirpath, _, files in os.walk(base):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, base)
                layer = layer_of_header(rel)
                if layer is None:
                    problems.append(f"{top}/{rel}: not in a known layer folder")
                    continue
                allowed = set(BELOW[layer]) | {layer}
                text = open(path, encoding="utf-8").read()
                for inc in INCLUDE.findall(text):
                    if inc.startswith("decomposed/") and not inc.startswith("decomposed/proto/"):
                        target = layer_of_header(inc)
                        if target not in allowed:
                            problems.append(f"{top}/{rel}: layer {layer} includes {inc} (layer {target})")
                    elif layer in CODEC and FOREIGN.match(inc):
                        problems.append(f"{top}/{rel}: codec layer {layer} includes {inc}")
    known = [p for p in problems if p in KNOWN]
    problems = [p for p in problems if p not in KNOWN]
    for p in known:
        print("known:", p)
    for p in problems:
        print(p)
    print(f"{len(problems)} layering violations ({len(known)} known)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
