#!/usr/bin/env bash
# The simulator against measured runs at several device counts (issue 11: "simulated 3, 7
# and 15 devices agree with measured runs within 10%"): one profile (cmlbed profile, 3
# ranks), then for each N a real pipar run with N devices (mpirun, oversubscribed) and
# `cmlbed simulate --devices N` of the same settings; prints mean round times, the error
# and server idle, and writes JSON. Devices are paced (devices.flops) on LeNet so that N
# device ranks fit on a small machine; the server is not paced (its stages are this
# machine's, so the load of other work shows up in the measured rounds).
#
#   scripts/bench/bench-device-count.sh [OUT.json] [-- OVERRIDES...]     (DEVICE_COUNTS="3 7 15")
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=results/bench-device-count.json
if [[ $# -gt 0 && $1 != -- ]]; then out=$1; shift; fi
if [[ ${1:-} == -- ]]; then shift; fi
cd "$root"
source scripts/mpi-env.sh
cmlbed=${CMLBED_BIN:-build/cmlbed}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
settings=(--data.dataset=synthetic --data.synthetic_train=4000 --data.synthetic_test=50 --model.name=lenet
          --model.split=2 --train.local_iterations=4 --experiment.rounds=3 --devices.flops=50mflop/s
          --network.uplink_rate=2mbit --network.downlink_rate=5mbit --pipar.micro_batches=4
          --experiment.method=pipar --output.progress=false "$@")
mpirun --oversubscribe -np 3 "$cmlbed" profile "${settings[@]}" -o "$work/profile.json" >"$work/profile.out" 2>&1 ||
  { cat "$work/profile.out"; exit 1; }
for n in ${DEVICE_COUNTS:-3 7 15}; do
  echo "== $n devices: measured (mpirun -np $((n + 1))) and simulated" >&2
  mpirun --oversubscribe -np $((n + 1)) "$cmlbed" run "${settings[@]}" --output.file="$work/run-$n.h5" \
    >"$work/run-$n.out" 2>&1 || { cat "$work/run-$n.out"; exit 1; }
  "$cmlbed" simulate "${settings[@]}" --plan.host_cores=0 --devices "$n" --profile "$work/profile.json" \
    --output.file="$work/sim-$n.h5" >"$work/sim-$n.out" 2>&1 || { cat "$work/sim-$n.out"; exit 1; }
done
python=python3
"$python" -c "import h5py" 2>/dev/null || python=/usr/bin/python3
mkdir -p "$(dirname "$out")"
"$python" - "$work" "$out" "$(uptime)" ${DEVICE_COUNTS:-3 7 15} <<'PY'
import json, sys
import h5py
work, out, load, counts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = []
print("devices  measured s  simulated s   error  server idle % measured / simulated")
for n in counts:
    with h5py.File(f"{work}/run-{n}.h5", "r") as f, h5py.File(f"{work}/sim-{n}.h5", "r") as g:
        real, sim = f["rounds"][:], g["rounds"][:]
    m, s = float(real["wall_s"].mean()), float(sim["wall_s"].mean())
    mi = float(real["idle_s"][:, 0].sum() / real["wall_s"].sum())
    si = float(sim["idle_s"][:, 0].sum() / sim["wall_s"].sum())
    rows.append({"devices": int(n), "measured_round_s": m, "simulated_round_s": s, "error": s / m - 1,
                 "server_idle_measured": mi, "server_idle_simulated": si})
    print(f"{n:>7}  {m:10.3f}  {s:11.3f}  {s / m - 1:+6.1%}  {mi:6.1%} / {si:6.1%}")
json.dump({"benchmark": "device-count", "load": load.strip(), "rows": rows}, open(out, "w"), indent=1)
print(f"(JSON: {out}; {load.strip()})")
PY
