#!/usr/bin/env bash
# Runs the libFuzzer targets (built with -DCMLBED_FUZZ=ON, see CMakeLists.txt) from seed
# corpora written here, with AddressSanitizer and UndefinedBehaviorSanitizer.
# Usage: scripts/dev/fuzz.sh BUILD_DIR [RUNS | SECONDSs] [TARGET ...]
#   RUNS per target (default 1000000), or a time per target such as 30s; the targets
#   default to all of them. Exit status: 0 no finding, 1 a finding (its log and the
#   input that caused it are named), 77 a target is not built (the fuzz ctests skip).
# Allocation limits: the readers' inputs are at most 64 KiB, so nothing they allocate
# may reach 64 MiB; the configuration's check builds the model to count its layers,
# whose largest allocation the zoo caps at one 512 MiB layer (src/model/zoo.cpp).
# Each target keeps its corpus in BUILD_DIR/fuzz-corpus/TARGET (seeds plus what runs
# found), so later runs start from there.
set -euo pipefail
build=${1:?usage: scripts/dev/fuzz.sh BUILD_DIR [RUNS | SECONDSs] [TARGET ...]}
budget=${2:-1000000}
shift $(($# < 2 ? $# : 2))
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[[ -d $build ]] || { echo "fuzz: no build directory $build" >&2; exit 77; }
build=$(cd "$build" && pwd)
targets=("$@")
((${#targets[@]} > 0)) ||
  targets=(fuzz_units fuzz_rate_trace fuzz_idx_reader fuzz_cifar_reader fuzz_array_file fuzz_config)

if [[ $budget =~ ^([0-9]+)s$ ]]; then
  limit=(-max_total_time="${BASH_REMATCH[1]}")
elif [[ $budget =~ ^[0-9]+$ ]]; then
  limit=(-runs="$budget")
else
  echo "fuzz: '$budget' is neither a number of runs nor a time such as 30s" >&2
  exit 2
fi

# Seeds: the units the configs use, the configs' rate traces, a valid IDX pair (two 2x2
# images; 2-byte length of the images part first), one valid CIFAR-10 record, small
# .npz files of arrays (numpy.savez and savez_compressed, uint8 and float32), and for
# the configuration every config under configs/ and the tests' INI snippets, some with
# command-line arguments after a NUL byte (tests/fuzz/fuzz_config.cpp).
write_seeds() {
  local target=$1 dir=$2 i=0
  case $target in
    fuzz_units)
      for unit in 10mbit 1mbps 32kb 1mibit 5ms 250us 2s 1.5gbit 0bit 64k 2GFLOP/s 500mflop/s; do
        printf '%s' "$unit" >"$dir/seed$((i++))"
      done ;;
    fuzz_rate_trace)
      cp "$root"/configs/traces/*.csv "$dir/" ;;
    fuzz_idx_reader | fuzz_cifar_reader)
      /usr/bin/python3 - "$target" "$dir" <<'PY'
import struct, sys
target, dir = sys.argv[1:]
if target == "fuzz_idx_reader":
    images = struct.pack(">IIII", 0x00000803, 2, 2, 2) + bytes(range(8))
    labels = struct.pack(">II", 0x00000801, 2) + bytes([3, 7])
    open(dir + "/pair", "wb").write(struct.pack(">H", len(images)) + images + labels)
else:
    open(dir + "/record", "wb").write(bytes([4]) + bytes(i % 256 for i in range(3072)))
PY
      ;;
    fuzz_array_file)
      /usr/bin/python3 - "$dir" <<'PY'
import sys
import numpy as np
dir = sys.argv[1]
images = (np.arange(4 * 2 * 3) % 256).astype(np.uint8).reshape(4, 1, 2, 3)
labels = np.array([0, 1, 2, 1])
np.savez(dir + "/stored.npz", train_images=images, train_labels=labels, test_images=images[:2],
         test_labels=labels[:2])
np.savez_compressed(dir + "/deflated.npz", train_images=images.astype(np.float32) / 255,
                    train_labels=labels.astype(np.uint8), test_images=images[:2].astype(np.float32),
                    test_labels=labels[:2], mean=np.array([0.5], np.float32), std=np.array([0.25]))
PY
      ;;
    fuzz_config)
      for ini in $(cd "$root" && find configs -name '*.ini' | sort); do
        cp "$root/$ini" "$dir/$(echo "$ini" | tr / _)"
      done
      printf '# a comment\n[experiment]\nrounds = 7\nseed = 3\n[train]\nlr = 0.05\n[network]\nuplink_rate = 10mbit\n' \
        >"$dir/basic.ini"
      printf '[devices]\nslowdown = 4\n[network]\nuplink_rate = 10mbit\n[device.2]\nslowdown = 1\nuplink_rate = 2mbps\n\0--device.3.split=1' \
        >"$dir/devices.ini"
      printf '[train]\nlr = 0.1\nlr = 0.2\n' >"$dir/twice.ini"
      printf '[train\nlr = 0.1\n' >"$dir/broken.ini"
      printf '[experiment]\nrounds = 0\n' >"$dir/bad.ini"
      printf '[data]\ndataset = synthetic\n\0--dry-run\0--ranks=9\0--model.name=lenet\0--output.overwrite' \
        >"$dir/dry-run.ini"
      printf '[data]\ndataset = synthetic\npartition = shards\n\0--data.synthetic_shape=3x32x32\0--device.2.uplink_trace=configs/traces/uplink-drop.csv' \
        >"$dir/shards.ini"
      printf '\0--experiment.method=pipar\0--pipar.micro_batches=8\0--help' >"$dir/help.ini" ;;
  esac
}

# Words the configuration target is made of: every option as a key, an INI line and a
# command-line argument, the sections, and the run command's own options.
write_config_dictionary() {
  local options
  options=$(grep -oE '"(experiment|model|data|train|pipar|network|devices|transfer|evaluation|output)\.[a-z_]+"' \
    "$root/src/config/option_table.cpp" | tr -d '"' | sort -u)
  {
    for option in $options; do
      echo "\"--$option=\""
      echo "\"[${option%%.*}]\""
      echo "\"${option#*.} = \""
    done
    printf '"%s"\n' '[device.2]' '--device.1.' '--dry-run' '--ranks=' '--config=' '\x00' \
      'synthetic' 'fashion-mnist' 'cifar10' 'mnist' 'vgg16' 'resnet18' 'lenet' 'mobilenetv3-large' \
      'dirichlet' 'shards' 'per-device' 'mbit' 'kbps' 'mib' 'ms' 'us' '4096x4096' 'true'
  } | sort -u >"$1"
}

status=0
for target in "${targets[@]}"; do
  if [[ ! -x "$build/$target" ]]; then
    echo "fuzz: $build/$target is not built (cmake -DCMLBED_FUZZ=ON ... --target fuzz_targets)" >&2
    exit 77
  fi
  corpus="$build/fuzz-corpus/$target"
  mkdir -p "$corpus"
  write_seeds "$target" "$corpus"
  options=(-max_len=65536 -malloc_limit_mb=64 -rss_limit_mb=2048)
  if [[ $target == fuzz_config ]]; then
    write_config_dictionary "$build/fuzz_config.dict"
    options=(-max_len=65536 -malloc_limit_mb=600 -rss_limit_mb=3072
             -dict="$build/fuzz_config.dict")
  fi
  log="$build/$target.log"
  # From the repository root: the configs' trace paths are relative to it. A finding's
  # input is written into the build directory (crash-..., leak-..., oom-...).
  if (cd "$root" && "$build/$target" "${limit[@]}" "${options[@]}" -print_final_stats=1 \
        -artifact_prefix="$build/$target-" "$corpus") >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
    echo "$target: $runs executions, no finding"
  else
    status=1
    echo "$target: FINDING (log: $log)"
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -5
  fi
done
exit $status
