#!/usr/bin/env python3
"""Writes a file of arrays for data.dataset = arrays (docs/how-to/own-data.md).

From the Fashion-MNIST IDX files Debian ships (dataset-fashion-mnist), or from any
directory of IDX files (--idx DIR):

  scripts/tools/export-dataset.py fmnist.npz                        # uint8, numpy.savez
  scripts/tools/export-dataset.py fmnist.npz --compressed --limit 6000
  scripts/tools/export-dataset.py fmnist.h5                         # HDF5 (h5py)
  scripts/tools/export-dataset.py fmnist-f32.npz --float32 --normalise

and from arrays of your own, as an example to copy:

  import numpy as np, importlib.util, sys
  spec = importlib.util.spec_from_file_location("export_dataset", "scripts/tools/export-dataset.py")
  export_dataset = importlib.util.module_from_spec(spec); spec.loader.exec_module(export_dataset)
  export_dataset.write_arrays("mine.npz", train_images, train_labels, test_images, test_labels,
                              mean=[0.5], std=[0.25])

The file holds train_images and test_images (N x C x H x W or N x H x W, uint8 or
float32), train_labels and test_labels (integers 0..K-1) and, optionally, mean and std
(one value per channel). The format follows the file's extension: .npz, or .h5 / .hdf5.
Needs numpy (and h5py for HDF5): Debian's python3-numpy and python3-h5py; it runs itself
with /usr/bin/python3 when the python3 on PATH lacks them."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # scripts/
from cmlbed_report import packages  # noqa: E402


FASHION_MNIST = "/usr/share/datasets/fashion-mnist"
IDX_FILES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}


def read_idx(path):
    """An IDX file (raw or .gz) as a numpy array of uint8."""
    import gzip
    import numpy as np
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise ValueError("%s: not an IDX file of unsigned bytes" % path)
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def read_idx_dir(directory):
    arrays = {}
    for name, stem in IDX_FILES.items():
        plain = os.path.join(directory, stem)
        path = plain if os.path.exists(plain) else plain + ".gz"
        if not os.path.exists(path):
            raise FileNotFoundError("%s: neither %s nor %s.gz exists (install Debian's "
                                    "dataset-fashion-mnist, or give --idx DIR)" % (directory, stem, stem))
        arrays[name] = read_idx(path)
    return arrays


def write_arrays(path, train_images, train_labels, test_images, test_labels,
                 mean=None, std=None, compressed=False):
    """Writes the four arrays (and mean and std, if given) as cmlbed reads them, in the
    format the extension names: .npz (numpy.savez, or savez_compressed) or .h5/.hdf5."""
    import numpy as np
    arrays = {
        "train_images": np.ascontiguousarray(train_images),
        "train_labels": np.ascontiguousarray(train_labels, dtype=np.int64),
        "test_images": np.ascontiguousarray(test_images),
        "test_labels": np.ascontiguousarray(test_labels, dtype=np.int64),
    }
    if (mean is None) != (std is None):
        raise ValueError("give mean and std together, or neither")
    if mean is not None:
        arrays["mean"] = np.asarray(mean, dtype=np.float32).reshape(-1)
        arrays["std"] = np.asarray(std, dtype=np.float32).reshape(-1)
    for name in ("train_images", "test_images"):
        if arrays[name].dtype not in (np.uint8, np.float32):
            raise ValueError("%s is %s; cmlbed takes uint8 or float32 images" % (name, arrays[name].dtype))
    if path.endswith(".npz"):
        (np.savez_compressed if compressed else np.savez)(path, **arrays)
    elif path.endswith((".h5", ".hdf5")):
        import h5py
        with h5py.File(path, "w") as f:
            for name, array in arrays.items():
                f.create_dataset(name, data=array, compression="gzip" if compressed else None)
    else:
        raise ValueError("%s: the file must end in .npz, .h5 or .hdf5" % path)


def main(argv=None):
    import argparse
    import numpy as np
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("output", help="the file to write: .npz, .h5 or .hdf5")
    parser.add_argument("--idx", default=FASHION_MNIST, metavar="DIR",
                        help="directory of the four IDX files (default: %(default)s)")
    parser.add_argument("--limit", type=int, default=0, metavar="N",
                        help="keep the first N train and N/6 test samples (default: all)")
    parser.add_argument("--float32", action="store_true",
                        help="write images as float32 in 0..1 instead of uint8")
    parser.add_argument("--normalise", action="store_true",
                        help="add mean and std per channel, from the train images")
    parser.add_argument("--compressed", action="store_true",
                        help="numpy.savez_compressed (deflate) or gzip'd HDF5 datasets")
    args = parser.parse_args(argv)
    arrays = read_idx_dir(args.idx)
    if args.limit > 0:
        for split, n in (("train", args.limit), ("test", max(1, args.limit // 6))):
            arrays[split + "_images"] = arrays[split + "_images"][:n]
            arrays[split + "_labels"] = arrays[split + "_labels"][:n]
    for split in ("train", "test"):  # N x H x W -> N x 1 x H x W: one channel, said explicitly
        arrays[split + "_images"] = arrays[split + "_images"][:, None, :, :]
        if args.float32:
            arrays[split + "_images"] = arrays[split + "_images"].astype(np.float32) / 255.0
    mean = std = None
    if args.normalise:
        scale = 1.0 if args.float32 else 255.0
        train = arrays["train_images"].astype(np.float64) / scale
        mean = train.mean(axis=(0, 2, 3))
        std = train.std(axis=(0, 2, 3))
    write_arrays(args.output, arrays["train_images"], arrays["train_labels"], arrays["test_images"],
                 arrays["test_labels"], mean=mean, std=std, compressed=args.compressed)
    print("export-dataset: wrote %s: %d train and %d test samples of %s, %s%s" % (
        args.output, len(arrays["train_labels"]), len(arrays["test_labels"]),
        "x".join(str(s) for s in arrays["train_images"].shape[1:]), arrays["train_images"].dtype,
        ", normalised" if mean is not None else ""))
    return 0


if __name__ == "__main__":
    packages.ensure("export-dataset.py", __file__, ["numpy", "h5py"])
    sys.exit(main())
