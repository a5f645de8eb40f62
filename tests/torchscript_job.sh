#!/usr/bin/env bash
# model.name = torchscript end to end, on modules written by scripts/tools/export-model.py
# (Debian's python3-torch): a hand-written nn.Sequential that matches no zoo network runs
# the quickstart's pipar job and every method, per-device splits, `auto`, the simulator,
# `cmlbed profile`, privacy and --resume; the zoo's VGG-5 and LeNet exported train to
# the zoo's weights and bytes in a round of sfl; a layer of unknown type is named once;
# bad modules exit 2 with one line.
# Usage: torchscript_job.sh CMLBED MPIEXEC SOURCE_DIR PYTHON
set -u
cmlbed=$1 mpiexec=$2 source_dir=$3 python=$4
if ! "$python" -c "import torch" 2>/dev/null; then
  echo "FAIL: $python has no torch: apt-get install python3-torch (the tests of model.name = torchscript need it)"
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { failures=$((failures + 1)); echo "FAIL: $*"; }

cat >"$work/mine.py" <<'PY'
from collections import OrderedDict
import torch
from torch import nn

def small_cnn(seed=3):  # no zoo network: stride-2 stem, hardswish, ReLU6, average pooling, tanh
    torch.manual_seed(seed)
    return nn.Sequential(OrderedDict(
        stem=nn.Sequential(nn.Conv2d(1, 12, 3, stride=2, padding=1), nn.BatchNorm2d(12), nn.Hardswish()),
        block=nn.Sequential(nn.Conv2d(12, 24, 3, padding=1, bias=False), nn.BatchNorm2d(24), nn.ReLU6()),
        pool=nn.AvgPool2d(2),
        head=nn.Sequential(nn.Flatten(), nn.Dropout(0.1), nn.Linear(24 * 7 * 7, 64), nn.Tanh()),
        out=nn.Linear(64, 10)))

def small_cnn_redrawn():  # the same layers, other initial weights
    return small_cnn(seed=4)

def with_softplus():  # a layer type whose FLOPs cmlbed does not count
    torch.manual_seed(3)
    return nn.Sequential(OrderedDict(
        hidden=nn.Sequential(nn.Flatten(), nn.Linear(784, 32), nn.Softplus()),
        out=nn.Linear(32, 10)))

class FlattenBetween(nn.Module):  # computes outside its children: refused
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU())
        self.head = nn.Linear(4 * 26 * 26, 10)
    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))

def flatten_between():
    return FlattenBetween()

def three_classes():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 3))
PY
export_model() { (cd "$work" && "$python" "$source_dir/scripts/tools/export-model.py" "$@" >/dev/null) || fail "export-model.py $*"; }
export_model --module mine:small_cnn --input 1x28x28 mine.pt
export_model --module mine:with_softplus softplus.pt
# export-model.py refuses it; torch.jit.save writes it, for cmlbed to refuse.
(cd "$work" && "$python" "$source_dir/scripts/tools/export-model.py" --module mine:flatten_between between.pt \
  >export-between.out 2>&1) && fail "export-model.py wrote a module that computes outside its children"
grep -q "forward computes aten::flatten outside its children" "$work/export-between.out" ||
  { cat "$work/export-between.out"; fail "export-model.py did not say why it refused flatten_between"; }
(cd "$work" && "$python" -c "import torch, mine; torch.jit.save(torch.jit.script(mine.flatten_between()), 'between.pt')") ||
  fail "torch.jit.save of flatten_between"
export_model --module mine:three_classes three.pt
export_model --zoo vgg5 --input 1x28x28 --seed 1 vgg5.pt
export_model --zoo lenet --input 1x28x28 --seed 1 lenet.pt

# `cmlbed info`: the exported VGG-5's table is the zoo's, row for row.
"$cmlbed" info --model vgg5 --input 1x28x28 | sed -n '/^  P /,$p' >"$work/zoo.table"
"$cmlbed" info --model-file "$work/vgg5.pt" --input 1x28x28 | sed -n '/^  P /,$p' >"$work/ts.table"
[[ -s $work/zoo.table ]] && cmp -s "$work/zoo.table" "$work/ts.table" ||
  { diff "$work/zoo.table" "$work/ts.table"; fail "cmlbed info: the exported VGG-5's table differs from the zoo's"; }
"$cmlbed" info --model-file "$work/softplus.pt" --input 1x28x28 >"$work/info-softplus.out" 2>&1
grep -q "note: FLOPs of 1 layer(s) of unknown type not counted: hidden.2 (Softplus)" "$work/info-softplus.out" ||
  { cat "$work/info-softplus.out"; fail "cmlbed info did not name the Softplus whose FLOPs it did not count"; }

mpi=("$mpiexec" --oversubscribe --mca odls_base_sigkill_timeout 0 -np 4)
mine=(--model.name=torchscript --model.file="$work/mine.pt" --output.overwrite=true)
short=(--experiment.rounds=1 --train.local_iterations=2 --data.train_limit=1200 --data.test_limit=200
       --network.uplink_rate=100mbit --network.downlink_rate=100mbit)
run() {  # NAME ARGS... (under mpirun -np 4)
  local name=$1; shift
  "${mpi[@]}" "$cmlbed" run "$@" --output.file="$work/$name.h5" >"$work/$name.out" 2>&1 ||
    { tail -5 "$work/$name.out"; fail "$name"; }
}

# The issue's job: the quickstart's pipar run on the hand-written module, split after layer 3.
run quickstart --config "$source_dir/configs/quickstart/pipar.ini" "${mine[@]}" --model.split=3
# Every method of the method table (transfer, the runtime smoke job, trains no model).
methods=$("$cmlbed" info --methods | awk 'NR > 1 && $1 != "transfer" {print $1}')
for method in $methods; do run "method-$method" "${mine[@]}" "${short[@]}" --experiment.method="$method" --model.split=2; done
run per-device "${mine[@]}" "${short[@]}" --experiment.method=sfl --model.split=2 --device.2.split=1 --device.3.split=4
run auto "${mine[@]}" "${short[@]}" --experiment.method=pipar --model.split=auto
run privacy "${mine[@]}" "${short[@]}" --experiment.method=pipar --model.split=2 --privacy.mechanism=gaussian \
  --privacy.clip=5 --privacy.noise_multiplier=0.5
"$cmlbed" simulate "${mine[@]}" "${short[@]}" --experiment.method=pipar --model.split=2 --devices 3 \
  --output.file="$work/simulated.h5" >"$work/simulated.out" 2>&1 || { tail -5 "$work/simulated.out"; fail "simulate"; }
"$mpiexec" --oversubscribe -np 3 "$cmlbed" profile "${mine[@]}" --repeats 1 --warmup 0 -o "$work/profile.json" \
  >"$work/profile.out" 2>&1 || { tail -5 "$work/profile.out"; fail "profile"; }

# Stopped after round 1 and resumed to 2: the weights of the run never stopped. Split
# after `head`, so its dropout draws on the devices: the server's replicas draw from one
# generator in the order the devices' batches arrive, which no run repeats (the zoo's
# MobileNetV3 alike).
resumable=("${mine[@]}" --experiment.method=sfl --model.split=4 --train.local_iterations=2 --data.train_limit=1200
           --data.test_limit=200 --output.checkpoint=1)
run whole "${resumable[@]}" --experiment.rounds=2
run stopped "${resumable[@]}" --experiment.rounds=1
cp "$work/stopped.h5" "$work/changed.h5"
"${mpi[@]}" "$cmlbed" run --resume "$work/stopped.h5" --experiment.rounds=2 >"$work/resumed.out" 2>&1 ||
  { tail -5 "$work/resumed.out"; fail "resume"; }
# Resuming after the file changed: refused, naming both digests.
cp "$work/mine.pt" "$work/mine.pt.kept"
export_model --module mine:small_cnn_redrawn mine.pt
"${mpi[@]}" "$cmlbed" run --resume "$work/changed.h5" --experiment.rounds=2 >"$work/changed.out" 2>&1
status=$?
[[ $status == 2 ]] && grep -q "model.file $work/mine.pt has changed since the run started" "$work/changed.out" ||
  { cat "$work/changed.out"; fail "resume after model.file changed: exit $status, expected 2 and the reason"; }
mv "$work/mine.pt.kept" "$work/mine.pt"

# The exported zoo networks train to the zoo's weights, with the zoo's bytes.
for net in vgg5 lenet; do
  same=("${short[@]}" --experiment.method=sfl --model.split=2 --output.overwrite=true)
  run "zoo-$net" "${same[@]}" --model.name="$net"
  run "ts-$net" "${same[@]}" --model.name=torchscript --model.file="$work/$net.pt"
done

# Server streams run replicas on threads of their own: the same weights as one stream.
for streams in 1 2; do
  run "streams-$streams" --model.name=torchscript --model.file="$work/lenet.pt" "${short[@]}" --experiment.method=sfl \
    --model.split=2 --train.server_streams=$streams --train.server_threads=$streams --output.overwrite=true
done

# A layer of unknown type: named once, on rank 0, and the run goes on.
run softplus --model.name=torchscript --model.file="$work/softplus.pt" "${short[@]}" --experiment.method=sfl \
  --model.split=1 --output.overwrite=true
[[ $(grep -c "FLOPs of 1 layer(s) of unknown type not counted: hidden.2 (Softplus)" "$work/softplus.out") == 1 ]] ||
  { cat "$work/softplus.out"; fail "the uncounted Softplus was not named exactly once"; }

# Refusals: exit 2, one line naming the file and the way out, before any rank trains.
refuse() {  # NAME EXPECTED ARGS...
  local name=$1 expected=$2; shift 2
  "${mpi[@]}" "$cmlbed" run "${short[@]}" --experiment.method=sfl --output.file="$work/refused-$name.h5" "$@" \
    >"$work/refused-$name.out" 2>&1
  local status=$?
  local lines; lines=$(grep -c "error" "$work/refused-$name.out")
  [[ $status == 2 ]] || { cat "$work/refused-$name.out"; fail "$name: exit $status, expected 2"; }
  grep -q -- "$expected" "$work/refused-$name.out" || { cat "$work/refused-$name.out"; fail "$name: no \"$expected\""; }
  [[ -e $work/refused-$name.h5 ]] && fail "$name: a results file was written"
  [[ $lines -ge 1 ]] || fail "$name: no error line"
}
refuse between "forward is not a sequence of its children (it computes aten::flatten outside its children); put the layers in an nn.Sequential" \
  --model.name=torchscript --model.file="$work/between.pt"
refuse classes "outputs 3 per sample; it must output one value per class (10)" --model.name=torchscript --model.file="$work/three.pt"
refuse missing "model.file '$work/none.pt': No such file or directory" --model.name=torchscript --model.file="$work/none.pt"
printf 'PK not a module' >"$work/junk.pt"
refuse junk "not a TorchScript module saved by torch.jit.save" --model.name=torchscript --model.file="$work/junk.pt"
refuse nofile "model.name = torchscript needs model.file" --model.name=torchscript
refuse stray "is set but model.name = vgg5; set model.name = torchscript" --model.file="$work/mine.pt"

"$python" - "$work" $methods <<'PY' || failures=$((failures + 1))
import hashlib
import json
import sys
import h5py
import numpy as np
work, methods = sys.argv[1], sys.argv[2:]
bad = []
def rounds(name):
    with h5py.File(f"{work}/{name}.h5", "r") as f:
        return f["rounds"][:], dict(f.attrs), (f["model/model"][:] if "model/model" in f else None)
mine_sha = hashlib.sha256(open(f"{work}/mine.pt", "rb").read()).hexdigest()
table, attrs, _ = rounds("quickstart")
if len(table) != 3 or not (table["flops"] > 0).all():
    bad.append(f"quickstart: {len(table)} rounds, FLOPs {table['flops']}")
if table["test_accuracy"][-1] < 0.4:  # 10 classes: chance is 0.1
    bad.append(f"quickstart: accuracy {table['test_accuracy']} is not above chance")
if attrs.get("model_file_sha256") != mine_sha:
    bad.append(f"quickstart: model_file_sha256 {attrs.get('model_file_sha256')} is not the file's {mine_sha}")
for name in [f"method-{m}" for m in methods] + ["per-device", "auto", "privacy", "simulated", "softplus"]:
    table, _, _ = rounds(name)
    trained = name != "simulated"
    if len(table) != 1 or (trained and not np.isfinite(table["test_loss"][0])):
        bad.append(f"{name}: {len(table)} rounds, test loss {table['test_loss']}")
profile = json.load(open(f"{work}/profile.json"))
if profile.get("format") != "cmlbed-profile":
    bad.append("profile: not a cmlbed profile")
_, _, whole = rounds("whole")
_, _, resumed = rounds("stopped")
if whole is None or resumed is None or not np.array_equal(whole, resumed):
    bad.append("the resumed run's weights differ from those of the run never stopped")
_, _, one = rounds("streams-1")
_, _, two = rounds("streams-2")
if not np.array_equal(one, two):
    bad.append("sfl with 2 server streams gave other weights than with 1")
for net in ("vgg5", "lenet"):
    zoo, _, zoo_weights = rounds(f"zoo-{net}")
    ts, _, ts_weights = rounds(f"ts-{net}")
    for column in ("bytes_up", "bytes_down", "flops"):
        if not np.array_equal(zoo[column], ts[column]):
            bad.append(f"{net}: {column} {ts[column]} as TorchScript, {zoo[column]} from the zoo")
    if not np.array_equal(zoo_weights, ts_weights):
        bad.append(f"{net}: the weights after a round of sfl differ (largest difference "
                   f"{np.abs(zoo_weights - ts_weights).max()})")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
echo "$failures failed"
[[ $failures -eq 0 ]]
