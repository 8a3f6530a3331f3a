#!/usr/bin/env bash
# Installs what is missing from Debian 12's own packages (apt-get; sudo when
# not root).
#
#   scripts/setup-debian.sh           building and running the tools only
#                                     (compiler, CMake, protobuf, Abseil,
#                                     nlohmann-json, zlib, CLI11, OpenBLAS)
#   scripts/setup-debian.sh --python  also the Python package, without
#                                     PyTorch (optional at run time):
#                                     python3-dev, pybind11, NumPy, pip and
#                                     venv, for `pip install .`
#   scripts/setup-debian.sh --test    --python, plus the test suite and
#                                     benchmarks: GoogleTest, Google
#                                     Benchmark, PyTorch, pytest, Python
#                                     protobuf, rsvg-convert (the SVG
#                                     pictures are rendered in a test),
#                                     strace (the open-count test),
#                                     OpenMPI (libopenmpi-dev, openmpi-bin:
#                                     scripts/build.sh builds the MPI
#                                     replay, -DDECOMPOSED_WITH_MPI=ON, and
#                                     the suite runs it under mpirun)
#   scripts/setup-debian.sh --fuzz    --test, plus clang-14 and its runtime
#                                     libraries (libFuzzer, ASan) for
#                                     scripts/fuzz.sh and ci-hardening.sh
#   scripts/setup-debian.sh --mpi     the same as --test (kept for old
#                                     scripts)
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
PKGS=(cmake ninja-build g++ pkg-config
      libprotobuf-dev protobuf-compiler libabsl-dev
      nlohmann-json3-dev zlib1g-dev libcli11-dev libopenblas-dev)
PYTHON_PKGS=(python3 python3-dev pybind11-dev python3-numpy
             python3-pip python3-venv)
TEST_PKGS=("${PYTHON_PKGS[@]}" googletest libgtest-dev libgmock-dev
           libbenchmark-dev python3-torch python3-pytest python3-protobuf
           librsvg2-bin strace libopenmpi-dev openmpi-bin)
case "${1:-}" in
  "") ;;
  --python) PKGS+=("${PYTHON_PKGS[@]}") ;;
  --test) PKGS+=("${TEST_PKGS[@]}") ;;
  --fuzz) PKGS+=("${TEST_PKGS[@]}" clang-14 libclang-rt-14-dev) ;;
  --mpi) PKGS+=("${TEST_PKGS[@]}") ;;
  *) echo "usage: $0 [--python|--test|--fuzz|--mpi]" >&2; exit 2 ;;
esac
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
