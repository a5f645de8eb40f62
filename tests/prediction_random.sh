#!/usr/bin/env bash
# scripts/studies/prediction-accuracy.sh on two randomly drawn configurations (--random 2 --seed 8:
# adasplit with 4 paced devices and pipar with 2 timed ones, both LeNet, per-device links;
# --quick: 2 rounds of 3 mini-batches): the generator's draws run through profile,
# simulate and a measured run, the table names each row by its draw, and every row is
# within 40% of the measured round time and 25 points of its server idle. Looser than the
# issue's 10% / 5 points, which docs/prediction-random-1.md checks on 20 draws: here the
# ranks share this machine's cores with whatever else CI runs.
# Usage: prediction_random.sh CMLBED SOURCE_DIR PYTHON
set -u
cmlbed=$1 source_dir=$2 python=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$source_dir" || exit 1
CMLBED=$cmlbed PYTHON=$python scripts/studies/prediction-accuracy.sh --random 2 --seed 8 --quick --results "$work" \
  --doc "$work/table.md" --check 40 25 >"$work/log" 2>&1
status=$?
cat "$work/log"
for row in random-8-1 random-8-2; do
  grep -q "^| $work/random-8/$row.ini " "$work/table.md" || { echo "FAIL: no row for draw $row"; exit 1; }
done
cmp -s "$work/random-8/random-8-1.ini" <("$python" - <<PY
import runpy, sys
sys.argv = ["random-configs.py"]
module = runpy.run_path("scripts/tools/random-configs.py")
print(module["draw"](8, 1, "$work/random-8")[1], end="")
PY
) || { echo "FAIL: draw 1 of seed 8 is not the same when drawn again"; exit 1; }
exit $status
