"""numpy's side of bench/core: generation and sums on the same sizes as
spillway's, timed the same way (warm-up, repetitions, median). Prints JSON."""
import json
import sys
import time

import numpy as np


def median_seconds(fn, reps):
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4_000_000
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    rng = np.random.default_rng(1)
    floats = rng.random(n)
    ints = rng.integers(0, 10, n)
    out = {
        "numpy": np.__version__,
        "n": n,
        "random": median_seconds(lambda: rng.random(n), reps),
        "integers": median_seconds(lambda: rng.integers(0, 10, n), reps),
        "sum_float64": median_seconds(lambda: floats.sum(), reps),
        "sum_int64": median_seconds(lambda: ints.sum(), reps),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
