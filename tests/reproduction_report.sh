#!/usr/bin/env bash
# scripts/reproduction.sh --quick on tiny settings (VGG-5, one uplink rate, 2 devices,
# one round of 2 mini-batches): the profile, the simulated and the measured cell, two
# runs of the AdaSplit comparison (sfl and adasplit, 2 rounds of 2 mini-batches), and
# the report, which must hold every section, the measured and the simulated cell, a
# measured-vs-simulated error, the parts not run marked pending with their command, the
# provenance of each run, and its pictures. A second call with --report-only reruns
# nothing (every run is recorded as done).
# Usage: reproduction_report.sh CMLBED SOURCE_DIR PYTHON
set -u
cmlbed=$1 source_dir=$2 python=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }
cd "$source_dir" || exit 1
export CMLBED=$cmlbed PYTHON=$python NICE=""
args=(--quick --results "$work/results" --doc "$work/doc/reproduction.md" --images "$work/doc/images")
bash scripts/reproduction.sh "${args[@]}" >"$work/out" 2>&1 || { cat "$work/out"; fail "reproduction.sh --quick failed"; }
doc=$work/doc/reproduction.md
[[ -s $doc ]] || { cat "$work/out"; fail "no report written"; echo "reproduction_report: $failures failure(s)"; exit 1; }
for section in "# Reproduction report" "## Summary" "## 1. PiPar grid" "### The grid" \
               "### Maxima over the grid, against the paper" "### Where the gain is large, and why" \
               "### Measured against simulated" "## 2. Differential privacy" "## 3. Accuracy" \
               "## 4. AdaSplit" "## Provenance"; do
  grep -qF -- "$section" "$doc" || fail "section '$section' missing"
done
grep -q "^| vgg5 | 100 mbit | measured |" "$doc" || fail "the measured cell is not in the grid table"
grep -q "^| vgg5 | 100 mbit | pipar | P [0-9]*, m [0-9]* |" "$doc" || fail "no measured-vs-simulated row for pipar"
grep -q "largest speedup of the round time vs FL \*\*[0-9.]*x\*\*" "$doc" || fail "no headline speedup"
grep -q "Pending: DP on the main job (\`scripts/reproduction.sh --only dp,report\`)" "$doc" || fail "the DP part is not marked pending"
grep -q "Pending: accuracy" "$doc" || fail "the accuracy part is not marked pending"
grep -q "34.6x" "$doc" && grep -q "91.6%" "$doc" || fail "the papers' figures are missing"
grep -q "^| adasplit | [0-9.]*% | 0\.[0-9]* | .* | 91\.6% | 3\.6 | \[[0-9]*\] |" "$doc" ||
  fail "no AdaSplit row from its run in the AdaSplit table"
grep -q "^| sfl | [0-9.]*% | .* | 65\.8% | 29\.5 | \[[0-9]*\] |" "$doc" || fail "no SplitFed row in the AdaSplit table"
grep -q "AdaSplit sends [0-9.]*x fewer bytes than SplitFed (the authors: 8.2x)" "$doc" ||
  fail "no AdaSplit bytes headline in the summary"
grep -q "^| \[1\] | \`profiles/vgg5.json\` | \`mpirun" "$doc" || fail "no provenance of the profile"
# When the planner picks split 0 for pipar (it may, from a profile measured on a loaded
# machine), the script also simulates the best split >= 1 (NAME-p1.h5), an eighth run.
runs=$((9 + $(find "$work/results" -name '*-p1.h5' | wc -l)))
[[ $(grep -c "^| \[[0-9]*\] |" "$doc") -eq $runs ]] ||
  fail "expected $runs runs in the provenance (profile + 3 simulated + 3 measured + 2 AdaSplit comparison, + a split >= 1 simulation when pipar chose split 0)"
for image in grid rounds measured-vs-simulated; do
  [[ -s $work/doc/images/reproduction-$image.png ]] || fail "picture reproduction-$image.png missing"
  grep -q "(images/reproduction-$image.png)" "$doc" || fail "reproduction-$image.png not linked"
done
# Everything is done: a second pass runs nothing new.
before=$(find "$work/results" -name '*.run.json' | wc -l)
bash scripts/reproduction.sh --quick --only profiles,simulate,measured,adasplit,report --results "$work/results" \
  --doc "$work/doc/reproduction.md" --images "$work/doc/images" >"$work/out2" 2>&1 ||
  { cat "$work/out2"; fail "second pass failed"; }
grep -q "^measured:\|^simulate:\|^profile:\|^adasplit:" "$work/out2" && fail "the second pass ran again: $(head -3 "$work/out2")"
[[ $(find "$work/results" -name '*.run.json' | wc -l) -eq $before ]] || fail "the second pass wrote new runs"
# The kept digests (results/kept in --quick; docs/reproduction-data otherwise): with every
# results file gone, --report-only writes the same report from them, runs marked kept.
kept_runs=$(find "$work/results/kept" -name '*.h5.json' | wc -l)
[[ $kept_runs -eq $((runs - 1)) ]] || fail "expected $((runs - 1)) kept run digests, found $kept_runs"
cp "$doc" "$work/doc-before.md"
find "$work/results" -path "$work/results/kept" -prune -o \( -name '*.h5' -o -name '*.h5.run.json' -o -name '*.plan.txt' \) -print0 |
  xargs -0 rm -f
rm -f "$work/results/profiles"/*
bash scripts/reproduction.sh --quick --report-only --results "$work/results" --doc "$doc" \
  --images "$work/doc/images" >"$work/out3" 2>&1 || { cat "$work/out3"; fail "--report-only from the kept digests failed"; }
body() { sed -n '/^## Summary/,/^## Provenance/p' "$1"; }
diff <(body "$work/doc-before.md") <(body "$doc") >"$work/diff" || { head -20 "$work/diff"; fail "the report from the kept digests differs"; }
[[ $(grep -c "^| \[[0-9]*\] | \`[^\`]*\` (kept) |" "$doc") -eq $runs ]] || fail "expected $runs runs marked kept in the provenance"
# Bad arguments: exit status 2 and a message.
bash scripts/reproduction.sh --only nothing >"$work/err" 2>&1
status=$?
((status == 2)) && grep -q "unknown part 'nothing'" "$work/err" || { cat "$work/err"; fail "--only nothing: status $status"; }
bash scripts/reproduction.sh --job "what ever" --results "$work/results" >"$work/err" 2>&1
status=$?
((status == 2)) && grep -q "expected 'measured NET RATE'" "$work/err" || { cat "$work/err"; fail "--job: status $status"; }
bash scripts/reproduction.sh --job "adasplit nothing" --results "$work/results" >"$work/err" 2>&1
status=$?
((status == 2)) && grep -q "no such AdaSplit-comparison run" "$work/err" || { cat "$work/err"; fail "--job 'adasplit nothing': status $status"; }
[[ $(bash scripts/reproduction.sh --list-jobs | wc -l) -eq 43 ]] ||
  fail "--list-jobs: expected 43 jobs (23 cells + 4 accuracy groups + 16 AdaSplit-comparison runs)"
((failures == 0)) && echo "reproduction_report: ok"
exit $((failures > 0))
