#!/usr/bin/env bash
# Installs the Debian 12 packages cmlbed needs (only those missing) and builds cmlbed
# into build/. Safe to run again: a second run installs nothing and rebuilds only what
# changed. Run as root or as a user with sudo.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

packages=(
  g++ cmake ninja-build git pkg-config                 # toolchain
  libopenmpi-dev openmpi-bin                           # MPI
  libtorch-dev                                         # LibTorch (C++ PyTorch)
  libhdf5-dev hdf5-tools                               # results files, h5dump
  libboost-program-options-dev libgtest-dev zlib1g-dev # options, tests, gzip datasets
  nlohmann-json3-dev                                   # JSON: profiles, benchmarks
  dataset-fashion-mnist                                # the default real dataset
  python3 python3-h5py python3-numpy python3-matplotlib  # post-processing scripts
  python3-pandas                                       # cmlbed_report.load (docs/how-to/analyse-results.md)
  python3-pytest                                       # their tests
  python3-torch                                        # scripts/tools/export-model.py (docs/how-to/own-model.md)
  mkdocs                                               # the manual's site (scripts/dev/docs.sh)
  iproute2                                             # ip, tc: the multihost test
  clang libclang-rt-14-dev llvm                        # libFuzzer targets (run-tests.sh)
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]} > 0)); then
  sudo=()
  [[ $(id -u) -eq 0 ]] || sudo=(sudo)
  echo "setup: installing ${#missing[@]} Debian package(s): ${missing[*]}"
  log=$(mktemp)
  if ! { "${sudo[@]}" apt-get update -qq &&
         DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"; } \
       >"$log" 2>&1; then
    tail -30 "$log" >&2
    echo "setup: apt-get failed (full log: $log)" >&2
    exit 1
  fi
  rm -f "$log"
fi

if [[ ! -f "$root/build/build.ninja" ]]; then
  echo "setup: configuring build/ (Release)"
  cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
echo "setup: building (LibTorch translation units take a while the first time)"
cmake --build "$root/build" -j2 | grep -v '^\[' || true
test -x "$root/build/cmlbed"
echo "setup: ready: $root/build/cmlbed"
