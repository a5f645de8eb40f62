#!/usr/bin/env bash
# devices.flops makes round times independent of this machine's load: the same run,
# alone and with every core kept busy by other processes, has mean round times within
# 3%, each device round lasts its FLOPs / rate (to within 10%), and paced stages ran long
# by less than 1% of the paced work. Usage: device_flops_job.sh CMLBED MPIEXEC PYTHON
set -u
cmlbed=$1 mpiexec=$2 python=$3
work=$(mktemp -d)
burners=()
cleanup() {
  ((${#burners[@]} == 0)) || kill "${burners[@]}" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# FL on LeNet: 4 local mini-batches of 32 per round, 200 MFLOP per device and round,
# 2 s at 100 MFLOP/s; this machine does the work in a few ms, so even fully loaded it
# is fast enough for the rate. The server only averages (unpaced, milliseconds).
run=(--experiment.method=fl --data.dataset=synthetic --data.synthetic_train=1200
     --data.synthetic_test=100 --model.name=lenet --train.local_iterations=4
     --experiment.rounds=3 --devices.flops=100mflop/s)

start() {  # NAME
  "$mpiexec" --oversubscribe -np 3 "$cmlbed" run "${run[@]}" --output.file="$work/$1.h5" \
    >"$work/$1.out" 2>&1 || { cat "$work/$1.out"; echo "FAIL: $1 run failed"; exit 1; }
  grep "^held stages\|^emulation" "$work/$1.out"
}

start quiet
cores=$(nproc)
for ((i = 0; i < cores; ++i)); do
  (while :; do :; done) &
  burners+=($!)
done
start loaded
kill "${burners[@]}" 2>/dev/null
burners=()

"$python" - "$work" <<'PY'
import sys
import h5py
import numpy as np

work = sys.argv[1]
failures = []
means = {}
for name in ("quiet", "loaded"):
    with h5py.File(f"{work}/{name}.h5", "r") as f:
        rounds = f["rounds"][:]
        wall = rounds["wall_s"]
        device_flops = rounds["flops"][:, 1:]  # per round, per device rank
        paced_for = device_flops.max(axis=1) / 100e6
        overran = f["process/paced_overran"][:]
        overrun_s = f["process/paced_overrun_s"][:]
        print(f"{name}: round wall {np.round(wall, 3).tolist()} s, paced device work "
              f"{np.round(paced_for, 3).tolist()} s, stages that ran long {overran.tolist()} "
              f"by {np.round(overrun_s, 4).tolist()} s")
        means[name] = wall.mean()
        # Short stages (an optimizer step is paced to a few ms) may run long by a
        # scheduling delay; what ran long must be a small part of the paced work.
        if overrun_s.sum() > 0.01 * paced_for.sum():
            failures.append(f"{name}: paced stages ran long by {overrun_s.sum():.3f} s in all")
        # Above the paced work: the model's trip to the server and back and the averaging,
        # unpaced, which a loaded machine stretches (up to 1.05x measured with other tests
        # and a sanitizer build running).
        if np.any(wall < paced_for) or np.any(wall > paced_for * 1.10):
            failures.append(f"{name}: round walls {wall} not within [1, 1.10] x the paced work {paced_for}")
ratio = means["loaded"] / means["quiet"]
print(f"mean round wall: quiet {means['quiet']:.4f} s, loaded {means['loaded']:.4f} s, ratio {ratio:.4f}")
if abs(ratio - 1) > 0.03:
    failures.append(f"loaded / quiet mean round time {ratio:.4f}, not within 3%")
for failure in failures:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
PY
