#!/usr/bin/env bash
# A private, single-node Slurm cluster for trying the job scripts in jobs/ on one
# machine (the slurm_jobs test uses it). Root only: the daemons run as root.
#
#   tests/slurm/local-cluster.sh start  WORKDIR   # install if needed, write config, start
#   tests/slurm/local-cluster.sh status WORKDIR   # sinfo, squeue
#   tests/slurm/local-cluster.sh stop   WORKDIR   # stop exactly the daemons start started
#   source WORKDIR/env.sh                         # then sbatch/squeue/scontrol use it
#
# Everything lives in WORKDIR: slurm.conf (found through SLURM_CONF, so /etc/slurm is
# never read or written), a munge key and a munged on its own socket (so a system munged,
# if any, is neither needed nor touched), state, spool, pid and log files. The node is
# "localhost" with more CPUs than the machine has (SlurmdParameters=config_overrides
# lets slurmd accept that), so a 4-task job and a few array elements fit at once.
set -euo pipefail

usage() { echo "usage: $0 start|stop|status WORKDIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
action=$1
mkdir -p "$2"
work=$(cd "$2" && pwd)
# Ports unlikely to clash with a real Slurm (6817/6818) on the same machine.
ctld_port=${LOCAL_SLURM_CTLD_PORT:-16817}
slurmd_port=${LOCAL_SLURM_SLURMD_PORT:-16818}
cpus=${LOCAL_SLURM_CPUS:-32}

log() { echo "local-cluster: $*"; }

install_packages() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
    command -v munged >/dev/null && command -v sbatch >/dev/null && return 0
  log "installing slurm-wlm and munge from Debian (apt-get, a few minutes)"
  local apt_log=$work/apt.log
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
         apt-get install -y -qq --no-install-recommends slurm-wlm munge; } >"$apt_log" 2>&1; then
    log "apt-get failed; the end of $apt_log:"
    tail -20 "$apt_log" >&2
    exit 1
  fi
}

write_config() {
  # munged wants its key private and its socket's directory open to all (execute).
  mkdir -p "$work/state" "$work/spool" "$work/log" "$work/munge" "$work/munge-socket" "$work/tmp"
  chmod 700 "$work/munge"
  chmod 755 "$work" "$work/munge-socket"
  cat >"$work/slurm.conf" <<EOF
# Written by tests/slurm/local-cluster.sh: a one-node cluster for testing, not for use.
ClusterName=cmlbed-local
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
# Root runs everything here; a real cluster has a slurm user.
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge-socket/munge.socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool/%n
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
# Job temporaries here, not in /tmp: PMIx names its client directory after the uid, job
# and step only (/tmp/spmix_appdir_0_1.0), and every local cluster numbers its jobs from
# 1, so a second cluster (two tests at once) or a directory left by an earlier one made
# srun --mpi=pmix fail to launch ("Cannot create client cli tmpdir ... File exists").
TmpFS=$work/tmp
# No cgroups (containers often lack them): track processes by parent, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
# No slurmdbd: no accounting; finished jobs stay visible to scontrol for MinJobAge s.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=600
ReturnToService=2
# Schedule often, so a test does not wait for the default intervals (dependencies).
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=1,sched_min_interval=100000
SlurmdParameters=config_overrides
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=4096 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
  # mpi.conf is read from slurm.conf's directory.
  echo "PMIxCliTmpDirBase=$work/tmp" >"$work/mpi.conf"
  cat >"$work/env.sh" <<EOF
# source this to use the local cluster (sbatch, squeue, scontrol, sinfo)
export SLURM_CONF=$work/slurm.conf
EOF
}

# pid_alive FILE: the process named in FILE is running.
pid_alive() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
  [[ $(id -u) -eq 0 ]] || { log "must run as root (daemons run as root here)"; exit 1; }
  if pid_alive "$work/slurmctld.pid"; then log "already running in $work"; return 0; fi
  install_packages
  write_config
  export SLURM_CONF=$work/slurm.conf
  # Our own key and munged: nothing shared with a system munge.
  [[ -s $work/munge/munge.key ]] || mungekey --create --keyfile="$work/munge/munge.key"
  chmod 600 "$work/munge/munge.key"
  munged --socket="$work/munge-socket/munge.socket" --key-file="$work/munge/munge.key" \
    --pid-file="$work/munge/munged.pid" --log-file="$work/log/munged.log" \
    --seed-file="$work/munge/munged.seed" ||
    { log "munged failed:"; tail -5 "$work/log/munged.log" >&2; exit 1; }
  # -c: start clean, no state from an earlier cluster in the same WORKDIR.
  slurmctld -c || { log "slurmctld failed:"; tail -20 "$work/log/slurmctld.log" >&2; exit 1; }
  slurmd -N localhost || { log "slurmd failed:"; tail -20 "$work/log/slurmd.log" >&2; exit 1; }
  local state=""
  for _ in $(seq 60); do
    state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
    [[ $state == idle ]] && { log "node localhost idle ($cpus CPUs); source $work/env.sh"; return 0; }
    sleep 0.5
  done
  log "node not idle after 30 s (state '${state}'); logs:"
  tail -10 "$work/log/slurmctld.log" "$work/log/slurmd.log" >&2
  exit 1
}

# Stop the daemons start started, by the pids in their pid files, and nothing else:
# slurmd first (it ends its job steps), then slurmctld, then munged.
stop() {
  local name file pid
  # Jobs first, so that no job step (slurmstepd, cmlbed) outlives the daemons.
  if pid_alive "$work/slurmctld.pid"; then
    SLURM_CONF=$work/slurm.conf scancel --full --quiet --user=root 2>/dev/null || true
    for _ in $(seq 50); do
      [[ -z $(SLURM_CONF=$work/slurm.conf squeue -h 2>/dev/null) ]] && break
      sleep 0.2
    done
  fi
  for name in slurmd slurmctld munge/munged; do
    file=$work/$name.pid
    pid_alive "$file" || continue
    pid=$(cat "$file")
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then log "${name##*/} ($pid) ignored SIGTERM; SIGKILL"; kill -9 "$pid"; fi
    log "stopped ${name##*/} ($pid)"
  done
}

status() {
  export SLURM_CONF=$work/slurm.conf
  sinfo
  squeue
}

case $action in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) usage ;;
esac
