"""A small CNN whose device part ends in batch norm over a dense layer (BatchNorm1d), for
scripts/studies/micro-batch-study.sh: batch norm over the features of a micro-batch of a few
samples normalises over those few values, unlike a convolution's batch norm, which also
averages over the image's positions. Export it with
  scripts/tools/export-model.py --module bn_dense_cnn:bn_dense_cnn --input 1x28x28 bn_dense_cnn.pt
(PYTHONPATH=scripts/tools/models); split 8 keeps every layer up to relu2 on the device."""

import collections

import torch.nn as nn


def bn_dense_cnn():
    return nn.Sequential(collections.OrderedDict([
        ("conv1", nn.Conv2d(1, 8, 3, padding=1)),
        ("bn1", nn.BatchNorm2d(8)),
        ("relu1", nn.ReLU()),
        ("pool1", nn.MaxPool2d(2)),
        ("flatten", nn.Flatten()),
        ("fc1", nn.Linear(8 * 14 * 14, 64)),
        ("bn2", nn.BatchNorm1d(64)),
        ("relu2", nn.ReLU()),
        ("fc2", nn.Linear(64, 10)),
    ]))
