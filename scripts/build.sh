#!/usr/bin/env bash
# Configures and builds into build/ (Release). Extra args go to cmake.
#
#   scripts/build.sh [cmake args...]          everything: library, CLIs,
#                                             tests, benchmarks, the Python
#                                             package, the MPI replay
#                                             (needs setup --test)
#   scripts/build.sh --tools [cmake args...]  the two CLIs only
#                                             (build/bin/decomposed,
#                                             build/bin/snapshot-unpack)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--tools" ]; then
  shift
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DDECOMPOSED_BUILD_TESTS=OFF -DDECOMPOSED_BUILD_BENCH=OFF \
    -DDECOMPOSED_BUILD_PYTHON=OFF "$@" >/dev/null
  cmake --build build -j "$(nproc)" --target decomposed_cli snapshot_unpack
else
  # -U: a --tools run may have cached the Python package as OFF; let the
  # configure find pybind11 again.
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DDECOMPOSED_BUILD_TESTS=ON -DDECOMPOSED_BUILD_BENCH=ON -DDECOMPOSED_WITH_MPI=ON \
    -UDECOMPOSED_BUILD_PYTHON "$@" >/dev/null
  cmake --build build -j "$(nproc)"
fi
