#!/usr/bin/env bash
# A device that stops sending must not hang the job: with experiment.timeout = 3s and
# device 2 slowed 2000x (its first forward pass takes far longer), the server gives up
# with an error naming the rank and the stage, the job ends, and the results file is
# still a valid HDF5 file.
# Usage: timeout_job.sh CMLBED MPIEXEC
set -u
cmlbed=$1 mpiexec=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
timeout 120 "$mpiexec" --oversubscribe -np 3 "$cmlbed" run --experiment.method=pipar \
  --data.dataset=synthetic --data.synthetic_train=600 --data.synthetic_test=100 \
  --model.name=vgg5 --train.batch_size=32 --train.local_iterations=4 --experiment.rounds=2 \
  --experiment.timeout=3s --device.2.slowdown=2000 --output.file="$work/t.h5" \
  >"$work/out" 2>"$work/err"
status=$?
elapsed=$(( $(date +%s) - start ))
failures=0
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; failures=$((failures + 1)); fi; }
check '[[ $status -ne 0 && $status -ne 124 ]]' "the job failed (status $status) instead of hanging"
check '[[ $elapsed -lt 100 ]]' "it ended within $elapsed s"
check 'grep -q "rank 0: round 0: no progress on .activation upload. with rank 2" "$work/err"' \
  "the error names the rank, round, stage and peer"
check 'h5dump -H "$work/t.h5" >/dev/null 2>&1' "the results file is valid HDF5"
[[ $failures -eq 0 ]] || sed 's/^/  | /' "$work/err" | head -20
echo "$((4 - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
