#!/usr/bin/env python3
"""One server-side training step of VGG-5 split at P=4 (conv3 + fc1 + fc2 on 64x7x7
activations, the main job's server part) in PyTorch, timed like cmlbed-bench-training's
`step`: forward, cross-entropy, backward, SGD step; median over repeats after 5 warm-ups.
The layers mirror src/model/zoo.cpp (conv 3x3 without bias + batch norm + ReLU; dense
3136->128 + ReLU; dense 128->10).

usage: bench-step-pytorch.py [--batch 32] [--threads 1] [--repeats 50] [--json FILE]
"""
import argparse
import json
import statistics
import sys
import time

try:
    import torch
except ImportError:
    sys.exit("bench-step-pytorch.py needs PyTorch: apt-get install python3-torch "
             "(then run it with /usr/bin/python3)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--json", default="results/bench-step-pytorch.json")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    server = torch.nn.Sequential(
        torch.nn.Conv2d(64, 64, 3, padding=1, bias=False), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(64 * 7 * 7, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    optimizer = torch.optim.SGD(server.parameters(), lr=0.01, momentum=0.9)
    activation = torch.rand(args.batch, 64, 7, 7)
    labels = torch.randint(0, 10, (args.batch,))
    times = []
    for i in range(args.repeats + 5):
        start = time.perf_counter()
        x = activation.clone().requires_grad_(True)
        loss = torch.nn.functional.cross_entropy(server(x), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if i >= 5:
            times.append(1e3 * (time.perf_counter() - start))
    result = {"framework": "pytorch " + torch.__version__, "model": "vgg5", "split": 4,
              "batch": args.batch, "threads": args.threads, "step_ms": times,
              "median_step_ms": statistics.median(times)}
    print("PyTorch %s vgg5 server part [4,7) batch %d, %d thread(s): median %.3f ms per step"
          % (torch.__version__, args.batch, args.threads, result["median_step_ms"]))
    with open(args.json, "w") as out:
        json.dump(result, out)
    print("wrote", args.json)


if __name__ == "__main__":
    main()
