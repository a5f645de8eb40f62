#!/usr/bin/env bash
# A private cluster of "hosts" on one machine, for running cmlbed (Open MPI over TCP)
# across hosts without a real cluster: each host is a network namespace with its own
# host name (UTS namespace) and its own monotonic clock (time namespace), joined to the
# others by a veth pair to a bridge that lives in a namespace of its own. Root only.
#
#   scripts/tools/netns-cluster.sh up     WORKDIR [HOSTS]     # make hosts h1..hHOSTS (default 3)
#   scripts/tools/netns-cluster.sh mpirun WORKDIR ARGS...     # mpirun ARGS on h1, one rank per host
#   scripts/tools/netns-cluster.sh exec   WORKDIR HOST CMD... # CMD on HOST, as ssh HOST CMD would
#   scripts/tools/netns-cluster.sh shape  WORKDIR HOST UP DOWN BURST  # kernel tc tbf on HOST's link
#   scripts/tools/netns-cluster.sh unshape WORKDIR            # remove every tbf qdisc
#   scripts/tools/netns-cluster.sh status WORKDIR             # hosts, addresses, qdiscs, processes
#   scripts/tools/netns-cluster.sh down   WORKDIR             # end its processes, delete everything
#
# Topology (HOSTS = 3):
#   netns cmlbed-ID-h1  eth0 10.78.0.1/24 --veth-- h1 ┐
#   netns cmlbed-ID-h2  eth0 10.78.0.2/24 --veth-- h2 ├ br0 in netns cmlbed-ID-br
#   netns cmlbed-ID-h3  eth0 10.78.0.3/24 --veth-- h3 ┘
# ID comes from WORKDIR's name, so clusters in different WORKDIRs never share a name; no
# interface, address or route is added to the machine's own namespace (the bridge and
# every veth end live in the cluster's namespaces), so nothing outside can clash.
#
# How Open MPI gets across: `mpirun` runs mpirun on h1 with WORKDIR/hostfile (h1..hN,
# slots=1: rank r on host r+1), `--mca plm_rsh_agent WORKDIR/rsh-agent`, which starts the
# orted daemons of the other hosts with `exec` instead of ssh, `--mca btl tcp,self` and
# `btl_tcp_if_include`/`oob_tcp_if_include` 10.78.0.0/24 (each host has only lo and eth0,
# this makes the choice explicit). Host names need no resolving: mpirun hands them to the
# agent, and the daemons call back to mpirun's address (tcp://10.78.0.1:PORT) in their
# command line.
#
# Host names: network namespaces share the machine's UTS name, so MPI_Get_processor_name
# (gethostname) would say the same on every host; `exec` therefore runs each command
# under `unshare --uts` and sets the host's name (h1, h2, ...) first. Clocks: `exec`
# also gives host k a time namespace whose CLOCK_MONOTONIC (std::steady_clock) runs
# (k-1) x 1000 s ahead, so cmlbed's clock alignment has real offsets to find. Kernels
# without time namespaces (before 5.6) get shared clocks (offset 0), noted in
# WORKDIR/hosts. WORKDIR/hosts lists: name namespace address monotonic_offset_s.
#
# Shaping: `shape HOST UP DOWN BURST` puts tc tbf on the egress of HOST's eth0 (its
# uplink: UP) and of the bridge's port to HOST (its downlink: DOWN), the kernel's version
# of cmlbed's per-device links (a device's uplink is shaped at the device, its downlink
# at the server; the server's own link is not shaped). latency 10s makes the queue long
# enough that tbf never drops: TCP is paced by tokens, not by losses.
set -euo pipefail

usage() { sed -n '7,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "netns-cluster: $*" >&2; exit 1; }
[[ $# -ge 2 ]] || usage
action=$1
mkdir -p "$2"
work=$(cd "$2" && pwd)
shift 2
self=$(realpath "${BASH_SOURCE[0]}")
subnet=10.78.0
clock_step_s=1000

# Namespace names from WORKDIR's name (mktemp makes it unique): letters, digits and
# dashes, at most 24 of them, without a leading "cmlbed-" (the prefix adds one).
cluster_id() { basename "$work" | sed 's/^cmlbed-//' | tr -c 'A-Za-z0-9\n' '-' | tail -c 25; }
prefix=cmlbed-$(cluster_id)
# The bridge's namespace as `up` named it (WORKDIR/bridge), so a cluster is found again
# by its files, whatever the naming rule.
bridge_ns() {
  [[ -f $work/bridge ]] || die "no cluster in $work (run: $0 up $work)"
  cat "$work/bridge"
}

# host_field HOST COLUMN: a column of HOST's line in WORKDIR/hosts (2 namespace,
# 3 address, 4 monotonic offset in seconds).
host_field() {
  [[ -f $work/hosts ]] || die "no cluster in $work (run: $0 up $work)"
  local value
  value=$(awk -v h="$1" -v c="$2" '$1 == h { print $c }' "$work/hosts")
  [[ -n $value ]] || die "no host '$1' in $work/hosts"
  echo "$value"
}
host_names() { awk '!/^#/ { print $1 }' "$work/hosts"; }
need_cluster() { [[ -f $work/hosts && -f $work/bridge ]] || die "no cluster in $work (run: $0 up $work)"; }
namespace_exists() { ip netns list | awk '{ print $1 }' | grep -qx -- "$1"; }

need_root() { [[ $(id -u) -eq 0 ]] || die "needs root (network namespaces, veth, tc)"; }

# Can this kernel give a process its own monotonic clock? (Linux 5.6+, CONFIG_TIME_NS)
time_namespaces_work() {
  unshare --time --fork --monotonic "$clock_step_s" true 2>/dev/null
}

cluster_up() {
  local hosts=${1:-3}
  [[ $hosts =~ ^[1-9][0-9]?$ ]] || die "HOSTS must be 1..99 (got '$hosts')"
  need_root
  for tool in ip tc unshare hostname; do
    command -v "$tool" >/dev/null || die "'$tool' not found (Debian: iproute2, util-linux, hostname)"
  done
  [[ ! -f $work/bridge ]] || die "$work already has a cluster (run: $0 down $work)"
  local step=$clock_step_s
  time_namespaces_work || step=0
  # Written first, so that `down` finds whatever was made even if a step below fails.
  local bridge_ns=$prefix-br
  echo "$bridge_ns" >"$work/bridge"
  {
    echo "# name namespace address monotonic_offset_s (netns-cluster.sh)"
    for ((k = 1; k <= hosts; k++)); do
      echo "h$k $prefix-h$k $subnet.$k $(( (k - 1) * step ))"
    done
  } >"$work/hosts"
  ip netns add "$bridge_ns"
  ip -n "$bridge_ns" link set lo up
  ip -n "$bridge_ns" link add br0 type bridge
  ip -n "$bridge_ns" link set br0 up
  local name ns address
  while read -r name ns address _; do
    ip netns add "$ns"
    # The pair is made in the bridge's namespace, its other end moved into the host's.
    ip -n "$bridge_ns" link add "$name" type veth peer name eth0 netns "$ns"
    ip -n "$bridge_ns" link set "$name" master br0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$address/24" dev eth0
    ip -n "$ns" link set eth0 up
  done < <(grep -v '^#' "$work/hosts")
  host_names | sed 's/$/ slots=1/' >"$work/hostfile"
  printf '#!/bin/sh\n# ssh for mpirun: rsh-agent HOST CMD... runs CMD on HOST\nexec bash %q exec %q "$@"\n' \
    "$self" "$work" >"$work/rsh-agent"
  chmod +x "$work/rsh-agent"
  wait_for_links
  echo "netns-cluster: $hosts hosts up in $work (namespaces $prefix-*)"
}

# The bridge forwards only once its ports have left the listening/learning states (no
# STP here, so at once) and the links are up: wait until h1 reaches every other host.
wait_for_links() {
  local name address tries answer
  while read -r name _ address _; do
    for ((tries = 0; tries < 50; tries++)); do
      # Connected, or "connection refused" (no one listens on port 9): the path works.
      answer=$(ip netns exec "$prefix-h1" timeout 1 bash -c "exec 3<>/dev/tcp/$address/9" 2>&1) &&
        break
      [[ $answer == *refused* ]] && break
      sleep 0.1
    done
    ((tries < 50)) || die "h1 cannot reach $name ($address): $answer"
  done < <(grep -v '^#' "$work/hosts" | tail -n +2)
}

# exec HOST CMD...: what ssh HOST CMD does (the words joined and run by a shell), in
# HOST's network namespace, under HOST's name and clock.
cluster_exec() {
  [[ $# -ge 2 ]] || usage
  local host=$1 ns offset
  shift
  ns=$(host_field "$host" 2)
  offset=$(host_field "$host" 4)
  local clock=()
  if ((offset != 0)); then clock=(--time --monotonic "$offset"); fi
  # --fork: a new time namespace applies to children only; --kill-child: the command
  # goes if the agent is killed (mpirun kills its agents when a job aborts).
  exec ip netns exec "$ns" unshare --uts "${clock[@]}" --fork --kill-child \
    /bin/sh -c 'hostname "$0" && exec /bin/sh -c "$1"' "$host" "$*"
}

cluster_mpirun() {
  local mpirun=${MPIEXEC:-mpirun}
  command -v "$mpirun" >/dev/null || die "'$mpirun' not found"
  # shellcheck disable=SC2054  # "tcp,self" is one word
  local args=(--hostfile "$work/hostfile" --mca plm_rsh_agent "$work/rsh-agent"
              --mca btl tcp,self --mca btl_tcp_if_include "$subnet.0/24"
              --mca oob_tcp_if_include "$subnet.0/24")
  # mpirun is "h1": the first host of the hostfile is its own node, started directly.
  local command
  command=$(printf '%q ' "$mpirun" "${args[@]}" "$@")
  bash "$self" exec "$work" h1 "$command"
}

# shape HOST UP DOWN BURST: tbf on HOST's uplink (its eth0) and downlink (bridge port).
cluster_shape() {
  [[ $# -eq 4 ]] || usage
  local host=$1 up=$2 down=$3 burst=$4 ns
  ns=$(host_field "$host" 2)
  tc -n "$ns" qdisc replace dev eth0 root tbf rate "$up" burst "$burst" latency 10s
  tc -n "$(bridge_ns)" qdisc replace dev "$host" root tbf rate "$down" burst "$burst" latency 10s
}

cluster_unshape() {
  local host ns
  for host in $(host_names); do
    ns=$(host_field "$host" 2)
    tc -n "$ns" qdisc del dev eth0 root 2>/dev/null || true
    tc -n "$(bridge_ns)" qdisc del dev "$host" root 2>/dev/null || true
  done
}

cluster_status() {
  cat "$work/hosts"
  local host ns
  for host in $(host_names); do
    ns=$(host_field "$host" 2)
    echo "$host: up $(tc -n "$ns" qdisc show dev eth0 | head -1)"
    echo "$host: down $(tc -n "$(bridge_ns)" qdisc show dev "$host" | head -1)"
    echo "$host: processes $(ip netns pids "$ns" | xargs)"
  done
}

# Ends the processes still in the cluster's namespaces (only ours can be there: the
# namespaces are private to this WORKDIR), then deletes the namespaces; deleting a
# namespace destroys its veth ends and the bridge with it. Safe to run twice, and after
# a partial `up`.
cluster_down() {
  [[ -f $work/bridge ]] || return 0
  local namespaces=() ns pids tries
  mapfile -t namespaces < <(awk '!/^#/ { print $2 }' "$work/hosts" 2>/dev/null)
  namespaces+=("$(bridge_ns)")
  for ns in "${namespaces[@]}"; do
    namespace_exists "$ns" || continue
    for ((tries = 0; tries < 20; tries++)); do
      pids=$(ip netns pids "$ns" 2>/dev/null | xargs)
      [[ -n $pids ]] || break
      if ((tries == 0)); then echo "netns-cluster: ending processes left in $ns: $pids" >&2; fi
      # shellcheck disable=SC2086
      if ((tries < 10)); then kill -TERM $pids 2>/dev/null || true
      else kill -KILL $pids 2>/dev/null || true; fi
      sleep 0.2
    done
    ip netns del "$ns"
  done
  rm -f "$work/hosts" "$work/hostfile" "$work/rsh-agent" "$work/bridge"
}

case $action in
  up) cluster_up "$@" ;;
  exec) need_cluster; cluster_exec "$@" ;;
  mpirun) need_cluster; cluster_mpirun "$@" ;;
  shape) need_cluster; cluster_shape "$@" ;;
  unshape) [[ $# -eq 0 ]] || usage; need_cluster; cluster_unshape ;;
  status) [[ $# -eq 0 ]] || usage; need_cluster; cluster_status ;;
  down) [[ $# -eq 0 ]] || usage; need_root; cluster_down ;;
  *) usage ;;
esac
