#!/usr/bin/env bash
# Sets up (packages + build) and runs every test through ctest.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
source "$root/scripts/mpi-env.sh"
ctest --test-dir "$root/build" --output-on-failure -j2 "$@"
