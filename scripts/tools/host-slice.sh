# Sourced: host_slice prints this host's scheduler slice for --plan.host_slice, e.g. 1.5ms.
# Linux keeps it in /sys/kernel/debug/sched/base_slice_ns (debugfs, root, where the
# kernel lets it be read); else the EEVDF default: 0.75 ms x (1 + floor(log2 of the online
# CPUs, at most 8)), the kernel's own scaling (kernel/sched/fair.c, "tunable scaling").
host_slice() {
  local file=/sys/kernel/debug/sched/base_slice_ns ns
  if ns=$(cat "$file" 2>/dev/null) && [[ $ns =~ ^[0-9]+$ ]]; then
    echo "$((ns / 1000))us"
    return
  fi
  local cpus
  cpus=$(nproc --all 2>/dev/null || nproc)
  ((cpus > 8)) && cpus=8
  local log=0
  while ((cpus > 1)); do cpus=$((cpus / 2)); log=$((log + 1)); done
  echo "$((750 * (1 + log)))us"
}
