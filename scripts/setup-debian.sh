#!/usr/bin/env bash
# Installs every build and test dependency from Debian 12's own packages.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
PKGS=(cmake ninja-build g++ pkg-config
      libprotobuf-dev protobuf-compiler libabsl-dev
      googletest libgtest-dev libgmock-dev libbenchmark-dev
      nlohmann-json3-dev zlib1g-dev libcli11-dev
      python3 python3-numpy python3-torch)
PKGS+=(pybind11-dev python3-dev python3-pytest python3-protobuf)
# --fuzz: also clang-14 and its runtime libraries (libFuzzer, ASan), for
# scripts/fuzz.sh and scripts/ci-hardening.sh.
if [ "${1:-}" = "--fuzz" ]; then PKGS+=(clang-14 libclang-rt-14-dev); fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
