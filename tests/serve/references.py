"""numpy references of the built-in workloads served from tests/serve/models."""
import numpy as np

TOUCH_ELEMENTS = 4096 // 4   # models/touch: input_size 4KiB of f32
REDUCE_ELEMENTS = 8000 // 4  # models/reduce: input_size 8000 bytes of f32
REDUCE_BUCKETS = 1000
MLP_WIDTH = 64               # models/mlp_*: mlp:2x64


def touch(x):
    return x * np.float32(2) + np.float32(1)


def reduce(x):
    n = x.size
    sums = np.empty(REDUCE_BUCKETS, dtype=np.float64)
    for b in range(REDUCE_BUCKETS):
        sums[b] = x[b * n // REDUCE_BUCKETS:(b + 1) * n // REDUCE_BUCKETS].astype(np.float64).sum()
    return sums


def random_f32(rng, n):
    return rng.uniform(-4, 4, n).astype(np.float32)


def random_rows(rng, rows):
    return rng.uniform(-1, 1, (rows, MLP_WIDTH)).astype(np.float16)
