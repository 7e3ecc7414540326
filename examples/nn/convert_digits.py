#!/usr/bin/env python3
"""Writes scikit-learn's `digits` set (1,797 8x8 images, 16 grey levels) as
`digits.txt`, the small data file the nn and cnn examples read, and the
first 20 images as IDX files (MNIST's format) for the IDX reader's utest.

    pip install scikit-learn
    python3 examples/nn/convert_digits.py

digits.txt: one image a line, the label (0-9), a colon, then the 64 pixels
row by row, each one character of "0123456789abcdefg" (grey level 0-16).
"""
import os
import struct

from sklearn.datasets import load_digits

ALPHABET = "0123456789abcdefg"
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    d = load_digits()
    images = d.images.astype(int)
    labels = d.target.astype(int)
    with open(os.path.join(HERE, "digits.txt"), "w") as f:
        for img, label in zip(images, labels):
            assert img.shape == (8, 8) and 0 <= img.min() and img.max() <= 16
            f.write(f"{label}:" + "".join(ALPHABET[v] for v in img.flatten()) + "\n")
    n = 20
    with open(os.path.join(HERE, "sample-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 8, 8))
        f.write(bytes(int(v) for v in images[:n].flatten()))
    with open(os.path.join(HERE, "sample-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, n))
        f.write(bytes(int(v) for v in labels[:n]))
    print(f"wrote {len(labels)} images to digits.txt and {n} as IDX files")


if __name__ == "__main__":
    main()
