#!/usr/bin/env bash
# How `cmlbed simulate` and `cmlbed plan` grow with the device count: one round of
# configs/quickstart/pipar.ini for 1,000 to 100,000 devices (simulate) and `auto` planned for
# 100 to 10,000 devices (plan; with --every-candidate for 100 and 1,000), each REPEATS times
# (default 3); prints the median wall time and peak resident memory (GNU time's %e and %M)
# per count and writes JSON (for plan, also how many candidates it simulated and how many
# their bound skipped, and what --every-candidate costs against it).
# The devices' data: a synthetic set of 32 samples (one mini-batch) per device with
# Fashion-MNIST's shape; the run stops on a device with less than one mini-batch, and so
# does the simulator. Every device trains train.local_iterations = 10 mini-batches whatever
# its share, so the schedule is the quickstart's. One profile of the quickstart config
# (mpirun, 4 ranks) serves every count.
# Each device is its own machine here (--plan.host_cores=0): a deployment, not its emulation
# on this host.
#
#   scripts/bench/bench-simulate-scale.sh [OUT.json]
#   (SIMULATE_COUNTS="1000 3000 10000 30000 100000" PLAN_COUNTS="100 1000 10000"
#    PLAN_EVERY_COUNTS="100 1000" REPEATS=3;
#    an empty list skips that command)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-results/bench-simulate-scale.json}
cd "$root"
source scripts/mpi-env.sh
source scripts/dev/tool-checks.sh
cmlbed_binary bench-simulate-scale.sh
[[ -x /usr/bin/time ]] || { echo "bench-simulate-scale.sh: needs GNU time (apt-get install time)" >&2; exit 1; }
repeats=${REPEATS:-3}
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "bench-simulate-scale.sh: REPEATS: a count >= 1" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
config=configs/quickstart/pipar.ini
echo "== profile of $config (mpirun -np 4)" >&2
mpirun --oversubscribe -np 4 "$cmlbed" profile --config "$config" -o "$work/profile.json" >"$work/profile.out" 2>&1 ||
  { cat "$work/profile.out"; exit 1; }

# measure KIND N REP COMMAND...: one timed run, "KIND N REP SECONDS KB" appended to the list.
measure() {
  local kind=$1 n=$2 rep=$3
  shift 3
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >"$work/$kind-$n-$rep.out" 2>&1 ||
    { cat "$work/$kind-$n-$rep.out"; exit 1; }
  echo "$kind $n $rep $(cat "$work/time")" >>"$work/times"
  echo "   $kind $n devices, try $rep: $(cat "$work/time") (s, KB)" >&2
}
data() { echo --data.dataset=synthetic --data.synthetic_train=$((32 * $1)) --data.synthetic_test=1000; }
: >"$work/times"
for n in ${SIMULATE_COUNTS-1000 3000 10000 30000 100000}; do
  echo "== simulate, $n devices" >&2
  for rep in $(seq "$repeats"); do
    measure simulate "$n" "$rep" "$cmlbed" simulate --config "$config" --profile "$work/profile.json" --plan.host_cores=0 \
      --devices "$n" --experiment.rounds=1 $(data "$n") --output.file="$work/sim.h5" --output.overwrite=true
  done
  ls -l "$work/sim.h5" | awk -v n="$n" '{ print "file", n, $5 }' >>"$work/times"
  grep -o "events: [0-9]* summed" "$work/simulate-$n-1.out" | awk -v n="$n" '{ print "totals", n, $2 }' >>"$work/times" || true
done
for n in ${PLAN_COUNTS-100 1000 10000}; do
  echo "== plan (split and micro-batches auto), $n devices" >&2
  for rep in $(seq "$repeats"); do
    measure plan "$n" "$rep" "$cmlbed" plan --config "$config" --profile "$work/profile.json" --plan.host_cores=0 --devices "$n" \
      --model.split=auto --pipar.micro_batches=auto $(data "$n")
  done
  grep -h "^chosen:" "$work/plan-$n-1.out" | sed "s/^/plan $n /" >>"$work/chosen" || true
  grep -h " simulations; " "$work/plan-$n-1.out" | awk -v n="$n" '{ print "searched", n, $1, $3 }' >>"$work/times" || true
done
# The same plans with every candidate simulated (--every-candidate): what skipping by the
# bound saves, and that it chooses the same.
for n in ${PLAN_EVERY_COUNTS-100 1000}; do
  echo "== plan --every-candidate, $n devices" >&2
  for rep in $(seq "$repeats"); do
    measure plan-every "$n" "$rep" "$cmlbed" plan --config "$config" --profile "$work/profile.json" --plan.host_cores=0 --devices "$n" \
      --model.split=auto --pipar.micro_batches=auto --every-candidate $(data "$n")
  done
  grep -h "^chosen:" "$work/plan-every-$n-1.out" | sed "s/^/plan --every-candidate $n /" >>"$work/chosen" || true
done
python=python3
"$python" -c "import json" 2>/dev/null || python=/usr/bin/python3
mkdir -p "$(dirname "$out")"
"$python" - "$work" "$out" "$(uptime)" "$("$cmlbed" --version 2>/dev/null | head -1)" <<'PY'
import json, statistics, sys
work, out, load, version = sys.argv[1:5]
runs, files, totals, searched = {}, {}, {}, {}
for line in open(f"{work}/times"):
    fields = line.split()
    if fields[0] == "file":
        files[int(fields[1])] = int(fields[2])
    elif fields[0] == "totals":
        totals[int(fields[1])] = int(fields[2])
    elif fields[0] == "searched":
        searched[int(fields[1])] = (int(fields[2]), int(fields[3]))
    else:
        runs.setdefault((fields[0], int(fields[1])), []).append((float(fields[3]), int(fields[4])))
rows = []
print("command   devices  median s   median peak MiB  file MiB  events kept / candidates")
for (kind, n), tries in runs.items():
    seconds = statistics.median(t[0] for t in tries)
    mib = statistics.median(t[1] for t in tries) / 1024
    row = {"command": kind, "devices": n, "median_s": seconds, "median_peak_mib": mib,
           "seconds": [t[0] for t in tries], "peak_mib": [t[1] / 1024 for t in tries]}
    if kind == "simulate":
        row["file_mib"] = files[n] / 2**20
        row["events"] = "totals" if n in totals else "all"
    if kind == "plan" and n in searched:
        row["simulations"], row["skipped"] = searched[n]
    rows.append(row)
    print("%-8s %8d %9.2f %17.0f %9s  %s" % (kind, n, seconds, mib,
          "%.1f" % row["file_mib"] if "file_mib" in row else "-",
          row.get("events", "%d simulated, %d skipped" % searched[n] if kind == "plan" and n in searched else "-")))
medians = {(r["command"], r["devices"]): r["median_s"] for r in rows}
every_over_skipping = {n: medians[("plan-every", n)] / s for (kind, n), s in medians.items()
                       if kind == "plan" and ("plan-every", n) in medians}
for n, ratio in every_over_skipping.items():
    print("plan, %d devices: --every-candidate takes %.2fx the time" % (n, ratio))
json.dump({"benchmark": "simulate-scale", "cmlbed": version, "load": load.strip(), "rows": rows,
           "plan_every_candidate_over_skipping": every_over_skipping},
          open(out, "w"), indent=1)
print("(JSON: %s; %s)" % (out, load.strip()))
PY
[[ -s $work/chosen ]] && cat "$work/chosen"
exit 0
