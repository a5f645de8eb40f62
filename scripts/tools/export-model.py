#!/usr/bin/env python3
"""Writes a PyTorch model as TorchScript for model.name = torchscript (docs/how-to/own-model.md).

A zoo network, with the zoo's layers and, for the same --seed, the zoo's initial weights
(each top-level layer drawn from the seed cmlbed derives for it):

  scripts/tools/export-model.py --zoo vgg5 --input 1x28x28 --classes 10 --seed 1 vgg5.pt

or a module of your own, made by a callable that takes no arguments:

  scripts/tools/export-model.py --module mymodels:small_cnn small_cnn.pt   # mymodels.py on PYTHONPATH or here

and then:

  build/cmlbed info --model-file vgg5.pt --input 1x28x28
  mpirun -np 4 build/cmlbed run --model.name=torchscript --model.file=vgg5.pt ...

cmlbed splits the module between its top-level children, so the module must be an
nn.Sequential (use an OrderedDict for readable layer names) or a module whose forward
calls each child once, in order, on the previous child's output. The script compiles it
with torch.jit.script (which keeps the pooling layers' kernel sizes, needed to count
their FLOPs), refuses a forward that computes anything outside its children (cmlbed
would refuse the file), and runs one sample through it (with --input). Needs torch: Debian's
python3-torch (the C++ side needs only LibTorch); it runs itself with /usr/bin/python3
when the python3 on PATH lacks it."""

import argparse
import collections
import hashlib
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # scripts/
from cmlbed_report import packages  # noqa: E402


MASK64 = (1 << 64) - 1


def splitmix64(x):
    """One step of splitmix64 (include/cmlbed/base/seed_streams.hpp)."""
    z = (x + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def fnv1a(text):
    """FNV-1a of a stream's purpose (include/cmlbed/base/seed_streams.hpp)."""
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & MASK64
    return h


def stream_seed(seed, purpose, indices=()):
    """cmlbed's one seed rule, stream_seed (docs/explanation/seeds.md)."""
    x = splitmix64(seed ^ splitmix64(fnv1a(purpose)))
    for index in indices:
        x = splitmix64(x ^ (index & MASK64))
    return x


def layer_seed(seed, index):
    """The seed cmlbed draws layer `index`'s weights from (src/model/zoo.cpp)."""
    return stream_seed(seed, "weights", (index,))


class ZooBuilder:
    """Adds layers one at a time as src/model/zoo.cpp does: each drawn from its own
    seed, each sized from the shape a probe sample really has after the last."""

    def __init__(self, torch, shape, classes, seed):
        self.torch, self.nn = torch, torch.nn
        self.classes, self.seed = classes, seed
        self.layers = collections.OrderedDict()
        self.probe = torch.zeros((1,) + shape)

    def add(self, name, make):
        self.torch.manual_seed(layer_seed(self.seed, len(self.layers)))
        layer = make()
        layer.eval()
        with self.torch.no_grad():
            self.probe = layer(self.probe)
        layer.train()
        self.layers[name] = layer

    def channels(self):
        return self.probe.shape[1]

    def conv(self, name, out, kernel=3, batch_norm=True, padding=None):
        nn, channels = self.nn, self.channels()
        padding = (kernel - 1) // 2 if padding is None else padding

        def make():
            parts = [nn.Conv2d(channels, out, kernel, stride=1, padding=padding, bias=not batch_norm)]
            if batch_norm:
                parts.append(nn.BatchNorm2d(out))
            return nn.Sequential(*parts, nn.ReLU())
        self.add(name, make)

    def pool(self, name):
        self.add(name, lambda: self.nn.MaxPool2d(2, stride=2, ceil_mode=True))

    def dense(self, name, out, relu=True):
        nn, features = self.nn, self.probe[0].numel()
        self.add(name, lambda: nn.Sequential(nn.Flatten(), nn.Linear(features, out),
                                             *([nn.ReLU()] if relu else [])))


def vgg5(b):
    b.conv("conv1", 32); b.pool("pool1"); b.conv("conv2", 64); b.pool("pool2"); b.conv("conv3", 64)
    b.dense("fc1", 128); b.dense("fc2", b.classes, relu=False)


def vgg(plan):
    def build(b):
        convs = pools = 0
        for width in plan:
            if width == 0:
                pools += 1; b.pool("pool%d" % pools)
            else:
                convs += 1; b.conv("conv%d" % convs, width)
        b.dense("fc1", 512); b.dense("fc2", 512); b.dense("fc3", b.classes, relu=False)
    return build


def lenet(b):
    b.conv("conv1", 6, kernel=5, batch_norm=False, padding=0); b.pool("pool1")
    b.conv("conv2", 16, kernel=5, batch_norm=False, padding=0); b.pool("pool2")
    b.dense("fc1", 120); b.dense("fc2", 84); b.dense("fc3", b.classes, relu=False)


ZOO = {
    "vgg5": vgg5,
    "vgg11": vgg([64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0]),
    "vgg16": vgg([64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0]),
    "lenet": lenet,
}
NOT_EXPORTED = {
    "resnet18": "its blocks add a shortcut, so they are not sequences of layers and cmlbed "
                "would not count their FLOPs",
}


def parse_shape(text):
    try:
        shape = tuple(int(part) for part in text.lower().split("x"))
    except ValueError:
        shape = ()
    if len(shape) != 3 or min(shape) < 1:
        raise SystemExit("export-model.py: error: --input %r is not CxHxW (e.g. 1x28x28)" % text)
    return shape


def zoo_model(torch, name, shape, classes, seed):
    if name not in ZOO:
        why = NOT_EXPORTED.get(name, "it is not a sequence of layers")
        raise SystemExit("export-model.py: error: --zoo %s cannot be exported: %s; exported: %s "
                         "(run the others as model.name = %s)" % (name, why, ", ".join(ZOO), name))
    builder = ZooBuilder(torch, shape, classes, seed)
    ZOO[name](builder)
    return torch.nn.Sequential(builder.layers)


def user_model(spec):
    module_name, _, callable_name = spec.partition(":")
    if not module_name or not callable_name:
        raise SystemExit("export-model.py: error: --module %r is not MODULE:CALLABLE "
                         "(e.g. mymodels:small_cnn)" % spec)
    sys.path.insert(0, os.getcwd())
    try:
        make = getattr(importlib.import_module(module_name), callable_name)
    except (ImportError, AttributeError) as error:
        raise SystemExit("export-model.py: error: --module %s: %s (looked for with %s, from %s and PYTHONPATH)"
                         % (spec, error, sys.executable, os.getcwd()))
    return make()


def check_sequence(scripted):
    """cmlbed's rule (src/model/scripted_model.cpp): forward only reads children and calls
    their forward; anything else stays outside every split point."""
    for node in scripted.graph.nodes():
        kind = node.kind()
        if kind not in ("prim::Constant", "prim::GetAttr", "prim::CallMethod"):
            raise SystemExit("export-model.py: error: the module's forward computes %s outside its children; "
                             "cmlbed splits between children, so put every step in one (e.g. nn.Flatten() "
                             "instead of torch.flatten) or use an nn.Sequential (docs/how-to/own-model.md)" % kind)


def write(torch, model, path, shape):
    model.eval()
    try:
        scripted = torch.jit.script(model)
    except Exception as error:  # TorchScript's own errors name the line it cannot compile
        raise SystemExit("export-model.py: error: torch.jit.script cannot compile the model:\n%s" % error)
    check_sequence(scripted)
    if shape is not None:
        with torch.no_grad():
            output = scripted(torch.zeros((2,) + shape))
        if not isinstance(output, torch.Tensor):
            raise SystemExit("export-model.py: error: the model returns %s, not a tensor" % type(output).__name__)
        print("one sample of %s gives %s" % ("x".join(map(str, shape)), "x".join(map(str, output.shape[1:]))))
    scripted.train()
    torch.jit.save(scripted, path)
    children = [name for name, _ in scripted.named_children()]
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    print("wrote %s: %d top-level layers (%s), SHA-256 %s" % (path, len(children), " ".join(children), digest))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--zoo", metavar="NAME", help="a zoo network: " + ", ".join(ZOO))
    source.add_argument("--module", metavar="MODULE:CALLABLE", help="a callable that returns your nn.Module")
    parser.add_argument("--input", default=None, help="input shape CxHxW (needed with --zoo; with --module, "
                                                      "runs one sample through it as a check)")
    parser.add_argument("--classes", type=int, default=10, help="output classes (--zoo; default 10)")
    parser.add_argument("--seed", type=int, default=1, help="experiment.seed whose zoo weights to draw (--zoo; default 1)")
    parser.add_argument("output", help="the TorchScript file to write (e.g. model.pt)")
    args = parser.parse_args()
    packages.ensure("export-model.py", __file__, ["torch"])
    import torch
    shape = parse_shape(args.input) if args.input else None
    if args.zoo:
        if shape is None:
            raise SystemExit("export-model.py: error: --zoo needs --input CxHxW (the zoo sizes its dense layers from it)")
        if args.classes < 2:
            raise SystemExit("export-model.py: error: --classes must be at least 2")
        if not 0 <= args.seed < 2 ** 32:
            raise SystemExit("export-model.py: error: --seed must be in 0..4294967295, as experiment.seed")
        model = zoo_model(torch, args.zoo, shape, args.classes, args.seed)
    else:
        model = user_model(args.module)
        if not isinstance(model, torch.nn.Module):
            raise SystemExit("export-model.py: error: --module %s returned %s, not an nn.Module"
                             % (args.module, type(model).__name__))
    write(torch, model, args.output, shape)


if __name__ == "__main__":
    main()
