#!/usr/bin/env bash
# The schedule simulator against the runtime: for fl, sl, sfl, pipar, sfl2, psl, localloss,
# ushaped and adasplit (and sfl and sl with train.personalised) on the same small configuration, `cmlbed simulate` (from
# a profile of `cmlbed profile`) predicts the bytes, messages and FLOPs of every rank and
# round exactly, and the mean round time
# within 35% (devices paced by devices.flops and shaped links make the runs repeatable,
# within 4% on a quiet machine; the server's stages still follow this machine's load: with
# a sanitizer build and other tests running, sfl's measured rounds grew by 38%, its
# server waiting for the cores, hence the margin). The simulated
# file is an ordinary results file for scripts/cmlbed-report.
# Usage: simulate_job.sh CMLBED MPIEXEC PYTHON REPORT
set -u
cmlbed=$1 mpiexec=$2 python=$3 report=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }

settings=(--data.dataset=synthetic --data.synthetic_train=600 --data.synthetic_test=50 --model.name=lenet
          --model.split=2 --train.local_iterations=3 --experiment.rounds=2 --devices.flops=50mflop/s
          --network.uplink_rate=2mbit --network.downlink_rate=5mbit --pipar.micro_batches=4)
"$mpiexec" --oversubscribe -np 3 "$cmlbed" profile "${settings[@]}" -o "$work/profile.json" >"$work/profile.out" 2>&1 ||
  { cat "$work/profile.out"; fail "profile failed"; exit 1; }
# pipar-mixed: device 2 cuts its mini-batches into 1 micro-batch, device 1 into 4, and
# each device's uplink rate is drawn from a distribution (the run and the simulator must
# draw the same rates for the round times to agree).
# adasplit: 2 global rounds (floor(0.4 x 2) = 0 local) with one device picked per iteration at
# random (the simulator replays the run's orchestrator: same picks, exact bytes).
# localloss: the activations of mini-batches 0 and 2 of each device's 3 go up.
# ushaped: lenet's layers 2-4 are the server's middle, 5-6 each device's tail.
# sfl-personalised, sl-personalised: train.personalised (no device part travels; sl's
# turns start with a one-byte control word).
for case in fl sl sfl pipar pipar-mixed sfl2 psl localloss ushaped adasplit sfl-personalised sl-personalised; do
  method=${case%-mixed} method=${method%-personalised}
  extra=()
  [[ $case == pipar-mixed ]] && extra=(--device.2.micro_batches=1 "--device.1.uplink_rate=uniform(1mbit,3mbit)"
                                   "--device.2.uplink_rate=lognormal(2mbit,0.3)")
  [[ $case == localloss ]] && extra=(--localloss.upload_every=2)
  [[ $case == ushaped ]] && extra=(--ushaped.tail=5)
  [[ $case == adasplit ]] && extra=(--adasplit.orchestrator=random --adasplit.selected=1 --adasplit.local_fraction=0.4)
  [[ $case == *-personalised ]] && extra=(--train.personalised=true)
  "$mpiexec" --oversubscribe -np 3 "$cmlbed" run "${settings[@]}" "${extra[@]}" --experiment.method=$method \
    --output.file="$work/run-$case.h5" >"$work/run-$case.out" 2>&1 ||
    { cat "$work/run-$case.out"; fail "$case: run failed"; continue; }
  "$cmlbed" simulate "${settings[@]}" "${extra[@]}" --experiment.method=$method --devices 2 \
    --profile "$work/profile.json" --output.file="$work/sim-$case.h5" >"$work/sim-$case.out" 2>&1 ||
    { cat "$work/sim-$case.out"; fail "$case: simulate failed"; continue; }
  "$python" "$report" summary "$work/sim-$case.h5" >"$work/report-$case.out" 2>&1 ||
    { cat "$work/report-$case.out"; fail "$case: cmlbed-report summary failed on the simulated file"; }
done

"$python" - "$work" <<'PY' || failures=$((failures + 1))
import json, sys
import h5py
import numpy as np
work = sys.argv[1]
bad = []
for method in ("fl", "sl", "sfl", "pipar", "pipar-mixed", "sfl2", "psl", "localloss", "ushaped", "adasplit",
               "sfl-personalised", "sl-personalised"):
    with h5py.File(f"{work}/run-{method}.h5", "r") as f:
        real = f["rounds"][:]
    with h5py.File(f"{work}/sim-{method}.h5", "r") as f:
        sim = f["rounds"][:]
        if f.attrs.get("simulated") != 1 or "hosts" in f.attrs:
            bad.append(f"{method}: simulated file lacks simulated = 1 or has hosts")
        if json.loads(f.attrs["profile"])["format"] != "cmlbed-profile":
            bad.append(f"{method}: the stored profile is not a profile")
    for column in ("bytes_up", "bytes_down", "messages_up", "messages_down", "flops"):
        if not np.array_equal(real[column], sim[column]):
            bad.append(f"{method}: {column} measured {real[column].tolist()} simulated {sim[column].tolist()}")
    measured, simulated = real["wall_s"].mean(), sim["wall_s"].mean()
    error = simulated / measured - 1
    print(f"{method}: mean round measured {measured:.3f} s, simulated {simulated:.3f} s ({error:+.1%}); "
          f"server idle measured {real['idle_s'][:, 0].sum() / real['wall_s'].sum():.1%}, "
          f"simulated {sim['idle_s'][:, 0].sum() / sim['wall_s'].sum():.1%}")
    if abs(error) > 0.35:
        bad.append(f"{method}: simulated mean round {simulated:.3f} s vs measured {measured:.3f} s ({error:+.1%})")
# Device 2's own micro-batch count: activation uploads per round (both devices) 4 + 1
# against 4 + 4 per iteration; each device also uploads its part once for averaging.
with h5py.File(f"{work}/run-pipar.h5", "r") as f, h5py.File(f"{work}/run-pipar-mixed.h5", "r") as g:
    four, mixed = f["rounds"]["messages_up"][:] - 2, g["rounds"]["messages_up"][:] - 2
    if not np.array_equal(mixed * 8, four * 5):
        bad.append(f"device.2.micro_batches = 1: uploads {mixed.tolist()} against {four.tolist()} with 4")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# auto: the planner's choice from the same profile; the run stores it and its
# configuration holds the chosen values; the round time is as predicted (35%, as above).
unplanned=()  # the settings without a split point or micro-batch count
for setting in "${settings[@]}"; do
  [[ $setting == --model.split=* || $setting == --pipar.micro_batches=* ]] || unplanned+=("$setting")
done
"$mpiexec" --oversubscribe -np 3 "$cmlbed" run "${unplanned[@]}" --pipar.micro_batches=auto \
  --experiment.method=pipar --model.split=auto --plan.profile="$work/profile.json" \
  --output.file="$work/auto.h5" >"$work/auto.out" 2>&1 || { cat "$work/auto.out"; fail "auto: run failed"; }
grep -q "^plan: device 2: split [0-9]*, [0-9]* micro-batch" "$work/auto.out" || { cat "$work/auto.out"; fail "auto: no plan line"; }
"$cmlbed" plan "${settings[@]}" --experiment.method=pipar --devices 2 --profile "$work/profile.json" \
  >"$work/plan.out" 2>&1 || { cat "$work/plan.out"; fail "plan failed"; }
grep -q "<- chosen" "$work/plan.out" && grep -q "closed form" "$work/plan.out" || { cat "$work/plan.out"; fail "plan: no choice"; }
# --every-candidate: every row predicted, the same choice and prediction.
"$cmlbed" plan "${settings[@]}" --experiment.method=pipar --devices 2 --profile "$work/profile.json" --every-candidate \
  >"$work/plan-every.out" 2>&1 || { cat "$work/plan-every.out"; fail "plan --every-candidate failed"; }
grep -q "not simulated" "$work/plan-every.out" && fail "plan --every-candidate skipped a candidate"
grep -q " 0 candidates skipped" "$work/plan-every.out" || { cat "$work/plan-every.out"; fail "plan --every-candidate: skips?"; }
[[ $(grep "^chosen:" "$work/plan.out") == $(grep "^chosen:" "$work/plan-every.out") ]] ||
  fail "plan --every-candidate chose otherwise: $(grep -h "^chosen:" "$work/plan.out" "$work/plan-every.out")"
"$python" - "$work" <<'PY' || failures=$((failures + 1))
import sys
import h5py
import numpy as np
work = sys.argv[1]
bad = []
with h5py.File(f"{work}/auto.h5", "r") as f:
    plan = f["plan"]
    rounds, bounds = plan["round_s"][:], plan["round_bound_s"][:]
    best = int(np.nanargmin(rounds))  # NaN: not simulated, its bound above the best round
    split, m = int(plan.attrs["chosen_split"]), int(plan.attrs["chosen_micro_batches"])
    if (split, m) != (int(plan["split"][best]), int(plan["micro_batches"][best])):
        bad.append(f"chosen ({split}, {m}) is not the table's fastest")
    skipped = np.isnan(rounds)
    if np.any(bounds[skipped] <= rounds[best]) or np.any(bounds[~skipped] > rounds[~skipped] * (1 + 1e-9)):
        bad.append("a bound below the best round was skipped, or a bound exceeds its simulated round")
    config = f.attrs["config"]
    if f"split = {split}\n" not in config or f"micro_batches = {m}\n" not in config or " = auto\n" in config:
        bad.append("the stored configuration does not hold the chosen values")
    wall = f["rounds"]["wall_s"][-1]
    predicted = plan.attrs["predicted_round_s"]
    print(f"auto: split {split}, {m} micro-batches of {len(rounds)} candidates ({int(skipped.sum())} skipped); "
          f"predicted round {predicted:.3f} s, measured {wall:.3f} s ({wall / predicted - 1:+.1%})")
    if abs(wall / predicted - 1) > 0.35:
        bad.append(f"measured round {wall:.3f} s vs predicted {predicted:.3f} s")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# `cmlbed simulate` with the same autos plans as the run did (the same profile and
# configuration: the same choice and prediction), stores the plan table and the chosen
# values, and simulates that choice.
"$cmlbed" simulate "${unplanned[@]}" --pipar.micro_batches=auto --experiment.method=pipar --model.split=auto \
  --devices 2 --profile "$work/profile.json" --output.file="$work/sim-auto.h5" >"$work/sim-auto.out" 2>&1 ||
  { cat "$work/sim-auto.out"; fail "simulate auto failed"; }
grep -q "^plan: device 2: split [0-9]*, [0-9]* micro-batch" "$work/sim-auto.out" || { cat "$work/sim-auto.out"; fail "simulate auto: no plan line"; }
"$python" - "$work" <<'PY' || failures=$((failures + 1))
import sys
import h5py
work = sys.argv[1]
bad = []
with h5py.File(f"{work}/auto.h5", "r") as run, h5py.File(f"{work}/sim-auto.h5", "r") as sim:
    if "plan" not in sim:
        bad.append("the simulated file has no /plan")
    else:
        for key in ("chosen_split", "chosen_micro_batches", "predicted_round_s"):
            if abs(float(run["plan"].attrs[key]) - float(sim["plan"].attrs[key])) > 1e-9:
                bad.append(f"{key}: run {run['plan'].attrs[key]}, simulate {sim['plan'].attrs[key]}")
    config = sim.attrs["config"]
    split, m = int(run["plan"].attrs["chosen_split"]), int(run["plan"].attrs["chosen_micro_batches"])
    if f"split = {split}\n" not in config or f"micro_batches = {m}\n" not in config or " = auto\n" in config:
        bad.append("the simulated file's configuration does not hold the chosen values")
    print(f"simulate auto: split {split}, {m} micro-batches, as the run chose")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# Per device: device 2 behind a 4x thinner uplink, its split and both devices' micro-batch
# counts left to the planner (device 1's split fixed). The plan refines per device, the
# stored configuration holds each device's values, and the run with different micro-batch
# counts per device rounds as predicted (35%, as above).
"$mpiexec" --oversubscribe -np 3 "$cmlbed" run "${unplanned[@]}" --experiment.method=pipar --model.split=2 \
  --device.2.split=auto --pipar.micro_batches=auto --device.2.uplink_rate=500kbit --plan.profile="$work/profile.json" \
  --output.file="$work/per-device.h5" >"$work/per-device.out" 2>&1 ||
  { cat "$work/per-device.out"; fail "per-device auto: run failed"; }
grep -q "classes of alike devices" "$work/per-device.out" || { cat "$work/per-device.out"; fail "per-device auto: not refined"; }
"$python" - "$work" <<'PY' || failures=$((failures + 1))
import re, sys
import h5py
work = sys.argv[1]
bad = []
with h5py.File(f"{work}/per-device.h5", "r") as f:
    plan = f["plan"]
    splits = [int(s) for s in plan["device_split"][:]]
    counts = [int(m) for m in plan["device_micro_batches"][:]]
    config = f.attrs["config"]
    if splits[0] != 2: bad.append(f"device 1's fixed split 2 became {splits[0]}")
    if plan.attrs["passes"] < 1: bad.append("no per-device pass")
    if plan.attrs["predicted_round_s"] > plan.attrs["uniform_round_s"]:
        bad.append("the per-device plan is predicted slower than the best uniform pair")
    if " = auto\n" in config: bad.append("the stored configuration still says auto")
    # What each device ran with: its [device.K] value, else the global one.
    def value(key, device):
        section = re.search(rf"\[device\.{device}\]\n((?:[^\[].*\n)*)", config)
        own = section and re.search(rf"^{key} = (\d+)$", section.group(1), re.M)
        return int(own.group(1)) if own else int(re.search(rf"^{key} = (\d+)$", config, re.M).group(1))
    for d in (1, 2):
        if (value("split", d), value("micro_batches", d)) != (splits[d - 1], counts[d - 1]):
            bad.append(f"device {d}: stored configuration differs from the plan {splits[d - 1]}, {counts[d - 1]}")
    wall, predicted = f["rounds"]["wall_s"][-1], plan.attrs["predicted_round_s"]
    print(f"per-device auto: splits {splits}, micro-batches {counts}, {plan.attrs['passes']} pass(es); "
          f"predicted {predicted:.3f} s (uniform {plan.attrs['uniform_round_s']:.3f} s), measured {wall:.3f} s "
          f"({wall / predicted - 1:+.1%})")
    if abs(wall / predicted - 1) > 0.35:
        bad.append(f"measured round {wall:.3f} s vs predicted {predicted:.3f} s")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# sfl2 with auto and devices that differ (device 2's uplink thin): one server part takes
# one cut, so the planner picks one split for both devices and refines none per device;
# `cmlbed simulate` plans the same from the same profile.
sfl2_auto=("${unplanned[@]}" --experiment.method=sfl2 --model.split=auto --device.2.uplink_rate=500kbit)
"$mpiexec" --oversubscribe -np 3 "$cmlbed" run "${sfl2_auto[@]}" --plan.profile="$work/profile.json" \
  --output.file="$work/sfl2-auto.h5" >"$work/sfl2-auto.out" 2>&1 || { cat "$work/sfl2-auto.out"; fail "sfl2 auto: run failed"; }
"$cmlbed" simulate "${sfl2_auto[@]}" --devices 2 --profile "$work/profile.json" --output.file="$work/sim-sfl2-auto.h5" \
  >"$work/sim-sfl2-auto.out" 2>&1 || { cat "$work/sim-sfl2-auto.out"; fail "sfl2 auto: simulate failed"; }
"$python" - "$work" <<'PY' || failures=$((failures + 1))
import sys
import h5py
work = sys.argv[1]
with h5py.File(f"{work}/sfl2-auto.h5", "r") as run, h5py.File(f"{work}/sim-sfl2-auto.h5", "r") as sim:
    splits = [int(s) for s in run["plan"]["device_split"][:]]
    simulated = [int(s) for s in sim["plan"]["device_split"][:]]
    counts = [int(m) for m in run["plan"]["device_micro_batches"][:]]
print(f"sfl2 auto: splits {splits} (simulate: {simulated}), micro-batches {counts}")
bad = []
if len(set(splits)) != 1: bad.append(f"sfl2 auto gave the devices different splits {splits}")
if simulated != splits: bad.append(f"simulate chose {simulated}, the run {splits}")
if counts != [1, 1]: bad.append(f"sfl2 auto chose micro-batches {counts}")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# plan.replan = on_change: the uplink is thin (0.5 mbit) until 1 s and fast from then on,
# within round 1, so after round 1 the run re-plans (test_methods checks what that does to
# the weights). `cmlbed simulate` of the same configuration and profile re-plans after the
# same round to the same plan, with the same prediction, and its later rounds upload what
# the run's uploaded, byte for byte.
printf 't_seconds,rate\n0,0.5mbit\n1,1000mbit\n' >"$work/rising.csv"
replanning=("${unplanned[@]}" --experiment.method=pipar --pipar.micro_batches=2
            --model.split=auto --plan.replan=on_change --network.uplink_trace="$work/rising.csv"
            --network.burst=16kb)
"$mpiexec" --oversubscribe -np 3 "$cmlbed" run "${replanning[@]}" --plan.profile="$work/profile.json" \
  --output.file="$work/replan.h5" >"$work/replan.out" 2>&1 || { cat "$work/replan.out"; fail "replan: run failed"; }
"$cmlbed" simulate "${replanning[@]}" --devices 2 --profile "$work/profile.json" \
  --output.file="$work/sim-replan.h5" >"$work/sim-replan.out" 2>&1 || { cat "$work/sim-replan.out"; fail "replan: simulate failed"; }
grep -q "^plan: after round 1 .*re-planned" "$work/sim-replan.out" || { cat "$work/sim-replan.out"; fail "replan: simulate printed no re-plan"; }
"$python" - "$work" <<'PY' || failures=$((failures + 1))
import sys
import h5py
import numpy as np
work = sys.argv[1]
bad = []
with h5py.File(f"{work}/replan.h5", "r") as run, h5py.File(f"{work}/sim-replan.h5", "r") as sim:
    if "plan/replans" not in run or "plan/replans" not in sim:
        bad.append(f"/plan/replans: run {'plan/replans' in run}, simulate {'plan/replans' in sim}")
    else:
        for column in ("round", "device", "split", "micro_batches", "changed", "uplink_bits_per_second",
                       "predicted_round_s", "previous_plan_round_s"):
            a, b = run[f"plan/replans/{column}"][:], sim[f"plan/replans/{column}"][:]
            if a.shape != b.shape or not np.allclose(a, b, rtol=1e-9, equal_nan=True):
                bad.append(f"replans/{column}: run {a.tolist()}, simulate {b.tolist()}")
        if not run["plan/replans/changed"][:].all():
            bad.append("the run kept its plan: the test's link change did not move it")
    real, simulated = run["rounds"][:], sim["rounds"][:]
    for column in ("bytes_up", "bytes_down", "messages_up", "messages_down"):
        if not np.array_equal(real[column], simulated[column]):
            bad.append(f"replan: {column} measured {real[column].tolist()} simulated {simulated[column].tolist()}")
    if real["bytes_up"][1] == real["bytes_up"][0]:
        bad.append("the run's uploads did not change after the re-plan")
    measured, predicted = real["wall_s"][1:].mean(), simulated["wall_s"][1:].mean()
    print(f"replan: after round 1 to splits {sim['plan/replans/split'][:].tolist()}; round 2 measured "
          f"{measured:.3f} s, simulated {predicted:.3f} s ({predicted / measured - 1:+.1%})")
    if abs(predicted / measured - 1) > 0.35:
        bad.append(f"replan: simulated round 2 {predicted:.3f} s vs measured {measured:.3f} s")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# A model with batch norm (VGG-5, split 2: conv1 with its norm): a model message carries
# the running statistics with the parameters (417 values, not 352), sl's hand-overs and
# returns included; the simulated bytes must be the run's to the byte.
# One round and a quick profile: only the bytes are compared.
vgg=("${settings[@]/--model.name=lenet/--model.name=vgg5}")
vgg=("${vgg[@]/--experiment.rounds=2/--experiment.rounds=1}" --experiment.method=sl)
if "$mpiexec" --oversubscribe -np 3 "$cmlbed" profile "${vgg[@]}" --repeats 1 --warmup 1 -o "$work/vgg-profile.json" \
     >"$work/vgg.out" 2>&1 &&
   "$mpiexec" --oversubscribe -np 3 "$cmlbed" run "${vgg[@]}" --output.file="$work/run-vgg.h5" >>"$work/vgg.out" 2>&1 &&
   "$cmlbed" simulate "${vgg[@]}" --devices 2 --profile "$work/vgg-profile.json" --output.file="$work/sim-vgg.h5" \
     >>"$work/vgg.out" 2>&1; then
  "$python" - "$work" <<'PY' || fail "sl on vgg5: simulated bytes are not the run's"
import sys
import h5py
import numpy as np
work = sys.argv[1]
with h5py.File(f"{work}/run-vgg.h5", "r") as f, h5py.File(f"{work}/sim-vgg.h5", "r") as g:
    real, sim = f["rounds"][:], g["rounds"][:]
print(f"sl on vgg5: bytes up/down measured {real['bytes_up'].tolist()} / {real['bytes_down'].tolist()}, "
      f"simulated {sim['bytes_up'].tolist()} / {sim['bytes_down'].tolist()}")
sys.exit(0 if all(np.array_equal(real[c], sim[c]) for c in ("bytes_up", "bytes_down")) else 1)
PY
else
  cat "$work/vgg.out"
  fail "sl on vgg5: profile, run or simulate failed"
fi

# Bad input: exit status 2, one line.
for bad in "--experiment.method=fl --model.split=auto|auto needs experiment.method = sfl, pipar, sfl2 or psl" \
           "--experiment.method=sfl --device.2.micro_batches=auto|only pipar uses micro-batches"; do
  "$mpiexec" --oversubscribe -np 3 "$cmlbed" run "${unplanned[@]}" ${bad%%|*} --output.file="$work/bad.h5" \
    >/dev/null 2>"$work/err"
  status=$?
  ((status == 2)) && grep -q "${bad#*|}" "$work/err" || { cat "$work/err"; fail "${bad%%|*}: status $status"; }
done
"$cmlbed" simulate "${unplanned[@]}" --experiment.method=fl --model.split=auto --devices 2 \
  --profile "$work/profile.json" --output.file="$work/fl-auto.h5" >/dev/null 2>"$work/err"
status=$?
((status == 2)) && grep -q "auto needs experiment.method = sfl, pipar, sfl2 or psl" "$work/err" || { cat "$work/err"; fail "simulate fl auto: status $status"; }
"$cmlbed" simulate "${settings[@]}" --experiment.method=transfer --devices 2 --profile "$work/profile.json" \
  --output.file="$work/transfer.h5" >/dev/null 2>"$work/err"
status=$?
((status == 2)) && grep -q "transfer cannot be simulated" "$work/err" || { cat "$work/err"; fail "transfer: status $status"; }
"$cmlbed" simulate "${settings[@]/--model.name=lenet/--model.name=vgg5}" --devices 2 --profile "$work/profile.json" \
  --output.file="$work/vgg.h5" >/dev/null 2>"$work/err"
status=$?
((status == 2)) && grep -q "the profile is of model lenet" "$work/err" || { cat "$work/err"; fail "vgg5: status $status"; }
# --events totals: /event_totals instead of /ranks, holding every event of the file with all
# of them summed, the rounds table the same; the report summarises it and says so, and
# refuses to draw it. A device with less than one mini-batch of data is refused, as the
# run stops there.
"$cmlbed" simulate "${settings[@]}" --experiment.method=pipar --devices 2 --profile "$work/profile.json" \
  --events totals --output.file="$work/sim-totals.h5" >"$work/sim-totals.out" 2>&1 ||
  { cat "$work/sim-totals.out"; fail "simulate --events totals failed"; }
grep -q "summed per rank, round, lane, kind and message" "$work/sim-totals.out" ||
  { cat "$work/sim-totals.out"; fail "simulate --events totals did not say so"; }
"$python" - "$work" <<'PY' || fail "--events totals: the totals do not add up to the events"
import sys
import h5py
import numpy as np
work = sys.argv[1]
with h5py.File(f"{work}/sim-pipar.h5", "r") as f:
    events = [f["ranks/%d/events" % r][()] for r in range(f.attrs["mpi_size"])]
    rounds = f["rounds"][()]
with h5py.File(f"{work}/sim-totals.h5", "r") as f:
    assert f.attrs["event_detail"] == "totals" and "ranks" not in f, "no /ranks in a totals file"
    totals = f["event_totals"][()]
    assert np.array_equal(f["rounds"]["busy_s"], rounds["busy_s"]), "busy_s differs"
for r, table in enumerate(events):
    mine = totals[totals["rank"] == r]
    assert mine["count"].sum() == len(table), (r, mine["count"].sum(), len(table))
    assert mine["bytes"].sum() == table["bytes"].sum(), r
    seconds = ((table["t_end_ns"] - table["t_start_ns"]) * 1e-9).sum()
    assert abs(mine["seconds"].sum() - seconds) < 1e-9, (r, mine["seconds"].sum(), seconds)
PY
"$python" "$report" summary "$work/sim-totals.h5" >"$work/report-totals.out" 2>&1 &&
  grep -q "Events kept as totals" "$work/report-totals.out" ||
  { cat "$work/report-totals.out"; fail "cmlbed-report summary on a totals file"; }
"$python" "$report" timeline "$work/sim-totals.h5" -o "$work/totals.png" >"$work/err" 2>&1
status=$?
((status != 0)) && grep -q "keeps its events as totals" "$work/err" || { cat "$work/err"; fail "timeline of totals: status $status"; }
"$cmlbed" simulate "${settings[@]}" --devices 30 --profile "$work/profile.json" --output.file="$work/small.h5" \
  >/dev/null 2>"$work/err"
status=$?
((status == 2)) && grep -q "holds 20 training samples, fewer than one mini-batch of 32" "$work/err" ||
  { cat "$work/err"; fail "30 devices of 20 samples: status $status"; }
"$cmlbed" simulate "${settings[@]}" --devices 2 --events some --profile "$work/profile.json" \
  --output.file="$work/some.h5" >/dev/null 2>"$work/err"
status=$?
((status == 2)) && grep -q "expected all, totals or auto" "$work/err" || { cat "$work/err"; fail "--events some: status $status"; }
((failures == 0)) && echo "simulate_job: ok"
exit $((failures > 0))
