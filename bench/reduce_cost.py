"""The host cost of a reduction's arithmetic on this machine, for `[host]
reduce_ns_per_byte`: MPI_SUM of MPI_FLOATs (IMB's reduction) is an element-wise float32
add into the receive buffer (Open MPI's ompi_op_base_2buff_sum_float is that loop), timed
here as numpy's in-place add, best of 20, at the sizes IMB's Allreduce sweeps.

    .venv/bin/python bench/reduce_cost.py

This is a benchmark: it measures and reports, it asserts nothing.
"""
from __future__ import annotations

import time

import numpy as np


def ns_per_byte(nbytes: int, trials: int = 20) -> float:
    a = np.ones(nbytes // 4, dtype=np.float32)
    b = np.ones(nbytes // 4, dtype=np.float32)
    best = float("inf")
    for _ in range(trials):
        start = time.perf_counter_ns()
        np.add(a, b, out=a)
        best = min(best, time.perf_counter_ns() - start)
    return best / nbytes


def main() -> None:
    print(f"{'bytes':>9} {'ns/byte':>8}")
    for k in range(12, 23, 2):
        print(f"{2**k:>9} {ns_per_byte(2**k):>8.3f}")


if __name__ == "__main__":
    main()
