#!/usr/bin/env bash
# [privacy] in real runs: privacy.mechanism = none gives the weights of a run without the
# section, bit for bit; the Gaussian mechanism changes them, in pipar and in fl
# (DP-FedAvg), and the results file records the (epsilon, delta) figure of the run's
# releases; Laplace runs too (split methods). Usage: privacy_job.sh CMLBED MPIEXEC PYTHON
set -u
cmlbed=$1 mpiexec=$2 python=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }

# 2 devices with 300 samples each, 4 mini-batches of 32 per round, 2 rounds: each sample
# is released at most ceil(128 / 300) = 1 time per round, 2 in all.
settings=(--data.dataset=synthetic --data.synthetic_train=600 --data.synthetic_test=50
          --model.split=2 --train.local_iterations=4 --experiment.rounds=2 --output.checkpoint=0)
run() {  # NAME ARGS... (model=NAME run ...: another model than LeNet)
  local name=$1; shift
  "$mpiexec" --oversubscribe -np 3 "$cmlbed" run "${settings[@]}" --model.name="${model:-lenet}" "$@" --output.file="$work/$name.h5" \
    >"$work/$name.out" 2>&1 || { cat "$work/$name.out"; fail "$name: run failed"; }
}
run pipar --experiment.method=pipar
run pipar-none --experiment.method=pipar --privacy.mechanism=none
run pipar-gaussian --experiment.method=pipar --privacy.mechanism=gaussian --privacy.clip=5 --privacy.noise_multiplier=0.5
run pipar-laplace --experiment.method=pipar --privacy.mechanism=laplace --privacy.clip=50 --privacy.noise_multiplier=0.1
run fl --experiment.method=fl
run fl-gaussian --experiment.method=fl --privacy.mechanism=gaussian --privacy.clip=1 --privacy.noise_multiplier=0.3
# With batch norm: noise on the running variances made them negative and the test loss NaN.
model=vgg5 run fl-gaussian-bn --experiment.method=fl --privacy.mechanism=gaussian --privacy.clip=1 \
  --privacy.noise_multiplier=3
run pipar-replace --experiment.method=pipar --privacy.mechanism=gaussian --privacy.clip=5 --privacy.noise_multiplier=0.5 \
  --privacy.adjacency=replace-one

"$python" - "$work" <<'PY' || failures=$((failures + 1))
import math, sys
import h5py
import numpy as np
work = sys.argv[1]
def weights(name):
    with h5py.File(f"{work}/{name}.h5", "r") as f:
        return f["model/model"][:]
bad = []
if not np.array_equal(weights("pipar"), weights("pipar-none")):
    bad.append("privacy.mechanism = none changed the weights")
for base, private in (("pipar", "pipar-gaussian"), ("pipar", "pipar-laplace"), ("fl", "fl-gaussian")):
    if np.array_equal(weights(base), weights(private)):
        bad.append(f"{private}: the same weights as {base}")
def eps(sigma, releases, delta):  # the RDP bound, minimised over alpha in closed form
    a = releases / (2 * sigma * sigma)
    return a + 2 * math.sqrt(a * math.log(1 / delta))
# Replace-one: sensitivity 2C, the epsilon of half the noise multiplier under add-remove.
for name, sigma, releases, sensitivity in (("pipar-gaussian", 0.5, 2, 1), ("fl-gaussian", 0.3, 2, 1),
                                           ("pipar-replace", 0.25, 2, 2)):
    with h5py.File(f"{work}/{name}.h5", "r") as f:
        got = (f.attrs.get("privacy_epsilon"), f.attrs.get("privacy_releases"), f.attrs.get("privacy_delta"),
               f.attrs.get("privacy_sensitivity"))
    print(f"{name}: epsilon {got[0]}, releases {got[1]}, delta {got[2]}, sensitivity {got[3]} C")
    if (got[1] != releases or got[2] != 1e-5 or got[3] != sensitivity
            or abs(got[0] - eps(sigma, releases, 1e-5)) > 1e-9):
        bad.append(f"{name}: recorded {got}, expected releases {releases}, epsilon {eps(sigma, releases, 1e-5)}, "
                   f"sensitivity {sensitivity}")
if not np.array_equal(weights("pipar-gaussian"), weights("pipar-replace")):
    bad.append("privacy.adjacency changed the weights (it changes only the recorded epsilon)")
with h5py.File(f"{work}/fl-gaussian-bn.h5", "r") as f:
    losses = f["rounds"]["test_loss"][:]
    print(f"fl-gaussian-bn: test losses {losses}")
    if not np.isfinite(losses).all():
        bad.append(f"fl-gaussian-bn: test loss {losses} (DP-FedAvg noised the batch-norm buffers?)")
with h5py.File(f"{work}/pipar.h5", "r") as f:
    if "privacy_epsilon" in f.attrs:
        bad.append("a run without privacy records an epsilon")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# A resumed run with more rounds states the figure over its new round count (the file
# keeps no checkpoint here, so it starts over: 4 rounds, 4 releases).
"$mpiexec" --oversubscribe -np 3 "$cmlbed" run --resume "$work/fl-gaussian.h5" --experiment.rounds=4 \
  >"$work/resumed.out" 2>&1 || { cat "$work/resumed.out"; fail "fl-gaussian: resume failed"; }
"$python" - "$work/fl-gaussian.h5" <<'PY' || fail "fl-gaussian resumed to 4 rounds: privacy figure not renewed"
import math, sys
import h5py
with h5py.File(sys.argv[1], "r") as f:
    releases, epsilon = f.attrs.get("privacy_releases"), f.attrs.get("privacy_epsilon")
a = 4 / (2 * 0.3 * 0.3)
want = a + 2 * math.sqrt(a * math.log(1e5))
print(f"fl-gaussian resumed: epsilon {epsilon}, releases {releases}")
sys.exit(0 if releases == 4 and abs(epsilon - want) < 1e-9 else 1)
PY

"$mpiexec" --oversubscribe -np 3 "$cmlbed" run "${settings[@]}" --experiment.method=fl --privacy.mechanism=laplace \
  --output.file="$work/bad.h5" >/dev/null 2>"$work/err"
status=$?
((status == 2)) && grep -q "DP-FedAvg adds Gaussian noise" "$work/err" || { cat "$work/err"; fail "fl + laplace: status $status"; }
((failures == 0)) && echo "privacy_job: ok"
exit $((failures > 0))
