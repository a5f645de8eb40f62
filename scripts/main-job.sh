#!/usr/bin/env bash
# The main job: a small, real comparison of FL, SplitFed and PiPar on Fashion-MNIST
# with 1 server + 3 devices (VGG-5, uplink 10 mbit / downlink 25 mbit, devices paced at
# 2 GFLOP/s; configs/quickstart/*.ini). It sets up and builds if needed, runs each method
# with 3 seeds under mpirun (results/quickstart-METHOD.seed{1,2,3}.h5), prints one table
# (means with 95% intervals over the seeds) and draws the timeline, idle-time and
# accuracy pictures next to them. MAIN_JOB_REPEATS=N changes the number of seeds.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
source "$root/scripts/mpi-env.sh"
cd "$root"
mkdir -p results
repeats=${MAIN_JOB_REPEATS:-3}
files=()
for method in fl sfl pipar; do
  echo
  echo "== $method: mpirun -np 4 build/cmlbed run --config configs/quickstart/$method.ini --repeats $repeats"
  mpirun -np 4 build/cmlbed run --config "configs/quickstart/$method.ini" --repeats "$repeats"
  if ((repeats > 1)); then
    for ((seed = 1; seed <= repeats; ++seed)); do files+=("results/quickstart-$method.seed$seed.h5"); done
  else
    files+=("results/quickstart-$method.h5")
  fi
done
first_seed=("${files[0]}" "${files[repeats]}" "${files[2 * repeats]}")  # one run per method

# Tables and pictures: scripts/cmlbed-report (Python with h5py, numpy, matplotlib), the
# one definition of every figure (idle time per round against the fl run).
report=scripts/cmlbed-report
echo
echo "== comparison ($report summary --brief --idle-causes ${files[*]})"
"$report" summary --brief --idle-causes "${files[@]}" --markdown results/quickstart-summary.md \
  --csv results/quickstart-summary.csv
echo
echo "== pictures and trace: results/quickstart-*"
"$report" timeline "${first_seed[@]}" --rounds 1 -o results/quickstart-timeline.png
"$report" idle "${files[@]}" -o results/quickstart-idle.png
"$report" accuracy "${files[@]}" -o results/quickstart-accuracy.png
"$report" perfetto "${first_seed[2]}" -o results/quickstart-pipar-trace.json
echo "(tables: results/quickstart-summary.{md,csv}; the trace opens in ui.perfetto.dev)"
