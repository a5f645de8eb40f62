#!/usr/bin/env bash
# Sets up (packages + build), builds the libFuzzer targets with clang into build-fuzz/
# (the fuzz_* ctests run each for CMLBED_FUZZ_SECONDS, 20 s by default), and runs every
# test through ctest.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
if [[ ! -f "$root/build-fuzz/build.ninja" ]]; then
  echo "run-tests: configuring build-fuzz/ (clang, libFuzzer + ASan + UBSan)"
  CC=clang CXX=clang++ cmake -S "$root" -B "$root/build-fuzz" -G Ninja -DCMLBED_FUZZ=ON >/dev/null
fi
echo "run-tests: building the fuzz targets"
log=$(mktemp)
if ! cmake --build "$root/build-fuzz" -j2 --target fuzz_targets >"$log" 2>&1; then
  grep -v '^\[' "$log" | tail -40 >&2
  echo "run-tests: building the fuzz targets failed (full log: $log)" >&2
  exit 1
fi
rm -f "$log"
source "$root/scripts/mpi-env.sh"
ctest --test-dir "$root/build" --output-on-failure -j2 "$@"
