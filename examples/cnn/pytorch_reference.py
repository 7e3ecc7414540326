#!/usr/bin/env python3
"""The reference for examples/cnn: the same network (Zhang's, as cnn.mc
builds it), data, initialisation and training rule in PyTorch on the CPU.

    pip install torch numpy
    python3 examples/cnn/pytorch_reference.py [EPOCHS] [TRAIN] [BATCH] [RATE] [TEST] [--float32] [--threads N] [--bench]

Defaults are SaC's benchmark parameters, as main.mc's bench.json gives
them: 10 epochs of 10,000 images in batches of 100, learning rate 0.05.
It prints each epoch's mean loss per image, the training time (the epochs
only, not the data preparation) and how many test images are recognised.
Doubles by default, as pmx computes (MExpr's Float is a double). With
--bench it also prints the training time as benches/cases.py reads a
reference (`reference * PyTorch float64: MS ms`).
"""
import argparse
import math
import os
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ALPHABET = "0123456789abcdefg"
SHIFTS = [(0, 0), (1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1)]
TRAIN_SIZE = 1500


def read_digits():
    labels, images = [], []
    with open(os.path.join(HERE, "..", "nn", "digits.txt")) as f:
        for line in f:
            line = line.strip()
            if line:
                labels.append(int(line[0]))
                images.append([ALPHABET.index(c) for c in line[2:]])
    return np.array(labels), np.array(images, dtype=np.float64).reshape(-1, 8, 8) / 16.0


def to28(img, dy=0, dx=0):
    """As data.mc's dataPixel: bilinear resizing to the 24x24 box at (2, 2)
    of a 28x28 frame, shifted by (dy, dx)."""
    out = np.zeros((28, 28))
    n = img.shape[0]
    s = np.clip((np.arange(24) + 0.5) * n / 24 - 0.5, 0, n - 1)
    i0 = np.floor(s).astype(int)
    i1 = np.minimum(i0 + 1, n - 1)
    f = s - i0
    rows = img[i0] * (1 - f)[:, None] + img[i1] * f[:, None]
    box = rows[:, i0] * (1 - f)[None, :] + rows[:, i1] * f[None, :]
    out[2:26, 2:26] = box
    shifted = np.zeros((28, 28))
    ys, xs = slice(max(dy, 0), 28 + min(dy, 0)), slice(max(dx, 0), 28 + min(dx, 0))
    yd, xd = slice(max(-dy, 0), 28 + min(-dy, 0)), slice(max(-dx, 0), 28 + min(-dx, 0))
    shifted[ys, xs] = out[yd, xd]
    return shifted


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("epochs", nargs="?", type=int, default=10)
    ap.add_argument("train", nargs="?", type=int, default=10000)
    ap.add_argument("batch", nargs="?", type=int, default=100)
    ap.add_argument("rate", nargs="?", type=float, default=0.05)
    ap.add_argument("test", nargs="?", type=int, default=297)
    ap.add_argument("--float32", action="store_true")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--bench", action="store_true", help="print the time as a reference for benches/cases.py")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    dtype = torch.float32 if a.float32 else torch.float64
    torch.manual_seed(42)

    labels, images = read_digits()
    train = [to28(images[i % TRAIN_SIZE], *SHIFTS[(i // TRAIN_SIZE) % len(SHIFTS)]) for i in range(a.train)]
    xs = torch.tensor(np.array(train)[:, None], dtype=dtype)
    ys = torch.tensor(labels[np.arange(a.train) % TRAIN_SIZE])
    targets = torch.nn.functional.one_hot(ys, 10).to(dtype)
    n_test = min(a.test, len(labels) - TRAIN_SIZE)
    test_xs = torch.tensor(np.array([to28(images[TRAIN_SIZE + i]) for i in range(n_test)])[:, None], dtype=dtype)
    test_ys = torch.tensor(labels[TRAIN_SIZE:TRAIN_SIZE + n_test])
    # Each pixel standardised over the training images, as cnnStandardise.
    mean = xs.mean(0, keepdim=True)
    sd = xs.std(0, keepdim=True, unbiased=False)
    sd[sd == 0] = 1.0
    xs, test_xs = (xs - mean) / sd, (test_xs - mean) / sd

    net = torch.nn.Sequential(
        torch.nn.Conv2d(1, 6, 5), torch.nn.Sigmoid(), torch.nn.AvgPool2d(2),
        torch.nn.Conv2d(6, 12, 5), torch.nn.Sigmoid(), torch.nn.AvgPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(192, 10), torch.nn.Sigmoid()).to(dtype)
    # Zhang's initialisation, as cnnMake: uniform in +-sqrt(6 / (fan in + fan out)), biases 0.
    with torch.no_grad():
        for layer, fans in [(net[0], 25 * 7), (net[3], 25 * 18), (net[7], 202)]:
            r = math.sqrt(6.0 / fans)
            layer.weight.uniform_(-r, r)
            layer.bias.zero_()
    opt = torch.optim.SGD(net.parameters(), lr=a.rate)

    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads, {dtype}; training images: {a.train}, "
          f"batches of {a.batch}, learning rate {a.rate}, epochs: {a.epochs}")
    t0 = time.perf_counter()
    for epoch in range(a.epochs):
        order = torch.randperm(a.train)
        total = 0.0
        for start in range(0, a.train, a.batch):
            idx = order[start:start + a.batch]
            opt.zero_grad()
            out = net(xs[idx])
            # The batch's summed loss, half the squared error of each image.
            loss = 0.5 * ((out - targets[idx]) ** 2).sum()
            loss.backward()
            opt.step()
            total += loss.item()
        print(f"epoch {epoch + 1}: mean loss {total / a.train:.4f}", flush=True)
    elapsed = time.perf_counter() - t0
    with torch.no_grad():
        hits = int((net(test_xs).argmax(1) == test_ys).sum())
    print(f"training time: {elapsed:.2f} s")
    if a.bench:
        print(f"reference * PyTorch {'float32' if a.float32 else 'float64'}: {elapsed * 1000:.1f} ms")
    print(f"test images recognised: {hits} of {n_test}")


if __name__ == "__main__":
    main()
