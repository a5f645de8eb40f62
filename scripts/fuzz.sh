#!/usr/bin/env bash
# Runs the libFuzzer targets (built with -DCMLBED_FUZZ=ON, see CMakeLists.txt) from seed
# corpora written here, with AddressSanitizer and UndefinedBehaviorSanitizer, and no
# allocation above 64 MiB (-malloc_limit_mb: the inputs are at most 64 KiB, so nothing
# a reader allocates for them may be large).
# Usage: scripts/fuzz.sh BUILD_DIR [RUNS]   (RUNS per target, default 1000000)
set -euo pipefail
build=${1:?usage: scripts/fuzz.sh BUILD_DIR [RUNS]}
runs=${2:-1000000}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus="$build/fuzz-corpus"
mkdir -p "$corpus"/{fuzz_units,fuzz_rate_trace,fuzz_idx_reader,fuzz_cifar_reader}

# Seeds: the units the configs use, the configs' rate traces, a valid IDX pair (two 2x2
# images; 2-byte length of the images part first) and one valid CIFAR-10 record.
i=0
for unit in 10mbit 1mbps 32kb 1mibit 5ms 250us 2s 1.5gbit 0bit 64k; do
  printf '%s' "$unit" >"$corpus/fuzz_units/seed$((i++))"
done
cp "$root"/configs/traces/*.csv "$corpus/fuzz_rate_trace/"
python3 - "$corpus" <<'PY'
import struct, sys
corpus = sys.argv[1]
images = struct.pack(">IIII", 0x00000803, 2, 2, 2) + bytes(range(8))
labels = struct.pack(">II", 0x00000801, 2) + bytes([3, 7])
with open(corpus + "/fuzz_idx_reader/pair", "wb") as f:
    f.write(struct.pack(">H", len(images)) + images + labels)
with open(corpus + "/fuzz_cifar_reader/record", "wb") as f:
    f.write(bytes([4]) + bytes(i % 256 for i in range(3072)))
PY

status=0
for target in fuzz_units fuzz_rate_trace fuzz_idx_reader fuzz_cifar_reader; do
  log="$build/$target.log"
  if "$build/$target" -runs="$runs" -max_len=65536 -malloc_limit_mb=64 -rss_limit_mb=2048 \
      -print_final_stats=1 "$corpus/$target" >"$log" 2>&1; then
    echo "$target: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') executions, no finding"
  else
    status=1
    echo "$target: FINDING (see $log)"
    grep -E 'ERROR|SUMMARY|runtime error' "$log" | head -5
  fi
done
exit $status
