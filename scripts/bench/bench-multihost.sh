#!/usr/bin/env bash
# bench-multihost.sh - round times of one job on a cluster of network namespaces
# (scripts/tools/netns-cluster.sh: 1 server + D devices, one rank per host, Open MPI over TCP),
# with each device's links shaped at the same rates by cmlbed or by the kernel:
#   cmlbed  cmlbed's own token buckets (network.uplink_rate/downlink_rate/burst), no qdisc
#   kernel  tc tbf on the device host's eth0 (uplink) and on the bridge's port to it
#           (downlink), rate/burst as given; cmlbed's rates removed from the configuration
#   kernel-payload  the same with the tbf rates raised by frame/payload of a full TCP
#           segment (1514/1448 at MTU 1500: Ethernet 14 + IPv4 20 + TCP 20 + timestamps
#           12 bytes around 1448 of payload), i.e. the rate that carries the given rate
#           of payload: what is left between it and cmlbed is not the headers
# The modes alternate (cmlbed, kernel, ..., then the reverse order) so that the machine's
# load drifts over both alike. Two workloads: the configuration (default: the main job's
# pipar run) and, unless --transfer-bytes 0, the transfer job (no compute: every device
# sends that many bytes up and gets as many back each round: the links alone).
#
# Needs: root, iproute2, util-linux, a built build/cmlbed, Debian's /usr/bin/python3
# (h5py). No network delay: netem is not used (and may be missing), so the
# configuration's network.delay and jitter are set to 0 in both modes.
#
# Usage: scripts/bench/bench-multihost.sh [--config FILE] [--devices D] [--rounds R]
#          [--iterations N] [--slowdown K] [--repeats K] [--up RATE] [--down RATE] [--burst SIZE]
#          [--transfer-bytes SIZE] [--json FILE] [--cmlbed BINARY]
#   --config          job to time (default configs/quickstart/pipar.ini); its
#                     [network] rates are replaced, [device.K] link settings are refused
#   --devices         device ranks (default 2; hosts = devices + 1)
#   --rounds          rounds per run (default 4); the first of each run is a warm-up
#                     (TCP connections made, first allocations) left out of the medians
#   --iterations      train.local_iterations (default: the configuration's)
#   --slowdown        devices.slowdown (default: the configuration's; 1 makes the main
#                     job's rounds bound by the links rather than by compute, which on a
#                     busy machine is stretched from contended measurements)
#   --repeats         runs per mode and workload (default 3)
#   --up/--down       each device's uplink/downlink rate (default 10mbit / 25mbit, as
#                     the main job; tc units, which cmlbed shares)
#   --burst           token bucket of every link (default 32kb)
#   --transfer-bytes  the transfer workload's message size (default 4MiB; 0 = skip it)
#   --modes           which of cmlbed, kernel, kernel-payload to run (default all three)
#   --json            output (default <repo>/results/bench-multihost.json)
#   --cmlbed          the binary (default <repo>/build/cmlbed)
#
# Printed and written: per workload and mode the median round time (s) over rounds 2..R
# of every run and its ratio to cmlbed's, and for the kernel runs the bytes the tbf
# qdiscs passed against the bytes cmlbed counted in its rounds (the kernel charges whole
# frames: Ethernet, IP and TCP headers, Open MPI's TCP framing, the other direction's
# ACKs, plus the traffic between rounds and at start-up, which cmlbed does not shape).
set -Eeuo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
config=$repo/configs/quickstart/pipar.ini
devices=2 rounds=4 iterations="" slowdown="" repeats=3
up=10mbit down=25mbit burst=32kb transfer_bytes=4MiB modes="cmlbed kernel kernel-payload"
json=$repo/results/bench-multihost.json
cmlbed=$repo/build/cmlbed
python=/usr/bin/python3

usage() { sed -n '2,/^set -Eeuo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "bench-multihost: error: $*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
  [[ $1 == -h || $1 == --help ]] && { usage; exit 0; }
  [[ $# -ge 2 ]] || die "$1 needs a value (see --help)"
  case $1 in
    --config) config=$2 ;;
    --devices) devices=$2 ;;
    --rounds) rounds=$2 ;;
    --iterations) iterations=$2 ;;
    --slowdown) slowdown=$2 ;;
    --repeats) repeats=$2 ;;
    --up) up=$2 ;;
    --down) down=$2 ;;
    --burst) burst=$2 ;;
    --transfer-bytes) transfer_bytes=$2 ;;
    --modes) modes=$2 ;;
    --json) json=$2 ;;
    --cmlbed) cmlbed=$2 ;;
    *) echo "bench-multihost: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
  shift 2
done
[[ $devices =~ ^[1-9][0-9]?$ ]] || die "--devices must be 1..99 (got '$devices')"
[[ $rounds =~ ^[1-9][0-9]*$ && $rounds -ge 2 ]] || die "--rounds must be >= 2 (the first is a warm-up)"
[[ $repeats =~ ^[1-9][0-9]*$ ]] || die "--repeats must be a positive integer (got '$repeats')"
[[ -z $iterations || $iterations =~ ^[1-9][0-9]*$ ]] || die "--iterations must be a positive integer"
for mode in $modes; do
  [[ $mode =~ ^(cmlbed|kernel|kernel-payload)$ ]] || die "unknown mode '$mode' (cmlbed, kernel, kernel-payload)"
done
[[ " $modes " == *" cmlbed "* ]] || die "--modes needs cmlbed (the reference)"
[[ $(id -u) -eq 0 ]] || die "must run as root (network namespaces, veth pairs, tc)"
[[ -x $cmlbed ]] || die "$cmlbed not found: build it first (cmake --build build --target cmlbed)"
[[ -f $config ]] || die "no configuration $config"
config=$(realpath "$config")
"$python" -c 'import h5py' 2>/dev/null || die "$python lacks h5py (Debian: python3-h5py)"
# Per-device link settings would be shaped by cmlbed in the kernel runs too.
if grep -Eq '^\s*\[device\.' "$config"; then
  die "$config has [device.K] sections; this benchmark shapes every device alike"
fi
source "$repo/scripts/mpi-env.sh"

work=$(mktemp -d /tmp/cmlbed-bench-multihost.XXXXXX)
cluster=$repo/scripts/tools/netns-cluster.sh
cleanup() {
  bash "$cluster" down "$work" || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The configuration without its link rates and traces: cmlbed leaves the links alone
# (an empty rate cannot be given on the command line).
grep -Ev '^\s*(uplink_rate|downlink_rate|uplink_trace|downlink_trace)\s*=' "$config" >"$work/unshaped.ini"

hosts=$((devices + 1))
bash "$cluster" up "$work" "$hosts" >/dev/null
device_hosts=$(awk '!/^#/ && $1 != "h1" { print $1 }' "$work/hosts")
bridge_ns=$(cat "$work/bridge")

# kernel-payload's rates: RATE x frame / payload of a full-size TCP segment on eth0.
mtu=$(ip -n "$(awk '$1 == "h2" { print $2 }' "$work/hosts")" -j link show eth0 |
      "$python" -c 'import json, sys; print(json.load(sys.stdin)[0]["mtu"])')
frame_over_payload() { "$python" -c 'import sys; m = int(sys.argv[1]); print((m + 14) / (m - 52))' "$mtu"; }
# payload_rate RATE: RATE (tc units) x frame/payload, in bit/s.
payload_rate() {
  "$python" - "$1" "$(frame_over_payload)" <<'PY'
import re, sys
units = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12, "kibit": 2**10,
         "mibit": 2**20, "gibit": 2**30, "tibit": 2**40, "bps": 8, "kbps": 8e3, "mbps": 8e6,
         "gbps": 8e9, "tbps": 8e12, "kibps": 8 * 2**10, "mibps": 8 * 2**20,
         "gibps": 8 * 2**30, "tibps": 8 * 2**40}
m = re.fullmatch(r"([0-9]*\.?[0-9]+)([a-z]*)", sys.argv[1].lower())
if not m or (m.group(2) or "bit") not in units:
    sys.exit("bench-multihost: error: cannot read the rate '%s'" % sys.argv[1])
print("%dbit" % round(float(m.group(1)) * units[m.group(2) or "bit"] * float(sys.argv[2])))
PY
}
up_payload=$(payload_rate "$up") down_payload=$(payload_rate "$down")

# tbf_bytes: bytes every device's uplink qdiscs and downlink qdiscs passed (two numbers).
tbf_bytes() {
  local host ns up_total=0 down_total=0 n
  for host in $device_hosts; do
    ns=$(awk -v h="$host" '$1 == h { print $2 }' "$work/hosts")
    n=$(tc -n "$ns" -s -j qdisc show dev eth0 | "$python" -c \
        'import json, sys; print(sum(q["bytes"] for q in json.load(sys.stdin) if q["kind"] == "tbf"))')
    up_total=$((up_total + n))
    n=$(tc -n "$bridge_ns" -s -j qdisc show dev "$host" | "$python" -c \
        'import json, sys; print(sum(q["bytes"] for q in json.load(sys.stdin) if q["kind"] == "tbf"))')
    down_total=$((down_total + n))
  done
  echo "$up_total $down_total"
}

# No checkpoints: their state travels to rank 0 between rounds, through the tbf in the
# kernel runs, which would lengthen the runs and blur the tbf's byte counts.
common=(--experiment.rounds="$rounds" --network.delay=0ms --network.jitter=0ms
        --output.progress=false --output.overwrite=true --output.checkpoint=0)
[[ -n $iterations ]] && common+=(--train.local_iterations="$iterations")
[[ -n $slowdown ]] && common+=(--devices.slowdown="$slowdown")
shaped=(--network.uplink_rate="$up" --network.downlink_rate="$down" --network.burst="$burst")

# run WORKLOAD MODE REPEAT: one run; appends a JSON line to $work/runs.jsonl.
run() {
  local workload=$1 mode=$2 repeat=$3 file=$work/$1-$2-$3.h5 args=()
  case $workload in
    config) args=(--config "$([[ $mode == cmlbed ]] && echo "$config" || echo "$work/unshaped.ini")") ;;
    transfer) args=(--experiment.method=transfer --transfer.bytes="$transfer_bytes" --transfer.compute=0ms) ;;
  esac
  bash "$cluster" unshape "$work"
  if [[ $mode == kernel ]]; then
    # Fresh qdiscs: full buckets and zeroed counters for every run.
    for host in $device_hosts; do bash "$cluster" shape "$work" "$host" "$up" "$down" "$burst"; done
  elif [[ $mode == kernel-payload ]]; then
    for host in $device_hosts; do
      bash "$cluster" shape "$work" "$host" "$up_payload" "$down_payload" "$burst"
    done
  else
    args+=("${shaped[@]}")
  fi
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  (cd "$repo" && bash "$cluster" mpirun "$work" -np "$hosts" "$cmlbed" run "${args[@]}" "${common[@]}" \
    --output.file="$file") >"$work/run.out" 2>&1 &
  wait $! || { tail -20 "$work/run.out" >&2; die "$workload/$mode run $repeat failed"; }
  local counted="null"
  [[ $mode == kernel* ]] && counted=$(tbf_bytes | awk '{ printf "[%s, %s]", $1, $2 }')
  "$python" - "$file" "$workload" "$mode" "$repeat" "$load" "$counted" >>"$work/runs.jsonl" <<'PY'
import json, sys, h5py
path, workload, mode, repeat, load, tbf = sys.argv[1:7]
with h5py.File(path, "r") as f:
    r = f["rounds"][:]
    hosts = [h.decode() if isinstance(h, bytes) else str(h) for h in f.attrs["hosts"]]
    print(json.dumps({"workload": workload, "mode": mode, "repeat": int(repeat),
                      "method": str(f.attrs["method"]), "hosts": hosts,
                      "load_average_1min": float(load),
                      "round_seconds": [float(x) for x in r["wall_s"]],
                      "bytes_up": int(r["bytes_up"].sum()), "bytes_down": int(r["bytes_down"].sum()),
                      "tbf_bytes_up_down": json.loads(tbf)}))
PY
  "$python" -c '
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
print("  %-8s %-6s run %d: rounds %s s  (load %.1f)" % (r["workload"], r["mode"], r["repeat"],
      " ".join("%.3f" % s for s in r["round_seconds"]), r["load_average_1min"]))' "$work/runs.jsonl"
}

workloads=(config)
[[ $transfer_bytes != 0 ]] && workloads+=(transfer)
echo "bench-multihost: $hosts hosts (1 server + $devices devices); every device link: up $up, down $down, burst $burst"
echo "  config: $config ($rounds rounds${iterations:+, $iterations iterations}${slowdown:+, slowdown $slowdown}); transfer: $transfer_bytes; repeats: $repeats"
echo "  modes: $modes (kernel-payload: up $up_payload, down $down_payload, frame/payload $(frame_over_payload) at MTU $mtu)"
: >"$work/runs.jsonl"
for ((repeat = 1; repeat <= repeats; repeat++)); do
  # Odd repeats in the given order, even ones reversed: drifts in load fall on every mode.
  read -r -a order <<<"$modes"
  if ((repeat % 2 == 0)); then mapfile -t order < <(printf '%s\n' "${order[@]}" | tac); fi
  for workload in "${workloads[@]}"; do
    for mode in "${order[@]}"; do run "$workload" "$mode" "$repeat"; done
  done
done

mkdir -p "$(dirname "$json")"
"$python" - "$work/runs.jsonl" "$json" "$config" "$up" "$down" "$burst" "$transfer_bytes" "$devices" \
  "$up_payload" "$down_payload" "$(frame_over_payload)" "${common[*]}" <<'PY'
import json, statistics, sys, time, platform
(runs_path, out, config, up, down, burst, transfer_bytes, devices, up_payload, down_payload,
 ratio, overrides) = sys.argv[1:13]
runs = [json.loads(line) for line in open(runs_path) if line.strip()]
results = []
print()
print("%-9s %-15s %5s %9s %8s %8s %14s %20s" % ("workload", "mode", "runs", "median s",
      "min s", "max s", "x cmlbed", "tbf / counted bytes"))
for workload in dict.fromkeys(r["workload"] for r in runs):
    reference = None
    for mode in dict.fromkeys(r["mode"] for r in runs):
        mine = [r for r in runs if r["workload"] == workload and r["mode"] == mode]
        rounds = [s for r in mine for s in r["round_seconds"][1:]]  # round 1: warm-up
        entry = {"workload": workload, "method": mine[0]["method"], "mode": mode,
                 "runs": len(mine), "rounds_timed": len(rounds),
                 "median_round_seconds": statistics.median(rounds),
                 "min_round_seconds": min(rounds), "max_round_seconds": max(rounds),
                 "round_seconds_per_run": [r["round_seconds"] for r in mine],
                 "load_average_1min": [r["load_average_1min"] for r in mine],
                 "hosts": mine[0]["hosts"]}
        if mode.startswith("kernel"):
            entry["tbf_bytes_over_counted_up"] = statistics.median(
                r["tbf_bytes_up_down"][0] / r["bytes_up"] for r in mine)
            entry["tbf_bytes_over_counted_down"] = statistics.median(
                r["tbf_bytes_up_down"][1] / r["bytes_down"] for r in mine)
        if mode == "cmlbed":
            reference = entry
        results.append(entry)
    for entry in results:
        if entry["workload"] != workload:
            continue
        entry["median_over_cmlbed"] = entry["median_round_seconds"] / reference["median_round_seconds"]
        entry["min_over_cmlbed"] = entry["min_round_seconds"] / reference["min_round_seconds"]
        counted = ("up %.3f down %.3f" % (entry["tbf_bytes_over_counted_up"],
                                          entry["tbf_bytes_over_counted_down"])
                   if "tbf_bytes_over_counted_up" in entry else "")
        print("%-9s %-15s %5d %9.3f %8.3f %8.3f %14s %20s" % (
            workload, entry["mode"], entry["runs"], entry["median_round_seconds"],
            entry["min_round_seconds"], entry["max_round_seconds"],
            "%.3f" % entry["median_over_cmlbed"], counted))
doc = {"tool": "bench-multihost.sh", "config": config, "overrides": overrides.split(),
       "devices": int(devices),
       "uplink_rate": up, "downlink_rate": down, "burst": burst,
       "kernel_payload_rates": {"uplink": up_payload, "downlink": down_payload,
                                "frame_over_payload": float(ratio)},
       "transfer_bytes": transfer_bytes, "kernel": platform.release(),
       "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
       "notes": "median_round_seconds over rounds 2.. of every run (round 1 is a warm-up); "
                "cmlbed: cmlbed's token buckets, no qdisc; kernel: tc tbf on each device's "
                "uplink and downlink at the same rates, cmlbed unshaped; kernel-payload: tbf "
                "rates x frame_over_payload; tbf_bytes_over_counted: bytes the tbf qdiscs "
                "passed (whole frames, the whole run) / bytes cmlbed counted in its rounds",
       "runs": runs, "results": results}
with open(out, "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
print("\nJSON written to " + out)
PY
