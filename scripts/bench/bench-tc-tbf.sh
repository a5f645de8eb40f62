#!/usr/bin/env bash
# bench-tc-tbf.sh - reference measurements through the REAL kernel tc tbf qdisc,
# for side-by-side comparison with cmlbed's user-space tbf emulation.
#
# Builds two private network namespaces joined by a veth pair
#   ns A (sender)   veth-a 10.77.0.1/24  --tbf-->  veth-b 10.77.0.2/24   ns B (receiver)
# shapes the egress of veth-a with `tc qdisc replace ... tbf`, and times one
# TCP transfer of N bytes per repeat for every (rate, size) pair.
# Only these namespace-private addresses (and loopback) are used.  The namespaces
# are always deleted on exit (trap EXIT), also on errors and Ctrl-C.
#
# Needs: root, iproute2 (ip, tc; installed with apt-get if missing), python3
# (standard library only: socket, time, json, sys).  netem is NOT needed.
#
# Usage: scripts/bench/bench-tc-tbf.sh [--rates "10mbit 100mbit 1gbit"] [--sizes "1 8 64"]
#          [--burst 32kb] [--repeats 3] [--json FILE] [--quick]
#   --rates    tc rates (units as tc: bit kbit mbit gbit tbit, kibit..., bps kbps mbps gbps ...)
#   --sizes    message sizes in MiB (1 MiB = 1048576 bytes)
#   --burst    tbf bucket size (tc size units: b, k/kb, m/mb, g/gb, kbit, mbit, gbit; k = 1024)
#   --repeats  transfers per (rate, size); medians are reported
#   --json     output file (default: <repo>/results/bench-tc-tbf.json)
#   --quick    skip sizes > 8 MiB at rates < 100mbit (64 MiB at 10mbit alone is ~54 s per repeat)
#
# Notes on the numbers:
# * "seconds" is measured by the receiver from accept() returning (TCP handshake
#   complete) to the last of the N bytes read; "first_to_last_seconds" is from the
#   first byte read to the last byte read.
# * analytic_seconds = max(0, bytes - burst) * 8 / rate ignores headers: the first
#   `burst` bytes leave at line speed, the rest at the token rate.
# * tbf charges the whole frame against its rate: Ethernet + IP + TCP headers
#   (with timestamps) make a 1514-byte frame carry only 1448 payload bytes at the
#   default 1500-byte MTU, i.e. ~4.5% overhead (3-5% depending on options), plus
#   pure ACKs are not shaped here (they flow B->A).  So goodput somewhat below the
#   configured rate (~95%) is expected, not a bug.
# * GSO/TSO stays on (veth defaults); tbf segments GSO packets bigger than the
#   burst itself and charges per-segment header bytes for the rest.
set -Eeuo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

RATES="10mbit 100mbit 1gbit"
SIZES="1 8 64"
BURST="32kb"
REPEATS=3
JSON_OUT="$REPO_ROOT/results/bench-tc-tbf.json"
QUICK=0

usage() { sed -n '2,/^set -Eeuo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "bench-tc-tbf: error: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --rates) [[ $# -ge 2 ]] || die "--rates needs a value"; RATES=$2; shift 2 ;;
        --rates=*) RATES=${1#*=}; shift ;;
        --sizes) [[ $# -ge 2 ]] || die "--sizes needs a value"; SIZES=$2; shift 2 ;;
        --sizes=*) SIZES=${1#*=}; shift ;;
        --burst) [[ $# -ge 2 ]] || die "--burst needs a value"; BURST=$2; shift 2 ;;
        --burst=*) BURST=${1#*=}; shift ;;
        --repeats) [[ $# -ge 2 ]] || die "--repeats needs a value"; REPEATS=$2; shift 2 ;;
        --repeats=*) REPEATS=${1#*=}; shift ;;
        --json) [[ $# -ge 2 ]] || die "--json needs a value"; JSON_OUT=$2; shift 2 ;;
        --json=*) JSON_OUT=${1#*=}; shift ;;
        --quick) QUICK=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "bench-tc-tbf: unknown argument: $1" >&2; usage >&2; exit 1 ;;
    esac
done
[[ "$REPEATS" =~ ^[1-9][0-9]*$ ]] || die "--repeats must be a positive integer (got '$REPEATS')"
[[ -n "${RATES// }" ]] || die "--rates is empty"
[[ -n "${SIZES// }" ]] || die "--sizes is empty"

if [[ $(id -u) -ne 0 ]]; then
    echo "bench-tc-tbf: must run as root (creates network namespaces, veth links and tc qdiscs)." >&2
    echo "  try: sudo $0 $*" >&2
    exit 2
fi

if ! command -v ip >/dev/null 2>&1 || ! command -v tc >/dev/null 2>&1; then
    echo "bench-tc-tbf: ip/tc not found, installing iproute2 with apt-get ..." >&2
    command -v apt-get >/dev/null 2>&1 || die "iproute2 (ip, tc) is missing and apt-get is unavailable"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2 >/dev/null
    if ! command -v ip >/dev/null 2>&1 || ! command -v tc >/dev/null 2>&1; then die "iproute2 install failed"; fi
fi
command -v python3 >/dev/null 2>&1 || die "python3 is required (e.g. apt-get install python3)"
# Resolve the real interpreter once (avoids wrapper/shim start-up cost per transfer).
PY=$(python3 -c 'import sys; print(sys.executable)')

NS_A="cmlbed-tbf-a-$$"
NS_B="cmlbed-tbf-b-$$"
DEV_A=veth-a
DEV_B=veth-b
IP_A=10.77.0.1
IP_B=10.77.0.2
PORT=5201
TMP=$(mktemp -d /tmp/bench-tc-tbf.XXXXXX)
RECV_PID=""

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [[ -n "$RECV_PID" ]]; then kill "$RECV_PID" 2>/dev/null || true; wait "$RECV_PID" 2>/dev/null || true; fi
    ip netns del "$NS_A" 2>/dev/null || true   # deleting a namespace also destroys its veth end
    ip netns del "$NS_B" 2>/dev/null || true
    rm -rf "$TMP"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- python helpers
# Plan: parses tc rate/size units, applies --quick, estimates the run time.
# Prints "rate rate_bps size_mib bytes analytic_s timeout_s" lines to stdout,
# and human-readable info (burst, skipped, expected time) to fd 3.
cat >"$TMP/plan.py" <<'EOF'
import json, sys
rates, sizes, burst, repeats, quick, info_path = sys.argv[1:7]
repeats = int(repeats); quick = quick == "1"

RATE_UNITS = {  # as iproute2 tc get_rate(); case-insensitive
    "bit": 1, "kibit": 1024, "kbit": 1e3, "mibit": 1024**2, "mbit": 1e6,
    "gibit": 1024**3, "gbit": 1e9, "tibit": 1024**4, "tbit": 1e12,
    "bps": 8, "kibps": 8 * 1024, "kbps": 8e3, "mibps": 8 * 1024**2, "mbps": 8e6,
    "gibps": 8 * 1024**3, "gbps": 8e9, "tibps": 8 * 1024**4, "tbps": 8e12}
SIZE_UNITS = {  # as iproute2 get_size(); k = 1024
    "b": 1, "k": 1024, "kb": 1024, "kbit": 1024 / 8, "m": 1024**2, "mb": 1024**2,
    "mbit": 1024**2 / 8, "g": 1024**3, "gb": 1024**3, "gbit": 1024**3 / 8}

def split(s):
    i = 0
    while i < len(s) and (s[i].isdigit() or s[i] == "."):
        i += 1
    if i == 0:
        raise ValueError(s)
    return float(s[:i]), s[i:].lower()

def parse(s, units, what, bare):
    try:
        v, u = split(s)
    except ValueError:
        sys.exit("bench-tc-tbf: error: bad %s '%s'" % (what, s))
    if u == "":
        if bare is None:
            sys.exit("bench-tc-tbf: error: %s '%s' needs a unit (e.g. 10mbit)" % (what, s))
        u = bare
    if u not in units:
        sys.exit("bench-tc-tbf: error: unknown unit in %s '%s' (use one of %s)"
                 % (what, s, " ".join(sorted(units))))
    val = v * units[u]
    if val <= 0:
        sys.exit("bench-tc-tbf: error: %s '%s' must be > 0" % (what, s))
    return val

burst_bytes = int(parse(burst, SIZE_UNITS, "burst", "b"))
lines, skipped, total = [], [], 0.0
for r in rates.split():
    # A bare number means bytes/s to tc; insist on a unit to avoid that surprise.
    bps = parse(r, RATE_UNITS, "rate", None)
    for s in sizes.split():
        try:
            mib = float(s)
        except ValueError:
            sys.exit("bench-tc-tbf: error: bad size '%s' (MiB, e.g. 8)" % s)
        if mib <= 0:
            sys.exit("bench-tc-tbf: error: size '%s' must be > 0" % s)
        if quick and mib > 8 and bps < 100e6:
            skipped.append("%s x %s MiB" % (r, s))
            continue
        nbytes = int(round(mib * 1048576))
        analytic = max(0, nbytes - burst_bytes) * 8 / bps
        # ~5% header overhead + ~0.15 s of process start-up per transfer
        total += repeats * (analytic * 1.06 + 0.15)
        timeout = int(analytic * 3 + 30)
        lines.append("%s %r %s %d %r %d" % (r, bps, s, nbytes, analytic, timeout))
with open(info_path, "w") as f:
    json.dump({"burst_bytes": burst_bytes, "skipped": skipped,
               "expected_seconds": total}, f)
print("\n".join(lines))
EOF

# Receiver (runs in ns B): accept one connection, read exactly N bytes, report timings.
cat >"$TMP/recv.py" <<'EOF'
import json, socket, sys, time
addr, port, nbytes, tmo, ready = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((addr, port))
ls.listen(1)
ls.settimeout(tmo)
open(ready, "w").close()            # tell the driver we are listening
c, peer = ls.accept()
t_accept = time.perf_counter()
c.settimeout(tmo)
buf = bytearray(1 << 20)
mv = memoryview(buf)
got, t_first = 0, None
while got < nbytes:
    k = c.recv_into(mv[:min(len(buf), nbytes - got)])
    if k == 0:
        sys.exit("receiver: peer closed after %d of %d bytes" % (got, nbytes))
    if t_first is None:
        t_first = time.perf_counter()
    got += k
t_last = time.perf_counter()
c.close()
ls.close()
print(json.dumps({"bytes": got,
                  "seconds": t_last - t_accept,                 # accept -> last byte
                  "first_to_last_seconds": t_last - t_first}))  # first byte -> last byte
EOF

# Sender (runs in ns A): connect, send N bytes, half-close, wait for the peer's close.
cat >"$TMP/send.py" <<'EOF'
import json, socket, sys, time
addr, port, nbytes, tmo = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
deadline = time.monotonic() + 10
while True:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(tmo)
    try:
        s.connect((addr, port))
        break
    except OSError:
        s.close()
        if time.monotonic() > deadline:
            raise
        time.sleep(0.02)
chunk = memoryview(bytes(1 << 20))
t0 = time.perf_counter()
left = nbytes
while left > 0:
    k = min(left, len(chunk))
    s.sendall(chunk[:k])
    left -= k
t1 = time.perf_counter()
s.shutdown(socket.SHUT_WR)
while s.recv(65536):
    pass
t2 = time.perf_counter()
s.close()
print(json.dumps({"send_call_seconds": t1 - t0, "until_peer_close_seconds": t2 - t0}))
EOF

# Report: medians, table, JSON file.
cat >"$TMP/report.py" <<'EOF'
import json, sys
runs_path, info_path, out_path, repeats, quick, kernel = sys.argv[1:7]
info = json.load(open(info_path))
burst = info["burst_bytes"]

def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2

groups = {}
for line in open(runs_path):
    if not line.strip():
        continue
    r = json.loads(line)
    key = (r["rate"], r["size_mib"])
    if key not in groups:
        groups[key] = {"rate": r["rate"], "rate_bits_per_second": r["rate_bps"],
                       "size_mib": float(r["size_mib"]), "bytes": r["recv"]["bytes"],
                       "tc": r["tc"], "runs": []}
    groups[key]["runs"].append(r)

results = []
for g in groups.values():
    runs = g.pop("runs")
    secs = [x["recv"]["seconds"] for x in runs]
    f2l = [x["recv"]["first_to_last_seconds"] for x in runs]
    good = [g["bytes"] * 8 / s for s in secs]
    g.update({
        "seconds": secs,
        "first_to_last_seconds": f2l,
        "goodput_bits_per_second": good,
        "sender": [x["send"] for x in runs],
        "median_seconds": median(secs),
        "median_first_to_last_seconds": median(f2l),
        "median_goodput_bits_per_second": median(good),
        "analytic_seconds": max(0, g["bytes"] - burst) * 8 / g["rate_bits_per_second"],
    })
    g["goodput_over_rate"] = g["median_goodput_bits_per_second"] / g["rate_bits_per_second"]
    g["median_over_analytic"] = (g["median_seconds"] / g["analytic_seconds"]
                                 if g["analytic_seconds"] > 0 else None)
    results.append(g)

doc = {"tool": "tc tbf on veth", "burst_bytes": burst, "repeats": int(repeats),
       "quick": quick == "1", "skipped": info["skipped"], "kernel": kernel,
       "timestamp": __import__("time").strftime("%Y-%m-%dT%H:%M:%S%z"),
       "notes": "seconds: receiver accept() -> last byte; analytic_seconds = "
                "max(0, bytes - burst_bytes) * 8 / rate (headers ignored, so goodput "
                "below rate by ~3-5% is expected)",
       "results": results}
with open(out_path, "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")

hdr = "%-9s %9s %11s %11s %16s %14s" % ("rate", "size MiB", "median s", "analytic s",
                                         "goodput mbit/s", "goodput/rate %")
print(hdr)
print("-" * len(hdr))
for g in results:
    print("%-9s %9g %11.3f %11.3f %16.2f %14.1f" % (
        g["rate"], g["size_mib"], g["median_seconds"], g["analytic_seconds"],
        g["median_goodput_bits_per_second"] / 1e6, 100 * g["goodput_over_rate"]))
if info["skipped"]:
    print("skipped (--quick): " + ", ".join(info["skipped"]))
EOF

# ---------------------------------------------------------------- plan
PLAN=$("$PY" "$TMP/plan.py" "$RATES" "$SIZES" "$BURST" "$REPEATS" "$QUICK" "$TMP/info.json") || exit 1
[[ -n "$PLAN" ]] || die "nothing to run (all combinations skipped?)"
read -r BURST_BYTES EXPECTED SKIPPED < <("$PY" -c '
import json, sys
i = json.load(open(sys.argv[1]))
print(i["burst_bytes"], int(i["expected_seconds"] + 0.5), ", ".join(i["skipped"]) or "-")' "$TMP/info.json")

echo "bench-tc-tbf: real kernel tc tbf over veth ($NS_A -> $NS_B)"
echo "  rates: $RATES | sizes (MiB): $SIZES | burst: $BURST ($BURST_BYTES bytes) | repeats: $REPEATS | quick: $QUICK"
[[ "$SKIPPED" != "-" ]] && echo "  skipped by --quick: $SKIPPED"
echo "  expected total time: ~${EXPECTED} s (~$(( EXPECTED / 60 )).$(( (EXPECTED % 60) / 6 )) min)$( [[ $QUICK -eq 0 ]] && echo '; --quick drops sizes > 8 MiB at rates < 100mbit')"

# ---------------------------------------------------------------- topology
ip netns add "$NS_A"
ip netns add "$NS_B"
ip -n "$NS_A" link add "$DEV_A" type veth peer name "$DEV_B" netns "$NS_B"
ip -n "$NS_A" addr add "$IP_A/24" dev "$DEV_A"
ip -n "$NS_B" addr add "$IP_B/24" dev "$DEV_B"
for ns in "$NS_A" "$NS_B"; do ip -n "$ns" link set lo up; done
ip -n "$NS_A" link set "$DEV_A" up
ip -n "$NS_B" link set "$DEV_B" up

RUNS="$TMP/runs.jsonl"
: >"$RUNS"
mkdir -p "$(dirname "$JSON_OUT")"

current_rate=""
while read -r -u 4 rate rate_bps size_mib nbytes analytic timeout; do
    # Shape the sender's egress (data direction A -> B).  latency 10s makes the
    # tbf queue limit huge (limit = rate*latency + burst bytes), so tbf never drops
    # a packet: TCP is slowed by the token rate and by backpressure (TSQ / qdisc
    # queue), not by losses and retransmissions.  Re-set per (rate, size) so each
    # combination starts with a fresh, full bucket.
    tc -n "$NS_A" qdisc replace dev "$DEV_A" root tbf rate "$rate" burst "$BURST" latency 10s
    tcinfo=$(tc -n "$NS_A" -j qdisc show dev "$DEV_A" | "$PY" -c '
import json, sys
q = [x for x in json.load(sys.stdin) if x.get("kind") == "tbf"][0]["options"]
b = str(q.get("burst", "")).split("/")[0].rstrip("b")
print(json.dumps({"cmd": "tc qdisc replace dev %s root tbf rate %s burst %s latency 10s"
                  % (sys.argv[1], sys.argv[2], sys.argv[3]),
                  "kernel_rate_bits_per_second": q.get("rate", 0) * 8,
                  "kernel_burst_bytes": int(b) if b.isdigit() else b}))' "$DEV_A" "$rate" "$BURST")
    if [[ "$rate" != "$current_rate" ]]; then
        echo "  tc: $(tc -n "$NS_A" qdisc show dev "$DEV_A")"
        current_rate=$rate
    fi
    for ((rep = 1; rep <= REPEATS; rep++)); do
        ready="$TMP/ready"
        rm -f "$ready" "$TMP/recv.out" "$TMP/send.out"
        ip netns exec "$NS_B" timeout $((timeout + 15)) "$PY" "$TMP/recv.py" "$IP_B" "$PORT" "$nbytes" "$timeout" "$ready" \
            >"$TMP/recv.out" &
        RECV_PID=$!
        for ((i = 0; i < 500; i++)); do [[ -e "$ready" ]] && break; sleep 0.01; done
        [[ -e "$ready" ]] || die "receiver did not start listening"
        ip netns exec "$NS_A" timeout $((timeout + 15)) "$PY" "$TMP/send.py" "$IP_B" "$PORT" "$nbytes" "$timeout" \
            >"$TMP/send.out" || die "sender failed ($rate, $size_mib MiB, repeat $rep)"
        wait "$RECV_PID" || { RECV_PID=""; die "receiver failed ($rate, $size_mib MiB, repeat $rep)"; }
        RECV_PID=""
        printf '{"rate":"%s","rate_bps":%s,"size_mib":"%s","repeat":%d,"tc":%s,"recv":%s,"send":%s}\n' \
            "$rate" "$rate_bps" "$size_mib" "$rep" "$tcinfo" "$(cat "$TMP/recv.out")" "$(cat "$TMP/send.out")" >>"$RUNS"
        "$PY" -c '
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
s = r["recv"]["seconds"]
print("  %-8s %6s MiB  repeat %d: %8.3f s  %9.2f mbit/s  (analytic %.3f s)"
      % (r["rate"], r["size_mib"], r["repeat"], s, r["recv"]["bytes"] * 8 / s / 1e6, float(sys.argv[2])))' \
            "$RUNS" "$analytic"
    done
done 4<<<"$PLAN" </dev/null

echo
"$PY" "$TMP/report.py" "$RUNS" "$TMP/info.json" "$JSON_OUT" "$REPEATS" "$QUICK" "$(uname -r)"
echo
echo "JSON written to $JSON_OUT"
