#!/usr/bin/env bash
# A pipar run across three "hosts" on one machine (scripts/tools/netns-cluster.sh: network,
# UTS and time namespaces joined by veth pairs to a bridge): 1 server + 2 devices, one
# rank per host, Open MPI over TCP started through an rsh agent. Checks that the run
# ends well, that the results file names three different hosts, that the clock offsets
# it stores are the ones the hosts' clocks really have (each host's monotonic clock runs
# 1000 s ahead of the previous one), that the messages went over the veth links, and
# that no namespace or process is left afterwards.
# Usage: multihost_job.sh CMLBED SOURCE_DIR PYTHON   (as root; skipped, status 77, where
# network namespaces cannot be made)
set -u
cmlbed=$(realpath "$1") source_dir=$(realpath "$2") python=$3
cluster=$source_dir/scripts/tools/netns-cluster.sh
start=$SECONDS
say() { echo "[$((SECONDS - start))s] $*"; }
skip() { echo "skipped: $*"; exit 77; }

# Can this machine make what the cluster needs? Anything missing here is a skip with the
# reason; a failure after these checks is a failure.
[[ $(id -u) -eq 0 ]] || skip "needs root (network namespaces, veth pairs, a bridge)"
for tool in ip unshare hostname; do
  command -v "$tool" >/dev/null || skip "'$tool' not found (Debian: iproute2, util-linux, hostname)"
done
probe=cmlbed-probe-$$
if ! why=$(ip netns add "$probe" 2>&1); then skip "cannot make a network namespace: $why"; fi
why=$(ip -n "$probe" link add probe0 type veth peer name probe1 2>&1 &&
      ip -n "$probe" link add probe2 type bridge 2>&1 &&
      ip netns exec "$probe" unshare --uts hostname probe 2>&1)
made=$?
ip netns del "$probe"
((made == 0)) || skip "cannot make a veth pair, a bridge or a UTS namespace: $why"

work=$(mktemp -d /tmp/cmlbed-multihost.XXXXXX)
cleanup() {
  bash "$cluster" down "$work"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP  # so that the EXIT trap cleans up then too

say "making 3 hosts"
bash "$cluster" up "$work" 3 || exit 1
cat "$work/hosts"

failures=0
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }

# Bytes that went from each host into the bridge, and from the bridge to each host.
port_bytes() {  # HOST rx|tx: the bridge port's counter (rx = from the host)
  ip -n "$(cat "$work/bridge")" -s -j link show "$1" |
    "$python" -c "import json, sys; print(json.load(sys.stdin)[0]['stats64']['$2']['bytes'])"
}

# The main job's pipar settings (its links shaped by cmlbed, 10 mbit up, 25 mbit down),
# cut to 2 rounds of 3 mini-batches on 2 devices.
say "pipar, 1 server + 2 devices on h1, h2, h3"
file=$work/pipar.h5
cd "$source_dir" || exit 1
bash "$cluster" mpirun "$work" -np 3 "$cmlbed" run --config configs/quickstart/pipar.ini \
  --experiment.rounds=2 --train.local_iterations=3 --data.test_limit=200 \
  --output.file="$file" --output.progress=false >"$work/run.out" 2>&1 &
# In the background, so that a signal to this script is handled at once (bash runs
# traps only between commands; `wait` is interrupted by them).
wait $!
status=$?
sed 's/^/  | /' "$work/run.out" | tail -12
((status == 0)) || fail "mpirun exited with status $status"

# Every rank and daemon ends with mpirun: nothing is left in the hosts' namespaces (the
# agents' wrappers may need a moment to see their daemon go).
for ns in $(awk '!/^#/ { print $2 }' "$work/hosts"); do
  for ((tries = 0; tries < 50; tries++)); do
    left=$(ip netns pids "$ns" | xargs)
    [[ -z $left ]] && break
    sleep 0.1
  done
  [[ -z $left ]] || fail "processes left in $ns 5 s after mpirun ended: $(ps -o pid=,args= -p "${left// /,}")"
done

up_bytes=$(( $(port_bytes h2 rx) + $(port_bytes h3 rx) ))
down_bytes=$(( $(port_bytes h2 tx) + $(port_bytes h3 tx) ))
echo "veth ports: devices' hosts sent $up_bytes bytes, received $down_bytes bytes"
"$python" - "$file" "$work/hosts" "$up_bytes" "$down_bytes" <<'PY' || fail "the results file is not as expected"
import sys, h5py
path, hosts_table, up_bytes, down_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
# name namespace address monotonic_offset_s
ahead_s = [int(line.split()[3]) for line in open(hosts_table) if not line.startswith("#")]
ok = True
def check(cond, what):
    global ok
    print(("ok: " if cond else "FAIL: ") + what)
    ok = ok and cond
with h5py.File(path, "r") as f:
    hosts = [h.decode() if isinstance(h, bytes) else str(h) for h in f.attrs["hosts"]]
    offsets = [int(x) for x in f.attrs["clock_offsets_ns"]]
    uncertainty = [int(x) for x in f.attrs["clock_uncertainty_ns"]]
    rounds = f["rounds"][:]
    check(int(f.attrs["mpi_size"]) == 3 and len(rounds) == 2,
          "3 ranks, 2 rounds (got %d, %d)" % (int(f.attrs["mpi_size"]), len(rounds)))
    check(hosts == ["h1", "h2", "h3"], "hosts = %s: rank r ran on h(r+1)" % hosts)
    # Rank k's clock runs ahead_s[k] - ahead_s[0] seconds ahead of rank 0's, so the offset
    # that maps it onto rank 0's time base is that much smaller than rank 0's own.
    for rank in (1, 2):
        want = offsets[0] - (ahead_s[rank] - ahead_s[0]) * 10**9
        error = offsets[rank] - want
        check(abs(error) <= uncertainty[rank] + 1_000_000,
              "rank %d: clock offset %+d ns from rank 0's, true %+d s: error %d ns "
              "(uncertainty %d ns)" % (rank, offsets[rank] - offsets[0],
                                       ahead_s[rank] - ahead_s[0], error, uncertainty[rank]))
    sent_up, sent_down = int(rounds["bytes_up"].sum()), int(rounds["bytes_down"].sum())
    # The counters hold every frame: payload, headers, Open MPI's wire-up and ACKs too.
    check(up_bytes >= sent_up and down_bytes >= sent_down,
          "the devices' messages crossed the veth links (%d >= %d bytes up, %d >= %d down)"
          % (up_bytes, sent_up, down_bytes, sent_down))
sys.exit(0 if ok else 1)
PY

# The cluster goes away with everything in it (the EXIT trap would do it too; here it is
# checked).
say "taking the hosts down"
namespaces=$(awk '!/^#/ { print $2 }' "$work/hosts"; cat "$work/bridge")
bash "$cluster" down "$work" || fail "netns-cluster.sh down failed"
for ns in $namespaces; do
  ! ip netns list | awk '{ print $1 }' | grep -qx -- "$ns" || fail "namespace $ns still exists"
done

say "$failures failure(s)"
((failures == 0))
