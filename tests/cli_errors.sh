#!/usr/bin/env bash
# The command line end to end: each bad input exits with status 2 and one clear line,
# alone and under mpirun, where only rank 0 prints and every rank exits (no hang).
# Usage: cli_errors.sh CMLBED MPIEXEC SOURCE_DIR
set -u
cmlbed=$1 mpiexec=$2 source_dir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0 checks=0

# expect STATUS PATTERN COMMAND...: the command exits with STATUS and its stderr has
# exactly one line starting "cmlbed: error" that matches PATTERN.
expect() {
  local status=$1 pattern=$2
  shift 2
  checks=$((checks + 1))
  timeout 120 "$@" >"$work/out" 2>"$work/err"
  local got=$?
  local errors
  errors=$(grep -c '^cmlbed: error' "$work/err")
  if [[ $got -ne $status ]] || { [[ $status -eq 2 ]] && { [[ $errors -ne 1 ]] ||
      ! grep -q -- "$pattern" "$work/err"; }; }; then
    failures=$((failures + 1))
    echo "FAIL: $* -> status $got (want $status), $errors error line(s), want /$pattern/"
    sed 's/^/  | /' "$work/err" | head -20
  else
    echo "ok: $*"
  fi
}

# Once a rank exits with a non-zero status, mpirun kills the job, waiting up to twice
# odls_base_sigkill_timeout (1 s) even for ranks that are ending anyway (`mpirun -np 1
# false` takes 2 s): 0 spares an expected error about 1 s here, 40 s over this test. The
# ranks still have to end by themselves: none leaves MPI_Finalize before every rank has
# reached it, so one that hangs holds the others there, and `timeout` catches it.
mpi=("$mpiexec" --oversubscribe --mca odls_base_sigkill_timeout 0 -np)
synthetic=(--data.dataset=synthetic --data.synthetic_train=200 --data.synthetic_test=50)

# Command line and info.
expect 0 '' "$cmlbed" --help
expect 0 '' "$cmlbed" --version
expect 2 "unknown command 'train'" "$cmlbed" train
expect 2 "info: --input" "$cmlbed" info --input 3x32
expect 2 "unknown model 'vgg7'" "$cmlbed" info --model vgg7
expect 2 "unrecognised option '--modle'" "$cmlbed" info --modle vgg5
expect 0 '' "$cmlbed" info --model vgg5 --input 3x32x32
grep -q 'conv1' "$work/out" && grep -q '12288' "$work/out" ||
  { failures=$((failures + 1)); echo "FAIL: info table lacks conv1 or the input bytes"; }

# Configuration errors, one rank.
expect 2 "unknown option 'train.batchsize'" "${mpi[@]}" 2 "$cmlbed" run --dry-run "${synthetic[@]}" --train.batchsize=3
expect 2 "train.batch_size.*not an integer" "${mpi[@]}" 2 "$cmlbed" run --dry-run "${synthetic[@]}" --train.batch_size=lots
expect 2 "train.batch_size.*out of range" "${mpi[@]}" 2 "$cmlbed" run --dry-run "${synthetic[@]}" --train.batch_size=0
expect 2 "network.uplink_rate.*50mbitt" "${mpi[@]}" 2 "$cmlbed" run --dry-run "${synthetic[@]}" --network.uplink_rate=50mbitt
# An empty value clears an option, as in an INI file: an unshaped link, no trace.
expect 0 '' "$cmlbed" run --dry-run --ranks 2 "${synthetic[@]}" --network.uplink_rate= --device.1.uplink_trace= \
  --network.downlink_rate=
grep -q "unshaped" "$work/out" || { failures=$((failures + 1)); echo "FAIL: --network.uplink_rate= did not leave the link unshaped"; cat "$work/out"; }
expect 2 "model.split = 9 is beyond" "${mpi[@]}" 2 "$cmlbed" run --dry-run "${synthetic[@]}" --model.split=9
expect 2 "plan.replan = on_change re-plans what the planner chooses, and nothing is auto" \
  "${mpi[@]}" 2 "$cmlbed" run --dry-run "${synthetic[@]}" --plan.replan=on_change
expect 2 "plan.replan = on_change re-plans what the planner chooses, and nothing is auto" \
  "$cmlbed" simulate "${synthetic[@]}" --devices 1 --plan.replan=on_change --output.file="$work/replan.h5"
expect 2 "plan.replan.*'sometimes'" "$cmlbed" run --dry-run "${synthetic[@]}" --plan.replan=sometimes
expect 2 "pipar.micro_batches = 64 is more than" "${mpi[@]}" 2 "$cmlbed" run --dry-run "${synthetic[@]}" --pipar.micro_batches=64
expect 2 "at least 2 MPI ranks" "${mpi[@]}" 1 "$cmlbed" run --dry-run "${synthetic[@]}"
expect 2 "data.dir = /nonexistent" "${mpi[@]}" 2 "$cmlbed" run --dry-run --data.dataset=mnist --data.dir=/nonexistent
expect 2 "cannot read config file" "${mpi[@]}" 2 "$cmlbed" run --dry-run --config "$work/missing.ini"
expect 2 "unexpected argument 'extra'" "${mpi[@]}" 2 "$cmlbed" run --dry-run extra

# Links, rate traces and the output file (runtime options).
printf 't_seconds,rate\n0,10mbit\n30,2mbit\n20,5mbit\n' >"$work/backwards.csv"
expect 2 "backwards.csv' line 4" "${mpi[@]}" 2 "$cmlbed" run --dry-run "${synthetic[@]}" --network.uplink_trace="$work/backwards.csv"
expect 2 "nowhere.csv" "${mpi[@]}" 2 "$cmlbed" run --dry-run "${synthetic[@]}" --device.1.downlink_trace="$work/nowhere.csv"
expect 2 "jitter" "${mpi[@]}" 2 "$cmlbed" run --dry-run "${synthetic[@]}" --network.delay=5ms --network.jitter=10ms
# Missing directories of output.file are created, but not under a file.
echo x >"$work/plain"
expect 2 "output.file '$work/plain/dir/t.h5': '$work/plain' is not a directory" "${mpi[@]}" 2 "$cmlbed" run --experiment.method=transfer --output.file="$work/plain/dir/t.h5"
expect 2 "adasplit.selected = 3 is more than the 2 device(s)" "${mpi[@]}" 3 "$cmlbed" run "${synthetic[@]}" --experiment.method=adasplit --output.file="$work/p.h5"
expect 2 "model.split = 0: experiment.method = adasplit needs layers on both sides" "$cmlbed" run --dry-run --ranks 4 "${synthetic[@]}" --experiment.method=adasplit --model.split=0
expect 2 "adasplit trains one server part for every device" "$cmlbed" run --dry-run --ranks 4 "${synthetic[@]}" --experiment.method=adasplit --device.2.split=3
[[ ! -e "$work/p.h5" ]] || { failures=$((failures + 1)); echo "FAIL: a refused run left a file"; }
# Data that cannot be split across the devices is a configuration error too, found
# before any file is written: in a plan for many ranks and in a real run.
expect 2 "cannot give each of 99999 devices" "$cmlbed" run --config "$source_dir/configs/quickstart/pipar.ini" --dry-run --ranks 100000
expect 2 "cannot give each of 2 devices" "${mpi[@]}" 3 "$cmlbed" run --data.dataset=synthetic --data.synthetic_train=1 --model.name=lenet --output.file="$work/split.h5"
[[ ! -e "$work/split.h5" ]] || { failures=$((failures + 1)); echo "FAIL: a run refused for its data left a file"; }

# Under mpirun with several ranks: still one message, from rank 0, status 2.
expect 2 "model.split = 9 is beyond" "${mpi[@]}" 4 "$cmlbed" run --dry-run "${synthetic[@]}" --model.split=9
printf '[experiment]\nrounds = 0\n' >"$work/bad.ini"
expect 2 "experiment.rounds.*$work/bad.ini.*out of range" "${mpi[@]}" 3 "$cmlbed" run --config "$work/bad.ini"

# A valid dry run prints the plan and the resolved configuration.
expect 0 '' "${mpi[@]}" 3 "$cmlbed" run --dry-run "${synthetic[@]}" --device.2.slowdown=3
grep -q '^\[device.2\]' "$work/out" && grep -q '^plan: sfl' "$work/out" ||
  { failures=$((failures + 1)); echo "FAIL: dry run lacks the plan"; cat "$work/out"; }

# --repeats N: a number of seeds, not with --resume; a dry run says which files it would write.
expect 2 "run: --repeats '0' is not an integer in 1..1000" "$cmlbed" run --dry-run "${synthetic[@]}" --repeats 0
expect 2 "run: --repeats 'x' is not an integer" "$cmlbed" run --dry-run "${synthetic[@]}" --repeats x
expect 2 "run: --repeats cannot be combined with --resume" "$cmlbed" run --resume "$work/none.h5" --repeats 2
expect 0 '' "${mpi[@]}" 3 "$cmlbed" run --dry-run "${synthetic[@]}" --output.file="$work/d.h5" --experiment.seed=4 --repeats 3
grep -q "^note: --repeats 3 runs this plan with experiment.seed = 4..6, writing $work/d.seed4.h5 .. $work/d.seed6.h5" "$work/out" ||
  { failures=$((failures + 1)); echo "FAIL: dry run with --repeats lacks the note"; cat "$work/out"; }

# --ranks N: a dry run checked and planned for N ranks without mpirun.
expect 2 "run: --ranks 3 applies only with --dry-run" "$cmlbed" run "${synthetic[@]}" --ranks 3
expect 2 "run: --ranks 1 is out of range" "$cmlbed" run --dry-run "${synthetic[@]}" --ranks 1
expect 2 "run: --ranks 'many' is not an integer" "$cmlbed" run --dry-run "${synthetic[@]}" --ranks many
# Found by fuzz_config: what the user typed is echoed with its line breaks shown as \n, so
# the message stays on one line.
expect 2 'run: --ranks .1\\n. is not an integer' "$cmlbed" run --dry-run "${synthetic[@]}" --ranks $'1\n'
expect 2 "unknown option 'train\\\\nlr'" "$cmlbed" run --dry-run "${synthetic[@]}" $'--train\nlr=3'
expect 2 "run: --ranks 4 disagrees with the 3 ranks mpirun started" "${mpi[@]}" 3 "$cmlbed" run --dry-run "${synthetic[@]}" --ranks 4
expect 2 "\[device.5\] is set but the run has 3 device(s)" "$cmlbed" run --dry-run "${synthetic[@]}" --ranks 4 --device.5.slowdown=2
expect 0 '' "${mpi[@]}" 3 "$cmlbed" run --dry-run "${synthetic[@]}" --ranks 3
expect 0 '' "$cmlbed" run --dry-run "${synthetic[@]}" --ranks 17 --device.16.slowdown=3
grep -q '^plan: sfl, .* 16 device(s) = ranks 1\.\.16$' "$work/out" && grep -q '^16 .* 3 ' "$work/out" ||
  { failures=$((failures + 1)); echo "FAIL: --ranks 17 plan lacks 16 devices"; head -3 "$work/out"; }

# train.personalised: only sl, sfl and pipar have a device part to keep; a re-split needs
# one averaged model, which a personalised run lacks.
expect 2 "train.personalised = true with experiment.method = fl: fl trains the whole model on every device" "$cmlbed" run --dry-run --ranks 3 "${synthetic[@]}" --experiment.method=fl --train.personalised=true
expect 2 "train.personalised = true with experiment.method = adasplit: adasplit is personalised already" "$cmlbed" run --dry-run --ranks 3 "${synthetic[@]}" --experiment.method=adasplit --adasplit.selected=1 --train.personalised=true
expect 2 "train.personalised = true with experiment.method = transfer: the transfer job trains no model" "$cmlbed" run --dry-run --ranks 3 --experiment.method=transfer --train.personalised=true
expect 2 "train.personalised = true with plan.replan = on_change: a re-split" "$cmlbed" run --dry-run --ranks 3 "${synthetic[@]}" --experiment.method=pipar --train.personalised=true --plan.replan=on_change
expect 0 '' "$cmlbed" run --dry-run --ranks 3 "${synthetic[@]}" --experiment.method=sl --train.personalised=true

echo "$((checks - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
