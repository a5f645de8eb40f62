#!/usr/bin/env bash
# No method crashes on a legal split: every method that splits the model (the method
# table's, so a new method is checked too) runs two rounds (adasplit: a local one and a
# global one), or is refused before round 1
# with exit 2 and one line, on TorchScript modules (scripts/tools/export-model.py) cut
# where a part has no weights:
#   - a server part without weights (the last layer has none) and the split at the last
#     layer (an empty server part);
#   - a device part without weights (pooling and flatten first);
#   - a server part with weights but no Conv2d or Linear (batch norm last), which
#     adasplit's masks cannot mask.
# adasplit must refuse the two server parts it cannot mask, naming the splits it takes.
# Usage: edge_splits_job.sh CMLBED MPIEXEC SOURCE_DIR PYTHON
set -u
cmlbed=$1 mpiexec=$2 source_dir=$3 python=$4
if ! "$python" -c "import torch" 2>/dev/null; then
  echo "FAIL: $python has no torch: apt-get install python3-torch (this test exports its modules with it)"
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }

cat >"$work/edges.py" <<'PY'
from collections import OrderedDict
from torch import nn

def tail_without_weights():  # 4 layers; the last has no weights
    return nn.Sequential(OrderedDict(
        conv=nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU()),
        flat=nn.Flatten(), fc=nn.Linear(8 * 14 * 14, 10), act=nn.Hardtanh()))

def head_without_weights():  # the first two layers have no weights
    return nn.Sequential(OrderedDict(
        pool=nn.AvgPool2d(2), act=nn.ReLU(), flat=nn.Flatten(), fc=nn.Linear(14 * 14, 10)))

def norm_only_tail():  # the last layer has weights, but no Conv2d or Linear
    return nn.Sequential(OrderedDict(
        conv=nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU()),
        flat=nn.Flatten(), fc=nn.Linear(8 * 14 * 14, 10), norm=nn.BatchNorm1d(10)))
PY
for module in tail_without_weights head_without_weights norm_only_tail; do
  (cd "$work" && "$python" "$source_dir/scripts/tools/export-model.py" --module "edges:$module" --input 1x28x28 \
    "$module.pt" >/dev/null) || fail "export-model.py $module"
done

methods=$("$cmlbed" info --methods --json | "$python" -c '
import json, sys
print(" ".join(m["name"] for m in json.load(sys.stdin)["methods"] if m["splits_model"]))')
[[ -n $methods ]] || fail "no splitting methods in cmlbed info --methods --json"

# module:split:what adasplit must say (empty: it runs)
cases="tail_without_weights:3:masks the server part's Conv2d and Linear weights
tail_without_weights:4:needs layers on both sides; allowed: 1..2
head_without_weights:2:
norm_only_tail:3:masks the server part's Conv2d and Linear weights"
while IFS=: read -r module split refusal; do
  for method in $methods; do
    what="$method on $module at split $split"
    out="$work/$method-$module-$split.h5"
    OMPI_MCA_rmaps_base_oversubscribe=1 "$mpiexec" -np 3 "$cmlbed" run --config "$source_dir/configs/quickstart/sfl.ini" \
      --experiment.method="$method" --model.name=torchscript --model.file="$work/$module.pt" --model.split="$split" \
      --experiment.rounds=2 --train.local_iterations=2 --data.test_limit=100 --adasplit.selected=1 \
      --devices.flops= --output.file="$out" </dev/null >"$work/log" 2>&1
    status=$?
    errors=$(grep -c "^cmlbed: error:" "$work/log")
    if [[ $method == adasplit && -n $refusal ]]; then
      ((status == 2 && errors == 1)) && grep -q "$refusal" "$work/log" ||
        { cat "$work/log"; fail "$what: status $status, expected the one-line refusal '$refusal'"; }
    elif ((status == 2 && errors == 1)); then
      echo "refused: $what: $(grep "^cmlbed: error:" "$work/log")"
    elif ((status != 0)); then
      cat "$work/log"; fail "$what: status $status (a crash, or an error that is not one line)"
    elif [[ ! -f $out ]] || ! grep -q "^round 2/2" "$work/log"; then
      cat "$work/log"; fail "$what: exit 0 without its round or results file"
    fi
  done
done <<<"$cases"

if ((failures > 0)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "edge splits: every splitting method ($methods) ran or refused in one line"
