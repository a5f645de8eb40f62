#!/usr/bin/env bash
# Does this cmlbed build refuse a method? For configs and scripts written ahead of a
# method (configs/adasplit/adasplit.ini before experiment.method = adasplit is built):
#
#   scripts/dev/method-refusal.sh CMLBED METHOD [MPIEXEC]
#
# Exit 0 and print cmlbed's error line when a real run of METHOD is refused with
# "experiment.method = METHOD is not available in this build"; exit 1, printing nothing,
# otherwise (the method is built). A dry run cannot tell (it checks the configuration,
# not the build), so this asks for a real run under MPIEXEC (default mpirun) with 2
# ranks on a tiny synthetic problem: a refused method stops before any work, a built
# one trains for a second or two, in a scratch folder removed afterwards.
set -u
[[ $# -ge 2 ]] || { echo "usage: $0 CMLBED METHOD [MPIEXEC]" >&2; exit 2; }
cmlbed=$1 method=$2 mpiexec=${3:-mpirun}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Root may run Open MPI; 2 ranks on a 1-core machine need oversubscription.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  OMPI_MCA_rmaps_base_oversubscribe=1
out=$(timeout 120 "$mpiexec" -np 2 "$cmlbed" run --experiment.method="$method" \
  --data.dataset=synthetic --data.synthetic_train=64 --data.synthetic_test=16 \
  --model.name=lenet --experiment.rounds=1 --train.local_iterations=1 \
  --output.progress=false --output.file="$work/probe.h5" 2>&1)
status=$?
line=$(grep -m1 -F "experiment.method = $method is not available in this build" <<<"$out")
if [[ $status -eq 2 && -n $line ]]; then
  echo "$line"
  exit 0
fi
exit 1
